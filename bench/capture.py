"""Capture throughput: convmem's ingest path beside a bare sqlite3 executemany.

Both write the same rows into the same tables with the same FTS5 trigram index,
in fresh database files on the same disk, in the same run. Usage::

    python bench/capture.py [--events 100000] [--out bench/results]
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from convmem.capture import Capture, Event
from convmem.config import load_settings
from convmem.core.db import MemoryDatabase, register_functions
from convmem.core.text import normalize_text, sha256_hex
from convmem.ingest import ingest_file
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import synthetic_events

INSERT = (
    "INSERT OR IGNORE INTO events (session_id, seq, type, time, turn, step, role, text,"
    " source_kind, source_form, tool_name, call_id, store, content_hash, truncated, ingested_at)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def bare_rows(events: list[Event]) -> list[tuple[object, ...]]:
    rows = []
    for e in events:
        text = normalize_text(e.text)
        rows.append(
            (
                e.session_id,
                e.seq,
                e.type,
                e.time,
                e.turn,
                e.step,
                e.effective_role,
                text,
                e.source_kind,
                e.source_form,
                e.tool_name,
                e.call_id,
                "host",
                sha256_hex(text),
                0,
                "2026-01-01T00:00:00Z",
            )
        )
    return rows


def run_bare(path: Path, rows: list[tuple[object, ...]]) -> float:
    MemoryDatabase(path).close()  # same schema, same FTS index and triggers
    conn = sqlite3.connect(path, isolation_level=None)
    register_functions(conn)  # the word index's trigger calls it
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    start = time.perf_counter()
    for i in range(0, len(rows), 2000):
        conn.execute("BEGIN")
        conn.executemany(INSERT, rows[i : i + 2000])
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def run_capture(path: Path, events: list[Event]) -> float:
    store = MemoryStore.open(str(path))
    cap = Capture(store, load_settings(env={}))
    start = time.perf_counter()
    for i in range(0, len(events), 2000):
        cap.capture_many(events[i : i + 2000])
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed


def run_ingest(path: Path, jsonl: Path, full: bool) -> float:
    settings = load_settings(env={}).with_values(store=str(path))
    runtime = MemoryRuntime.open(settings)
    sink = runtime.on_events if full else runtime.capture.capture_many
    start = time.perf_counter()
    ingest_file(jsonl, sink)
    elapsed = time.perf_counter() - start
    runtime.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args()
    events = list(synthetic_events(args.events, sessions=4))
    rows = bare_rows(events)
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        jsonl = tmpdir / "events.jsonl"
        with jsonl.open("w", encoding="utf-8") as fh:
            for e in events:
                fh.write(
                    json.dumps(
                        {
                            "session_id": e.session_id,
                            "seq": e.seq,
                            "type": e.type,
                            "text": e.text,
                            "turn": e.turn,
                            "time": e.time,
                            "tool_name": e.tool_name,
                            "call_id": e.call_id,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
        results = {
            "bare sqlite3 executemany": run_bare(tmpdir / "bare.sqlite", rows),
            "convmem capture (events in memory)": run_capture(tmpdir / "cap.sqlite", events),
            "convmem ingest (JSONL file, capture only)": run_ingest(
                tmpdir / "ing.sqlite", jsonl, False
            ),
            "convmem ingest (JSONL file, capture + extraction)": run_ingest(
                tmpdir / "full.sqlite", jsonl, True
            ),
        }
    base = args.events / results["bare sqlite3 executemany"]
    print(f"capture benchmark: {args.events:,} synthetic events, 4 sessions")
    print(
        f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version}, {platform.machine()}"
    )
    print(f"{'path':52} {'events/s':>12} {'ratio':>7}")
    figures = {}
    for name, seconds in results.items():
        rate = args.events / seconds
        figures[name] = {
            "seconds": round(seconds, 3),
            "events_per_s": round(rate),
            "ratio": round(rate / base, 3),
        }
        print(f"{name:52} {rate:12,.0f} {rate / base:7.2f}")
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d")
    (args.out / f"capture-{stamp}.json").write_text(
        json.dumps(
            {
                "events": args.events,
                "python": platform.python_version(),
                "sqlite": sqlite3.sqlite_version,
                "results": figures,
            },
            indent=2,
        )
        + "\n",
        "utf-8",
    )


if __name__ == "__main__":
    main()
