"""Claude Code 2.1.328, for real: the Stop hook acts on a blocking validation failure,
the compaction settings change what the model receives, and each delivered block is
linked to the transcript line that carries it. The stand-in model's request log is
the ground truth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from convmem.memory.store import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_model import FakeModel, Reply, all_user_text
from hosts import claude_env, convmem
from test_claude_code_e2e import BUDGET, _blocks, _install

pytestmark = pytest.mark.e2e

REMINDER = "Repair reminder (convmem validation, attempt"
VALIDATION = (
    "[validation]\nenabled = true\nmax_repair_attempts = 2\n"
    'checks = [{id = "no-force", type = "forbidden_terms", terms = ["force push"], block = true}]\n'
)


def prompt(
    claude: Path, project: Path, env: dict[str, str], text: str, session: str | None
) -> dict[str, Any]:
    cmd = [str(claude), "-p", text, "--output-format", "json"]
    if session:
        cmd += ["--resume", session]
    proc = subprocess.run(
        cmd, cwd=project, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert proc.returncode == 0, f"{text[:60]!r}: {proc.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_the_stop_hook_repairs_a_blocked_reply_a_bounded_number_of_times(
    claude: Path, tmp_path: Path
) -> None:
    home, project, store = tmp_path / "home", tmp_path / "proj", tmp_path / "convmem"
    home.mkdir()
    _install(project, store, VALIDATION)
    publish, release = "How do we publish the branch?", "And the release branch?"
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        fm.add_rule(
            lambda r: publish in r.last_user_text and REMINDER not in r.last_user_text,
            Reply("Just force push it."),
        )
        fm.add_rule(
            lambda r: REMINDER in r.last_user_text and release not in r.user_text,
            Reply("Open a pull request and merge it once checks pass."),
        )
        fm.add_rule(lambda r: release in r.user_text, Reply("Force push the release branch too."))
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store))
        first = prompt(claude, project, env, publish, None)
        sid = str(first["session_id"])
        after_first = list(fm.main_requests())
        second = prompt(claude, project, env, release, sid)
        everything = list(fm.main_requests())

    # the blocked reply got one repair, with the reminder as the model's next input
    assert len(after_first) == 2, [r.last_user_text[:100] for r in after_first]
    assert f"{REMINDER} 1 of 2)" in after_first[1].last_user_text
    assert "[no-force]" in after_first[1].last_user_text
    assert first["result"].startswith("Open a pull request"), first["result"]
    # the next failure gets the last attempt, and then the reply stands
    later = everything[len(after_first) :]
    assert len(later) == 2, [r.last_user_text[:100] for r in later]
    assert f"{REMINDER} 2 of 2)" in later[1].last_user_text
    assert second["result"].startswith("Force push"), second["result"]

    db = MemoryStore.open(str(store / "memory.sqlite"))
    try:
        logs = db.validation_logs(sid)
        assert [bool(v["blocked"]) for v in logs][-4:] == [True, False, True, False], logs
        assert sum(bool(v["blocked"]) for v in logs) == 2
        assert db.count_repair_reminders(sid) == 2
    finally:
        db.close()
    explained = convmem(store, "status", "--session", sid)
    assert "latest validation:" in explained.stdout
    assert not (store / "convmem.log").exists(), (store / "convmem.log").read_text()


def test_a_reply_repeated_word_for_word_after_a_block_is_judged_again(
    claude: Path, tmp_path: Path
) -> None:
    """The model answers the repair reminder with the very reply it was blocked for:
    a new reply all the same, blocked again while attempts remain."""
    home, project, store = tmp_path / "home", tmp_path / "proj", tmp_path / "convmem"
    home.mkdir()
    _install(project, store, VALIDATION)
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        fm.add_rule(lambda r: True, Reply("Just force push it."))
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store))
        result = prompt(claude, project, env, "How do we publish the branch?", None)
        asked = list(fm.main_requests())
    assert len(asked) == 3, [r.last_user_text[:100] for r in asked]
    assert f"{REMINDER} 1 of 2)" in asked[1].last_user_text
    assert f"{REMINDER} 2 of 2)" in asked[2].last_user_text
    assert result["result"] == "Just force push it."
    db = MemoryStore.open(str(store / "memory.sqlite"))
    try:
        sid = str(result["session_id"])
        logs = db.validation_logs(sid)
        assert [bool(v["blocked"]) for v in logs] == [True, True, False], logs
        assert db.count_repair_reminders(sid) == 2
        replies = [e for e in db.events(sid) if e.type == "assistant/message"]
        assert [e.text for e in replies] == ["Just force push it."] * 3
    finally:
        db.close()


@pytest.mark.parametrize("setting", ["auto", "reinject-off", "billion-context"])
def test_compaction_settings_change_what_claude_code_receives(
    claude: Path, tmp_path: Path, setting: str
) -> None:
    home, project, store = tmp_path / "home", tmp_path / "proj", tmp_path / "convmem"
    home.mkdir()
    config = {
        "auto": "",
        "reinject-off": "[compatibility]\nreinject_after_compaction = false\n",
        "billion-context": '[compatibility]\ncompaction_policy = "billion-context"\n',
    }[setting]
    _install(project, store, config)
    question = "What was the token budget again?"
    follow_up = "Actually, the token budget must stay under 2500 tokens at peak load."
    with FakeModel(log_path=tmp_path / "requests.jsonl") as fm:
        env = claude_env(home, fm.base_url, CONVMEM_HOME=str(store))
        sid = str(prompt(claude, project, env, BUDGET, None)["session_id"])
        prompt(claude, project, env, "/compact", sid)
        prompt(claude, project, env, question, sid)
        asked = fm.main_requests()[-1].body
        prompt(claude, project, env, follow_up, sid)
        corrected = fm.main_requests()[-1].body
    assert question in all_user_text(asked)
    db = MemoryStore.open(str(store / "memory.sqlite"))
    try:
        latest = db.latest_assembly_log(sid)
        hook_lines = {
            e.seq for e in db.events(sid, types=["user/message"]) if e.source_kind == "hook-context"
        }
        delivered = [
            log
            for i in range(1, 200)
            if (log := db.assembly_log(i)) and log["session_id"] == sid and log["injected"]
        ]
    finally:
        db.close()
    assert latest is not None
    if setting == "reinject-off":
        assert not any(BUDGET in b for b in _blocks(asked))
        assert "3000 tokens" not in all_user_text(asked)  # the compaction took it
        assert delivered == []
        return
    assert any(BUDGET in b for b in _blocks(asked)), _blocks(asked)
    # every block Claude Code delivered is linked to its transcript line
    assert delivered and all(log["message_seq"] in hook_lines for log in delivered), (
        [log["message_seq"] for log in delivered],
        hook_lines,
    )
    if setting == "billion-context":
        # once after the compaction, then no ordinary block on the next prompt
        assert len(_blocks(corrected)) == len(_blocks(asked))
        assert not latest["injected"]
        assert any("billion-context" in r for r in latest["reasons"]), latest["reasons"]
    else:
        # auto: the correction is news, so the next prompt's block carries it
        assert len(_blocks(corrected)) > len(_blocks(asked))
        assert "2500 tokens" in _blocks(corrected)[-1]
