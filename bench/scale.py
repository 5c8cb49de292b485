"""Speed and scale: capture rate, pre-step latency, bytes per event, peak memory.

For each size (default 1e3, 1e4, 1e5 and 1e6 events) the same deterministic
session mix (``synth.session_mix``: many sessions of log-uniform length, English,
Chinese and mixed text, tool calls and results, numbers, corrections; each size is
a prefix of the next) is written into two fresh database files with the same
schema and FTS5 trigram index:

* **capture**: ``Capture.capture_many`` in batches of 2,000 events beside a bare
  ``sqlite3`` ``executemany`` of the same prepared rows (as ``bench/capture.py``),
  batch by batch, alternating which goes first;
* **pre-step**: for ~200 user messages drawn evenly from the stream (those with at
  least one term of three or more characters), ``runtime.assemble(session, [],
  query=text, log=False)`` (retrieve + assemble, nothing visible, no log row)
  beside a bare ``SELECT rowid FROM events_fts WHERE events_fts MATCH ? ORDER BY
  rank LIMIT 24`` over the same terms (each quoted as an FTS5 string), interleaved
  query by query after a warm-up, on the same connection;
* **size**: database file plus WAL after ``wal_checkpoint(TRUNCATE)``, per event;
* **memory**: ``ru_maxrss`` of a separate child process per phase and size (the
  build child streams events, so it never holds the whole stream).

Extraction (memory items) is not part of capture; it runs, timed, for sizes up to
``--extract-max`` and the pre-step is then measured again with the items present.

Usage::

    python bench/scale.py [--sizes 1e3,1e4,1e5,1e6] [--queries 200]
                          [--extract-max 1e4] [--query-seconds 300]
                          [--profile SIZE] [--out bench/results]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import math
import os
import platform
import pstats
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))

from capture import INSERT, bare_rows  # noqa: E402  (bench/capture.py)
from convmem.capture import Capture  # noqa: E402
from convmem.config import load_settings  # noqa: E402
from convmem.core.db import MemoryDatabase, register_functions  # noqa: E402
from convmem.memory.store import MemoryStore  # noqa: E402
from convmem.memory.store_items import fts_phrase  # noqa: E402
from convmem.retrieval import query_signals  # noqa: E402
from convmem.runtime import MemoryRuntime  # noqa: E402
from synth import session_mix  # noqa: E402

BATCH = 2000
BARE_SQL = "SELECT rowid FROM events_fts WHERE events_fts MATCH ? ORDER BY rank LIMIT 24"
WARMUP = 5
WARMUP_SECONDS = 20.0
QUERY_SEED = 11
TARGET_P50_MS = 5.0
TARGET_BARE_RATIO = 5.0
TARGET_GROWTH = 2.0


# --------------------------------------------------------------------------- machine


def machine() -> dict[str, Any]:
    """Cores, RAM, CPU model, Python and SQLite versions of this machine."""
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["ram_gib"] = round(int(line.split()[1]) / 1024**2, 1)
                break
    except OSError:
        pass
    return info


def source_state() -> dict[str, Any]:
    """The commit and a digest of the library source the figures were measured on."""
    root = HERE.parent
    repo = Path(os.environ.get("CONVMEM_BENCH_REPO", root))
    digest = hashlib.sha256()
    for path in sorted((root / "src" / "convmem").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    state: dict[str, Any] = {"src_sha256": digest.hexdigest()[:16]}
    try:
        git = ["git", "-C", str(repo)]
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "src"], capture_output=True, text=True
        )
        state["commit"] = head.stdout.strip() or None
        state["src_uncommitted_files"] = len(dirty.stdout.splitlines())
    except OSError:
        pass
    return state


def machine_line(info: dict[str, Any]) -> str:
    return (
        f"machine: {info.get('cpu', platform.machine())}, {info['cpu_count']} cores, "
        f"{info.get('ram_gib', '?')} GiB RAM, python {info['python']}, sqlite {info['sqlite']}"
    )


def maxrss_mib() -> float:
    """This process's peak resident set size (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# --------------------------------------------------------------------------- children


