"""Crash soak: the crash suite's harness with 100 SIGKILLs per capture path.

``convmem ingest`` of one large JSON Lines file and the long-lived ``convmem serve
dsh`` (fed like the DSH plugin feeds it) are each killed at seeded random points and
restarted until done. After every kill: SQLite's integrity check, FTS indexes against
their tables, checkpoint invariants. At the end: every event exactly once, extraction
caught up, and the store equal to a clean single run over the same events. A third
path (issue 13) runs four ``convmem ingest`` writers at once on interleaved parts of
one session and kills them at random: every event once, no memory item lost. Usage::

    python bench/soak_crash.py [--kills 100] [--events 4000] [--seed 1] [--out FILE]
"""

from __future__ import annotations

import argparse
import platform
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.crash import (
    CrashReport,
    check_store,
    child_env,
    compare,
    ingest_with_kills,
    reference_from_dsh,
    reference_from_jsonl,
    serve_dsh_with_kills,
    work_units,
)
from helpers.streams import canonical_stream, dsh_records, write_jsonl


def _keys(db: Path) -> list[tuple[str, int]]:
    conn = sqlite3.connect(db)
    try:
        return [(str(r[0]), int(r[1])) for r in conn.execute("SELECT session_id, seq FROM events")]
    finally:
        conn.close()


def _verdict(name: str, report: CrashReport, db: Path, clean: Path, lines: list[str]) -> bool:
    keys = _keys(db)
    want = _keys(clean)
    final = check_store(db, caught_up=True)
    diff = compare(db, clean)
    ok = (
        not report.problems
        and not final
        and not diff
        and len(keys) == len(set(keys))
        and set(keys) == set(want)
    )
    lines += [
        f"{name}: {report.kills} kills survived over {report.runs} runs in {report.seconds:.0f} s",
        f"  restarts until done: {report.runs - 1}",
        f"  events: {len(keys)} stored, {len(set(keys))} distinct, {len(want)} expected"
        f" (missing {len(set(want) - set(keys))}, extra {len(set(keys) - set(want))})",
    ]
    if report.advanced:
        lines.append(f"  kills of a run that had already committed work: {report.advanced}")
    if report.ops:
        where = ", ".join(f"{op} {n}" for op, n in sorted(report.ops.items()))
        lines.append(f"  kills landed inside these requests: {where}")
    if report.resent or report.dropped:
        lines.append(
            f"  unacknowledged batches after a kill: {report.resent} resent,"
            f" {report.dropped} left to the log catch-up"
        )
    lines.append(f"  invariants after each kill: {len(report.problems)} problems")
    lines += [f"    {p}" for p in report.problems[:20]]
    lines.append(f"  final store (caught up): {len(final)} problems")
    lines += [f"    {p}" for p in final[:20]]
    lines.append(
        "  same as a clean single run (events, archive, checkpoints, items, lifecycle,"
        f" task state): {'yes' if not diff else 'NO'}"
    )
    lines += [f"    {d}" for d in diff]
    lines.append(f"  verdict: {'OK, nothing lost or doubled' if ok else 'FAILED'}")
    return ok


def _writer_parts(per_writer: int) -> list[list[dict[str, Any]]]:
    """Four interleaved parts of one session (writer w holds the seqs 4k + w): independent
    facts, so that the items do not depend on the order extraction meets them."""
    parts: list[list[dict[str, Any]]] = []
    for w in range(4):
        part = []
        for k in range(per_writer):
            seq = 4 * k + w
            if k % 5 == 4:
                part.append({"session_id": "w", "seq": seq, "type": "tool/result", "text": "ok"})
            else:
                text = f"The timeout of service{seq} must be {seq * 10 + 5} ms."
                part.append({"session_id": "w", "seq": seq, "type": "user/message", "text": text})
        parts.append(part)
    return parts


