"""``MemoryDatabase``: a thin wrapper over the standard library's sqlite3.

It owns the connection settings (WAL, ``synchronous=NORMAL``, a busy timeout, a
statement cache), nested transactions as savepoints, running the schema migrations,
and turning SQLite's error codes into one-sentence :class:`StoreError` messages.
No other module outside the store opens SQLite.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from convmem.core.schema import MIGRATIONS
from convmem.errors import SchemaTooNewError, StoreBusyError, StoreError

BUSY_TIMEOUT_MS = 5000
#: How long a writer keeps retrying "database is locked" beyond SQLite's own busy wait.
LOCK_RETRY_SECONDS = 10.0

Params = Sequence[Any] | dict[str, Any]


def _explain(exc: sqlite3.Error, path: str) -> StoreError:
    msg = str(exc)
    low = msg.lower()
    # (a damaged page inside the full-text index says "vtable constructor failed")
    if "not a database" in low or "malformed" in low or "corrupt" in low or "vtable" in low:
        return StoreError(
            f"the database {path} is damaged or not a convmem database ({msg}); "
            "`convmem status --check` says how; move it aside and run again, or restore it"
            " from a backup"
        )
    if "readonly" in low or "read-only" in low:
        return StoreError(_read_only(path))
    if "disk is full" in low or "database or disk is full" in low:
        return StoreError(f"no space left for the database {path}; free some disk space")
    if "unable to open" in low:
        folder = os.path.dirname(path) or "."
        if os.path.isdir(folder) and not os.access(folder, os.W_OK):
            # WAL mode needs its -wal and -shm files beside the database, even to read
            return StoreError(f"the database {path} is in a read-only folder; make it writable")
        return StoreError(f"cannot open the database {path}; check that its folder exists")
    if "locked" in low or "busy" in low:
        return StoreBusyError(
            f"the database {path} stayed locked by another process; try again shortly"
        )
    return StoreError(f"database error on {path}: {msg}")


def _read_only(path: str) -> str:
    """Which of the database's folder or files cannot be written, and the fix."""
    folder = os.path.dirname(path) or "."
    if not os.access(folder, os.W_OK):  # a read-only mount too
        return f"the database {path} is in a read-only folder; make {folder} writable"
    for name in (path, f"{path}-wal", f"{path}-shm"):
        if os.path.exists(name) and not os.access(name, os.W_OK):
            # an immutable file (chattr +i) is refused even to root, whatever its mode
            return (
                f"the database file {name} is read-only; make it writable"
                " (chmod u+w, or chattr -i if lsattr shows it immutable)"
            )
    return f"the database {path} is read-only (a read-only mount?); make it writable"


def _unbindable(exc: UnicodeEncodeError | OverflowError, path: str) -> StoreError:
    what = (
        "a text value is not valid Unicode (it holds a lone surrogate)"
        if isinstance(exc, UnicodeEncodeError)
        else "a number is too large for SQLite's 64-bit integers"
    )
    return StoreError(f"cannot use that value with the database {path}: {what}")


