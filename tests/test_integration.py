"""Skills, validation, preconditions and compaction working together through the runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, Cli, ev, write_events
from convmem.capture import Event
from convmem.skills import SkillManager
from pipeline import runtime

SKILL = FIXTURES / "skills" / "release" / "SKILL.md"


def test_assemble_shows_resident_core_and_relevant_rules(tmp_path: Path) -> None:
    rt = runtime(tmp_path, assembly__locale="en")
    report = SkillManager(rt.store, rt.settings).ingest_paths([SKILL])
    assert not report.problems
    rt.on_events([Event("r", 1, "user/message", "Please release a new version and push the tag.")])
    text = rt.assemble("r", [], query="release a new version and push the tag to main").text
    core = text[text.index("## Memory: resident skills") : text.index("## Memory: relevant rules")]
    assert "[skill release] Cut a release of the orders-api service" in core
    assert "Run the full test suite" in core
    rules = text[text.index("## Memory: relevant rules") :]
    assert f"[rule {SKILL}:22] Never push directly to the main branch." in rules
    assert "[dynamic state: verify against current data; not a fixed check]" in rules


def test_skills_through_the_cli(cli: Cli, tmp_path: Path) -> None:
    assert cli("skills", "ingest", str(SKILL)).code == 0
    cli(
        "ingest",
        str(write_events(tmp_path / "e.jsonl", [ev(1, "user/message", "Cut a release now.", "k")])),
    )
    block = cli("assemble", "--session", "k", "--query", "release and tag it").out
    assert "## Memory: resident skills" in block and "## Memory: relevant rules" in block
    assert f"{SKILL}:" in block


CHECKS = (
    {"type": "required_terms", "id": "mention-budget", "terms": ["budget"], "block": True},
    {
        "type": "numbers_with_conditions",
        "id": "latency",
        "numbers": [{"value": 200, "unit": "ms", "conditions": ["p95", "1k rps"]}],
    },
)


def test_validation_logs_and_bounded_repair_reminders(tmp_path: Path) -> None:
    rt = runtime(
        tmp_path,
        assembly__locale="en",
        validation__enabled=True,
        validation__checks=CHECKS,
        validation__max_repair_attempts=2,
    )
    rt.on_events(
        [Event("v", 1, "user/message", "The p95 latency must stay under 200 ms at 1k rps.")]
    )
    reminders = []
    for n in range(4):
        seq = 2 + n * 2
        rt.on_events([Event("v", seq, "assistant/message", f"Latency is under 200 ms now ({n}).")])
        logs = rt.store.validation_logs("v")
        assert logs[-1]["event_seq"] == seq and not logs[-1]["ok"]
        text = rt.assemble("v", [], query="latency").text
        reminder_lines = [line for line in text.splitlines() if line.startswith("- [repair]")]
        reminders.append(reminder_lines)
        rt.on_events([Event("v", seq + 1, "user/message", "ok")])
    assert reminders[0] and "attempt 1 of 2" in reminders[0][0]
    assert reminders[1] and "attempt 2 of 2" in reminders[1][0]
    assert reminders[2] == [] and reminders[3] == []
    assert rt.store.count_repair_reminders("v") == 2
    status_run = rt.store.latest_validation_log("v")
    assert status_run is not None and status_run["violations"]


def test_precondition_denies_writes_to_missing_paths(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("x = 1\n")
    rt = runtime(
        tmp_path,
        validation__preconditions=({"must_exist": "src/**", "tools": ["Write", "Edit"]},),
    )
    ok = rt.pre_execute(
        "p", "Edit", {"file_path": str(project / "src" / "app.py"), "cwd": str(project)}
    )
    assert ok.allowed
    denied = rt.pre_execute("p", "Edit", {"file_path": "src/missing.py", "cwd": str(project)})
    assert not denied.allowed and denied.reason and "src/missing.py" in denied.reason
    other_tool = rt.pre_execute("p", "Read", {"file_path": "src/missing.py", "cwd": str(project)})
    assert other_tool.allowed


def test_compaction_brings_visible_items_back(tmp_path: Path) -> None:
    rt = runtime(tmp_path, assembly__locale="en")
    rt.on_events(
        [
            Event("c", 1, "user/message", "The p95 latency must stay under 200 ms at 1k rps."),
            Event("c", 2, "assistant/message", "Understood."),
            Event("c", 3, "user/message", "Now write the load test."),
        ]
    )
    before = rt.assemble("c", None, query="latency target for the load test")
    assert "under 200 ms" not in before.text
    assert any("visible" in o["reason"] for o in before.omitted)
    rt.on_events(
        [
            Event("c", 4, "compaction/start", "compacting"),
            Event("c", 5, "compaction/summary", "Summary: the user wants a load test." * 200),
            Event(
                "c",
                6,
                "user/message",
                "Summary: the user wants a load test.",
                source_kind="compact-checkpoint",
            ),
            Event("c", 7, "compaction/end", "done"),
            Event("c", 8, "user/message", "What latency target did we agree?"),
        ]
    )
    after = rt.assemble("c", None, query="What latency target did we agree?")
    assert "The p95 latency must stay under 200 ms at 1k rps." in after.text
    assert rt.store.archive_text("c", 5) is not None  # large summaries are archived
    status = __import__("convmem.diagnostics", fromlist=["status"]).status(
        rt.store, rt.settings, "c"
    )
    assert status["compatibility"]["detected"] == "compaction-basic"
    assert status["compatibility"]["compaction_events"]["compaction/start"] == 1


@pytest.mark.sqlite_only  # SQLite and FTS5 versions (PostgreSQL: test_pg_store)
def test_status_reports_everything(cli: Cli, tmp_path: Path) -> None:
    cli("ingest", str(FIXTURES / "mixed_tools.jsonl"))
    cli("assemble", "--session", "mix1", "--query", "batch size")
    data = cli("status", "--json", "--check").json()
    assert data["store"]["schema_version"] == data["store"]["schema_expected"]
    assert data["store"]["fts5_trigram"] is True and data["store"]["sqlite_version"]
    assert data["integrity"] == {"ok": True, "problems": []}
    assert data["latest_assembly"]["session_id"] == "mix1"
    assert data["sessions"][0]["checkpoints"]["last_extract_seq"] == 45
    comp = data["compatibility"]
    assert comp["policy"] == "auto" and comp["detected"] == "compaction-basic"
    assert comp["not_observable"]
    human = cli("status").out
    assert "compaction policy: auto" in human and "latest assembly" in human


def test_a_failed_compaction_does_not_move_the_boundary(tmp_path: Path) -> None:
    rt = runtime(tmp_path, assembly__locale="en")
    rt.on_events(
        [
            Event("f", 1, "user/message", "The p95 latency must stay under 200 ms at 1k rps."),
            Event("f", 2, "compaction/start", "compacting"),
            Event("f", 3, "compaction/summary", "Summary: a latency target was set."),
            Event("f", 4, "compaction/end", "done"),
            Event("f", 5, "user/message", "We must never deploy on Fridays."),
            Event("f", 6, "compaction/start", "compacting again"),
            Event("f", 7, "compaction/end", "error: summary is not smaller than the input"),
        ]
    )
    text = rt.assemble("f", None, query="latency and deploy days").text
    assert "under 200 ms" in text  # compacted away: comes back
    assert "deploy on Fridays" not in text.split("## Memory: notices")[0]  # still visible
