"""``PgMemoryStore``: the storage port on PostgreSQL, for agents on many machines.

It is :class:`MemoryStore` over a :class:`PgDatabase`: every method whose SQL both
databases understand is inherited unchanged (the database adapter rewrites the few
SQLite-only constructs). This class overrides only what differs in meaning:

* **Search.** The same rows as SQLite's FTS5 trigram index (case-insensitive
  substrings, through a ``pg_trgm`` index), ranked by FTS5's BM25 formula computed
  in SQL over the session's statistics (:mod:`convmem.memory.pg_search`).
* **Bulk capture.** One ``INSERT ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING``
  per batch, rows sorted by key so that concurrent batches lock in the same order.
* **Concurrency.** SQLite serializes all writers; PostgreSQL runs them in parallel.
  Where a transaction reads state and then writes on the strength of it (cursors,
  the active item with a content hash before superseding or disputing items, task
  state, assembly log retention), the store first takes the session's
  transaction-level advisory lock, so the transactions of one session run one at
  a time and different sessions never wait for each other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from convmem.memory.models import (
    Checkpoint,
    MemoryItem,
    Scope,
    StoredEvent,
    TaskState,
    scope_sessions,
)
from convmem.memory.pg_db import PgDatabase
from convmem.memory.pg_schema import IDENTITY_TABLES
from convmem.memory.pg_search import (
    EVENTS,
    ITEM_WORDS,
    ITEM_WORDS_INSERT,
    ITEMS,
    MESSAGE_WORDS,
    WORDS_INSERT,
    Corpus,
    bm25_query,
    item_words_insert,
    word_rows,
    words_insert,
)
from convmem.memory.store import MemoryStore, utc_now, word_search
from convmem.memory.store_items import events_like, like_pattern, session_in
from convmem.query import searchable, substrings, word_terms


def session_lock_key(session_id: str) -> int:
    """A stable signed 64-bit advisory lock key for one session."""
    digest = hashlib.sha256(b"convmem-session\x00" + session_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PgMemoryStore(MemoryStore):
    """The storage API over one :class:`PgDatabase`."""

    backend = "postgresql"

    def __init__(self, db: PgDatabase, clock: Callable[[], str] = utc_now) -> None:
        super().__init__(db, clock)
        self.pg = db
        self._locked: set[str] = set()
        self._locked_in = (-1, -1)
        self._types: dict[str, dict[str, str]] = {}

    @classmethod
    def open(
        cls,
        path: str,
        clock: Callable[[], str] = utc_now,
        *,
        connect_timeout: int | None = None,
        statement_timeout: float | None = None,
    ) -> PgMemoryStore:
        """Open (and migrate) the database at the ``postgresql://`` URL ``path``."""
        db = PgDatabase(path, connect_timeout=connect_timeout, statement_timeout=statement_timeout)
        return cls(db, clock)

    def _events_top(self) -> int | None:
        return None  # the search ranks by session here: no rowid ranges to know about

    # --- locking ----------------------------------------------------------------------

    def _lock_session(self, session_id: str) -> None:
        """Inside a transaction, wait for the session's other transactions to finish."""
        if not self.pg.in_transaction:
            return
        # a rollback (even to a savepoint) releases the locks taken after it
        epoch = (self.pg.transactions, self.pg.rollbacks)
        if self._locked_in != epoch:
            self._locked, self._locked_in = set(), epoch
        if session_id not in self._locked:
            self.db.execute("SELECT pg_advisory_xact_lock(?)", (session_lock_key(session_id),))
            self._locked.add(session_id)

    def checkpoint(self, session_id: str) -> Checkpoint:
        self._lock_session(session_id)
        return super().checkpoint(session_id)

    def host_cursor(self, session_id: str, source: str) -> tuple[int, dict[str, Any]]:
        self._lock_session(session_id)
        return super().host_cursor(session_id, source)

    def active_item_by_hash(self, session_id: str, content_hash: str) -> MemoryItem | None:
        self._lock_session(session_id)
        return super().active_item_by_hash(session_id, content_hash)

    def task_state(self, session_id: str) -> TaskState:
        self._lock_session(session_id)
        return super().task_state(session_id)

    def insert_assembly_log(self, log: dict[str, Any], retention: int) -> int:
        with self.transaction():
            self._lock_session(str(log["session_id"]))
            return super().insert_assembly_log(log, retention)

    def advance_checkpoint(self, session_id: str, field: str, seq: int) -> None:
        """Move a cursor forward (never back); the upsert is atomic under concurrency."""
        self._set_checkpoint(
            session_id, field, seq, f"greatest(checkpoints.{field}, excluded.{field})"
        )

    # --- events -------------------------------------------------------------------------

    def insert_events(self, rows: Sequence[Sequence[Any]]) -> int:
        """Insert prepared rows (in table column order), ignoring existing (session_id, seq)."""
        if not rows:
            return 0
        ordered = sorted(rows, key=lambda r: (r[0], r[1]))  # one lock order for every batch
        count = self._bulk_insert("events", list(self._column_types("events")), ordered)
        self._index_words((r[0], r[1], r[2], r[13], r[7]) for r in ordered)
        return count

    def _index_words(self, events: Iterable[tuple[str, int, str, str, str]]) -> None:
        """Index the words of the person's messages among events just inserted."""
        params = words_insert(events)
        if params is not None:
            self.db.execute(WORDS_INSERT, params)

    def insert_item(self, item: MemoryItem) -> bool:
        """Insert the item and its words together (see the SQLite store)."""
        with self.transaction():
            inserted = super().insert_item(item)
            if inserted:
                self.db.execute(ITEM_WORDS_INSERT, item_words_insert([(item.id, item.content)]))
        return inserted

    def search_events(
        self, where: str | Scope, terms: Sequence[str], limit: int, types: Sequence[str] = ()
    ) -> list[tuple[StoredEvent, float]]:
        """Events matching any term (each ≥ 3 chars, or a CJK pair), best BM25 first (see
        pg_search)."""
        words = word_search(searchable(terms), types)
        if words is not None:
            rows = self._ranked(MESSAGE_WORDS, where, words, types, limit)
        else:
            rows = self._ranked(EVENTS, where, substrings(terms), types, limit)
        return [
            (e, float(r["rank"])) for e, r in zip(StoredEvent.from_rows(rows), rows, strict=True)
        ]

    def prefetch_events(
        self, where: str | Scope, terms: Sequence[str], limit: int, types: Sequence[str] = ()
    ) -> None:
        """Nothing: the server plans and runs the search when it is asked for."""

    def events_containing(
        self, where: str | Scope, needle: str, limit: int, types: Sequence[str] = ()
    ) -> list[StoredEvent]:
        """Events whose text contains ``needle`` (case-insensitive), oldest first.

        As on SQLite: a needle of three or more characters ignores case as FTS5 does
        (Unicode), a shorter one as SQLite's LIKE does (ASCII only).
        """
        match = "lower(e.text) LIKE lower(?)" if len(needle) >= 3 else "e.text LIKE ?"
        return events_like(self.db, where, match, needle, limit, types)

    # --- items and rules ------------------------------------------------------------------

    def search_items(
        self, where: str | Scope, terms: Sequence[str], limit: int, statuses: Sequence[str]
    ) -> list[tuple[MemoryItem, float]]:
        """Items matching any term (terms ≥ 3 chars), best BM25 first (see pg_search);
        terms that are all words search the word index, as on SQLite."""
        terms = searchable(terms)
        words = word_terms(terms)
        if words is None:
            terms = substrings(terms)
        if not statuses or not terms or words == []:
            return []
        if words is not None:
            rows = self._ranked(ITEM_WORDS, where, words, statuses, limit)
        else:
            rows = self._ranked(ITEMS, where, terms, statuses, limit)
        return [
            (i, float(r["rank"])) for i, r in zip(MemoryItem.from_rows(rows), rows, strict=True)
        ]

    def _holding(self, where: str | Scope, word: str | None, term: str) -> tuple[str, list[Any]]:
        """As on SQLite: the word in ``item_words``, or the term in the content."""
        if word is None:
            return "lower(m.content) LIKE lower(?) ESCAPE '\\'", [like_pattern(term)]
        cond, params = session_in("x.session_id", where)
        return (
            f"m.id IN (SELECT x.id FROM item_words x WHERE {cond} AND x.words LIKE ?)",
            [*params, like_pattern(f" {word} ")],
        )

    def search_rule_ids(self, terms: Sequence[str]) -> list[str]:
        """Ids of active rules containing any term (folding case as SQLite's paths do)."""
        wanted = [t for t in terms if t]
        if not wanted:
            return []
        cond = " OR ".join(
            ("lower(text) LIKE lower(?)" if len(t) >= 3 else "text LIKE ?") + " ESCAPE '\\'"
            for t in wanted
        )
        rows = self.db.query(
            f"SELECT id FROM rules WHERE active = 1 AND ({cond}) ORDER BY id",
            [like_pattern(t) for t in wanted],
        )
        return [str(r["id"]) for r in rows]

    def _ranked(
        self,
        corpus: Corpus,
        where: str | Scope,
        terms: Sequence[str],
        kinds: Sequence[str],
        limit: int,
    ) -> list[Any]:
        if not terms:  # the callers keep the terms each index serves
            return []
        sql, params = bm25_query(corpus, scope_sessions(where), terms, kinds, limit)
        return self.db.query(sql, params)

    # --- migration between backends ---------------------------------------------------------

    def import_rows(self, table: str, rows: Sequence[dict[str, Any]]) -> int:
        """Insert exported rows in bulk, then move the table's id sequence past them."""
        MemoryStore.import_rows(self, table, [])  # checks the table name, inserts nothing
        if not rows:
            return 0
        columns = list(rows[0])
        count = self._bulk_insert(table, columns, [[row[c] for c in columns] for row in rows])
        if table == "events":
            self._index_words(word_rows(rows))
        elif table == "memory_items":
            self.db.execute(
                ITEM_WORDS_INSERT, item_words_insert((r["id"], r["content"]) for r in rows)
            )
        if table in IDENTITY_TABLES:
            self.db.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" (SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"
            )
        return count

    def _column_types(self, table: str) -> dict[str, str]:
        """Column name to SQL type, in table order (read from the catalog once)."""
        if table not in self._types:
            rows = self.db.query(
                "SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type"
                " FROM pg_attribute a WHERE a.attrelid = to_regclass(?) AND a.attnum > 0"
                " AND NOT a.attisdropped ORDER BY a.attnum",
                (table,),
            )
            self._types[table] = {str(r["name"]): str(r["type"]) for r in rows}
        return self._types[table]

    def _bulk_insert(self, table: str, columns: list[str], rows: Sequence[Sequence[Any]]) -> int:
        """One INSERT of many rows (one array per column), skipping key conflicts."""
        types = self._column_types(table)
        arrays = ", ".join(f"?::{types[c]}[]" for c in columns)
        cur = self.db.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM unnest({arrays})"
            " ON CONFLICT DO NOTHING",
            [list(col) for col in zip(*rows, strict=True)],
        )
        return max(int(cur.rowcount), 0)
