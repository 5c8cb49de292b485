"""``convmem migrate``: SQLite to PostgreSQL and back, every table, verified."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import pg_server
from conftest import FIXTURES, Cli
from convmem.capture import Event
from convmem.config import load_settings
from convmem.core.db import MemoryDatabase
from convmem.core.schema import DERIVED_TABLES
from convmem.errors import StoreError
from convmem.ingest import ingest_file
from convmem.memory.migrate import SKILL_TABLES, TABLE_KEYS, copy_store, table_pages
from convmem.memory.pg_store import PgMemoryStore
from convmem.memory.store import SESSION_TABLES, MemoryStore
from convmem.runtime import MemoryRuntime
from convmem.skills import SkillManager

CLOCK = "2026-01-01T00:00:00Z"


@pytest.fixture
def pg(pg_pool: pg_server.SchemaPool) -> Iterator[pg_server.PgBackend]:
    backend = pg_server.PgBackend(pg_pool)
    yield backend
    backend.close()


def _filled(path: Path) -> None:
    """A SQLite store with a row in every table."""
    settings = load_settings(env={}).with_values(
        validation__enabled=True,
        validation__checks=({"type": "forbidden_terms", "terms": ["force push"]},),
    )
    rt = MemoryRuntime(MemoryStore.open(str(path), lambda: CLOCK), settings)
    for name in ("en_basic.jsonl", "zh_basic.jsonl", "mixed_tools.jsonl"):
        ingest_file(FIXTURES / name, rt.on_events)
    rt.on_events([Event("v", 1, "assistant/message", "I will force push now.")])
    rt.on_events([Event("v", 2, "compaction/summary", "summary kept in the archive")])
    rt.pre_step("en1", [], query="what is the token budget?")
    store = rt.store
    store.set_host_cursor("en1", "transcript", 42, {"head": "abc"})
    store.add_pending("en1", 3, "a retry")
    manager = SkillManager(store, settings)
    assert manager.ingest_paths([FIXTURES / "skills"]).problems == []
    rule = store.rule_rows()[0]
    manager.override(rule["id"], category="constraint")
    rt.close()


def test_every_table_is_copied() -> None:
    db = MemoryDatabase(":memory:")
    names = {
        r[0]
        for r in db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if r[0] not in ("meta", "sqlite_sequence", *DERIVED_TABLES) and "_fts" not in r[0]
    }
    db.close()
    assert set(TABLE_KEYS) == names == set(SESSION_TABLES) | set(SKILL_TABLES)


def test_round_trip_sqlite_postgresql_sqlite(
    cli: Cli, pg: pg_server.PgBackend, tmp_path: Path
) -> None:
    source = tmp_path / "source.sqlite"
    _filled(source)
    url = pg.url()
    there = cli("migrate", "--from", str(source), "--to", url, "--json")
    assert there.code == 0, there
    report = there.json()
    assert report["ok"] and report["sessions_verified"] == 4
    assert all(report["copied"][t] > 0 for t in TABLE_KEYS), report["copied"]
    back = cli("migrate", "--from", url, "--to", str(tmp_path / "back.sqlite"))
    assert back.code == 0 and "verified 4 sessions: identical" in back.out, back

    first, middle = MemoryStore.open(str(source)), PgMemoryStore.open(url)
    last = MemoryStore.open(str(tmp_path / "back.sqlite"))
    try:
        sessions = [s["session_id"] for s in first.sessions()]
        for session in sessions:
            assert first.export_session(session) == middle.export_session(session)
            assert first.export_session(session) == last.export_session(session)
        for table in SKILL_TABLES:
            assert list(table_pages(first, table)) == list(table_pages(last, table))
        # the copy finds the same rows (ranked with per-session statistics, see pg_search)
        found = [
            {e.seq for e, _ in s.search_events("en1", ["budget"], 100)} for s in (first, middle)
        ]
        assert found[0] == found[1] and found[0]
        # ...by word too: the copied messages are in PostgreSQL's word index and back
        messages = ("user/message",)
        by_word = [
            [e.seq for e, _ in s.search_events("en1", ["budget"], 100, messages)]
            for s in (first, middle, last)
        ]
        assert by_word[0] == by_word[1] == by_word[2] and by_word[0]
        # ids keep counting after the copied ones
        before = first.latest_assembly_log("en1")
        assert before is not None
        new_id = middle.insert_assembly_log(
            {"session_id": "en1", "budget": 1, "used_tokens": 0}, retention=50
        )
        assert new_id == before["id"] + 1
    finally:
        first.close()
        middle.close()
        last.close()


def test_the_target_must_be_empty(pg: pg_server.PgBackend, tmp_path: Path) -> None:
    source = MemoryStore.open(str(tmp_path / "s.sqlite"))
    target = pg.store()
    target.touch_session("already-here")
    with pytest.raises(StoreError, match="already holds data"):
        copy_store(source, target)
    source.close()


def test_a_missing_source_file_is_one_sentence(cli: Cli, tmp_path: Path) -> None:
    result = cli("migrate", "--from", str(tmp_path / "nope.sqlite"), "--to", str(tmp_path / "x"))
    assert result.code != 0 and "no SQLite store at" in result.err
    assert not (tmp_path / "x").exists()
