"""PostgreSQL beside SQLite: capture rate, extraction, pre-step latency, size.

For each size (default 1e4 and 1e5 events of ``synth.synthetic_events`` over four
sessions) the same events go into a fresh SQLite file and a fresh PostgreSQL
database, in the same run:

* **capture, 1 process**: ``Capture.capture_many`` in batches of 2,000 events;
* **capture, 4 processes**: four processes each capture their own session's
  quarter at once (SQLite serializes writers; PostgreSQL runs them in parallel);
* **extraction**: ``Extractor.run`` per session, events per second;
* **pre-step**: ``runtime.pre_step(session, [], query=text)`` (retrieve, assemble
  and log one row) for user messages drawn evenly from the stream, after a warm-up,
  alternating the backends query by query; p50 and p99. The blocks must be
  byte-identical on both backends (same BM25 scores), and the run says how many are;
* **size**: bytes per event (the SQLite file after a WAL checkpoint; the PostgreSQL
  database minus a freshly migrated empty one);
* **parity**: the smallest size again as a single session, where PostgreSQL's
  per-session BM25 statistics equal SQLite's whole-table ones: how many blocks
  (``assemble``, no log) are byte-identical.

The server is a throwaway one from ``tests/pg_server.py`` (fsync on,
``synchronous_commit=off`` - the durability SQLite's WAL with ``synchronous=NORMAL``
has), reached through a Unix socket, unless ``--url`` names another (a role that
may CREATE DATABASE). Usage::

    python bench/pg_compare.py [--sizes 1e4,1e5] [--queries 100] [--url URL]
                               [--out bench/results]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))
sys.path.insert(2, str(HERE.parent / "tests"))

import pg_server  # noqa: E402  (tests/pg_server.py)
from convmem.capture import Capture, Event  # noqa: E402
from convmem.config import load_settings  # noqa: E402
from convmem.memory.extraction import Extractor  # noqa: E402
from convmem.memory.pg_store import PgMemoryStore  # noqa: E402
from convmem.memory.store import MemoryStore  # noqa: E402
from convmem.retrieval import query_signals  # noqa: E402
from convmem.runtime import MemoryRuntime  # noqa: E402
from scale import machine, machine_line, percentile  # noqa: E402  (bench/scale.py)
from synth import synthetic_events  # noqa: E402

BATCH = 2000
SESSIONS = 4
WARMUP = 5
CLOCK = "2026-01-01T00:00:00Z"
Opener = Callable[[], MemoryStore]


def _capture(open_store: Opener, events: list[Event]) -> float:
    store = open_store()
    cap = Capture(store, load_settings(env={}))
    start = time.perf_counter()
    for i in range(0, len(events), BATCH):
        cap.capture_many(events[i : i + BATCH])
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed


def _capture_child(location: str, size: int, session: int) -> tuple[float, float]:
    """One of four writers: its own session's events; when it started and ended."""
    events = [
        e for e in synthetic_events(size, sessions=SESSIONS) if e.session_id == f"synth-{session}"
    ]
    opener = (
        (lambda: PgMemoryStore.open(location))
        if location.startswith("postgresql://")
        else (lambda: MemoryStore.open(location))
    )
    opener().close()  # connected and migrated before the clock starts
    start = time.time()
    _capture(opener, events)
    return start, time.time()


def _parallel_capture(location: str, size: int) -> float:
    """Seconds from the first writer's start to the last one's end (four at once)."""
    spawn = multiprocessing.get_context("spawn")
    with spawn.Pool(SESSIONS) as pool:
        spans = pool.starmap(_capture_child, [(location, size, s) for s in range(SESSIONS)])
    return max(end for _, end in spans) - min(start for start, _ in spans)