def concurrent_writers_with_kills(
    root: Path, per_writer: int, kills: int, rng: random.Random, lines: list[str]
) -> bool:
    """Four ``convmem ingest`` processes on interleaved parts of one session, SIGKILLed
    at random moments and restarted until each finishes (issue 13, item 1)."""
    parts = _writer_parts(per_writer)
    files = [write_jsonl(root / f"part{w}.jsonl", p) for w, p in enumerate(parts)]
    everything = sorted((e for p in parts for e in p), key=lambda e: e["seq"])
    clean = reference_from_jsonl(root / "clean-w.sqlite", write_jsonl(root / "w.jsonl", everything))
    home = root / "writers-home"
    db = home / "memory.sqlite"
    started = time.monotonic()
    procs: dict[int, subprocess.Popen[bytes]] = {}
    done: set[int] = set()
    runs = landed = 0
    problems: list[str] = []

    def spawn(w: int) -> None:
        nonlocal runs
        runs += 1
        procs[w] = subprocess.Popen(
            [sys.executable, "-m", "convmem", "ingest", str(files[w])],
            env=child_env(home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    for w in range(4):
        spawn(w)
    while len(done) < 4:
        time.sleep(rng.uniform(0.05, 0.4))
        for w, proc in list(procs.items()):
            if w in done or proc.poll() is None:
                continue
            err = proc.stderr.read().decode() if proc.stderr else ""
            if proc.returncode == 0:
                done.add(w)
            elif "stayed locked" in err:
                spawn(w)  # the lock was held past the bound: try again, as a user would
            else:
                problems.append(f"writer {w} exited {proc.returncode}: {err[-300:]}")
                done.add(w)
        running = [w for w, p in procs.items() if w not in done and p.poll() is None]
        if landed < kills and running:
            victim = rng.choice(running)
            procs[victim].send_signal(signal.SIGKILL)
            procs[victim].wait()
            landed += 1
            if db.exists():
                problems += [f"after kill {landed}: {p}" for p in check_store(db)]
            spawn(victim)
    keys = _keys(db)
    final = check_store(db, caught_up=True)
    conn = sqlite3.connect(db)
    try:
        items = sorted(r[0] for r in conn.execute("SELECT id FROM memory_items"))
        pending = conn.execute("SELECT count(*) FROM pending_extraction").fetchone()[0]
    finally:
        conn.close()
    ref = sqlite3.connect(clean)
    try:
        want = sorted(r[0] for r in ref.execute("SELECT id FROM memory_items"))
    finally:
        ref.close()
    lost = sorted(set(want) - set(items))
    ok = (
        not problems
        and not final
        and len(keys) == len(set(keys)) == len(everything)
        and not lost
        and items == want
        and pending == 0
    )
    lines += [
        f"4 concurrent ingest writers, interleaved parts of one session: {landed} kills over"
        f" {runs} runs in {time.monotonic() - started:.0f} s",
        f"  events: {len(keys)} stored, {len(set(keys))} distinct, {len(everything)} expected",
        f"  memory items: {len(items)} derived, {len(want)} expected, {len(lost)} lost;"
        f" pending extractions {pending}",
        f"  invariants after each kill: {len(problems)} problems",
        *[f"    {p}" for p in problems[:20]],
        f"  final store (caught up): {len(final)} problems",
        *[f"    {p}" for p in final[:20]],
        f"  verdict: {'OK, nothing lost or doubled' if ok else 'FAILED'}",
    ]
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100, help="SIGKILLs per capture path")
    parser.add_argument("--events", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--writer-events", type=int, default=600, help="events per concurrent writer"
    )
    parser.add_argument("--out", type=Path, help="Also write the report here.")
    args = parser.parse_args()

    lines = [
        f"crash soak: {args.kills} SIGKILLs per capture path, seed {args.seed}",
        f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version},"
        f" {platform.machine()}",
    ]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        events = canonical_stream(args.events, sessions=4, seed=args.seed)
        jsonl = write_jsonl(root / "stream.jsonl", events)
        started = time.monotonic()
        clean = reference_from_jsonl(root / "clean.sqlite", jsonl)
        one_run = time.monotonic() - started
        lines.append(
            f"ingest stream: {len(events)} events, 4 sessions, one clean run {one_run:.1f} s"
        )
        work = work_units(events)
        report = ingest_with_kills(
            root / "ingest-home", jsonl, args.kills, random.Random(args.seed), work
        )
        ok &= _verdict(
            "convmem ingest", report, root / "ingest-home" / "memory.sqlite", clean, lines
        )

        logs = dsh_records(canonical_stream(args.events // 2, sessions=3, seed=args.seed + 1))
        started = time.monotonic()
        clean_dsh = reference_from_dsh(root / "clean-dsh.sqlite", logs)
        one_run = time.monotonic() - started
        records = sum(len(r) - 1 for r in logs.values())
        lines.append(
            f"dsh stream: {records} log records, 3 sessions, one clean run {one_run:.1f} s"
        )
        report = serve_dsh_with_kills(
            root / "dsh-home",
            root / "dsh",
            logs,
            args.kills,
            random.Random(args.seed + 1),
        )
        ok &= _verdict(
            "convmem serve dsh", report, root / "dsh-home" / "memory.sqlite", clean_dsh, lines
        )
        ok &= concurrent_writers_with_kills(
            root, args.writer_events, args.kills, random.Random(args.seed + 2), lines
        )
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text, "utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
