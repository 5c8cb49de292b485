"""Copy a whole store into an empty one (SQLite to PostgreSQL and back), then verify.

This is storage code: it pages through every table by primary key (the only place
outside the store classes that reads tables raw), hands each page to the target's
``import_rows`` in one transaction, and then checks the copy the way a user would
see it: ``export_session`` of every session and every skill row must be equal on
both sides. Problems are returned, not raised, except that the target must start
empty (a copy merged into existing rows could not be verified).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from convmem.errors import StoreError
from convmem.memory.store import SESSION_TABLES, MemoryStore

#: Tables outside ``SESSION_TABLES`` that hold data (skills and rules).
SKILL_TABLES = ("skill_versions", "skill_files", "rules", "rule_overrides")

#: Every data table and the key that orders and pages its rows, parents first.
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "sessions": ("session_id",),
    "events": ("session_id", "seq"),
    "archive": ("session_id", "ref"),
    "memory_items": ("id",),
    "memory_events": ("id",),
    "task_state": ("session_id",),
    "checkpoints": ("session_id",),
    "pending_extraction": ("session_id", "seq"),
    "assembly_logs": ("id",),
    "validation_logs": ("id",),
    "host_cursors": ("session_id", "source"),
    "skill_versions": ("id",),
    "skill_files": ("name",),
    "rules": ("id",),
    "rule_overrides": ("rule_id",),
}
PAGE = 2000


@dataclass
class MigrationReport:
    """What was copied, how many sessions were verified, and what did not match."""

    source: str
    target: str
    copied: dict[str, int] = field(default_factory=dict)
    sessions: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "copied": self.copied,
            "sessions_verified": self.sessions,
            "ok": self.ok,
            "problems": self.problems,
        }


def table_pages(store: MemoryStore, table: str, size: int = PAGE) -> Iterator[list[dict[str, Any]]]:
    """Every row of ``table`` as dicts, in key order, ``size`` rows at a time."""
    key = TABLE_KEYS[table]
    cols = ", ".join(key)
    after: tuple[Any, ...] | None = None
    while True:
        if after is None:
            rows = store.db.query(f"SELECT * FROM {table} ORDER BY {cols} LIMIT ?", (size,))
        else:
            marks = ", ".join("?" * len(key))
            rows = store.db.query(
                f"SELECT * FROM {table} WHERE ({cols}) > ({marks}) ORDER BY {cols} LIMIT ?",
                (*after, size),
            )
        if not rows:
            return
        page = [dict(r) for r in rows]
        yield page
        after = tuple(page[-1][k] for k in key)


def _where(store: MemoryStore) -> str:
    return str(getattr(store.db, "path", store.backend))


def _session_ids(store: MemoryStore) -> list[str]:
    found: set[str] = set()
    for table in SESSION_TABLES:
        found.update(
            str(r["session_id"]) for r in store.db.query(f"SELECT DISTINCT session_id FROM {table}")
        )
    return sorted(found)


def copy_store(
    source: MemoryStore,
    target: MemoryStore,
    progress: Callable[[str, int], None] | None = None,
) -> MigrationReport:
    """Copy every table of ``source`` into the empty ``target``; verify; report."""
    report = MigrationReport(_where(source), _where(target))
    held = {t: n for t, n in target.table_counts().items() if n} | (
        {"skill_files": 1} if target.has_skills() else {}
    )
    if held:
        listed = ", ".join(f"{n} {t}" for t, n in sorted(held.items()))
        raise StoreError(
            f"the target {report.target} already holds data ({listed}); migrate into an empty"
            " store (a new SQLite path or an empty PostgreSQL database)"
        )
    for table in TABLE_KEYS:
        copied = 0
        for page in table_pages(source, table):
            with target.transaction():
                copied += target.import_rows(table, page)
            if progress is not None:
                progress(table, copied)
        report.copied[table] = copied
    verify(source, target, report)
    return report


def verify(source: MemoryStore, target: MemoryStore, report: MigrationReport) -> None:
    """Append to ``report.problems`` every session or skill table that differs."""
    for session_id in _session_ids(source):
        theirs, ours = source.export_session(session_id), target.export_session(session_id)
        for table in SESSION_TABLES:
            if theirs[table] != ours[table]:
                report.problems.append(f"session {session_id!r}: table {table} differs")
        report.sessions += 1
    for table in SKILL_TABLES:
        if list(table_pages(source, table)) != list(table_pages(target, table)):
            report.problems.append(f"table {table} differs")
    if source.table_counts() != target.table_counts():
        report.problems.append("row counts differ")
