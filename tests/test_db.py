from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from convmem.core.db import MemoryDatabase, _explain
from convmem.core.schema import MIGRATIONS, SCHEMA_VERSION
from convmem.errors import SchemaTooNewError, StoreError


def test_migrates_empty_file_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "data" / "m.sqlite"
    db = MemoryDatabase(path)
    assert db.schema_version() == SCHEMA_VERSION
    names = {r["key"] for r in db.query("SELECT key FROM meta WHERE key LIKE 'migration:%'")}
    assert names == {f"migration:{name}" for name, _ in MIGRATIONS}
    db.close()
    again = MemoryDatabase(path)
    assert again.migrate() == []
    assert again.integrity_check() == []
    mode = again.scalar("PRAGMA journal_mode")
    assert mode == "wal"
    again.close()
    assert (path.stat().st_mode & 0o777) == 0o600
    assert (path.parent.stat().st_mode & 0o777) == 0o700


def test_migrates_oldest_schema_forward(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = MemoryDatabase(path, migrate=False)
    with db.transaction():
        MIGRATIONS[0][1](db)
        db.execute("INSERT INTO meta(key, value) VALUES ('schema', '1')")
    db.execute(
        "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at)"
        " VALUES ('s', 1, 'user/message', 'kept', 'h', 'now')"
    )
    db.close()
    db = MemoryDatabase(path)
    assert db.schema_version() == SCHEMA_VERSION
    assert db.scalar("SELECT text FROM events") == "kept"
    assert db.scalar("SELECT count(*) FROM validation_logs") == 0


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    MemoryDatabase(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNewError, match="newer"):
        MemoryDatabase(path)


def test_nested_transactions_roll_back_inner_only() -> None:
    db = MemoryDatabase(":memory:")
    with db.transaction():
        db.execute("INSERT INTO meta VALUES ('a', '1')")
        with pytest.raises(RuntimeError), db.transaction():
            db.execute("INSERT INTO meta VALUES ('b', '2')")
            raise RuntimeError
    assert db.scalar("SELECT value FROM meta WHERE key = 'a'") == "1"
    assert db.scalar("SELECT value FROM meta WHERE key = 'b'") is None


def test_garbage_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="damaged or not a convmem database"):
        MemoryDatabase(path)


def test_integrity_check_reports_damage_and_never_repairs(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite"
    db = MemoryDatabase(path)
    with db.transaction():
        for i in range(2000):
            db.execute(
                "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at)"
                " VALUES ('s', ?, 'user/message', ?, 'h', 'now')",
                (i, f"message number {i} " * 20),
            )
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = bytearray(path.read_bytes())
    page = 4096
    # pages of the second half (rows and index entries, not the schema or meta, so the
    # file still opens: damage at open is test_garbage_file_is_a_clear_error's case)
    for offset in range(len(data) // page // 2 * page, len(data) - page, page * 3):
        data[offset + 10 : offset + 200] = b"\xff" * 190
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    damaged = MemoryDatabase(path)
    problems = damaged.integrity_check()
    damaged.close()
    assert problems, "damage went unnoticed"
    assert path.read_bytes()[: len(before) // 2] == before[: len(before) // 2]


def test_a_damaged_full_text_index_is_reported_as_damage() -> None:
    # what SQLite says when a damaged page sits inside an FTS5 table's shadow tables
    error = _explain(sqlite3.DatabaseError("vtable constructor failed: events_fts"), "/d/m.sqlite")
    assert isinstance(error, StoreError)
    assert "the database /d/m.sqlite is damaged" in str(error)
    assert "convmem status --check" in str(error)
