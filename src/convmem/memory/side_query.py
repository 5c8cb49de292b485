"""One read query run ahead, on a second connection, in a thread.

A long session's ranked full-text query is the largest single cost of a pre-step, and
FTS5 ranks in C: Python's ``sqlite3`` lets go of the interpreter lock while a
statement steps. So the pre-step starts the query as soon as it knows the terms, goes
on with the memory items on its own connection, and takes the rows when the evidence
search gets to them.

The answer is used only when the file is still in the state the main connection saw
when the query started: no other connection committed since (``PRAGMA data_version``)
and the main connection wrote nothing (its ``total_changes``). Otherwise, and when
anything went wrong on the side, :meth:`SideQuery.take` says None and the caller runs
the query itself, so errors reach the user as they would have.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any


class SideQuery:
    """A read-only second connection to one SQLite file, running one query at a time."""

    def __init__(self, path: str) -> None:
        #: the file's absolute path (``PRAGMA database_list``): a relative one would
        #: follow a later change of directory
        self.path = path
        #: answers taken so far (a diagnostic: how often the side query paid off)
        self.served = 0
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._thread: threading.Thread | None = None
        self._key: tuple[Any, ...] | None = None
        self._rows: list[tuple[Any, ...]] | None = None

    def start(self, key: tuple[Any, ...], sql: str, params: list[Any]) -> None:
        """Run ``sql`` in a thread; :meth:`take` with the same ``key`` returns its rows."""
        self._finish()
        conn = self._connection()
        if conn is None:
            return
        self._key, self._rows = key, None

        def run() -> None:
            try:
                self._rows = conn.execute(sql, params).fetchall()
            except Exception:  # the caller runs the query itself and meets the error there
                self._rows = None

        self._thread = threading.Thread(target=run, name="convmem-side-query", daemon=True)
        self._thread.start()

    def take(self, key: tuple[Any, ...]) -> list[tuple[Any, ...]] | None:
        """The rows of the query started under ``key``; None when there is none."""
        if self._key != key:
            return None
        self._finish()
        rows, self._rows, self._key = self._rows, None, None
        self.served += rows is not None
        return rows

    def close(self) -> None:
        self._finish()
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    def _finish(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _connection(self) -> sqlite3.Connection | None:
        # a connection opened before a fork belongs to the parent: a child opens its
        # own and leaves the inherited one alone (closing it could drop the child's
        # file locks)
        if self._conn is None or self._pid != os.getpid():
            try:
                from urllib.parse import quote

                # read-only (never creates a file), and no wait for a lock: a busy
                # file leaves the query to the main connection and its own timeout
                conn = sqlite3.connect(
                    f"file:{quote(self.path)}?mode=ro", uri=True, timeout=0, check_same_thread=False
                )
                conn.execute("PRAGMA query_only = ON")
            except sqlite3.Error:
                return None
            self._conn, self._pid = conn, os.getpid()
        return self._conn
