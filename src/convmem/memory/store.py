"""``MemoryStore``: the storage port.

Every other module reads and writes through this class and never writes SQL. The
methods are grouped by table family in small mixins (items, logs, skills, and the
paged lists the inspector browses) so that each file stays one concept; a second
backend implements the same methods.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from convmem.core.constants import PERSON_MESSAGE
from convmem.core.db import MemoryDatabase
from convmem.core.schema import REPORT_TABLES
from convmem.memory.models import Checkpoint, Scope, StoredEvent, scope_sessions
from convmem.memory.store_items import (
    ItemStoreMixin,
    events_like,
    fts_phrase,
    like_pattern,
    session_in,
    substring_match,
    word_match,
)
from convmem.memory.store_logs import LogStoreMixin
from convmem.memory.store_skills import SkillStoreMixin
from convmem.memory.store_views import ViewStoreMixin
from convmem.query import searchable, substrings, word_terms

if TYPE_CHECKING:
    from convmem.memory.side_query import SideQuery

#: Tables holding per-session rows, in the order export writes them.
SESSION_TABLES = (
    "sessions",
    "events",
    "archive",
    "memory_items",
    "memory_events",
    "task_state",
    "checkpoints",
    "pending_extraction",
    "assembly_logs",
    "validation_logs",
    "host_cursors",
)
_ORDER = {
    "sessions": "session_id",
    "events": "seq",
    "archive": "ref",
    "memory_items": "created_at, id",
    "memory_events": "id",
    "task_state": "session_id",
    "checkpoints": "session_id",
    "pending_extraction": "seq",
    "assembly_logs": "id",
    "validation_logs": "id",
    "host_cursors": "source",
}
CHECKPOINT_FIELDS = ("last_event_seq", "last_extract_seq", "last_assembly_seq", "last_validate_seq")


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


#: Sessions with fewer events rank their messages in a millisecond or two: running
#: the query ahead on a second connection (``prefetch_events``) would cost what it saves.
PREFETCH_MIN_EVENTS = 4000

#: Rows a ranked search reads past its limit, so that equal ranks at the limit can be
#: ordered by session and seq without reading every match (``_ranked_in_span``).
TIE_SLACK = 32


def word_search(terms: Sequence[str], types: Sequence[str]) -> list[str] | None:
    """The words of a search the word index can serve, else None.

    It holds the person's messages, so it serves a search of them alone; the terms
    must all be words (a CJK trigram needs the substring index). Both backends route
    by this rule, so they rank the same rows the same way.
    """
    return word_terms(terms) if tuple(types) == (PERSON_MESSAGE,) else None


def _ranked_sql(index: str, match: str, span: tuple[int, int], limit: int) -> tuple[str, list[Any]]:
    """The ranked query of a scope that owns its rowid range, and its parameters."""
    return (
        f"SELECT rowid AS id, bm25({index}) AS rank FROM {index}"
        f" WHERE {index} MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rank, rowid LIMIT ?",
        [match, *span, limit + TIE_SLACK],
    )


class MemoryStore(ItemStoreMixin, LogStoreMixin, SkillStoreMixin, ViewStoreMixin):
    """The storage API over one :class:`MemoryDatabase`."""

    backend = "sqlite"

    def __init__(self, db: MemoryDatabase, clock: Callable[[], str] = utc_now) -> None:
        self.db = db
        self.now = clock
        #: (sessions, lowest rowid, highest rowid) -> whether only those sessions'
        #: events lie in that range (see ``_exclusive``)
        self._exclusive_spans: dict[tuple[tuple[str, ...], int, int], bool] = {}
        self._exclusive_version = -1
        #: inside a transaction this store opened: the highest rowid of ``events`` when
        #: it began (rows above it are the transaction's own); None outside one
        self._committed_top: int | None = None
        self._side: SideQuery | None = None

    @classmethod
    def open(cls, path: str, clock: Callable[[], str] = utc_now) -> MemoryStore:
        return cls(MemoryDatabase(path), clock)

    def close(self) -> None:
        if self._side is not None:
            self._side.close()
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        outer = not self.db.writing
        with self.db.transaction():
            if outer:
                self._committed_top = self._events_top()
            try:
                yield
            finally:
                if outer:
                    self._committed_top = None

    def _events_top(self) -> int | None:
        """The highest rowid of ``events`` (what :meth:`_exclusive` may keep below)."""
        top = self.db.scalar("SELECT max(rowid) FROM events")
        return None if top is None else int(top)

    # --- meta ------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        value = self.db.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def schema_version(self) -> int:
        return self.db.schema_version()

    def integrity_check(self) -> list[str]:
        return self.db.integrity_check()

    # --- events ----------------------------------------------------------------------

    def insert_events(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert prepared rows, ignoring ones whose (session_id, seq) exists."""
        cur = self.db.executemany(
            "INSERT OR IGNORE INTO events (session_id, seq, type, time, turn, step, role, text,"
            " source_kind, source_form, tool_name, call_id, store, content_hash, truncated,"
            " ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        return max(cur.rowcount, 0)

    def insert_archive(self, rows: Sequence[Sequence[Any]]) -> int:
        if not rows:
            return 0
        cur = self.db.executemany(
            "INSERT OR IGNORE INTO archive (session_id, ref, text, chars, truncated, created_at)"
            " VALUES (?,?,?,?,?,?)",
            rows,
        )
        return max(cur.rowcount, 0)

    def events(
        self,
        session_id: str,
        *,
        after: int = -1,
        until: int | None = None,
        types: Iterable[str] | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[StoredEvent]:
        sql = "SELECT * FROM events WHERE session_id = ? AND seq > ?"
        params: list[Any] = [session_id, after]
        if until is not None:
            sql += " AND seq <= ?"
            params.append(until)
        type_list = list(types or ())
        if type_list:
            sql += f" AND type IN ({','.join('?' * len(type_list))})"
            params += type_list
        sql += " ORDER BY seq DESC" if newest_first else " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return StoredEvent.from_rows(self.db.query(sql, params))

    def event_heads(
        self, session_id: str, type_: str, *, after: int = -1, limit: int, chars: int
    ) -> list[tuple[int, str, int]]:
        """``(seq, first chars characters, length)`` of the newest events of ``type_``
        after ``after``, newest first: enough to tell which to read whole."""
        rows = self.db.query(
            "SELECT seq, substr(text, 1, ?) AS head, length(text) AS n FROM events"
            " WHERE session_id = ? AND seq > ? AND type = ? ORDER BY seq DESC LIMIT ?",
            (chars, session_id, after, type_, limit),
        )
        return [(int(r["seq"]), str(r["head"] or ""), int(r["n"] or 0)) for r in rows]

    def event_sizes(self, session_id: str, after: int = -1) -> list[tuple[int, str, str, int]]:
        """``(seq, type, source kind or "", characters)`` of each event after ``after``.

        How much text a host still shows, without reading the text.
        """
        rows = self.db.query(
            "SELECT seq, type, source_kind, length(text) AS n FROM events"
            " WHERE session_id = ? AND seq > ? ORDER BY seq",
            (session_id, after),
        )
        return [
            (int(r["seq"]), str(r["type"]), str(r["source_kind"] or ""), int(r["n"] or 0))
            for r in rows
        ]

    def first_seq(self, session_id: str) -> int | None:
        """The session's smallest seq (None: no event)."""
        value = self.db.scalar("SELECT min(seq) FROM events WHERE session_id = ?", (session_id,))
        return None if value is None else int(value)

    def first_event_seq(self, session_id: str, after: int, types: Sequence[str]) -> int | None:
        """The smallest seq above ``after`` among events of ``types`` (None: none).

        One index probe per type: a single ``min()`` over ``type IN (...)`` would walk
        every matching row of a long session.
        """
        found = [
            self.db.scalar(
                "SELECT seq FROM events WHERE session_id = ? AND type = ? AND seq > ?"
                " ORDER BY seq LIMIT 1",
                (session_id, type_, after),
            )
            for type_ in types
        ]
        seqs = [int(s) for s in found if s is not None]
        return min(seqs) if seqs else None

    def events_by_seq(
        self, session_id: str, seqs: Iterable[int], types: Sequence[str] = ()
    ) -> list[StoredEvent]:
        """The session's events of these seqs (of ``types`` only, when given), in seq order."""
        wanted = sorted(set(seqs))
        type_sql = f" AND type IN ({','.join('?' * len(types))})" if types else ""
        out: list[StoredEvent] = []
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.db.query(
                f"SELECT * FROM events WHERE session_id = ? AND seq IN ({marks}){type_sql}"
                " ORDER BY seq",
                [session_id, *chunk, *types],
            )
            out += StoredEvent.from_rows(rows)
        return out

    def archive_text(self, session_id: str, seq: int) -> str | None:
        value = self.db.scalar(
            "SELECT text FROM archive WHERE session_id = ? AND ref = ?", (session_id, f"seq:{seq}")
        )
        return None if value is None else str(value)

    def rowid_span(self, where: str | Scope) -> tuple[int, int] | None:
        """The lowest and highest rowid of the scope's events (None: it has none).

        Each bound is one seek in ``events_session``, whose next column is the rowid.
        Sessions captured one after another own disjoint ranges, so a full-text query
        bounded by the range reads the scope's events, not the store's.
        """
        lo = hi = None
        for sid in scope_sessions(where):
            row = self.db.one(
                "SELECT (SELECT min(rowid) FROM events WHERE session_id = ?) AS lo,"
                " (SELECT max(rowid) FROM events WHERE session_id = ?) AS hi",
                (sid, sid),
            )
            if row is None or row["lo"] is None:
                continue
            lo = row["lo"] if lo is None else min(lo, row["lo"])
            hi = row["hi"] if hi is None else max(hi, row["hi"])
        return None if lo is None or hi is None else (int(lo), int(hi))

    def search_events(
        self, where: str | Scope, terms: Sequence[str], limit: int, types: Sequence[str] = ()
    ) -> list[tuple[StoredEvent, float]]:
        """Events of a session (or a scope's sessions) matching any term (each ≥ 3
        chars, or a CJK pair), best BM25 first.

        A search of the person's messages alone whose terms are all words reads the
        word index (``words_fts``: each term a whole word, as
        :func:`convmem.query.word_stem` holds it); any other search the trigram index
        (each term a substring).
        """
        terms = searchable(terms)
        if not terms:
            return []
        with self.db.snapshot():  # the range, what lies in it and the matches agree
            return self._search_events(where, terms, limit, types)

    def _search_events(
        self, where: str | Scope, terms: list[str], limit: int, types: Sequence[str]
    ) -> list[tuple[StoredEvent, float]]:
        span = self.rowid_span(where)
        if span is None:
            return []
        cond, scope_params = session_in("x.session_id", where)
        params: list[Any] = [*span, *scope_params]
        words = word_search(terms, types)
        if words is not None:
            if not words:
                return []
            index, match = "words_fts", word_match(where, words)
        else:
            pieces = substrings(terms)
            if not pieces:
                return []
            index, match = "events_fts", " OR ".join(fts_phrase(t) for t in pieces)
            if types:
                cond += f" AND x.type IN ({','.join('?' * len(types))})"
                params += list(types)
        # the rowid range bounds what FTS5 reads and ranks to the scope's part of each
        # doclist. A long query matches thousands of rows there: they are sorted by
        # their keys alone, and only the rows kept are read whole.
        if index == "words_fts" or not types:
            found = self._ranked_in_span(index, match, where, span, limit)
            if found is not None:
                return found
        # the session (and type) of every match, read from its row, keeps it exact
        sql = (
            f"SELECT e.*, r.rank FROM (SELECT {index}.rowid AS id, bm25({index}) AS rank,"
            f" x.session_id AS sid, x.seq AS seq FROM {index} JOIN events x"
            f" ON x.rowid = {index}.rowid WHERE {index} MATCH ?"
            f" AND {index}.rowid BETWEEN ? AND ? AND {cond} ORDER BY rank, sid, seq LIMIT ?) r"
            " JOIN events e ON e.rowid = r.id ORDER BY r.rank, r.sid, r.seq"
        )
        rows = self.db.query(sql, [match, *params, limit])
        return [
            (e, float(r["rank"])) for e, r in zip(StoredEvent.from_rows(rows), rows, strict=True)
        ]

    def prefetch_events(
        self, where: str | Scope, terms: Sequence[str], limit: int, types: Sequence[str] = ()
    ) -> None:
        """Start the ranked word-index query of a coming ``search_events`` with the same
        arguments on a second connection (:mod:`convmem.memory.side_query`), when the
        scope is long enough for that to pay. The search takes its rows if nothing was
        written meanwhile, else runs the query itself."""
        words = word_search(searchable(terms), types)
        if not words or self.db.conn.in_transaction:
            return  # the side connection sees committed rows only, not this transaction's
        span = self.rowid_span(where)
        if span is None or span[1] - span[0] < PREFETCH_MIN_EVENTS:
            return
        if not self._exclusive(where, span):
            return
        if self._side is None:
            from convmem.memory.side_query import SideQuery

            path = self.db.conn.execute("PRAGMA database_list").fetchone()[2]
            if not path:
                return  # a temporary database: no second connection can open it
            self._side = SideQuery(path)
        sql, params = _ranked_sql("words_fts", word_match(where, words), span, limit)
        self._side.start(self._side_key(sql, params), sql, params)

    def _side_key(self, sql: str, params: list[Any]) -> tuple[Any, ...]:
        return (sql, *params, self.db.data_version(), self.db.conn.total_changes)

    def _ranked_in_span(
        self, index: str, match: str, where: str | Scope, span: tuple[int, int], limit: int
    ) -> list[tuple[StoredEvent, float]] | None:
        """The ranked search without reading each match's row, or None when it cannot
        tell the same answer.

        When only the scope's events lie in its rowid range, every match there is
        the scope's, and the index alone ranks them. Equal ranks are ordered by rowid
        here and by session and seq in the answer, so a few more rows are read than
        asked for: when the rank at the limit goes on past them, the caller's exact
        query decides instead.
        """
        if not self._exclusive(where, span):
            return None
        sql, params = _ranked_sql(index, match, span, limit)
        ahead = None if self._side is None else self._side.take(self._side_key(sql, params))
        ranked = self.db.query(sql, params) if ahead is None else ahead
        if len(ranked) == limit + TIE_SLACK and ranked[-1][1] == ranked[limit - 1][1]:
            return None  # rows of the rank at the limit may lie beyond those read
        ranks = {int(r[0]): float(r[1]) for r in ranked}
        out: list[tuple[StoredEvent, float]] = []
        ids = list(ranks)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            rows = self.db.query(
                f"SELECT rowid AS id, * FROM events WHERE rowid IN ({','.join('?' * len(chunk))})",
                chunk,
            )
            out += [
                (e, ranks[int(r["id"])])
                for e, r in zip(StoredEvent.from_rows(rows), rows, strict=True)
            ]
        out.sort(key=lambda pair: (pair[1], pair[0].session_id, pair[0].seq))
        return out[:limit]

    def _exclusive(self, where: str | Scope, span: tuple[int, int]) -> bool:
        """Whether the scope's events are all the events in its rowid range.

        Counted once per range and kept until an event is deleted: a new event takes
        a rowid above every other, and only after deletes at the top can an old
        rowid be given again. This store's purges forget what was kept; another
        connection's commits (``data_version``) do too. A range that grew past one
        known to be the scope's alone (the session's new events) counts only the
        rows above it: a long session's next prompt reads its new events, not all.
        What a transaction wrote is not kept, since a rollback gives its rowids
        again; the part of the range committed before it began is (a host that
        assembles with its prompt stored for the step only, and rolled back after,
        would otherwise count the whole session at every step).
        """
        version = self.db.data_version()
        if version != self._exclusive_version:
            self._exclusive_spans.clear()
            self._exclusive_version = version
        sessions = tuple(scope_sessions(where))
        top = self._committed_top if self.db.writing else None
        if top is not None and span[0] <= top < span[1]:
            return self._alone(sessions, (span[0], top), keep=True) and self._alone_above(
                sessions, top, span[1]
            )
        keep = not self.db.writing or (top is not None and span[1] <= top)
        return self._alone(sessions, span, keep)

    def _alone(self, sessions: tuple[str, ...], span: tuple[int, int], keep: bool) -> bool:
        """Whether only ``sessions``' events lie in ``span``; kept when ``keep``."""
        key = (sessions, *span)
        known = self._exclusive_spans.get(key)
        if known is not None:
            return known
        below = max(
            (
                k[2]
                for k, alone in self._exclusive_spans.items()
                if alone and k[:2] == key[:2] and k[2] < span[1]
            ),
            default=None,
        )
        if below is None:
            marks = ",".join("?" * len(sessions))
            count = self.db.scalar(
                f"SELECT count(*) FROM events WHERE session_id IN ({marks}) AND rowid <= ?",
                [*sessions, span[1]],
            )
            known = int(count) == span[1] - span[0] + 1
        else:
            known = self._alone_above(sessions, below, span[1])
        if keep:
            if len(self._exclusive_spans) > 256:
                self._exclusive_spans.clear()
            self._exclusive_spans[key] = known
        return known

    def _alone_above(self, sessions: tuple[str, ...], low: int, high: int) -> bool:
        """Whether every rowid above ``low`` up to ``high`` is an event of ``sessions``
        (+session_id: the rowids bound the count, not the session's index)."""
        marks = ",".join("?" * len(sessions))
        count = self.db.scalar(
            f"SELECT count(*) FROM events WHERE rowid > ? AND rowid <= ?"
            f" AND +session_id IN ({marks})",
            [low, high, *sessions],
        )
        return int(count) == high - low

    def events_containing(
        self, where: str | Scope, needle: str, limit: int, types: Sequence[str] = ()
    ) -> list[StoredEvent]:
        """Events whose text contains ``needle`` (case-insensitive for ASCII), oldest first
        (a scope's sessions in its order)."""
        if len(needle) < 3:
            return events_like(self.db, where, "e.text LIKE ?", needle, limit, types)
        found: list[StoredEvent] = []
        for session_id in scope_sessions(where):
            if len(found) >= limit:
                break
            found += self._session_containing(session_id, needle, limit - len(found), types)
        return found

    def _session_containing(
        self, session_id: str, needle: str, limit: int, types: Sequence[str]
    ) -> list[StoredEvent]:
        """One session's first ``limit`` events containing ``needle`` (3+ characters)."""
        span = self.rowid_span(session_id)
        if span is None:
            return []
        match, check = substring_match(needle)
        where = "e.session_id = ?"
        params: list[Any] = [session_id]
        if check:
            where += " AND convmem_contains(e.text, ?)"
            params.append(needle)
        if types:
            where += f" AND e.type IN ({','.join('?' * len(types))})"
            params += list(types)
        if self._seq_ordered(session_id):
            # rowid order is seq order: walk the index in it and stop at the first rows
            sql = (
                "SELECT e.* FROM events_fts f CROSS JOIN events e ON e.rowid = f.rowid"
                f" WHERE events_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND {where}"
                " ORDER BY f.rowid LIMIT ?"
            )
        else:
            # the sub-select makes SQLite run the full-text query once, first; a join
            # lets the planner walk events in seq order and probe the index per row
            sql = (
                "SELECT e.* FROM events e WHERE e.rowid IN (SELECT rowid FROM events_fts"
                f" WHERE events_fts MATCH ? AND rowid BETWEEN ? AND ?) AND {where}"
                " ORDER BY e.seq LIMIT ?"
            )
        rows = self.db.query(sql, [match, *span, *params, limit])
        return StoredEvent.from_rows(rows)

    def _seq_ordered(self, session_id: str) -> bool:
        """Whether the session's events were stored in seq order (schema v11)."""
        return (
            self.db.scalar("SELECT 1 FROM unordered_sessions WHERE session_id = ?", (session_id,))
            is None
        )

    def recent_events_with(
        self, session_id: str, needles: Sequence[str], types: Sequence[str], window: int
    ) -> list[tuple[StoredEvent, int]]:
        """Among the newest ``window`` events (of ``types``), those containing any needle,
        with how many needles each contains. One bounded scan, for terms too short
        for the trigram index."""
        needles = [n for n in needles if n]
        if not needles:
            return []
        type_sql = f" AND type IN ({','.join('?' * len(types))})" if types else ""
        cond = " OR ".join("text LIKE ? ESCAPE '\\'" for _ in needles)
        rows = self.db.query(
            f"SELECT * FROM (SELECT * FROM events WHERE session_id = ?{type_sql}"
            f" ORDER BY seq DESC LIMIT ?) AS recent WHERE {cond} ORDER BY seq",
            [session_id, *types, window, *(like_pattern(n) for n in needles)],
        )
        out = []
        for event in StoredEvent.from_rows(rows):
            low = event.text.casefold()
            out.append((event, sum(1 for n in needles if n.casefold() in low)))
        return out

    def event_type_counts(self, session_id: str | None = None) -> dict[str, int]:
        """How many events of each type (in one session, or in all)."""
        if session_id is None:
            rows = self.db.query(
                "SELECT type, count(*) AS n FROM events GROUP BY type ORDER BY type"
            )
        else:
            rows = self.db.query(
                "SELECT type, count(*) AS n FROM events WHERE session_id = ? GROUP BY type"
                " ORDER BY type",
                (session_id,),
            )
        return {r["type"]: int(r["n"]) for r in rows}

    def count_events(
        self, session_id: str | None = None, *, after: int = -1, types: Sequence[str] = ()
    ) -> int:
        """Events in the store, or in one session (after a seq, of some types)."""
        if session_id is None:
            return int(self.db.scalar("SELECT count(*) FROM events"))
        sql = "SELECT count(*) FROM events WHERE session_id = ? AND seq > ?"
        if types:
            sql += f" AND type IN ({','.join('?' * len(types))})"
        return int(self.db.scalar(sql, [session_id, after, *types]))

    # --- sessions and checkpoints ------------------------------------------------------

    def touch_session(self, session_id: str, **meta: Any) -> None:
        now = self.now()
        self.db.execute(
            "INSERT INTO sessions (session_id, created_at, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT(session_id) DO UPDATE SET updated_at = excluded.updated_at",
            (session_id, now, now),
        )
        allowed = {"cwd", "project", "origin", "host_version", "memory_enabled"}
        for key, value in meta.items():
            if key in allowed and value is not None:
                self.db.execute(
                    f"UPDATE sessions SET {key} = ? WHERE session_id = ?", (value, session_id)
                )

    def session_project(self, session_id: str) -> str | None:
        """The project a session belongs to (None: none given)."""
        value = self.db.scalar("SELECT project FROM sessions WHERE session_id = ?", (session_id,))
        return str(value) if value else None

    def project_sessions(self, project: str) -> list[str]:
        """A project's sessions, most recently active first."""
        rows = self.db.query(
            "SELECT session_id FROM sessions WHERE project = ?"
            " ORDER BY updated_at DESC, session_id DESC",
            (project,),
        )
        return [str(r["session_id"]) for r in rows]

    def sessions(self) -> list[dict[str, Any]]:
        rows = self.db.query(
            "SELECT s.*, (SELECT count(*) FROM events e WHERE e.session_id = s.session_id)"
            " AS events FROM sessions s ORDER BY s.session_id"
        )
        return [dict(r) for r in rows]

    def session_exists(self, session_id: str) -> bool:
        return bool(
            self.db.scalar("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,))
            or self.db.scalar("SELECT 1 FROM events WHERE session_id = ? LIMIT 1", (session_id,))
        )

    def checkpoint(self, session_id: str) -> Checkpoint:
        row = self.db.one("SELECT * FROM checkpoints WHERE session_id = ?", (session_id,))
        if row is None:
            return Checkpoint(session_id)
        return Checkpoint(session_id, *(int(row[f]) for f in CHECKPOINT_FIELDS))

    def advance_checkpoint(self, session_id: str, field: str, seq: int) -> None:
        """Move a cursor forward (never back)."""
        self._set_checkpoint(session_id, field, seq, f"max({field}, excluded.{field})")

    def set_checkpoint(self, session_id: str, field: str, seq: int) -> None:
        self._set_checkpoint(session_id, field, seq, f"excluded.{field}")

    def _set_checkpoint(self, session_id: str, field: str, seq: int, expr: str) -> None:
        if field not in CHECKPOINT_FIELDS:
            raise ValueError(f"unknown checkpoint field {field}")
        self.db.execute(
            f"INSERT INTO checkpoints (session_id, {field}, updated_at) VALUES (?, ?, ?)"
            f" ON CONFLICT(session_id) DO UPDATE SET {field} = {expr},"
            " updated_at = excluded.updated_at",
            (session_id, seq, self.now()),
        )

    # --- reports, export, purge -------------------------------------------------------

    def table_counts(self, session_id: str | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for table in REPORT_TABLES:
            if session_id is None or table in ("skill_versions", "rules"):
                counts[table] = int(self.db.scalar(f"SELECT count(*) FROM {table}"))
            else:
                counts[table] = int(
                    self.db.scalar(
                        f"SELECT count(*) FROM {table} WHERE session_id = ?", (session_id,)
                    )
                )
        return counts

    def export_session(self, session_id: str) -> dict[str, list[dict[str, Any]]]:
        """Every row of a session, table by table, in a stable order."""
        return {
            table: [
                dict(r)
                for r in self.db.query(
                    f"SELECT * FROM {table} WHERE session_id = ? ORDER BY {_ORDER[table]}",
                    (session_id,),
                )
            ]
            for table in SESSION_TABLES
        }

    def import_rows(self, table: str, rows: Sequence[dict[str, Any]]) -> int:
        """Insert exported rows (used by migrate between backends)."""
        if table not in SESSION_TABLES and table not in (
            "skill_versions",
            "skill_files",
            "rules",
            "rule_overrides",
        ):
            raise ValueError(f"unknown table {table}")
        count = 0
        for row in rows:
            cols = list(row)
            marks = ",".join("?" * len(cols))
            cur = self.db.execute(
                f"INSERT OR IGNORE INTO {table} ({','.join(cols)}) VALUES ({marks})",
                [row[c] for c in cols],
            )
            count += max(cur.rowcount, 0)
        return count

    def purge_session(self, session_id: str) -> dict[str, int]:
        """Delete every row of one session; other sessions are untouched."""
        return self.purge_sessions([session_id])

    def purge_sessions(self, session_ids: Sequence[str]) -> dict[str, int]:
        """Delete every row of these sessions in one transaction; others are untouched."""
        self._exclusive_spans.clear()  # rowids deleted at the top are given again
        removed = dict.fromkeys(SESSION_TABLES, 0)
        with self.transaction():
            self._committed_top = None  # what it deletes comes back if it rolls back
            for session_id in session_ids:
                for table in SESSION_TABLES:
                    cur = self.db.execute(
                        f"DELETE FROM {table} WHERE session_id = ?", (session_id,)
                    )
                    removed[table] += max(cur.rowcount, 0)
        return removed


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