def child_build(size: int, db: Path, bare: Path) -> dict[str, Any]:
    """Stream the mix into a bare and a convmem database, timing only the inserts."""
    MemoryDatabase(bare).close()  # same schema, FTS index and triggers
    conn = sqlite3.connect(bare, isolation_level=None)
    register_functions(conn)  # the word index's trigger calls it
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    store = MemoryStore.open(str(db))
    cap = Capture(store, load_settings(env={}))
    bare_s = conv_s = 0.0
    text_bytes = 0
    sessions: set[str] = set()
    types: dict[str, int] = {}
    stream = session_mix(size)
    n = 0
    while True:
        events = [e for _, e in zip(range(BATCH), stream, strict=False)]
        if not events:
            break
        rows = bare_rows(events)
        for e in events:
            text_bytes += len(e.text.encode("utf-8"))
            sessions.add(e.session_id)
            types[e.type] = types.get(e.type, 0) + 1
        order = ("bare", "convmem") if (n // BATCH) % 2 == 0 else ("convmem", "bare")
        for which in order:
            start = time.perf_counter()
            if which == "bare":
                conn.execute("BEGIN")
                conn.executemany(INSERT, rows)
                conn.execute("COMMIT")
                bare_s += time.perf_counter() - start
            else:
                cap.capture_many(events)
                conv_s += time.perf_counter() - start
        n += len(events)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stored = store.count_events()
    store.close()
    return {
        "events": n,
        "stored_events": stored,
        "sessions": len(sessions),
        "types": dict(sorted(types.items())),
        "text_bytes_per_event": round(text_bytes / n, 1),
        "bare_s": round(bare_s, 3),
        "capture_s": round(conv_s, 3),
        "bare_events_per_s": round(n / bare_s),
        "capture_events_per_s": round(n / conv_s),
        "capture_ratio": round(bare_s / conv_s, 3),
        "db_bytes": file_bytes(db),
        "bare_db_bytes": file_bytes(bare),
        "maxrss_mib": maxrss_mib(),
    }


def file_bytes(db: Path) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        part = Path(str(db) + suffix)
        if part.exists() and suffix != "-shm":
            total += part.stat().st_size
    return total


def pick_queries(conn: sqlite3.Connection, count: int) -> list[tuple[str, str, str]]:
    """``count`` user messages evenly spaced over the stream, each with an FTS term.

    Only row ids are kept while scanning, so the harness's own memory stays small
    and the query phase's peak RSS is the runtime's.
    """
    usable: list[int] = []
    for rowid, text in conn.execute(
        "SELECT rowid, text FROM events WHERE type = 'user/message' ORDER BY rowid"
    ):
        if any(len(t) >= 3 for t in query_signals(text).terms):
            usable.append(rowid)
    if len(usable) > count:
        step = len(usable) / count
        usable = [usable[int(i * step)] for i in range(count)]
    # a fixed shuffle, so that a run cut short by the time cap is still a fair sample
    random.Random(QUERY_SEED).shuffle(usable)
    picked = []
    for rowid in usable:
        session_id, text = conn.execute(
            "SELECT session_id, text FROM events WHERE rowid = ?", (rowid,)
        ).fetchone()
        terms = [t for t in query_signals(text).terms if len(t) >= 3]
        picked.append((session_id, text, " OR ".join(fts_phrase(t) for t in terms)))
    return picked


def percentile(sorted_ms: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted samples."""
    if not sorted_ms:
        return float("nan")
    rank = max(1, math.ceil(q / 100 * len(sorted_ms)))
    return sorted_ms[rank - 1]


def child_query(
    db: Path, count: int, budget_s: float, profile_out: Path | None = None
) -> dict[str, Any]:
    """Pre-step latency (retrieve + assemble, no log) beside a bare FTS5 MATCH."""
    settings = load_settings(env={}).with_values(store=str(db))
    runtime = MemoryRuntime.open(settings)
    conn = runtime.store.db.conn
    queries = pick_queries(conn, count)
    warm = time.perf_counter()
    for session_id, text, match in queries[:WARMUP]:
        conn.execute(BARE_SQL, (match,)).fetchall()
        runtime.assemble(session_id, [], query=text, log=False)
        if time.perf_counter() - warm > WARMUP_SECONDS:
            break
    conv_ms: list[float] = []
    bare_ms: list[float] = []
    injected = tokens = bare_hits = errors = 0
    prof = cProfile.Profile() if profile_out else None
    began = time.perf_counter()
    for session_id, text, match in queries:
        if prof:
            prof.enable()
        start = time.perf_counter()
        result = runtime.assemble(session_id, [], query=text, log=False)
        conv_ms.append((time.perf_counter() - start) * 1000)
        if prof:
            prof.disable()
        start = time.perf_counter()
        bare_hits += len(conn.execute(BARE_SQL, (match,)).fetchall())
        bare_ms.append((time.perf_counter() - start) * 1000)
        injected += bool(result.injected)
        tokens += result.used_tokens
        errors += bool(result.errors)
        if time.perf_counter() - began > budget_s:
            break
    runtime.close()
    if prof and profile_out:
        write_profile(prof, profile_out)
    done = len(conv_ms)
    conv_ms.sort()
    bare_ms.sort()
    return {
        "queries": done,
        "queries_planned": len(queries),
        "prestep_p50_ms": round(percentile(conv_ms, 50), 3),
        "prestep_p99_ms": round(percentile(conv_ms, 99), 3),
        "prestep_mean_ms": round(sum(conv_ms) / done, 3),
        "prestep_max_ms": round(conv_ms[-1], 3),
        "bare_p50_ms": round(percentile(bare_ms, 50), 3),
        "bare_p99_ms": round(percentile(bare_ms, 99), 3),
        "bare_mean_ms": round(sum(bare_ms) / done, 3),
        "p50_ratio_to_bare": round(percentile(conv_ms, 50) / percentile(bare_ms, 50), 1),
        "injected_share": round(injected / done, 3),
        "mean_block_tokens": round(tokens / done, 1),
        "mean_bare_hits": round(bare_hits / done, 1),
        "assembly_errors": errors,
        "maxrss_mib": maxrss_mib(),
    }


def write_profile(prof: cProfile.Profile, out: Path) -> None:
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(30)
    stats.sort_stats("tottime").print_stats(20)
    text = buf.getvalue().replace(str(HERE.parent) + "/", "")
    out.write_text(text, "utf-8")


def child_extract(db: Path, profile_out: Path | None = None) -> dict[str, Any]:
    """Extraction and validation of every session (what ``on_events`` adds to capture)."""
    settings = load_settings(env={}).with_values(store=str(db))
    runtime = MemoryRuntime.open(settings)
    sessions = [
        str(r[0])
        for r in runtime.store.db.query("SELECT DISTINCT session_id FROM events ORDER BY 1")
    ]
    prof = cProfile.Profile() if profile_out else None
    start = time.perf_counter()
    if prof:
        prof.enable()
    for session_id in sessions:
        runtime.after_capture(session_id)
    if prof:
        prof.disable()
    elapsed = time.perf_counter() - start
    if prof and profile_out:
        write_profile(prof, profile_out)
    events = runtime.store.count_events()
    items = int(runtime.store.db.scalar("SELECT count(*) FROM memory_items"))
    runtime.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    runtime.close()
    return {
        "extract_s": round(elapsed, 3),
        "extract_events_per_s": round(events / elapsed),
        "memory_items": items,
        "db_bytes": file_bytes(db),
        "maxrss_mib": maxrss_mib(),
    }


def run_child(args: list[str]) -> dict[str, Any]:
    """Run one phase in a fresh interpreter; its last stdout line is its JSON."""
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"child {' '.join(args)} failed with {done.returncode}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------- parent


def parse_size(text: str) -> int:
    return int(float(text))


def measure(size: int, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    db, bare = work / f"convmem-{size}.sqlite", work / f"bare-{size}.sqlite"
    row: dict[str, Any] = {"events": size}
    t0 = time.perf_counter()
    row["build"] = run_child(["--child", "build", "--size", str(size), str(db), str(bare)])
    for suffix in ("", "-wal", "-shm"):
        Path(str(bare) + suffix).unlink(missing_ok=True)
    query_args = ["--child", "query", "--queries", str(args.queries)]
    query_args += ["--query-seconds", str(args.query_seconds)]
    row["prestep"] = run_child([*query_args, str(db)])
    if args.profile and parse_size(args.profile) == size:
        # a separate pass, so that profiling overhead never touches the figures above
        profile_out = args.out / f"scale-profile-{fmt_size(size)}.txt"
        run_child(
            [
                *("--child", "query", "--queries", str(args.profile_queries)),
                *("--query-seconds", str(args.query_seconds / 2)),
                *("--profile-out", str(profile_out), str(db)),
            ]
        )
    if size <= args.extract_max:
        if args.profile_extract and parse_size(args.profile_extract) == size:
            copy = work / f"profile-{size}.sqlite"
            shutil.copyfile(db, copy)
            out = args.out / f"scale-profile-extract-{fmt_size(size)}.txt"
            run_child(["--child", "extract", "--profile-out", str(out), str(copy)])
            copy.unlink()
        row["extract"] = run_child(["--child", "extract", str(db)])
        row["prestep_with_items"] = run_child([*query_args, str(db)])
    row["bytes_per_event"] = round(row["build"]["db_bytes"] / size, 1)
    row["bare_bytes_per_event"] = round(row["build"]["bare_db_bytes"] / size, 1)
    row["wall_s"] = round(time.perf_counter() - t0, 1)
    if not args.keep:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    return row


def fmt_size(n: int) -> str:
    exp = round(math.log10(n)) if n > 0 else 0
    return f"1e{exp}" if 10**exp == n else f"{n:,}"


def format_table(rows: list[dict[str, Any]], info: dict[str, Any]) -> str:
    lines = [
        "convmem scale benchmark: synthetic session mix (bench/synth.py session_mix)",
        machine_line(info),
        "",
        "capture (batches of 2,000) vs bare sqlite3 executemany, same rows, same schema:",
        f"{'events':>7} {'sessions':>8} {'bare ev/s':>10} {'convmem ev/s':>13} {'ratio':>6}"
        f" {'bytes/ev':>9} {'text B/ev':>9} {'build MiB':>9}",
    ]
    for r in rows:
        b = r["build"]
        lines.append(
            f"{fmt_size(r['events']):>7} {b['sessions']:>8} {b['bare_events_per_s']:>10,}"
            f" {b['capture_events_per_s']:>13,} {b['capture_ratio']:>6.2f}"
            f" {r['bytes_per_event']:>9,.0f} {b['text_bytes_per_event']:>9,.0f}"
            f" {b['maxrss_mib']:>9,.0f}"
        )
    lines += [
        "",
        "pre-step (retrieve + assemble, log off) vs bare FTS5 MATCH ... ORDER BY rank LIMIT 24:",
        f"{'events':>7} {'queries':>7} {'p50 ms':>8} {'p99 ms':>8} {'bare p50':>9}"
        f" {'bare p99':>9} {'p50/bare':>9} {'p50 x/10x':>10} {'query MiB':>9}",
    ]
    by = {r["events"]: r["prestep"] for r in rows}
    for r in rows:
        p = r["prestep"]
        below = by.get(r["events"] // 10)
        growth = "" if below is None else f"{p['prestep_p50_ms'] / below['prestep_p50_ms']:.2f}"
        lines.append(
            f"{fmt_size(r['events']):>7} {p['queries']:>7} {p['prestep_p50_ms']:>8.2f}"
            f" {p['prestep_p99_ms']:>8.2f} {p['bare_p50_ms']:>9.3f} {p['bare_p99_ms']:>9.3f}"
            f" {p['p50_ratio_to_bare']:>9.1f} {growth:>10} {p['maxrss_mib']:>9,.0f}"
        )
    with_items = [r for r in rows if "extract" in r]
    if with_items:
        lines += [
            "",
            "after extraction (memory items present), same queries:",
            f"{'events':>7} {'items':>7} {'extract ev/s':>12} {'extract s':>9}"
            f" {'p50 ms':>8} {'p99 ms':>8} {'p50/bare':>9}",
        ]
        for r in with_items:
            x, p = r["extract"], r["prestep_with_items"]
            lines.append(
                f"{fmt_size(r['events']):>7} {x['memory_items']:>7,} "
                f"{x['extract_events_per_s']:>12,} {x['extract_s']:>9.1f}"
                f" {p['prestep_p50_ms']:>8.2f} {p['prestep_p99_ms']:>8.2f}"
                f" {p['p50_ratio_to_bare']:>9.1f}"
            )
    lines += ["", *target_lines(rows)]
    return "\n".join(lines)


def targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each target with the measured value and whether it is met (None: not measured)."""
    by = {r["events"]: r["prestep"] for r in rows}
    out: dict[str, Any] = {}
    at = by.get(100_000)
    out["p50_le_5ms_at_1e5"] = {
        "value_ms": at and at["prestep_p50_ms"],
        "met": None if at is None else at["prestep_p50_ms"] <= TARGET_P50_MS,
    }
    out["p50_within_5x_bare_at_1e5"] = {
        "value": at and at["p50_ratio_to_bare"],
        "met": None if at is None else at["p50_ratio_to_bare"] <= TARGET_BARE_RATIO,
    }
    growth = {}
    for n, p in sorted(by.items()):
        if n * 10 in by:
            growth[f"{fmt_size(n)}->{fmt_size(n * 10)}"] = round(
                by[n * 10]["prestep_p50_ms"] / p["prestep_p50_ms"], 2
            )
    out["p50_growth_per_10x_le_2"] = {
        "values": growth,
        "met": None if not growth else all(v <= TARGET_GROWTH for v in growth.values()),
    }
    return out


def target_lines(rows: list[dict[str, Any]]) -> list[str]:
    t = targets(rows)
    word = {True: "met", False: "MISSED", None: "not measured"}
    a, b, c = (
        t["p50_le_5ms_at_1e5"],
        t["p50_within_5x_bare_at_1e5"],
        t["p50_growth_per_10x_le_2"],
    )
    return [
        "targets:",
        f"  pre-step p50 <= 5 ms at 1e5 events: {a['value_ms']} ms -> {word[a['met']]}",
        f"  pre-step p50 within 5x bare FTS5 at 1e5: {b['value']}x -> {word[b['met']]}",
        f"  10x events costs <= 2x p50 latency: {c['values']} -> {word[c['met']]}",
    ]


def report_source_changed(start: dict[str, Any]) -> bool:
    return bool(source_state()["src_sha256"] != start["src_sha256"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1e3,1e4,1e5,1e6")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--query-seconds", type=float, default=120.0, help="time cap per size and phase"
    )
    parser.add_argument("--profile-queries", type=int, default=50)
    parser.add_argument(
        "--profile-extract", default="1e4", help="cProfile extraction (on a copy) at this size"
    )
    parser.add_argument("--extract-max", type=parse_size, default=10_000)
    parser.add_argument(
        "--profile", default="1e5", help="also cProfile the pre-step at this size ('' for none)"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the convmem databases")
    parser.add_argument("--date", default=None)
    parser.add_argument("--child", choices=("build", "query", "extract"))
    parser.add_argument("--size", type=parse_size)
    parser.add_argument("--profile-out", type=Path, default=None)
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args(argv)

    if args.child:
        if args.child == "build":
            result = child_build(args.size, args.paths[0], args.paths[1])
        elif args.child == "query":
            result = child_query(args.paths[0], args.queries, args.query_seconds, args.profile_out)
        else:
            result = child_extract(args.paths[0], args.profile_out)
        print(json.dumps(result))
        return 0

    info = machine()
    source = source_state()
    print(machine_line(info), flush=True)
    print(f"source: {source}", flush=True)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="convmem-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    started = time.perf_counter()
    try:
        for size in sizes:
            row = measure(size, args, work)
            rows.append(row)
            p = row["prestep"]
            print(
                f"{fmt_size(size)}: capture {row['build']['capture_events_per_s']:,} ev/s"
                f" (bare {row['build']['bare_events_per_s']:,}), pre-step p50"
                f" {p['prestep_p50_ms']} ms p99 {p['prestep_p99_ms']} ms (bare p50"
                f" {p['bare_p50_ms']} ms), {row['bytes_per_event']} B/event,"
                f" {row['wall_s']} s",
                flush=True,
            )
    finally:
        if args.workdir is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    table = format_table(rows, info)
    if report_source_changed(source):
        table += "\nWARNING: the library source changed during this run; figures are mixed."
    print()
    print(table)
    date = args.date or time.strftime("%Y-%m-%d")
    report = {
        "benchmark": "scale",
        "date": date,
        "generator": "bench/synth.py session_mix(seed=7): sessions of log-uniform length"
        " 100..20000 events",
        "batch": BATCH,
        "bare_query": BARE_SQL,
        "queries": args.queries,
        "machine": info,
        "source_at_start": source,
        "source_at_end": source_state(),
        "wall_s": round(time.perf_counter() - started, 1),
        "sizes": rows,
        "targets": targets(rows),
    }
    (args.out / f"scale-{date}.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    (args.out / f"scale-{date}.txt").write_text(table + "\n", "utf-8")
    print(f"\nresults written to {args.out / f'scale-{date}.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