class MemoryDatabase:
    """One SQLite connection, migrated to the current schema on open."""

    #: The ordered, named migrations this database runs (a subclass brings its own).
    migrations = MIGRATIONS

    def __init__(self, path: str | os.PathLike[str], *, migrate: bool = True) -> None:
        self.path = str(path)
        self._depth = 0
        if self.path != ":memory:":
            _prepare_file(Path(self.path))
        try:
            self.conn = sqlite3.connect(
                self.path, isolation_level=None, cached_statements=256, check_same_thread=False
            )
            self.conn.row_factory = sqlite3.Row
            register_functions(self.conn)
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if self.path != ":memory:":
                self._enable_wal()
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
            if migrate:
                self.migrate()
        except sqlite3.Error as exc:
            raise _explain(exc, self.path) from exc

    def _enable_wal(self) -> None:
        # switching a fresh file to WAL needs a moment of exclusive access; several
        # processes opening one new file at once wait for each other, within the bound
        deadline = time.monotonic() + LOCK_RETRY_SECONDS
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    # --- statements ------------------------------------------------------------------

    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.Error as exc:
            _raise_if_interrupted(exc)
            raise _explain(exc, self.path) from exc
        except (UnicodeEncodeError, OverflowError) as exc:  # a parameter SQLite cannot take
            raise _unbindable(exc, self.path) from exc

    def executemany(self, sql: str, rows: Iterable[Params]) -> sqlite3.Cursor:
        try:
            return self.conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            _raise_if_interrupted(exc)
            raise _explain(exc, self.path) from exc
        except (UnicodeEncodeError, OverflowError) as exc:
            raise _unbindable(exc, self.path) from exc

    def query(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        cursor = self.execute(sql, params)
        try:
            return cursor.fetchall()
        except sqlite3.Error as exc:
            _raise_if_interrupted(exc)
            raise

    def one(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.execute(sql, params).fetchone()
        return row

    def scalar(self, sql: str, params: Params = ()) -> Any:
        row = self.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def execute_script(self, sql: str) -> None:
        """Run several statements inside the current transaction.

        ``sqlite3.executescript`` would commit first, which would split a migration
        from its bookkeeping row; this splits on complete statements instead.
        """
        buf = ""
        for line in sql.splitlines(keepends=True):
            buf += line
            if sqlite3.complete_statement(buf):
                if buf.strip():
                    self.execute(buf)
                buf = ""
        if buf.strip():
            self.execute(buf)

    # --- transactions ----------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that see one state of the file (a deferred read transaction; inside a
        write transaction already, that one)."""
        if self.conn.in_transaction:
            yield
            return
        self.execute("BEGIN")
        try:
            yield
        finally:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT")

    @property
    def writing(self) -> bool:
        """Inside :meth:`transaction`: a write that may yet roll back."""
        return self._depth > 0

    def data_version(self) -> int:
        """A number that changes when another connection commits to the file."""
        return int(self.scalar("PRAGMA data_version"))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction; nested calls become savepoints that roll back alone."""
        if self._depth == 0:
            self._begin()
        else:
            self.execute(f"SAVEPOINT sp{self._depth}")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            self._undo()
            raise
        self._depth -= 1
        try:
            self.execute("COMMIT" if self._depth == 0 else f"RELEASE sp{self._depth}")
        except StoreError:
            self._undo()
            raise

    def _undo(self) -> None:
        """Roll back the current level, if SQLite has not already done so.

        After some errors (a full disk, an I/O error) SQLite rolls the whole
        transaction back by itself; a second ROLLBACK would then fail and hide the
        error that matters.
        """
        if not self.conn.in_transaction:
            return
        try:
            if self._depth == 0:
                self.conn.execute("ROLLBACK")
            else:
                self.conn.execute(f"ROLLBACK TO sp{self._depth}")
                self.conn.execute(f"RELEASE sp{self._depth}")
        except sqlite3.Error:
            pass  # the original error is the one to report

    def _begin(self) -> None:
        # BEGIN IMMEDIATE takes the write lock up front, so two writers never deadlock
        # on a read-to-write upgrade; the busy timeout waits, and we retry past it.
        deadline = time.monotonic() + LOCK_RETRY_SECONDS
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                    raise _explain(exc, self.path) from exc
                time.sleep(0.05)

    # --- schema ----------------------------------------------------------------------

    def schema_version(self) -> int:
        has_meta = self.scalar("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'")
        if not has_meta:
            return 0
        value = self.scalar("SELECT value FROM meta WHERE key = 'schema'")
        return int(value) if value is not None else 0

    def migrate(self) -> list[str]:
        """Apply the migrations this file has not seen; return their names."""
        current = self.schema_version()
        if current > len(self.migrations):
            raise SchemaTooNewError(
                f"the database {self.path} has schema version {current}, newer than this "
                f"convmem understands ({len(self.migrations)}); upgrade convmem"
            )
        applied: list[str] = []
        for number, (name, func) in enumerate(self.migrations, start=1):
            if number <= current:
                continue
            with self.transaction():
                # Another process may have applied it while we waited for the write lock.
                if self.schema_version() >= number:
                    continue
                func(self)
                now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                self.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    (f"migration:{name}", now),
                )
                self.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)", (str(number),)
                )
            applied.append(name)
        return applied

    # --- diagnostics -----------------------------------------------------------------

    def integrity_check(self) -> list[str]:
        """Problems SQLite finds in the file (empty when healthy). Never repairs."""
        problems: list[str] = []
        try:
            rows = self.conn.execute("PRAGMA integrity_check").fetchall()
            problems += [str(r[0]) for r in rows if str(r[0]) != "ok"]
            for table in ("events_fts", "memory_fts", "rules_fts", "words_fts", "item_words_fts"):
                exists = self.conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = ?", (table,)
                ).fetchone()
                if exists:
                    try:
                        self.conn.execute(
                            f"INSERT INTO {table}({table}) VALUES ('integrity-check')"
                        )
                    except sqlite3.Error as exc:
                        problems.append(f"{table}: {exc}")
        except sqlite3.Error as exc:
            problems.append(str(exc))
        return problems

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> MemoryDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def register_functions(conn: sqlite3.Connection) -> None:
    """Give a connection the SQL functions convmem's schema calls (its triggers do).

    Every :class:`MemoryDatabase` has them; a bare ``sqlite3`` connection that writes
    events (a benchmark's baseline) must call this first.
    """
    conn.create_function("convmem_words", 1, _guarded(_words), deterministic=True)
    conn.create_function("convmem_session_words", 2, _guarded(_session_words), deterministic=True)
    conn.create_function("convmem_contains", 2, _guarded(_contains), deterministic=True)


