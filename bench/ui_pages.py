"""Page speed of the inspector (``convmem ui``) on one session of 1e5 events.

A fresh SQLite store gets one session of ``--events`` events: ``synth.session_mix``
cut to a single session, with a compaction (start, summary, end) every 20,000
events. Then, through the library, as a host would: capture in batches of 2,000,
extraction, ``--blocks`` logged assemblies for user messages drawn evenly from the
session, 200 validation rows, and a few lifecycle changes (retract, promote) by
actor ``bench``. For PostgreSQL (when its server binaries are installed) that store
is copied into a fresh database with ``convmem.memory.migrate.copy_store``, the code
behind ``convmem migrate``, so both backends hold the same rows, then vacuumed and
analysed as autovacuum would leave a database in use.

The real ``convmem ui`` is then started on that store as a subprocess (127.0.0.1, a
free port), and every page is asked for ``--repeat`` times over one keep-alive HTTP
connection from this process, after two warm-up requests. The figure per page is
the wall time from sending the request to having read the whole body (p50, p95,
max); the server's own time (its ``Server-Timing`` header) is reported beside it.
The target is 200 ms per page; a page meets it when its p95 does.

Usage::

    python bench/ui_pages.py [--events 1e5] [--repeat 15] [--blocks 60]
                             [--backends sqlite,postgresql] [--keep DIR]
                             [--out bench/results]

``--keep DIR`` keeps the SQLite store in DIR and reuses it on the next run (the
PostgreSQL copy lives in a throwaway server and is made anew each run).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))
sys.path.insert(2, str(HERE.parent / "tests"))

import pg_server  # noqa: E402  (tests/pg_server.py)
from convmem.capture import Event  # noqa: E402
from convmem.config import load_settings  # noqa: E402
from convmem.memory import lifecycle  # noqa: E402
from convmem.runtime import MemoryRuntime  # noqa: E402
from scale import machine, machine_line, percentile  # noqa: E402  (bench/scale.py)
from synth import session_mix  # noqa: E402

SESSION = "bench-ui"
BATCH = 2000
COMPACTION_EVERY = 20_000
TARGET_MS = 200.0
VALIDATION_ROWS = 200


def one_session(count: int) -> Iterator[Event]:
    """``count`` events of one session, renumbered, with a compaction every 20,000."""
    seq = 0
    source = session_mix(count, min_len=count, max_len=count)
    for event in source:
        if seq >= count:
            return
        if seq and seq % COMPACTION_EVERY == 0 and seq + 3 <= count:
            for kind, text in (
                ("compaction/start", ""),
                ("compaction/summary", "Summary of the conversation so far (host compaction)."),
                ("compaction/end", ""),
            ):
                seq += 1
                yield Event(SESSION, seq, kind, text, time=event.time)
        seq += 1
        yield Event(
            SESSION,
            seq,
            event.type,
            event.text,
            time=event.time,
            turn=event.turn,
            tool_name=event.tool_name,
            call_id=event.call_id,
        )


def build(runtime: MemoryRuntime, count: int, blocks: int) -> dict[str, Any]:
    """Fill the store as a host would; returns what the pages need (ids, queries)."""
    started = time.perf_counter()
    runtime.session_start(SESSION, "startup", origin="bench", project="bench")
    batch: list[Event] = []
    user_texts: list[str] = []
    runtime.defer_derived = True  # extraction once at the end, as after a long ingest
    for event in one_session(count):
        batch.append(event)
        if event.type == "user/message":
            user_texts.append(event.text)
        if len(batch) >= BATCH:
            runtime.on_events(batch)
            batch = []
    if batch:
        runtime.on_events(batch)
    captured = time.perf_counter()
    runtime.defer_derived = False
    runtime.after_capture(SESSION)
    extracted = time.perf_counter()
    step = max(1, len(user_texts) // blocks)
    for n, text in enumerate(user_texts[::step][:blocks]):
        runtime.assemble(SESSION, [], turn=n, step=1, query=text)
    store = runtime.store
    for n in range(VALIDATION_ROWS):
        store.insert_validation_log(
            {
                "session_id": SESSION,
                "event_seq": n * (count // VALIDATION_ROWS) + 1,
                "ok": n % 7 != 0,
                "checked": 3,
                "violations": [] if n % 7 else [{"check": "required_terms", "missing": "p95"}],
            }
        )
    superseded = store.item_page(SESSION, statuses=("superseded",), limit=1)
    active = store.item_page(SESSION, statuses=("active",), limit=40)
    proposals = store.item_page(SESSION, kinds=("proposal",), statuses=("active",), limit=1)
    for item in active[20:23]:
        lifecycle.retract(store, item.id, actor="bench", reason="benchmark")
    for item in proposals:
        lifecycle.promote(store, item.id, actor="bench")
    logs = store.assembly_log_page(SESSION, limit=2)
    item = (superseded or active)[0]
    return {
        "item": item.id,
        "blocks": [int(log["id"]) for log in logs],
        "query": user_texts[len(user_texts) // 2][:120],
        "seconds": {
            "capture": round(captured - started, 1),
            "extraction": round(extracted - captured, 1),
            "total": round(time.perf_counter() - started, 1),
        },
        "items": sum(r["n"] for r in store.item_counts(SESSION)),
    }


def pages(ids: dict[str, Any], count: int) -> list[tuple[str, str]]:
    """(name, path) of every page, with the session's own ids."""
    s = SESSION
    middle = count // 2
    a, b = ids["blocks"][1], ids["blocks"][0]
    q = ids["query"]

    def p(path: str, **params: Any) -> str:
        return path + ("?" + urlencode(params) if params else "")

    return [
        ("sessions", p("/")),
        ("session overview", p("/session", s=s)),
        ("timeline, newest", p("/timeline", s=s)),
        ("timeline, middle", p("/timeline", s=s, before=middle)),
        ("timeline, at seq 1", p("/timeline", s=s, at=1)),
        ("timeline, tools", p("/timeline", s=s, show="tools", before=middle)),
        ("timeline, compactions", p("/timeline", s=s, show="compactions")),
        ("timeline, corrections", p("/timeline", s=s, show="corrections")),
        ("event", p("/event", s=s, seq=middle)),
        ("memory", p("/memory", s=s)),
        ("memory, filtered", p("/memory", s=s, kind="constraint", status="active")),
        ("memory, page 2", p("/memory", s=s, before_seq=middle, before_id="mem_z")),
        ("item", p("/item", id=ids["item"])),
        ("item, typed query", p("/item", id=ids["item"], q=q)),
        ("steer confirmation", p("/item/act", id=ids["item"], action="retract")),
        ("blocks", p("/blocks", s=s)),
        ("block", p("/block", id=b)),
        ("compare", p("/compare", a=a, b=b)),
        ("search, two words", p("/search", q="latency budget")),
        ("search, a message", p("/search", q=q)),
        ("search, one session", p("/search", q=q, s=s)),
        ("skills and rules", p("/skills")),
        ("validation", p("/validation", s=s)),
        ("status", p("/status")),
    ]


