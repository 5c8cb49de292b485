"""End to end: the real DeepSeek Harness 0.2.1 runtime with convmem's plugin installed.

DSH runs offline against the stand-in model (``fake_model.py``); the request bodies
it logs are the ground truth of what the model saw. ``convmem install dsh`` writes the
profile patch; the plugin then starts ``convmem serve dsh`` itself.

* SDK (one runtime kept up across turns): turn 1 states a constraint with a number,
  four small turns follow, a long reply pushes the context past the window, and the
  next turn's pre-step compacts. The constraint must reach the model after that, in
  convmem's block; a ``write`` that breaks a configured precondition must be denied
  with the reason visible to the model.
* Headless (one ``dsh`` process per turn): the process exits after each turn although
  the plugin's child is still running, a resumed turn is captured, and ``/memory``
  typed as a task reaches the model as plain text (commands cannot run headless).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from convmem.core.constants import BLOCK_MARKER
from convmem.memory.store import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_model import FakeModel, Reply, Request
from hosts import DshInstall, dsh_env

pytestmark = pytest.mark.e2e

CONSTRAINT = "The token budget must stay under 3000 tokens at peak load."
TURNS = [
    CONSTRAINT,
    "Let us talk about the cache layer.",
    "Any thoughts on retries?",
    "And logging?",
    "OK, noted.",
    "Please write the long report now.",  # the long reply: next pre-step compacts
    "What is the token budget at peak load?",
    "Create src/new_module.py with a stub.",  # the model answers with a denied write
]
PRECONDITIONS = '[validation]\npreconditions = [{must_exist = "src/**", tools = ["write"]}]\n'
# From shared/hosts/dsh.md: a small window so that one long reply forces compaction.
COMPACT_PATCH = """\
- id: llm-deepseek
  config: {maxTokens: 4096, models: [{id: deepseek-flash, contextWindow: 18000, maxTokens: 4096}]}
- id: compaction-basic
  config: {headroomTokens: 1000}
"""
DRIVER = r"""
import json, sys, time
from deepseek_harness import DeepSeekHarness

cfg = json.loads(sys.argv[1])
harness = DeepSeekHarness(
    profile=cfg["profile"], dsh_home=cfg["dsh_home"], cwd=cfg["project"],
    base_url=cfg["base_url"], api_key="fake-key", provider="deepseek-official",
    model="deepseek-flash", patches=tuple(cfg["patches"]),
)
session = None
with harness:
    for task in cfg["turns"]:
        started = time.time()
        result = harness.run(task, session_id=session) if session else harness.run(task)
        session = result.session_id
        events = result.events
        print(json.dumps({
            "session_id": session,
            "task": task,
            "final": result.final_response[:200],
            "seconds": round(time.time() - started, 3),
            "types": [e.get("type") for e in events],
            "insertions": sum(
                1 for e in events if e.get("type") == "user/message"
                and (e.get("data") or {}).get("source", {}).get("kind") == "convmem"
            ),
            "tool_results": [
                e["data"]["message"] for e in events if e.get("type") == "tool/result"
            ],
        }), flush=True)
"""


def blocks_of(body: dict[str, Any]) -> list[str]:
    """convmem's memory blocks in a request: text blocks that start with the marker."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else [content]:
            text = block.get("text") if isinstance(block, dict) else block
            if isinstance(text, str) and text.lstrip().startswith(BLOCK_MARKER):
                found.append(text)
    return found


def texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def text_outside_blocks(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                parts.append(json.dumps(block.get("content")))
                continue
            text = block.get("text") if isinstance(block, dict) else block
            if isinstance(text, str) and not text.lstrip().startswith(BLOCK_MARKER):
                parts.append(text)
    return "\n".join(parts)


def prepare(dsh: DshInstall, tmp_path: Path, base_url: str, template: str) -> dict[str, Any]:
    """A DSH home with a profile of ``template``, convmem installed in it."""
    dsh_home, project, home = tmp_path / "dsh-home", tmp_path / "project", tmp_path / "convmem"
    for folder in (dsh_home, project, home):
        folder.mkdir()
    (home / "config.toml").write_text(PRECONDITIONS, "utf-8")
    env = dsh_env(dsh_home, base_url)
    profile = f"convmem-{template}"
    created = subprocess.run(
        [str(dsh.dsh), profile, "--from-default-profile", template, "--dump-config"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stderr[-2000:]
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "convmem",
            "--home",
            str(home),
            "install",
            "dsh",
            "--profile",
            profile,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert installed.returncode == 0, installed.stderr
    dump = subprocess.run(
        [str(dsh.dsh), "--profile", profile, "--dump-config"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "convmem-plugin.mjs" in dump.stdout, "the profile does not load convmem's plugin"
    return {"env": env, "profile": profile, "dsh_home": dsh_home, "project": project, "home": home}


def diagnostics(home: Path) -> str:
    logs = [home / "dsh-plugin.log", home / "convmem.log"]
    return "\n".join(f"== {p}\n{p.read_text('utf-8')[-3000:]}" for p in logs if p.exists())


def test_sdk_memory_survives_compaction_and_preconditions_deny(
    dsh: DshInstall, tmp_path: Path
) -> None:
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        fm.add_rule(
            lambda r: "long report" in r.last_user_text,
            Reply(text="lorem ipsum dolor sit amet " * 2500, input_tokens=16000),
            once=True,
        )
        fm.add_rule(
            lambda r: "src/new_module.py" in r.last_user_text,
            Reply.tool("write", {"file_path": "src/new_module.py", "content": "x = 1\n"}),
            once=True,
        )
        setup = prepare(dsh, tmp_path, fm.base_url, "sdk")
        patch = tmp_path / "compact.yml"
        patch.write_text(COMPACT_PATCH, "utf-8")
        driver = tmp_path / "driver.py"
        driver.write_text(DRIVER, "utf-8")
        config = {
            "profile": setup["profile"],
            "dsh_home": str(setup["dsh_home"]),
            "project": str(setup["project"]),
            "base_url": fm.base_url,
            "patches": [str(patch)],
            "turns": TURNS,
        }
        run = subprocess.run(
            [str(dsh.python), str(driver), json.dumps(config)],
            env=setup["env"],
            cwd=setup["project"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        home: Path = setup["home"]
        assert run.returncode == 0, f"{run.stderr[-3000:]}\n{diagnostics(home)}"
        turns = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        requests: list[Request] = list(fm.requests)

    assert [t["task"] for t in turns] == TURNS
    session = turns[0]["session_id"]
    assert {t["session_id"] for t in turns} == {session}
    context = diagnostics(home)

    # The compaction really happened, in the pre-step of turn 7.
    assert turns[6]["types"].count("compaction/summary") == 1, turns[6]["types"]
    assert sum(t["types"].count("compaction/summary") for t in turns) == 1
    first_compact = next(i for i, r in enumerate(requests) if r.kind == "compact")
    mains = [(i, r) for i, r in enumerate(requests) if r.kind == "main"]

    # Before it, the constraint is visible, so no block restates it.
    for i, req in mains:
        if i < first_compact:
            assert all("3000" not in b for b in blocks_of(req.body)), req.seq

    # After it, the constraint reaches the model only through convmem's block.
    i, after = next((i, r) for i, r in mains if i > first_compact)
    assert TURNS[6] in after.last_user_text  # turn 7's own request
    blocks = blocks_of(after.body)
    assert any("3000 tokens at peak load" in b for b in blocks), (blocks, context)
    assert "3000" not in text_outside_blocks(after.body), "the compaction kept the constraint"
    last = mains[-1][1]
    assert any("3000 tokens at peak load" in b for b in blocks_of(last.body))

    # At most one insertion per turn (insertions are durable; they must not pile up).
    assert all(t["insertions"] <= 1 for t in turns), [t["insertions"] for t in turns]
    assert turns[6]["insertions"] == 1  # the re-injection after the compaction

    # The write broke the precondition: denied, and the model saw why.
    [denied] = turns[7]["tool_results"]
    assert denied["isError"] is True
    reason = 'convmem precondition: write on "src/new_module.py" denied'
    assert reason in texts(denied["content"])
    follow_up = next(
        r for _, r in mains if "tool_result" in json.dumps(r.body.get("messages", [])[-1:])
    )
    tool_results = [
        b
        for m in follow_up.body["messages"]
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert tool_results and tool_results[-1]["is_error"] is True
    assert reason in texts(tool_results[-1]["content"])
    assert not (setup["project"] / "src" / "new_module.py").exists()

    # convmem's own record: every turn captured, memory derived, the assembly logged.
    store = MemoryStore.open(str(home / "memory.sqlite"))
    try:
        prompts = [e.text for e in store.events(session, types=["user/message"])]
        assert all(task in prompts for task in TURNS)
        assert any("3000" in item.content for item in store.items(session))
        latest = store.latest_assembly_log(session)
        # the last turn's block, if any: nothing the blocks still in context do not say
        assert latest is not None
        assert latest["injected"] or any("earlier memory block" in r for r in latest["reasons"])
    finally:
        store.close()


def test_headless_turns_exit_resume_and_memory_command_is_plain_text(
    dsh: DshInstall, tmp_path: Path
) -> None:
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        setup = prepare(dsh, tmp_path, fm.base_url, "headless")

        def headless(task: str, *extra: str) -> list[dict[str, Any]]:
            proc = subprocess.run(
                [str(dsh.dsh), "--profile", setup["profile"], "--json", *extra, task],
                env=setup["env"],
                cwd=setup["project"],
                capture_output=True,
                text=True,
                timeout=90,  # a plugin holding dsh open would hang here
            )
            assert proc.returncode == 0, f"{proc.stderr[-2000:]}\n{diagnostics(setup['home'])}"
            return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]

        first = headless(CONSTRAINT)
        session = next(o["sessionId"] for o in first if o.get("type") == "session")
        headless("What is the token budget at peak load?", "--session-id", session)
        headless("/memory status", "--session-id", session)
        requests = fm.main_requests()

    # `/memory status` went to the model as an ordinary prompt; no command ran.
    assert requests[-1].last_user_text.startswith("/memory status")
    store = MemoryStore.open(str(setup["home"] / "memory.sqlite"))
    try:
        prompts = [e.text for e in store.events(session, types=["user/message"])]
        assert CONSTRAINT in prompts and "What is the token budget at peak load?" in prompts
        assert "/memory status" in prompts
        assert store.events(session, types=["command/invoke", "command/output"]) == []
        assert any("3000" in item.content for item in store.items(session))
    finally:
        store.close()
