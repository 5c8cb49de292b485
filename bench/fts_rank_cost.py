"""Experiment: what makes a session's ranked search grow with the other sessions?

Not a benchmark of convmem (``run_all.sh`` does not run it): the measurement behind
the finding in docs/benchmarks.md section 10. One session of real text
(``realtext.py``) is written into a trigram FTS5 table like convmem's ``events_fts``
(rowids in capture order, so the session owns one rowid range); its person's
messages are the queries, as convmem's ranked search takes them (the 12 longest
terms, ``retrieval.RANK_TERMS``). Each query runs over the session's rowid range:

* **ranked**: ``ORDER BY bm25() LIMIT 200``, what ``MemoryStore.search_events`` does;
* **unranked**: the same ``MATCH`` and range, every matching rowid, no ranking.

Then nine other sessions of the same size are added to the same table and both
queries run again. FTS5 seeks inside each doclist to the range, so the unranked
query stays near its cost; ``bm25()`` takes each phrase's document count over the
whole table (``fts5_aux.c`` counts it with ``xQueryPhrase``), so the ranked query
pays for every other session's matches of every term.

Usage::

    python bench/fts_rank_cost.py [--events 1e4] [--queries 60] [--out bench/results]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))

from convmem.memory.store_items import fts_phrase  # noqa: E402
from convmem.query import query_signals, selective  # noqa: E402
from convmem.retrieval import RANK_TERMS  # noqa: E402
from realtext import real_session  # noqa: E402
from scale import machine, machine_line, percentile  # noqa: E402

OTHERS = 9
RANKED = (
    "SELECT rowid, bm25(events_fts) AS r FROM events_fts WHERE events_fts MATCH ?"
    " AND rowid BETWEEN ? AND ? ORDER BY r LIMIT 200"
)
UNRANKED = "SELECT rowid FROM events_fts WHERE events_fts MATCH ? AND rowid BETWEEN ? AND ?"


def add_session(conn: sqlite3.Connection, session: str, events: int, seed: int) -> None:
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO events_fts(text) VALUES (?)",
        ((e.text,) for e in real_session(session, events, seed=seed)),
    )
    conn.execute("COMMIT")


def measure(conn: sqlite3.Connection, queries: list[str], lo: int, hi: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {"ranked": [], "unranked": []}
    for match in queries:
        for name, sql in (("ranked", RANKED), ("unranked", UNRANKED)):
            start = time.perf_counter()
            conn.execute(sql, (match, lo, hi)).fetchall()
            samples[name].append((time.perf_counter() - start) * 1000)
    return {name: round(percentile(sorted(v), 50), 2) for name, v in samples.items()}


def run(events: int, count: int, work: Path) -> list[str]:
    conn = sqlite3.connect(work / "rank-cost.sqlite", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE VIRTUAL TABLE events_fts USING fts5(text, tokenize='trigram')")
    add_session(conn, "s000", events, 0)
    lo, hi = 1, events
    texts = [e.text for e in real_session("s000", events) if e.type == "user/message"]
    random.Random(7).shuffle(texts)
    queries = []
    for text in texts[:count]:
        terms = [t for t in selective(query_signals(text).terms, RANK_TERMS) if len(t) >= 3]
        if terms:
            queries.append(" OR ".join(fts_phrase(t) for t in terms))
    alone = measure(conn, queries, lo, hi)
    for n in range(1, OTHERS + 1):
        add_session(conn, f"s{n:03d}", events, n)
    shared = measure(conn, queries, lo, hi)
    conn.close()
    head = f"{events:,} events, {len(queries)} queries"
    return [
        f"{head:<34} {'alone p50 ms':>13} {'+9 sessions':>12} {'+9 / alone':>11}",
        *(
            f"{'  ' + name + ' (session range)':<34} {alone[name]:>13.2f} {shared[name]:>12.2f}"
            f" {shared[name] / max(alone[name], 1e-9):>11.2f}"
            for name in ("ranked", "unranked")
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", default="1e4")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    lines = [
        "fts-rank-cost: one session's ranked and unranked trigram search, alone and beside"
        f" {OTHERS} other sessions of the same size",
        machine_line(machine()),
    ]
    with tempfile.TemporaryDirectory(prefix="convmem-rankcost-") as work:
        for events in (int(float(x)) for x in args.events.split(",")):
            lines += ["", *run(events, args.queries, Path(work))]
            print("\n".join(lines), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fts-rank-cost.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
