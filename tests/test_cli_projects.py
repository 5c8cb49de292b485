"""The project commands, as real subprocesses on both backends.

``ingest --project`` files sessions under a project; ``assemble/search/explain/items
--project``, ``status``, ``export --project``, ``purge --project --yes`` and ``forget``.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Cli, ev, write_events

DEPLOY = "Deploy only to eu-west-1, never to us-east-1."
PG16 = "We decided to use PostgreSQL 16 for the orders service."
PG17 = "Actually, let's use PostgreSQL 17 for the orders service instead."
BILLING = "We decided to use MySQL 8 for the billing service."


def _session(path: Path, session: str, *texts: str, day: int = 1) -> Path:
    events = []
    for n, text in enumerate(texts):
        when = f"2026-11-{day:02d}T10:{n:02d}:00Z"
        events.append(ev(2 * n + 1, "user/message", text, session=session, time=when))
        events.append(ev(2 * n + 2, "assistant/message", "Noted.", session=session, time=when))
    return write_events(path, events)


def _project(cli: Cli, tmp_path: Path) -> None:
    """Project ``app`` with two sessions (a correction in the second), ``ops`` with one."""
    for name, project, texts, day in (
        ("a1", "app", (DEPLOY, PG16), 1),
        ("a2", "app", (PG17,), 2),
        ("b1", "ops", (BILLING,), 2),
    ):
        done = cli(
            "ingest",
            "--project",
            project,
            str(_session(tmp_path / f"{name}.jsonl", name, *texts, day=day)),
        )
        assert done.code == 0, done


def test_a_new_session_of_a_project_gets_its_standing_memory(cli: Cli, tmp_path: Path) -> None:
    _project(cli, tmp_path)
    out = cli("assemble", "--project", "app", "--json")
    assert out.code == 0, out
    data = out.json()
    assert data["session_id"] == "(new session)" and data["injected"]
    text = data["text"]
    assert DEPLOY in text and "PostgreSQL 17" in text and "MySQL" not in text
    # item lines carry kind and origin in their tag; a notice line only the id
    current = [x for x in text.splitlines() if x.startswith("- [mem ") and " · " in x.split("]")[0]]
    assert not any("PostgreSQL 16" in x for x in current), text
    assert "earlier session a1]" in text and "earlier session a2]" in text  # English is spoken
    # nothing was logged for a session that does not exist
    assert cli("explain", "--project", "app").code != 0


def test_assemble_for_a_session_names_its_project(cli: Cli, tmp_path: Path) -> None:
    _project(cli, tmp_path)
    ok = cli("assemble", "--session", "a2", "--project", "app", "--query", "deploy region")
    assert ok.code == 0 and DEPLOY in ok.out, ok
    wrong = cli("assemble", "--session", "b1", "--project", "app")
    assert wrong.code == 2 and "is not a session of project 'app'" in wrong.err, wrong
    unknown = cli("assemble", "--project", "nope")
    assert unknown.code == 1 and "no project 'nope'" in unknown.err, unknown
    neither = cli("assemble")
    assert neither.code == 2 and "--session" in neither.err


def test_search_explain_and_items_by_project(cli: Cli, tmp_path: Path) -> None:
    _project(cli, tmp_path)
    found = cli("search", "PostgreSQL", "--project", "app", "--json").json()
    assert {r["session_id"] for r in found["items"]} <= {"a1", "a2"}
    assert any("PostgreSQL 17" in r["content"] for r in found["items"])
    assert not any("MySQL" in r["text"] for r in found["evidence"])
    table = cli("search", "service", "--project", "ops")
    assert table.code == 0 and "b1" in table.out and "a1" not in table.out
    assert cli("assemble", "--session", "a2", "--query", "region").code == 0
    explained = cli("explain", "--project", "app", "--json").json()
    assert explained["session_id"] == "a2"
    items = cli(
        "items", "--project", "app", "--status", "active", "--status", "superseded", "--json"
    ).json()
    assert {i["session_id"] for i in items} == {"a1", "a2"}
    assert {i["status"] for i in items if "PostgreSQL 16" in i["content"]} == {"superseded"}
    both = cli("items", "--session", "a1", "--project", "app")
    assert both.code == 2


def test_status_lists_projects_with_their_sessions(cli: Cli, tmp_path: Path) -> None:
    _project(cli, tmp_path)
    data = cli("status", "--json").json()
    projects = {p["project"]: set(p["sessions"]) for p in data["projects"]}
    assert projects == {"app": {"a1", "a2"}, "ops": {"b1"}}
    human = cli("status").out
    assert "project" in human and "app" in human and "a1" in human


def test_export_and_purge_a_project(cli: Cli, tmp_path: Path) -> None:
    _project(cli, tmp_path)
    out = tmp_path / "app.json"
    assert cli("export", "--project", "app", "--output", str(out)).code == 0
    exported = json.loads(out.read_text())
    assert exported["project"] == "app" and sorted(exported["sessions"]) == ["a1", "a2"]
    assert len(exported["sessions"]["a1"]["events"]) == 4
    back = cli("ingest", str(out))
    assert back.code == 1 and "is a convmem export" in back.err, back
    refused = cli("purge", "--project", "app")
    assert refused.code == 2 and "--yes" in refused.err
    done = cli("purge", "--project", "app", "--yes")
    assert done.code == 0 and "project app (2 sessions)" in done.out, done
    data = cli("status", "--json").json()
    assert [p["project"] for p in data["projects"]] == ["ops"]
    assert data["counts"]["events"] == 2
    assert cli("purge", "--project", "app", "--yes").code == 1


def test_forget_retracts_across_the_project(cli: Cli, tmp_path: Path) -> None:
    _project(cli, tmp_path)
    again = cli(
        "ingest", "--project", "app", str(_session(tmp_path / "a3.jsonl", "a3", DEPLOY, day=3))
    )
    assert again.code == 0
    items = cli("items", "--project", "app", "--json").json()
    twins = [i["id"] for i in items if i["content"] == DEPLOY]
    assert len(twins) == 2
    done = cli("forget", twins[0], "--reason", "we moved to eu-central-1")
    assert done.code == 0 and done.out.count(": retracted") == 2, done
    text = cli("assemble", "--project", "app").out
    assert DEPLOY not in text
    shown = cli("inspect", twins[-1], "--json").json()
    assert shown["lifecycle"][-1]["detail"]["reason"] == "forgotten: we moved to eu-central-1"
    missing = cli("forget", "mem_nope")
    assert missing.code == 1 and "no memory item" in missing.err


def test_inspect_shows_history_across_sessions(cli: Cli, tmp_path: Path) -> None:
    _project(cli, tmp_path)
    items = cli("items", "--project", "app", "--json").json()
    new = next(i for i in items if "PostgreSQL 17" in i["content"])
    out = cli("inspect", new["id"])
    assert out.code == 0, out
    assert "project app, session a2" in out.out
    history = out.out.split("history:")[1].split("lifecycle:")[0]
    lines = [x for x in history.splitlines() if x.strip()]
    assert "session a1" in lines[0] and "superseded" in lines[0]
    assert "session a2" in lines[1] and lines[1].startswith(" *")


def test_a_session_keeps_its_project_and_ingest_says_so(cli: Cli, tmp_path: Path) -> None:
    _project(cli, tmp_path)
    again = cli("ingest", "--project", "ops", str(tmp_path / "a1.jsonl"))
    assert again.code == 0
    assert "note: session a1 was already filed under project 'app' and stays there" in again.err
    same = cli("ingest", "--project", "app", str(tmp_path / "a1.jsonl"))
    assert "note:" not in same.err
