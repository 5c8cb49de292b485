"""Helpers for pipeline tests: a runtime over a real store, fed from fixtures.

The store is on the backend under test (``conftest.backend``): a SQLite file, or a
fresh PostgreSQL schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import FIXTURES, new_store
from convmem.config import load_settings
from convmem.ingest import ingest_file
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime

FIXED_CLOCK = "2026-01-01T00:00:00Z"


def runtime(tmp_path: Path, fixture: str | None = None, **settings: Any) -> MemoryRuntime:
    """A runtime on a fresh database file with a fixed clock, optionally fed a fixture."""
    cfg = load_settings(env={}).with_values(**settings)
    rt = MemoryRuntime(new_store(tmp_path / "m.sqlite", lambda: FIXED_CLOCK), cfg)
    if fixture:
        report = ingest_file(FIXTURES / fixture, rt.on_events)
        assert not report.problems, report.problems
    return rt


def fail_item_inserts(store: MemoryStore) -> None:
    """Make every insert into ``memory_items`` fail, the way a full disk would.

    The DDL differs by backend on purpose: SQLite's trigger raises with RAISE(ABORT),
    PostgreSQL's with a PL/pgSQL function.
    """
    if store.backend == "postgresql":
        store.db.execute(
            "CREATE FUNCTION fail_items() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN RAISE EXCEPTION 'disk I/O error'; END $$"
        )
        store.db.execute(
            "CREATE TRIGGER fail_items BEFORE INSERT ON memory_items"
            " FOR EACH ROW EXECUTE FUNCTION fail_items()"
        )
    else:
        store.db.execute(
            "CREATE TRIGGER fail_items BEFORE INSERT ON memory_items BEGIN"
            " SELECT RAISE(ABORT, 'disk I/O error'); END"
        )


def allow_item_inserts(store: MemoryStore) -> None:
    """Undo :func:`fail_item_inserts`."""
    if store.backend == "postgresql":
        store.db.execute("DROP TRIGGER fail_items ON memory_items")
        store.db.execute("DROP FUNCTION fail_items()")
    else:
        store.db.execute("DROP TRIGGER fail_items")
