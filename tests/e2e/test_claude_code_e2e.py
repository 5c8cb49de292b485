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
from hosts import claude_env, ensure_claude_code

from conftest import unavailable

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


@pytest.fixture(scope="module")
def claude() -> Path:
    binary, why = ensure_claude_code()
    if binary is None:
        unavailable(f"Claude Code could not be installed, so this e2e test did not run: {why}")
    return binary


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
    settings = json.loads((project / ".claude" / "settings.json").read_text())
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
    assert ingest.returncode == 0, ingest.stderr
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