#: Set when Ctrl-C lands inside one of the functions above: sqlite3 reports any exception
#: raised there as "user-defined function raised exception", so the statement's caller
#: raises the KeyboardInterrupt again (an ingest stopped so must say so, not fail).
_interrupted = threading.Event()
#: Set when one of them raised anything else (they are written not to).
_failed = threading.Event()
_CALLBACK_ERROR = "user-defined function raised exception"


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: object) -> Any:
        try:
            return fn(*args)
        except KeyboardInterrupt:
            _interrupted.set()
            raise
        except BaseException:
            _failed.set()
            raise

    return call


def _raise_if_interrupted(exc: BaseException | None = None) -> None:
    """Raise KeyboardInterrupt again when Ctrl-C is why a statement failed.

    A signal that arrives while SQLite runs its own code is raised as the next Python
    frame starts, which can be a function's first instruction, before its ``try``: a
    failed callback that recorded nothing was stopped there, and only a signal does so.
    """
    if _interrupted.is_set():
        _interrupted.clear()
        raise KeyboardInterrupt
    if exc is not None and str(exc) == _CALLBACK_ERROR:
        if _failed.is_set():
            _failed.clear()
        else:
            raise KeyboardInterrupt


def _words(text: object) -> str:
    """``convmem_words()`` in SQL: what the word index holds for a message's text.

    The triggers pass the text as a BLOB, so that bytes that are not UTF-8 (only
    another program could store them) are replaced here rather than failing the
    conversion, and with it the insert of the event itself.
    """
    return " ".join(_index_words(text))


def _contains(text: object, needle: object) -> bool:
    """``convmem_contains()`` in SQL: whether ``text`` holds ``needle``, ignoring case
    as the trigram index does (Unicode case folding: final sigma is sigma)."""
    return (
        isinstance(text, str) and isinstance(needle, str) and needle.casefold() in text.casefold()
    )


def _session_words(session_id: object, words: object) -> str:
    """``convmem_session_words()`` in SQL: words as ``convmem_words()`` gives them (a
    space-separated string), each tagged with the session
    (:func:`convmem.query.session_words`). The id comes as a BLOB, as the text does."""
    if not isinstance(session_id, bytes) or not isinstance(words, str):
        return ""
    from convmem.query import session_words

    return " ".join(session_words(session_id, words.split()))


@lru_cache(maxsize=2)  # a trigger asks for the words of one text twice, once per column
def _index_words(text: object) -> tuple[str, ...]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        return ()
    from convmem.query import index_words

    return tuple(index_words(text))


def _prepare_file(path: Path) -> None:
    """Create the data folder (0700) and the database file (0600) if missing."""
    folder = path.parent
    if not folder.exists():
        try:
            folder.mkdir(parents=True, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the data folder {folder}: {exc.strerror}") from exc
    if not path.exists():
        try:
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
        except OSError as exc:
            raise StoreError(f"cannot create the database {path}: {exc.strerror}") from exc


def sqlite_info() -> dict[str, Any]:
    """SQLite library version and whether FTS5 with the trigram tokenizer works."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        trigram = True
    except sqlite3.Error:
        trigram = False
    finally:
        conn.close()
    return {"sqlite_version": sqlite3.sqlite_version, "fts5_trigram": trigram}
