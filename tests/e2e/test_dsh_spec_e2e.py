"""The real DSH 0.2.1 runtime (SDK) with convmem: where the block goes, what a blocking
validation failure does, and what the compaction settings change.

Each test runs one SDK session of several turns against the stand-in model; a small
context window and one long reply force a compaction in the pre-step of turn 7, as in
``test_dsh_e2e.py``. The request bodies the model received are the ground truth.
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

from fake_model import FakeModel, Reply, Request, all_user_text
from hosts import DshInstall, convmem
from test_dsh_e2e import COMPACT_PATCH, CONSTRAINT, blocks_of, diagnostics, prepare

pytestmark = pytest.mark.e2e

BEFORE = [
    CONSTRAINT,
    "Let us talk about the cache layer.",
    "Any thoughts on retries?",
    "And logging?",
    "OK, noted.",
    "Please write the long report now.",  # the long reply: the next pre-step compacts
    "What is the token budget at peak load?",  # turn 7: after the compaction
]
VALIDATION = (
    "[validation]\nenabled = true\nmax_repair_attempts = 2\n"
    'checks = [{id = "no-force", type = "forbidden_terms", terms = ["force push"], block = true}]\n'
)
REMINDER = "Repair reminder (convmem validation, attempt"
DRIVER = r"""
import json, sys
from deepseek_harness import DeepSeekHarness

cfg = json.loads(sys.argv[1])
harness = DeepSeekHarness(
    profile=cfg["profile"], dsh_home=cfg["dsh_home"], cwd=cfg["project"],
    base_url=cfg["base_url"], api_key="fake-key", provider="deepseek-official",
    model="deepseek-flash", patches=tuple(cfg["patches"]),
)


def text_of(content):
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


session = None
with harness:
    for task in cfg["turns"]:
        result = harness.run(task, session_id=session) if session else harness.run(task)
        session = result.session_id
        users = [
            {
                "seq": e.get("seq"),
                "kind": ((e.get("data") or {}).get("source") or {}).get("kind"),
                "text": text_of((e.get("data") or {}).get("content")),
            }
            for e in result.events
            if e.get("type") == "user/message"
        ]
        print(json.dumps({
            "session_id": session,
            "task": task,
            "final": result.final_response,
            "types": [e.get("type") for e in result.events],
            "users": users,
        }), flush=True)
