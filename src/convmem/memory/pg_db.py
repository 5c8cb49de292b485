"""``PgDatabase``: :class:`MemoryDatabase`'s surface over one psycopg 3 connection.

The store mixins are written once, in SQLite's dialect. This class runs that SQL on
PostgreSQL by rewriting the few constructs that differ (:func:`dialect`), keeps the
savepoint bookkeeping of ``MemoryDatabase.transaction`` (inherited as it is), runs
the PostgreSQL migrations under an advisory lock so that hosts opening the same
database at once migrate it once, and turns driver errors into one-sentence
:class:`StoreError` messages. The connection is in autocommit mode: a statement
outside ``transaction()`` commits alone, as with SQLite's ``isolation_level=None``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from convmem.core.db import MemoryDatabase, Params
from convmem.core.store_url import mask_url as redact
from convmem.errors import StoreBusyError, StoreError
from convmem.memory.pg_schema import IDENTITY_TABLES, MIGRATIONS

#: Oldest server with everything the schema and the search use (``regexp_count``).
MIN_SERVER_VERSION = 150000
#: Advisory lock key that serializes migrations across hosts (any fixed 64-bit value).
MIGRATION_LOCK = 0x636F6E766D656D  # "convmem"
#: ``INSERT OR REPLACE`` targets and their keys (REPLACE == upsert of every listed column).
REPLACE_KEYS = {
    "meta": ("key",),
    "task_state": ("session_id",),
    "host_cursors": ("session_id", "source"),
}

_LITERAL = re.compile(r"('(?:[^']|'')*')")
_OR_IGNORE = re.compile(r"^\s*INSERT OR IGNORE INTO\b", re.I)
_OR_REPLACE = re.compile(r"^\s*INSERT OR REPLACE INTO\s+(\w+)\s*\(([^)]*)\)", re.I)
_INSERT_INTO = re.compile(r"^\s*INSERT INTO\s+(\w+)", re.I)
_LIKE = re.compile(r"\bLIKE\s+\?", re.I)
_NOT_IN_NOTHING = re.compile(r"\bNOT\s+IN\s*\(\s*\)", re.I)
_IN_NOTHING = re.compile(r"\bIN\s*\(\s*\)", re.I)


def _rewrite(code: str) -> str:
    """Rewrite SQL text outside string literals (see :func:`dialect`)."""
    code = _NOT_IN_NOTHING.sub("<> ALL('{}')", code)
    code = _IN_NOTHING.sub("= ANY('{}')", code)
    code = _LIKE.sub('ILIKE ? COLLATE "C"', code)
    return code.replace("%", "%%").replace("?", "%s")


@lru_cache(maxsize=512)
def dialect(sql: str) -> tuple[str, bool]:
    """SQLite SQL as PostgreSQL SQL, and whether it returns the new row's ``id``.

    The rewrites are exact equivalents: ``INSERT OR IGNORE`` is ``ON CONFLICT DO
    NOTHING``; ``INSERT OR REPLACE`` of every column is an upsert on the table's key;
    SQLite's ``LIKE ?`` ignores ASCII case and only ASCII case, which is ``ILIKE``
    under the "C" collation (its ``lower()`` folds ASCII only); an insert into an
    identity table gets ``RETURNING id`` (SQLite's ``lastrowid``); an empty ``IN ()``
    (false; true after NOT) is a comparison with an empty array; ``?`` is ``%s``.
    SQL written for PostgreSQL says ``ILIKE`` itself and is left alone.
    """
    suffix = ""
    replace = _OR_REPLACE.match(sql)
    if replace:
        table, cols = replace.group(1), [c.strip() for c in replace.group(2).split(",")]
        keys = REPLACE_KEYS[table]
        sets = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in keys)
        sql = re.sub(r"^\s*INSERT OR REPLACE INTO", "INSERT INTO", sql, count=1, flags=re.I)
        suffix = f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {sets}"
    elif _OR_IGNORE.match(sql):
        sql = _OR_IGNORE.sub("INSERT INTO", sql, count=1)
        suffix = " ON CONFLICT DO NOTHING"
    insert = _INSERT_INTO.match(sql)
    returning = bool(
        insert and insert.group(1) in IDENTITY_TABLES and re.search(r"\bVALUES\b", sql, re.I)
    )
    if returning:
        suffix += " RETURNING id"
    parts = _LITERAL.split(sql + suffix)  # odd parts are string literals
    text = "".join(p.replace("%", "%%") if i % 2 else _rewrite(p) for i, p in enumerate(parts))
    return text, returning


def _param(value: Any) -> Any:
    # PostgreSQL text cannot hold U+0000 (SQLite can); flags are 0/1 integers as in SQLite
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, list):  # a column of a bulk insert
        return [_param(v) for v in value]
    return value


def params(values: Params) -> Params:
    if isinstance(values, dict):
        return {k: _param(v) for k, v in values.items()}
    return [_param(v) for v in values]


def _explain(exc: Exception, where: str) -> StoreError:
    import psycopg.errors as pe

    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, pe.DeadlockDetected | pe.SerializationFailure | pe.LockNotAvailable):
        return StoreBusyError(
            f"PostgreSQL at {where} gave up waiting for a lock ({msg}); try again shortly"
        )
    if isinstance(exc, pe.DiskFull):
        return StoreError(f"the PostgreSQL server at {where} is out of disk space ({msg})")
    if isinstance(exc, pe.InsufficientPrivilege):
        return StoreError(
            f"the PostgreSQL role lacks a privilege at {where} ({msg}); grant it, or ask the"
            " database owner to run convmem once to create the schema"
        )
    if isinstance(exc, pe.OperationalError):
        return StoreError(
            f"cannot use PostgreSQL at {where} ({msg}); check the URL, that the server runs"
            " and that the database exists (createdb NAME)"
        )
    return StoreError(f"database error on {where}: {msg}")


@lru_cache(maxsize=1)
def _driver_classes() -> tuple[Any, Any]:
    """psycopg's connection and cursor with the two sqlite3 attributes the shared code
    reads: ``Connection.in_transaction`` and ``Cursor.lastrowid`` (psycopg is imported
    only when PostgreSQL is used)."""
    import psycopg
    from psycopg.pq import TransactionStatus

    class Connection(psycopg.Connection[Any]):
        @property
        def in_transaction(self) -> bool:
            return self.info.transaction_status != TransactionStatus.IDLE

    class Cursor(psycopg.Cursor[Any]):
        __slots__ = ("lastrowid",)

    return Connection, Cursor


class PgDatabase(MemoryDatabase):
    """One PostgreSQL connection, migrated to the current schema on open."""

    migrations = MIGRATIONS

    conn: Any  # psycopg's, with sqlite3's in_transaction, which transaction() reads

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        connect_timeout: int | None = None,
        statement_timeout: float | None = None,
    ) -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
        except ImportError:
            raise StoreError(
                "PostgreSQL support is not installed; pip install 'convmem[postgres]'"
                " (psycopg), or leave out --store to use the SQLite file"
            ) from None

        self.url = url
        self.path = redact(url)
        self._depth = 0
        #: outermost transactions begun, and rollbacks (a savepoint's included): together
        #: they tell when locks taken earlier may have been released
        self.transactions = 0
        self.rollbacks = 0
        try:
            connection, cursor = _driver_classes()
            # without a bound, a server that accepts the connection and never answers
            # holds every caller (a hook too) forever; the URL's own value wins
            extra: dict[str, Any] = {}
            if connect_timeout and "connect_timeout" not in url:
                extra["connect_timeout"] = max(1, int(connect_timeout))
            self.conn = connection.connect(
                url, autocommit=True, row_factory=dict_row, cursor_factory=cursor, **extra
            )
        except psycopg.Error as exc:
            raise _explain(exc, self.path) from exc
        if statement_timeout:
            self.conn.execute(f"SET statement_timeout = {int(statement_timeout * 1000)}")
        # searches pass their terms as parameters: a custom plan folds lower(term) into
        # the patterns and lets the planner weigh the trigram index against the session
        self.conn.execute("SET plan_cache_mode = force_custom_plan")
        self.server_version = int(self.conn.info.server_version)
        if self.server_version < MIN_SERVER_VERSION:
            self.conn.close()
            raise StoreError(
                f"PostgreSQL at {self.path} is version {self.server_version // 10000}; convmem"
                " needs 15 or newer"
            )
        if migrate:
            try:
                self.migrate()
            except BaseException:
                self.conn.close()
                raise

    # --- statements ------------------------------------------------------------------

    def execute(self, sql: str, params_: Params = ()) -> Any:
        """Run one statement; the cursor's ``lastrowid`` is the new ``id`` of an identity insert."""
        import psycopg

        text, returning = dialect(sql)
        try:
            cur = self.conn.execute(text, params(params_))
            cur.lastrowid = cur.fetchone()["id"] if returning and cur.rowcount > 0 else None
        except psycopg.Error as exc:
            raise _explain(exc, self.path) from exc
        except UnicodeEncodeError as exc:
            raise StoreError(
                f"cannot use that value with the database {self.path}: a text value is not"
                " valid Unicode (it holds a lone surrogate)"
            ) from exc
        return cur

    def executemany(self, sql: str, rows: Any) -> Any:
        import psycopg

        text, _ = dialect(sql)
        try:
            cur = self.conn.cursor()
            cur.executemany(text, [params(r) for r in rows])
        except psycopg.Error as exc:
            raise _explain(exc, self.path) from exc
        return cur

    def query(self, sql: str, params_: Params = ()) -> list[Any]:
        rows: list[Any] = self.execute(sql, params_).fetchall()
        return rows

    def one(self, sql: str, params_: Params = ()) -> Any:
        return self.execute(sql, params_).fetchone()

    def scalar(self, sql: str, params_: Params = ()) -> Any:
        row = self.execute(sql, params_).fetchone()
        return None if row is None else next(iter(row.values()))

    def execute_script(self, sql: str) -> None:
        # without parameters psycopg sends the text as one simple query: many statements,
        # including $$-quoted function bodies, run in order inside the current transaction
        import psycopg

        try:
            self.conn.execute(sql)
        except psycopg.Error as exc:
            raise _explain(exc, self.path) from exc

    def _begin(self) -> None:
        self.transactions += 1
        self.execute("BEGIN")

    def _undo(self) -> None:
        self.rollbacks += 1
        super()._undo()

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    # --- schema ----------------------------------------------------------------------

    def schema_version(self) -> int:
        if self.scalar("SELECT to_regclass('meta') IS NOT NULL AS present") is not True:
            return 0
        value = self.scalar("SELECT value FROM meta WHERE key = 'schema'")
        return int(value) if value is not None else 0

    def migrate(self) -> list[str]:
        """Apply the migrations this database has not seen; return their names.

        A session-level advisory lock makes hosts that open a new database at the same
        time wait for each other, so each migration runs once.
        """
        self.execute("SELECT pg_advisory_lock(?)", (MIGRATION_LOCK,))
        try:
            return super().migrate()
        finally:
            self.execute("SELECT pg_advisory_unlock(?)", (MIGRATION_LOCK,))

    # --- diagnostics -----------------------------------------------------------------

    def integrity_check(self) -> list[str]:
        """Problems found (empty when healthy). Never repairs.

        Checks what convmem relies on: the trigram extension, that every index is
        valid (a failed concurrent build leaves an invalid one), that the search
        statistics match the rows, and that the database folds case beyond ASCII.
        """
        problems: list[str] = []
        try:
            for ext in ("pg_trgm", "btree_gin"):
                if not self.scalar("SELECT 1 FROM pg_extension WHERE extname = ?", (ext,)):
                    problems.append(f"the {ext} extension is missing: CREATE EXTENSION {ext}")
            for row in self.query(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = current_schema() AND NOT i.indisvalid ORDER BY c.relname"
            ):
                problems.append(
                    f"index {row['relname']} is invalid: REINDEX INDEX {row['relname']}"
                )
            for table, tokens in (
                ("events", "greatest(char_length(text) - 2, 0)"),
                ("memory_items", "greatest(char_length(content) - 2, 0)"),
                ("message_words", "n"),
                ("item_words", "n"),
            ):
                row = self.one(
                    f"SELECT count(*) AS docs, coalesce(sum({tokens}), 0) AS tokens FROM {table}"
                )
                stats = self.one(
                    "SELECT coalesce(sum(docs), 0) AS docs, coalesce(sum(tokens), 0) AS tokens"
                    " FROM fts_stats WHERE tbl = ?",
                    (table,),
                )
                if (int(row["docs"]), int(row["tokens"])) != (
                    int(stats["docs"]),
                    int(stats["tokens"]),
                ):
                    problems.append(f"fts_stats for {table} do not match its rows")
            # the word index holds every message of the person, nothing else
            missing = self.scalar(
                "SELECT count(*) FROM events e WHERE e.type = 'user/message' AND NOT EXISTS"
                " (SELECT 1 FROM message_words w WHERE w.session_id = e.session_id"
                " AND w.seq = e.seq)"
            )
            if missing:
                problems.append(
                    f"{missing} of the person's messages are missing from message_words"
                    " (written by a convmem older than schema 7?)"
                )
            missing = self.scalar(
                "SELECT count(*) FROM memory_items m WHERE NOT EXISTS"
                " (SELECT 1 FROM item_words w WHERE w.id = m.id)"
            )
            if missing:
                problems.append(
                    f"{missing} memory items are missing from item_words"
                    " (written by a convmem older than schema 8?)"
                )
            if self.scalar("SELECT lower('Ä') = 'ä' AS folds") is not True:
                problems.append(
                    "the database's LC_CTYPE folds only ASCII case (e.g. 'C'); search then"
                    " differs from SQLite for non-ASCII text: use a UTF-8 locale such as C.UTF-8"
                )
        except StoreError as exc:
            problems.append(str(exc))
        return problems

    def close(self) -> None:
        self.conn.close()
