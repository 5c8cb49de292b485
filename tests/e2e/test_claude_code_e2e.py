"""Claude Code 2.1.328, for real, with convmem's hooks installed (``claude -p`` turns).

The stand-in model (``fake_model.py``) logs every request body: what the model saw is
asserted on, not what convmem believes it sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_model import FakeModel, Reply, all_user_text
from hosts import claude_env

pytestmark = pytest.mark.e2e

BUDGET = "The token budget must stay under 3000 tokens at peak load."
MARKER = "[convmem memory]"
PRECONDITIONS = (
    '[validation]\npreconditions = [{must_exist = "src/**", tools = ["Write", "Edit"]}]\n'
)


def _texts(body: dict[str, Any]) -> list[str]:
    """Each text the request carried, one string per block (system included)."""
    out: list[str] = []

    def walk(content: Any) -> None:
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "text":
                    out.append(str(block.get("text", "")))
                elif isinstance(block, dict) and block.get("type") == "tool_result":
                    walk(block.get("content"))

    walk(body.get("system"))
    for message in body.get("messages", []):
        walk(message.get("content"))
    return out


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def test_memory_survives_compact_and_preconditions_deny(claude: Path, tmp_path: Path) -> None:
    home, project, store = tmp_path / "home", tmp_path / "proj", tmp_path / "convmem"
    for folder in (home, project / "src", store):
        folder.mkdir(parents=True)
    (store / "config.toml").write_text(PRECONDITIONS)
    convmem_env = {**os.environ, "CONVMEM_HOME": str(store)}
    installed = subprocess.run(
        [sys.executable, "-m", "convmem", "install", "claude-code", "--project", str(project)],
        capture_output=True,
        text=True,
        env=convmem_env,
        timeout=120,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert len(settings["hooks"]) == 7

    missing = project / "src" / "budget.py"
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        fm.add_rule(
            lambda req: "write src/budget.py" in req.last_user_text,
            # Edit on a missing file fails Claude Code's own input check before any hook
            # runs ("File does not exist"); Write reaches PreToolUse.
            Reply.tool("Write", {"file_path": str(missing), "content": "LIMIT = 3000\n"}),
            once=True,
        )
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store))

        def turn(prompt: str, session: str | None = None) -> dict[str, Any]:
            cmd = [str(claude), "-p", prompt, "--output-format", "json", "--allowedTools", "Write"]
            if session:
                cmd += ["--resume", session]
            proc = subprocess.run(
                cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180, check=False
            )
            assert proc.returncode == 0, f"{prompt!r}: {proc.stderr[-2000:]}"
            result: dict[str, Any] = json.loads(proc.stdout)
            assert not result.get("is_error"), result
            return result

        sid = str(turn(BUDGET)["session_id"])
        turn("We will call the service orders-api.", sid)
        before_edit = len(fm.main_requests())
        turn("Please write src/budget.py with the limit.", sid)
        turn("Thanks. Let us keep going with the API design.", sid)
        turn("/compact", sid)
        compactions = len(fm.of_kind("compact"))
        turn("What was the token budget again?", sid)
        requests = fm.main_requests()

    # --- the PreToolUse deny reached the model as the tool's error ---------------------------
    after_edit = requests[before_edit + 1].body
    results = _tool_results(after_edit)
    denied = [r for r in results if r.get("is_error")]
    assert denied, results
    reason = json.dumps(denied[-1]["content"])
    assert "convmem precondition" in reason and "src/budget.py" in reason
    assert not missing.exists()

    # --- after /compact, only convmem's block brings turn 1's constraint back ----------------
    assert compactions == 1
    last = requests[-1].body
    assert "What was the token budget again?" in all_user_text(last)
    texts = _texts(last)
    carriers = [t for t in texts if BUDGET in t]
    assert carriers, "the constraint from turn 1 is missing after the compaction"
    assert all(MARKER in t for t in carriers), carriers  # never the transcript itself
    assert "Scripted summary" in all_user_text(last)  # the host's summary did not carry it

    # --- the store: each prompt once, and the transcript re-reads to nothing new -------------
    transcript = next((home / ".claude" / "projects").glob(f"*/{sid}.jsonl"))
    ingest = subprocess.run(
        [
            sys.executable,
            "-m",
            "convmem",
            "ingest",
            "--format",
            "claude-code",
            "--json",
            str(transcript),
        ],
        capture_output=True,
        text=True,
        env=convmem_env,
        timeout=120,
        check=False,
    )
    assert ingest.returncode == 0, ingest.stdout
    report = json.loads(ingest.stdout)
    assert report["inserted"] == 0 and report["duplicates"] > 0, report
    exported = subprocess.run(
        [sys.executable, "-m", "convmem", "export", "--session", sid],
        capture_output=True,
        text=True,
        env=convmem_env,
        timeout=120,
        check=False,
    )
    events = json.loads(exported.stdout)["tables"]["events"]
    typed = [e["text"] for e in events if e["type"] == "user/message" and e["source_kind"] is None]
    assert typed == [
        BUDGET,
        "We will call the service orders-api.",
        "Please write src/budget.py with the limit.",
        "Thanks. Let us keep going with the API design.",
        "What was the token budget again?",
    ]
    assert [e["type"] for e in events].count("compaction/start") == 1
    assert not (store / "convmem.log").exists(), (store / "convmem.log").read_text()


# --- helpers for the tests below ---------------------------------------------------------


def _blocks(body: dict[str, Any]) -> list[str]:
    """convmem's blocks in a request, each cut from its marker to the end of its text."""
    out = []
    for text in _texts(body):
        at = text.find(MARKER)
        if at >= 0:
            out.append(text[at:].split("</system-reminder>")[0].rstrip())
    return out


