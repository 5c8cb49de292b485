"""Concurrency: several host processes on one database at once.

Four processes capture into one fresh database file at the same instant (two of them
the same session, racing with the same events; two their own sessions, one of those
through ``convmem ingest``), while two more assemble memory blocks in a loop. No
error may reach a host, the counts afterwards are exact, and the store is the one a
single process builds. A write lock held by someone else is waited out; held past
the bound, it becomes one clear sentence (and the hook stays silent).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from convmem.capture import Event
from convmem.config import load_settings
from convmem.core.db import BUSY_TIMEOUT_MS, LOCK_RETRY_SECONDS
from convmem.errors import StoreBusyError
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime
from helpers.crash import (
    DERIVED_TABLES,
    EVENT_TABLES,
    check_store,
    child_env,
    compare,
    reference_from_jsonl,
)
from helpers.streams import canonical_stream, write_jsonl

WORKER = Path(__file__).resolve().parent / "helpers" / "worker.py"
#: A writer gives up between LOCK_RETRY_SECONDS and that plus one busy wait.
BOUND = (LOCK_RETRY_SECONDS, LOCK_RETRY_SECONDS + BUSY_TIMEOUT_MS / 1000)


def _spawn(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        env=child_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _summary(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    data: dict[str, Any] = json.loads(out)
    return data


def test_four_writers_and_two_assemblers_on_one_fresh_database(tmp_path: Path) -> None:
    events = canonical_stream(2100, sessions=3, seed=21)
    by_session: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_session.setdefault(e["session_id"], []).append(e)
    shared, solo, via_cli = sorted(by_session)
    files = {sid: write_jsonl(tmp_path / f"{sid}.jsonl", evs) for sid, evs in by_session.items()}
    clean = reference_from_jsonl(
        tmp_path / "clean.sqlite", write_jsonl(tmp_path / "all.jsonl", events)
    )

    home = tmp_path / "home"  # does not exist yet: every process races to create it
    start_at = str(time.time() + 2.0)
    stop = tmp_path / "stop"
    writers = [
        _spawn(home, "write", str(home), str(files[shared]), "20", start_at),
        _spawn(home, "write", str(home), str(files[shared]), "20", start_at),
        _spawn(home, "write", str(home), str(files[solo]), "15", start_at),
    ]
    ingest = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import time; time.sleep(max(0, {start_at} - time.time()));"
            " from convmem._entry import main; main()",
            "ingest",
            str(files[via_cli]),
        ],
        env=child_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    sessions = ",".join(sorted(by_session))
    assemblers = [_spawn(home, "assemble", str(home), sessions, str(stop), start_at) for _ in "ab"]

    written = [_summary(p) for p in writers]
    out, err = ingest.communicate(timeout=300)
    stop.touch()
    assembled = [_summary(p) for p in assemblers]

    assert ingest.returncode == 0, err
    assert "Traceback" not in err and f"{len(by_session[via_cli])} new events" in out
    for summary in written + assembled:
        assert summary["errors"] == [], summary["errors"][:5]
    assert sum(a["calls"] for a in assembled) >= 8
    # the two racing writers inserted the shared session exactly once between them
    assert written[0]["inserted"] + written[1]["inserted"] == len(by_session[shared])
    assert written[2]["inserted"] == len(by_session[solo])

    db = home / "memory.sqlite"
    conn = sqlite3.connect(db)
    counts = dict(conn.execute("SELECT session_id, count(*) FROM events GROUP BY session_id"))
    keys = set(conn.execute("SELECT session_id, seq FROM events"))
    conn.close()
    assert counts == {sid: len(evs) for sid, evs in by_session.items()}
    assert keys == {(e["session_id"], e["seq"]) for e in events}
    assert check_store(db, caught_up=True) == []
    assert compare(db, clean, EVENT_TABLES) == []
    assert compare(db, clean, DERIVED_TABLES) == []


def _hold_write_lock(db: Path, seconds: float | None) -> tuple[sqlite3.Connection, threading.Event]:
    """Another process's writer: BEGIN IMMEDIATE, released after ``seconds`` (or never)."""
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN IMMEDIATE")
    released = threading.Event()
    if seconds is not None:

        def release() -> None:
            conn.execute("COMMIT")
            released.set()

        threading.Timer(seconds, release).start()
    return conn, released


