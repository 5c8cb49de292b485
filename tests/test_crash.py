"""Crash safety: capture SIGKILLed at seeded random points, restarted until done.

Both capture paths run as real processes over a large event stream: ``convmem
ingest`` of one JSON Lines file, and the long-lived ``convmem serve dsh`` fed the way
the DSH plugin feeds it. After every kill the store must pass SQLite's integrity
check, each FTS index must agree with its table and the checkpoints must be
consistent; after the final clean run every event is present exactly once and the
derived memory (items, statuses, lifecycle, task state) is the one a single clean run
builds from the same events. ``bench/soak_crash.py`` runs the same harness with 100
kills.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from convmem.capture import Event
from convmem.memory.extraction import Extractor
from helpers.crash import (
    check_store,
    compare,
    ingest_with_kills,
    reference_from_dsh,
    reference_from_jsonl,
    serve_dsh_with_kills,
    work_units,
)
from helpers.streams import canonical_stream, dsh_records, write_jsonl
from pipeline import runtime

KILLS = 10


def _event_keys(db: Path) -> list[tuple[str, int]]:
    conn = sqlite3.connect(db)
    try:
        return [(str(r[0]), int(r[1])) for r in conn.execute("SELECT session_id, seq FROM events")]
    finally:
        conn.close()


def test_ingest_survives_sigkill_at_random_points(tmp_path: Path) -> None:
    events = canonical_stream(1500, sessions=3, seed=11)
    jsonl = write_jsonl(tmp_path / "stream.jsonl", events)
    clean = reference_from_jsonl(tmp_path / "clean.sqlite", jsonl)

    home = tmp_path / "home"
    report = ingest_with_kills(home, jsonl, KILLS, random.Random(20261202), work_units(events))

    assert report.kills == KILLS
    assert report.problems == []
    db = home / "memory.sqlite"
    keys = _event_keys(db)
    assert len(keys) == len(set(keys)) == len(events)
    assert set(keys) == {(e["session_id"], e["seq"]) for e in events}
    assert check_store(db, caught_up=True) == []
    assert compare(db, clean) == []


def test_serve_dsh_survives_sigkill_at_random_points(tmp_path: Path) -> None:
    logs = dsh_records(canonical_stream(1200, sessions=3, seed=12))
    clean = reference_from_dsh(tmp_path / "clean.sqlite", logs)

    home = tmp_path / "home"
    report = serve_dsh_with_kills(home, tmp_path / "dsh", logs, KILLS, random.Random(20261203))

    assert report.kills == KILLS
    assert report.problems == []
    db = home / "memory.sqlite"
    keys = _event_keys(db)
    assert len(keys) == len(set(keys)) == len(_event_keys(clean))
    assert check_store(db, caught_up=True) == []
    assert compare(db, clean) == []


def test_extraction_applied_twice_changes_nothing(tmp_path: Path) -> None:
    """A second extractor that read the cursor before the first one moved it."""
    rt = runtime(tmp_path)
    rt.capture.capture_many(
        [
            Event("s", 1, "user/message", "The goal is to ship the parser v1."),
            Event("s", 2, "user/message", "The cache timeout must be 300 ms."),
            Event("s", 3, "user/message", "The cache timeout must be 300 ms."),
            Event("s", 4, "user/message", "Actually, make the cache timeout 500 ms instead."),
            Event("s", 5, "user/message", "The goal is to ship the importer v2."),
        ]
    )
    Extractor(rt.store, rt.settings).run("s")
    statuses = ("active", "superseded", "disputed", "retracted")
    before = (rt.store.items("s", statuses), rt.store.task_state("s"))
    with rt.store.transaction():  # what the second process still believes
        rt.store.set_checkpoint("s", "last_extract_seq", -1)
    Extractor(rt.store, rt.settings).run("s")
    assert (rt.store.items("s", statuses), rt.store.task_state("s")) == before
