"""Ctrl-C during a statement reaches the caller as a KeyboardInterrupt.

sqlite3 reports an exception raised inside one of convmem's SQL functions (the word
index's trigger calls one for every event written) as "user-defined function raised
exception"; a Ctrl-C that lands there must still stop the program as a Ctrl-C, so that
an interrupted ingest says to run it again rather than failing with a store error.
"""

from __future__ import annotations

import _thread
import threading
from pathlib import Path

from convmem.core.db import MemoryDatabase


def test_ctrl_c_inside_a_sql_function_is_a_keyboard_interrupt(tmp_path: Path) -> None:
    db = MemoryDatabase(tmp_path / "m.sqlite")
    long_text = " ".join(f"word{i} caching retries" for i in range(40_000))
    for _ in range(3):
        timer = threading.Timer(0.3, _thread.interrupt_main)
        timer.start()
        caught: BaseException | None = None
        try:
            for _ in range(1_000):  # all of the time is spent inside convmem_words()
                db.query("SELECT convmem_words(?)", (long_text,))
        except BaseException as exc:  # what reaches the caller is what matters
            caught = exc
        finally:
            timer.join()
        assert isinstance(caught, KeyboardInterrupt), repr(caught)
    db.close()