def test_a_held_write_lock_is_waited_out(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", env={})
    with MemoryRuntime.open(settings) as rt:
        rt.on_events([Event("s", 1, "user/message", "The cache timeout must be 300 ms.")])
        conn, released = _hold_write_lock(settings.db_path, 1.5)
        began = time.monotonic()
        result = rt.on_events([Event("s", 2, "user/message", "Never deploy on Fridays.")])
        waited = time.monotonic() - began
        conn.close()
        assert released.is_set() and waited >= 1.4
        assert result.inserted == 1 and rt.store.count_events("s") == 2
        assert rt.store.checkpoint("s").last_extract_seq == 2


def test_a_lock_held_past_the_bound_is_one_sentence_and_a_silent_hook(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load_settings(home=home, env={})
    with MemoryRuntime.open(settings) as rt:
        rt.on_events([Event("s", 1, "user/message", "The cache timeout must be 300 ms.")])
    events = write_jsonl(
        tmp_path / "e.jsonl",
        [{"session_id": "s", "seq": 2, "type": "user/message", "text": "Never deploy on Fridays."}],
    )
    conn, _ = _hold_write_lock(settings.db_path, None)
    try:
        env = child_env(home)
        cli = subprocess.Popen(
            [sys.executable, "-m", "convmem", "ingest", str(events)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        payload = json.dumps(
            {
                "hook_event_name": "UserPromptSubmit",
                "session_id": "s",
                "prompt": "Hello there",
                "transcript_path": str(tmp_path / "none.jsonl"),
                "cwd": str(tmp_path),
            }
        )
        hook = subprocess.Popen(
            [sys.executable, "-m", "convmem", "hook", "claude-code"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        began = time.monotonic()
        with MemoryRuntime.open(settings) as rt, pytest.raises(StoreBusyError) as info:
            rt.on_events([Event("s", 3, "user/message", "Always run the tests first.")])
        waited = time.monotonic() - began
        _, cli_err = cli.communicate(timeout=60)
        hook_out, hook_err = hook.communicate(payload, timeout=60)
    finally:
        conn.execute("ROLLBACK")
        conn.close()
    assert waited >= BOUND[0] - 0.5  # it waited out the bound (how long past it: bench)
    message = str(info.value)
    assert "stayed locked by another process" in message and message.count(". ") == 0
    assert cli.returncode != 0 and "Traceback" not in cli_err
    assert cli_err.strip().splitlines() == [f"Error: {message}"]
    assert hook.returncode == 0 and hook_out == "" and "Traceback" not in hook_err
    # nothing committed was lost, and the held-off events go in once the lock is free
    with MemoryRuntime.open(settings) as rt:
        assert [e.seq for e in rt.store.events("s")] == [1]
    assert (
        subprocess.run(
            [sys.executable, "-m", "convmem", "ingest", str(events)], env=env, capture_output=True
        ).returncode
        == 0
    )
    assert os.path.exists(settings.db_path)


def test_events_arriving_behind_the_extraction_cursor_are_still_extracted(
    tmp_path: Path,
) -> None:
    """A second writer (or a backfill) delivers older events after newer ones were extracted."""
    events = [
        Event("s", n, "user/message", f"The timeout of service{n} must be {n * 10} ms.")
        for n in range(1, 13)
    ]
    late = MemoryRuntime(MemoryStore.open(str(tmp_path / "late.sqlite")), load_settings(env={}))
    late.on_events(events[6:])
    assert late.store.checkpoint("s").last_extract_seq == 12
    late.on_events(events[:6])
    clean = MemoryRuntime(MemoryStore.open(str(tmp_path / "clean.sqlite")), load_settings(env={}))
    clean.on_events(events)
    ids = sorted(i.id for i in late.store.items("s"))
    assert ids == sorted(i.id for i in clean.store.items("s")) and len(ids) == 12
    assert late.store.count_pending("s") == 0
    late.close()
    clean.close()


def test_extraction_waits_out_a_long_lock_in_order(tmp_path: Path) -> None:
    """Another process holds the write lock a little past the bound, then lets go.

    The extractor that gave up must neither queue the event as failed nor move the
    cursor past it: the next run extracts both events in order, so the correction
    still supersedes the value it corrects."""
    events = [
        Event("s", 1, "user/message", "The cache timeout must be 300 ms."),
        Event("s", 2, "user/message", "Actually, make the cache timeout 500 ms instead."),
    ]
    with MemoryRuntime(
        MemoryStore.open(str(tmp_path / "clean.sqlite")), load_settings(env={})
    ) as rt:
        rt.on_events(events)
        statuses = ("active", "superseded", "disputed")
        clean = [(i.content, i.status) for i in rt.store.items("s", statuses)]
    assert clean[0][1] == "superseded"
    rt = MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={}))
    rt.capture.capture_many(events)  # captured; extraction comes next, behind the lock
    conn, released = _hold_write_lock(tmp_path / "m.sqlite", BOUND[0] + 3)
    with contextlib.suppress(StoreBusyError):  # giving up is fine: the host goes on
        rt.after_capture("s")
    released.wait(30)
    conn.close()
    rt.after_capture("s")
    try:
        assert [(i.content, i.status) for i in rt.store.items("s", statuses)] == clean
    finally:
        rt.close()
