"""Experiment: can a full-text query be bounded by the session instead of the store?

Not a benchmark of convmem (``bench/run_all.sh`` does not run it): a measurement
behind a design question that ``bench/scale.py`` raises. convmem's events index is
one FTS5 table over every session, so ``MATCH ... ORDER BY rank`` reads and ranks
the matches of all sessions before the ``session_id`` filter, and its cost grows
with the store. FTS5 can restrict a query to a ``rowid`` range and seeks inside
its doclists to do so; if a session's events had contiguous rowids (say
``session_number << 32 | seq``), ``AND rowid BETWEEN lo AND hi`` would read only
that session's part of every doclist.

For each size, the ``synth.session_mix`` stream is captured with convmem into a
fresh file; then two more trigram FTS5 tables are built over the same texts in one
bulk insert each (so both are equally compacted): ``global`` with the events'
rowids, ``clustered`` with session-clustered rowids. The same ~200 queries as
``bench/scale.py`` time, interleaved:

* ``live``: the bare query on convmem's own ``events_fts``;
* ``global``: the bare query on the freshly built global table;
* ``session range``: the same query on ``clustered`` with the session's rowid range.

Usage::

    python bench/fts_session_range.py [--sizes 1e4,1e5,1e6] [--out bench/results]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))

from convmem.capture import Capture  # noqa: E402
from convmem.config import load_settings  # noqa: E402
from convmem.memory.store import MemoryStore  # noqa: E402
from scale import BARE_SQL, machine, machine_line, percentile, pick_queries  # noqa: E402
from synth import session_mix  # noqa: E402

RANGE_SQL = (
    "SELECT rowid FROM clustered WHERE clustered MATCH ? AND rowid BETWEEN ? AND ?"
    " ORDER BY rank LIMIT 24"
)
GLOBAL_SQL = "SELECT rowid FROM global WHERE global MATCH ? ORDER BY rank LIMIT 24"


def build(path: Path, size: int) -> None:
    store = MemoryStore.open(str(path))
    cap = Capture(store, load_settings(env={}))
    stream = session_mix(size)
    while batch := [e for _, e in zip(range(2000), stream, strict=False)]:
        cap.capture_many(batch)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()


def add_tables(conn: sqlite3.Connection) -> dict[str, int]:
    conn.execute("BEGIN")
    conn.execute(
        "CREATE TABLE session_no AS SELECT session_id,"
        " row_number() OVER (ORDER BY session_id) AS n"
        " FROM (SELECT DISTINCT session_id FROM events)"
    )
    for name in ("global", "clustered"):
        conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5(text, tokenize='trigram')")
    conn.execute("INSERT INTO global(rowid, text) SELECT rowid, text FROM events ORDER BY rowid")
    conn.execute(
        "INSERT INTO clustered(rowid, text) SELECT (s.n << 32) | e.seq, e.text"
        " FROM events e JOIN session_no s USING (session_id) ORDER BY 1"
    )
    conn.execute("COMMIT")
    return {str(sid): int(n) for sid, n in conn.execute("SELECT session_id, n FROM session_no")}


def timed(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> tuple[float, int]:
    start = time.perf_counter()
    rows = conn.execute(sql, params).fetchall()
    return (time.perf_counter() - start) * 1000, len(rows)


def measure(size: int, work: Path, count: int) -> dict[str, Any]:
    path = work / f"range-{size}.sqlite"
    build(path, size)
    conn = sqlite3.connect(path, isolation_level=None)
    numbers = add_tables(conn)
    queries = pick_queries(conn, count)
    samples: dict[str, list[float]] = {"live": [], "global": [], "session range": []}
    for i, (session_id, _, match) in enumerate(queries):
        lo = numbers[session_id] << 32
        live = timed(conn, BARE_SQL, (match,))
        fresh = timed(conn, GLOBAL_SQL, (match,))
        ranged = timed(conn, RANGE_SQL, (match, lo, lo | 0xFFFFFFFF))
        if i >= 5:  # warm-up
            samples["live"].append(live[0])
            samples["global"].append(fresh[0])
            samples["session range"].append(ranged[0])
    conn.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    out: dict[str, Any] = {"events": size, "sessions": len(numbers), "queries": len(queries) - 5}
    for name, values in samples.items():
        values.sort()
        out[name] = {
            "p50_ms": round(percentile(values, 50), 2),
            "p99_ms": round(percentile(values, 99), 2),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--date", default=None)
    args = parser.parse_args()
    info = machine()
    print(machine_line(info), flush=True)
    work = Path(tempfile.mkdtemp(prefix="convmem-range-"))
    rows = []
    try:
        for size in (int(float(s)) for s in args.sizes.split(",")):
            rows.append(measure(size, work, args.queries))
            r = rows[-1]
            print(
                f"{size:>9,} events, {r['sessions']} sessions: p50 live {r['live']['p50_ms']} ms,"
                f" global {r['global']['p50_ms']} ms, session range"
                f" {r['session range']['p50_ms']} ms",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    date = args.date or time.strftime("%Y-%m-%d")
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": "fts-session-range", "date": date, "machine": info, "sizes": rows}
    (args.out / f"fts-session-range-{date}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