def start_ui(home: Path, store_url: str | None) -> tuple[subprocess.Popen[str], str]:
    args = [sys.executable, "-m", "convmem", "--home", str(home)]
    if store_url:
        args += ["--store", store_url]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    proc = subprocess.Popen(
        [*args, "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"(http://\S+)", line)
    if not found:
        proc.kill()
        raise SystemExit(
            f"convmem ui did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}"
        )
    return proc, found.group(1)


def measure(address: str, paths: list[tuple[str, str]], repeat: int) -> list[dict[str, Any]]:
    parts = urlsplit(address)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    conn.request("GET", "/?" + parts.query)
    first = conn.getresponse()
    first.read()
    cookie = first.getheader("set-cookie", "").split(";")[0]
    rows = []
    for name, path in paths:
        walls: list[float] = []
        servers: list[float] = []
        status = 0
        size = 0
        for n in range(repeat + 2):
            began = time.perf_counter()
            conn.request("GET", path, headers={"Cookie": cookie})
            resp = conn.getresponse()
            body = resp.read()
            took = (time.perf_counter() - began) * 1000
            status, size = resp.status, len(body)
            timing = re.search(r"dur=([\d.]+)", resp.getheader("server-timing", ""))
            if n >= 2:  # two warm-up requests
                walls.append(took)
                servers.append(float(timing.group(1)) if timing else float("nan"))
        rows.append(
            {
                "page": name,
                "path": path,
                "status": status,
                "bytes": size,
                "p50_ms": round(percentile(sorted(walls), 50), 1),
                "p95_ms": round(percentile(sorted(walls), 95), 1),
                "max_ms": round(max(walls), 1),
                "server_p50_ms": round(percentile(sorted(servers), 50), 1),
            }
        )
    conn.close()
    return rows


def build_sqlite(count: int, blocks: int, keep: Path | None) -> tuple[Path, dict[str, Any]]:
    """The SQLite store (built, or reused from ``keep``) and the ids the pages need."""
    folder = keep or Path(tempfile.mkdtemp(prefix="convmem-ui-"))
    folder.mkdir(parents=True, exist_ok=True)
    home = folder / "home"
    marker = folder / f"built-{count}.json"
    if marker.exists():
        print(f"[sqlite] reusing the store in {folder}", flush=True)
        return home, json.loads(marker.read_text())
    print(f"[sqlite] building {count:,} events ...", flush=True)
    with MemoryRuntime.open(load_settings(None, str(home))) as runtime:
        ids = build(runtime, count, blocks)
    marker.write_text(json.dumps(ids))
    print(f"[sqlite] built in {ids['seconds']} ({ids['items']:,} items)", flush=True)
    return home, ids


def copy_to_postgresql(home: Path, server: Any) -> tuple[str, float]:
    """A new database on ``server`` holding a verified copy of the SQLite store."""
    from convmem.memory.migrate import copy_store
    from convmem.memory.pg_store import PgMemoryStore
    from convmem.memory.store import MemoryStore

    url = server.url(server.create_database())
    started = time.perf_counter()
    source = MemoryStore.open(str(home / "memory.sqlite"))
    target = PgMemoryStore.open(url)
    try:
        result = copy_store(source, target)
        if not result.ok:
            raise SystemExit(f"the copy into PostgreSQL differs: {result.problems}")
        # what autovacuum does to a database in use: statistics, and the visibility
        # map that lets a count read the index alone
        target.db.execute("VACUUM ANALYZE")
    finally:
        source.close()
        target.close()
    return url, round(time.perf_counter() - started, 1)


def run_backend(
    backend: str, home: Path, ids: dict[str, Any], count: int, repeat: int, server: Any
) -> dict[str, Any]:
    store_url = None
    build = dict(ids)
    if backend == "postgresql":
        print("[postgresql] copying the store ...", flush=True)
        store_url, seconds = copy_to_postgresql(home, server)
        build["seconds"] = {**ids["seconds"], "copy": seconds}
    proc, address = start_ui(home, store_url)
    load_before = os.getloadavg()[0]
    try:
        rows = measure(address, pages(ids, count), repeat)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    load = (round(load_before, 2), round(os.getloadavg()[0], 2))
    return {"backend": backend, "events": count, "build": build, "pages": rows, "load": load}


def report(results: list[dict[str, Any]], repeat: int) -> str:
    lines = [
        "convmem inspector page speed: one session, every page over HTTP from a client process",
        machine_line(machine()),
        f"{repeat} requests per page after 2 warm-ups, one keep-alive connection; target: p95 <= "
        f"{TARGET_MS:.0f} ms",
        "",
    ]
    for res in results:
        b = res["build"]
        copy = b["seconds"].get("copy")
        lines.append(
            f"{res['backend']}: {res['events']:,} events, {b['items']:,} items, built in "
            f"{b['seconds']['total']} s (capture {b['seconds']['capture']} s, extraction "
            f"{b['seconds']['extraction']} s)"
            + (f", copied from SQLite in {copy} s" if copy is not None else "")
        )
        lines.append(
            f"  load average (1 min) of this shared 2-core machine: {res['load'][0]} before the"
            f" pages, {res['load'][1]} after"
        )
        lines.append(
            f"  {'page':<24} {'status':>6} {'KiB':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
            f" {'server p50':>10}"
        )
        for r in res["pages"]:
            lines.append(
                f"  {r['page']:<24} {r['status']:>6} {r['bytes'] / 1024:>6.0f} {r['p50_ms']:>8.1f}"
                f" {r['p95_ms']:>8.1f} {r['max_ms']:>8.1f} {r['server_p50_ms']:>10.1f}"
            )
        worst = max(res["pages"], key=lambda r: r["p95_ms"])
        met = all(r["p95_ms"] <= TARGET_MS and r["status"] == 200 for r in res["pages"])
        lines.append(
            f"  target p95 <= {TARGET_MS:.0f} ms on every page: {'met' if met else 'MISSED'}"
            f" (slowest: {worst['page']}, p95 {worst['p95_ms']} ms)"
        )
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--events", type=float, default=1e5)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--blocks", type=int, default=60)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    count = int(args.events)
    backends = [b for b in args.backends.split(",") if b]
    server = None
    if "postgresql" in backends:
        server = pg_server.start_server(durable=True)
        if server is None:
            print("PostgreSQL server binaries not found: measuring SQLite only", flush=True)
            backends.remove("postgresql")
    results = []
    try:
        home, ids = build_sqlite(count, args.blocks, args.keep)
        for backend in backends:
            results.append(run_backend(backend, home, ids, count, args.repeat, server))
    finally:
        if server is not None:
            server.stop()
    text = report(results, args.repeat)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ui-pages.txt").write_text(text + "\n", encoding="utf-8")
    (args.out / "ui-pages.json").write_text(
        json.dumps({"machine": machine(), "repeat": args.repeat, "results": results}, indent=2)
        + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