def _queries(events: list[Event], count: int) -> list[tuple[str, str]]:
    usable = [
        (e.session_id, e.text)
        for e in events
        if e.type == "user/message" and any(len(t) >= 3 for t in query_signals(e.text).terms)
    ]
    step = max(1, len(usable) // count)
    return usable[::step][:count]


def _size_bytes(store: MemoryStore, baseline: int) -> int:
    if isinstance(store, PgMemoryStore):
        return int(store.db.scalar("SELECT pg_database_size(current_database())")) - baseline
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = Path(store.db.path)
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def run_size(size: int, server: pg_server.Server, tmp: Path, count: int) -> dict[str, Any]:
    events = list(synthetic_events(size, sessions=SESSIONS))
    sessions = sorted({e.session_id for e in events})
    locations = {
        "sqlite": (str(tmp / f"one-{size}.sqlite"), str(tmp / f"four-{size}.sqlite")),
        "postgresql": (server.url(server.create_database()), server.url(server.create_database())),
    }
    empty = PgMemoryStore.open(server.url(server.create_database()))
    baseline = int(empty.db.scalar("SELECT pg_database_size(current_database())"))
    empty.close()
    out: dict[str, Any] = {"events": size, "sqlite": {}, "postgresql": {}}
    runtimes: dict[str, MemoryRuntime] = {}
    for name, (one, four) in locations.items():
        opener: Opener = (
            (lambda loc=one: PgMemoryStore.open(loc, lambda: CLOCK))  # type: ignore[misc]
            if name == "postgresql"
            else (lambda loc=one: MemoryStore.open(loc, lambda: CLOCK))  # type: ignore[misc]
        )
        fig = out[name]
        fig["capture_events_per_s"] = round(size / _capture(opener, events))
        fig["capture_4_processes_events_per_s"] = round(size / _parallel_capture(four, size))
        runtime = MemoryRuntime(opener(), load_settings(env={}))
        start = time.perf_counter()
        for session in sessions:
            Extractor(runtime.store, runtime.settings).run(session)
        fig["extraction_events_per_s"] = round(size / (time.perf_counter() - start))
        fig["bytes_per_event"] = round(_size_bytes(runtime.store, baseline) / size)
        runtimes[name] = runtime
        print(f"  {name}: captured and extracted {size:,} events", file=sys.stderr)
    queries = _queries(events, count)
    samples: dict[str, list[float]] = {name: [] for name in runtimes}
    blocks: dict[str, list[str | None]] = {name: [] for name in runtimes}
    for i, (session, text) in enumerate(queries):
        for name, runtime in runtimes.items():
            start = time.perf_counter()
            block = runtime.pre_step(session, [], query=text)
            elapsed = (time.perf_counter() - start) * 1000
            if i >= WARMUP:
                samples[name].append(elapsed)
            blocks[name].append(block)
    for name, runtime in runtimes.items():
        ordered = sorted(samples[name])
        out[name]["pre_step_p50_ms"] = round(percentile(ordered, 50), 2)
        out[name]["pre_step_p99_ms"] = round(percentile(ordered, 99), 2)
        runtime.close()
    same = sum(a == b for a, b in zip(blocks["sqlite"], blocks["postgresql"], strict=True))
    out["pre_step_queries"] = len(queries)
    out["identical_blocks"] = same
    return out


def one_session_parity(size: int, server: pg_server.Server, count: int) -> dict[str, Any]:
    """The same events as one session on both backends: how many blocks are identical.

    With a single session PostgreSQL's per-session BM25 statistics are SQLite's
    whole-table ones, so every block should be byte-identical.
    """
    events = list(synthetic_events(size, sessions=1))
    runtimes = []
    for store in (
        MemoryStore.open(":memory:", lambda: CLOCK),
        PgMemoryStore.open(server.url(server.create_database()), lambda: CLOCK),
    ):
        capture = Capture(store, load_settings(env={}))
        for i in range(0, len(events), BATCH):
            capture.capture_many(events[i : i + BATCH])
        Extractor(store).run(events[0].session_id)
        runtimes.append(MemoryRuntime(store, load_settings(env={})))
    queries = _queries(events, count)
    same = sum(
        runtimes[0].assemble(s, [], query=q, log=False).text
        == runtimes[1].assemble(s, [], query=q, log=False).text
        for s, q in queries
    )
    for runtime in runtimes:
        runtime.close()
    return {"events": size, "queries": len(queries), "identical_blocks": same}


ROWS = (
    ("capture, 1 process (events/s)", "capture_events_per_s"),
    ("capture, 4 processes (events/s)", "capture_4_processes_events_per_s"),
    ("extraction (events/s)", "extraction_events_per_s"),
    ("pre-step p50 (ms)", "pre_step_p50_ms"),
    ("pre-step p99 (ms)", "pre_step_p99_ms"),
    ("database bytes per event", "bytes_per_event"),
)


def table(results: list[dict[str, Any]], parity: dict[str, Any]) -> str:
    lines = [f"{'metric':34} {'events':>8} {'sqlite':>11} {'postgresql':>11} {'pg/sqlite':>10}"]
    for label, key in ROWS:
        for r in results:
            lite, pg = r["sqlite"][key], r["postgresql"][key]
            ratio = pg / lite if lite else 0.0
            lines.append(f"{label:34} {r['events']:>8,} {lite:>11,} {pg:>11,} {ratio:>10.2f}")
    for r in results:
        lines.append(
            f"{'identical pre-step blocks':34} {r['events']:>8,}"
            f" {r['identical_blocks']:>11}/{r['pre_step_queries']}"
        )
    lines.append(
        f"{'identical blocks, one session':34} {parity['events']:>8,}"
        f" {parity['identical_blocks']:>11}/{parity['queries']}"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1e4,1e5")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--url", help="an existing server (a role that may CREATE DATABASE)")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    # a terminated run still stops its server (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = (
        pg_server.ExternalServer(args.url) if args.url else pg_server.start_server(durable=True)
    )
    if server is None:
        sys.exit("no PostgreSQL server binaries found; install postgresql or pass --url")
    info = machine()
    try:
        info["postgresql"] = server_version(server)
        with tempfile.TemporaryDirectory() as tmp:
            results = [run_size(size, server, Path(tmp), args.queries) for size in sizes]
        parity = one_session_parity(sizes[0], server, args.queries)
    finally:
        server.stop()
    print(f"pg-compare: synthetic_events(N, sessions={SESSIONS}), PostgreSQL beside SQLite")
    print(machine_line(info) + f", {info['postgresql']}")
    print(table(results, parity))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pg-compare.json").write_text(
        json.dumps({"machine": info, "results": results, "one_session": parity}, indent=2) + "\n",
        "utf-8",
    )


def server_version(server: pg_server.Server) -> str:
    import psycopg

    with psycopg.connect(server.url()) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return f"postgresql {row[0] if row else '?'}"


if __name__ == "__main__":
    main()