def _session(
    claude: Path, project: Path, env: dict[str, str], prompts: list[str], session: str | None = None
) -> str:
    """Run the prompts as one session (a new one, or ``session`` resumed); its id."""
    for prompt in prompts:
        cmd = [str(claude), "-p", prompt, "--output-format", "json"]
        if session:
            cmd += ["--resume", session]
        proc = subprocess.run(
            cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180, check=False
        )
        assert proc.returncode == 0, f"{prompt[:60]!r}: {proc.stderr[-2000:]}"
        session = session or str(json.loads(proc.stdout)["session_id"])
    assert session is not None
    return session


def _install(project: Path, store: Path, config: str = "") -> None:
    for folder in (project, store):
        folder.mkdir(parents=True, exist_ok=True)
    if config:
        (store / "config.toml").write_text(config)
    done = subprocess.run(
        [sys.executable, "-m", "convmem", "install", "claude-code", "--project", str(project)],
        capture_output=True,
        text=True,
        env={**os.environ, "CONVMEM_HOME": str(store)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_correction_in_the_prompt_is_current_in_that_prompts_block(
    claude: Path, tmp_path: Path
) -> None:
    home, project, store = tmp_path / "home", tmp_path / "proj", tmp_path / "convmem"
    home.mkdir()
    _install(project, store)
    old = "The summariser token budget is 3000 tokens."
    correction = "Actually, make the summariser token budget 2000 tokens, not 3000."
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store))
        sid = _session(claude, project, env, [old, "/compact", "What is the summariser budget?"])
        before = len(fm.main_requests())
        _session(claude, project, env, [correction], sid)
        requests = fm.main_requests()
    asked = requests[before - 1].body  # the question after the compaction
    assert any("3000 tokens" in b for b in _blocks(asked)), _blocks(asked)
    corrected = requests[before].body  # the correction's own request
    assert correction in all_user_text(corrected)
    newest = _blocks(corrected)[-1]
    current = newest.split("## Memory: notices")[0]
    assert "2000 tokens" in current, newest
    assert old not in current  # the old value is not shown as current...
    assert "superseded" in newest and "3000 tokens" in newest  # ...but as replaced
    # every memory line at most once in the request
    lines = [x for b in _blocks(corrected) for x in b.splitlines() if x.startswith("- ")]
    assert len(lines) == len(set(lines)), lines


def test_a_block_from_a_large_session_arrives_whole(claude: Path, tmp_path: Path) -> None:
    home, project, store = tmp_path / "home", tmp_path / "proj", tmp_path / "convmem"
    home.mkdir()
    # a budget whose shares alone would let the block grow past the host's 10,000-unit limit; the
    # context-share limit is off, so the host's limit is what cuts
    _install(
        project,
        store,
        "[assembly]\nsoft_budget_tokens = 200000\nmax_context_share = 0\n"
        "[retrieval]\nlimit = 100\nstanding_limit = 100\n",
    )
    prompts = [
        " ".join(
            f"Service {chr(65 + part)}{n} must answer within {100 + n} ms at p95 under load."
            for n in range(40)
        )
        for part in range(3)
    ]
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store))
        sid = _session(
            claude, project, env, [*prompts, "/compact", "Which services must answer within ms?"]
        )
        requests = fm.main_requests()
    last = requests[-1].body
    text = json.dumps(last)
    assert "persisted-output" not in text and "Output too large" not in text
    from convmem.delivery import CLAUDE_CODE_CONTEXT_CAP, utf16_units
    from convmem.memory.store import MemoryStore

    db = MemoryStore.open(str(store / "memory.sqlite"))
    try:
        logs = [db.latest_assembly_log(sid)]
        injected = [log for log in logs if log and log["injected"]]
    finally:
        db.close()
    assert injected
    block = injected[-1]["text"]
    assert utf16_units(block) <= CLAUDE_CODE_CONTEXT_CAP
    assert any("not the token budget" in r for r in injected[-1]["reasons"])
    # the whole block reached the model: its last line (the end of the block) is there
    end = block.splitlines()[-1]
    assert end in "\n".join(_texts(last)), end
    shown = [b for b in _blocks(last) if b.startswith(block.splitlines()[0])]
    assert shown and block in shown[-1]  # the host may add its own line after it
    explain = subprocess.run(
        [sys.executable, "-m", "convmem", "explain", "--session", sid],
        capture_output=True,
        text=True,
        env={**os.environ, "CONVMEM_HOME": str(store)},
        timeout=120,
        check=False,
    )
    assert "the host's limit of 9000 UTF-16 units (not the token budget)" in explain.stdout