"""


def run_session(
    dsh: DshInstall, tmp_path: Path, fm: FakeModel, turns: list[str], config: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run ``turns`` as one SDK session with convmem installed and ``config`` as its
    settings; the turns as the driver printed them, and the setup."""
    fm.add_rule(
        lambda r: "long report" in r.last_user_text,
        Reply(text="lorem ipsum dolor sit amet " * 2500, input_tokens=16000),
        once=True,
    )
    setup = prepare(dsh, tmp_path, fm.base_url, "sdk")
    (setup["home"] / "config.toml").write_text(config, "utf-8")
    patch = tmp_path / "compact.yml"
    patch.write_text(COMPACT_PATCH, "utf-8")
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, "utf-8")
    cfg = {
        "profile": setup["profile"],
        "dsh_home": str(setup["dsh_home"]),
        "project": str(setup["project"]),
        "base_url": fm.base_url,
        "patches": [str(patch)],
        "turns": turns,
    }
    run = subprocess.run(
        [str(dsh.python), str(driver), json.dumps(cfg)],
        env=setup["env"],
        cwd=setup["project"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, f"{run.stderr[-3000:]}\n{diagnostics(setup['home'])}"
    out = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert [t["task"] for t in out] == turns
    assert out[6]["types"].count("compaction/summary") == 1, out[6]["types"]
    return out, setup


def turn_requests(requests: list[Request], task: str) -> list[Request]:
    """The main requests of the turn whose prompt is ``task`` (its repair steps too)."""
    mains = [r for r in requests if r.kind == "main"]
    first = next(i for i, r in enumerate(mains) if task in r.last_user_text)
    rest = mains[first + 1 :]
    end = next((i for i, r in enumerate(rest) if not r.last_user_text.startswith(REMINDER)), None)
    return [mains[first], *rest[:end]]


def test_block_placement_repairs_and_the_delivered_message(dsh: DshInstall, tmp_path: Path) -> None:
    publish, release = "How do we publish the branch?", "And the release branch?"
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        fm.add_rule(
            lambda r: publish in r.last_user_text and REMINDER not in r.last_user_text,
            Reply("Just force push it."),
        )
        fm.add_rule(
            lambda r: r.last_user_text.startswith(REMINDER) and release not in r.user_text,
            Reply("Open a pull request and merge it once checks pass."),
        )
        fm.add_rule(lambda r: release in r.user_text, Reply("Force push the release branch too."))
        turns, setup = run_session(dsh, tmp_path, fm, [*BEFORE, publish, release], VALIDATION)
        requests = list(fm.requests)
    home: Path = setup["home"]
    session = turns[0]["session_id"]
    context = diagnostics(home)

    # --- placement: right after the step's own input, before DSH's runtime context -----
    users = [u for u in turns[6]["users"] if u["kind"] in ("user", "convmem", "runtime-context")]
    kinds = [u["kind"] for u in users]
    assert "convmem" in kinds, (turns[6]["users"], context)
    at = kinds.index("convmem")
    assert kinds[at - 1] == "user" and users[at - 1]["text"] == BEFORE[6]
    assert kinds[at + 1 :] == ["runtime-context"], kinds
    [asked] = turn_requests(requests, BEFORE[6])
    seen = all_user_text(asked.body)
    block = blocks_of(asked.body)[-1]
    runtime_context = users[at + 1]["text"]
    assert seen.rindex(BEFORE[6]) < seen.rindex(block) < seen.rindex(runtime_context)
    assert "3000 tokens at peak load" in block

    # --- a reply that breaks a blocking check gets one repair step, in the same turn ---
    first = turn_requests(requests, publish)
    assert len(first) == 2, [r.last_user_text[:80] for r in first]
    assert first[1].last_user_text.startswith(f"{REMINDER} 1 of 2)")
    assert "[no-force]" in first[1].last_user_text
    assert turns[7]["final"].startswith("Open a pull request")
    assert turns[7]["types"].count("turn/start") == 1  # the repair is a step, not a turn
    # --- and the repairs stop when the attempts are used up -----------------------------
    second = turn_requests(requests, release)
    assert len(second) == 2, [r.last_user_text[:80] for r in second]
    assert second[1].last_user_text.startswith(f"{REMINDER} 2 of 2)")
    assert turns[8]["final"].startswith("Force push")  # left as it is: no third attempt

    store = MemoryStore.open(str(home / "memory.sqlite"))
    try:
        logs = store.validation_logs(session)
        assert [bool(v["blocked"]) for v in logs][-4:] == [True, False, True, False], logs
        assert sum(bool(v["blocked"]) for v in logs) == 2
        assert store.count_repair_reminders(session) == 2
        # --- the delivered block is linked to the message DSH stored it as ----------------
        delivered = [
            e for e in store.events(session, types=["user/message"]) if e.source_kind == "convmem"
        ]
        blocks = [e for e in delivered if e.text.startswith(BLOCK_MARKER)]
        assert blocks, delivered
        linked = {e.seq for e in blocks}
        injected = [
            store.assembly_log(i)
            for i in range(1, 500)
            if (log := store.assembly_log(i)) and log["session_id"] == session and log["injected"]
        ]
        assert injected and all(log and log["message_seq"] in linked for log in injected)
    finally:
        store.close()
    explained = convmem(home, "explain", "--session", session)
    assert "latest validation:" in explained.stdout and "1 violation(s)" in explained.stdout


@pytest.mark.parametrize("setting", ["reinject-off", "billion-context"])
def test_compaction_settings_change_what_dsh_receives(
    dsh: DshInstall, tmp_path: Path, setting: str
) -> None:
    correction = "Actually, the token budget must stay under 2500 tokens at peak load."
    config = (
        "[compatibility]\nreinject_after_compaction = false\n"
        if setting == "reinject-off"
        else '[compatibility]\ncompaction_policy = "billion-context"\n'
    )
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        turns, setup = run_session(dsh, tmp_path, fm, [*BEFORE, correction], config)
        requests = list(fm.requests)
    session = turns[0]["session_id"]
    [after] = turn_requests(requests, BEFORE[6])
    [corrected] = turn_requests(requests, correction)
    store = MemoryStore.open(str(setup["home"] / "memory.sqlite"))
    try:
        latest = store.latest_assembly_log(session)
    finally:
        store.close()
    assert latest is not None
    if setting == "reinject-off":
        # nothing brings the compacted constraint back
        assert not any("3000" in b for b in blocks_of(after.body))
        assert "3000 tokens at peak load" not in all_user_text(after.body)
        assert turns[6]["users"] and all(u["kind"] != "convmem" for u in turns[6]["users"])
    else:
        # once after the compaction...
        assert any("3000 tokens at peak load" in b for b in blocks_of(after.body))
        # ...and no ordinary block on the next turn
        assert all(u["kind"] != "convmem" for u in turns[7]["users"]), turns[7]["users"]
        assert len(blocks_of(corrected.body)) == len(blocks_of(after.body))
        assert not latest["injected"]
        assert any("billion-context" in r for r in latest["reasons"]), latest["reasons"]
