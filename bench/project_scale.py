"""Project memory at scale: a pre-step in a project of many sessions vs a session alone.

Two SQLite stores are built from the same long agent sessions of real text
(``realtext.py``), through the public runtime (``session_start`` with a project, then
``on_events`` in batches of 200: capture and extraction):

* **alone**: one session of ``--events`` events;
* **project**: ``--sessions`` sessions of ``--events`` events each, one project, the
  last of them the same session as *alone*.

Then the person's own messages of that session are the queries of
``runtime.assemble(session, [], query=text, log=False)`` on both stores, interleaved
query by query after a warm-up. The target (issue "Project memory"): the p50 in the
project at most 1.5 times the p50 alone, for 50 sessions of 2,000 events.

Usage::

    python bench/project_scale.py [--sessions 50] [--events 2000] [--queries 100]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))

from convmem.config import load_settings  # noqa: E402
from convmem.memory.store import MemoryStore  # noqa: E402
from convmem.runtime import MemoryRuntime  # noqa: E402
from realtext import real_session  # noqa: E402
from scale import machine, machine_line, percentile, source_state  # noqa: E402

BATCH = 200
TARGET_RATIO = 1.5
WARMUP = 5


def build(path: Path, sessions: list[str], events: int) -> dict[str, Any]:
    """Capture and extract ``sessions`` (one project) into a fresh store."""
    runtime = MemoryRuntime(MemoryStore.open(str(path)), load_settings(env={}))
    started = time.perf_counter()
    count = 0
    for sid in sessions:
        runtime.session_start(sid, project="app")
        batch: list[Any] = []
        for event in real_session(sid, events):
            batch.append(event)
            if len(batch) == BATCH:
                runtime.on_events(batch)
                count += len(batch)
                batch = []
        if batch:
            runtime.on_events(batch)
            count += len(batch)
    seconds = time.perf_counter() - started
    items = int(runtime.store.db.scalar("SELECT count(*) FROM memory_items"))
    runtime.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    runtime.close()
    return {"events": count, "items": items, "build_s": round(seconds, 1)}


def measure(alone: Path, project: Path, session: str, count: int) -> dict[str, Any]:
    """Interleaved pre-steps on both stores for the session's own messages."""
    rts = {
        name: MemoryRuntime(MemoryStore.open(str(path)), load_settings(env={}))
        for name, path in (("alone", alone), ("project", project))
    }
    texts = [e.text for e in rts["alone"].store.events(session, types=["user/message"]) if e.text]
    random.Random(7).shuffle(texts)
    texts = texts[:count]
    times: dict[str, list[float]] = {"alone": [], "project": []}
    for n, text in enumerate(texts):
        order = ("alone", "project") if n % 2 == 0 else ("project", "alone")
        for name in order:
            start = time.perf_counter()
            rts[name].assemble(session, [], query=text, log=False)
            elapsed = (time.perf_counter() - start) * 1000
            if n >= WARMUP:
                times[name].append(elapsed)
    for rt in rts.values():
        rt.close()
    out: dict[str, Any] = {"queries": len(times["alone"])}
    for name, values in times.items():
        values.sort()
        out[name] = {
            "p50_ms": round(percentile(values, 50), 2),
            "p99_ms": round(percentile(values, 99), 2),
        }
    out["p50_ratio"] = round(out["project"]["p50_ms"] / out["alone"]["p50_ms"], 2)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--date", default=None)
    args = parser.parse_args()
    info = machine()
    print(machine_line(info), flush=True)
    sessions = [f"s{n:03d}" for n in range(args.sessions)]
    last = sessions[-1]
    with tempfile.TemporaryDirectory(prefix="convmem-project-") as work:
        alone, project = Path(work) / "alone.sqlite", Path(work) / "project.sqlite"
        built_alone = build(alone, [last], args.events)
        print(f"alone: {built_alone}", flush=True)
        built_project = build(project, sessions, args.events)
        print(f"project: {built_project}", flush=True)
        result = measure(alone, project, last, args.queries)
    status = "met" if result["p50_ratio"] <= TARGET_RATIO else "missed"
    lines = [
        f"project-scale: {args.sessions} sessions x {args.events:,} events of real text, one"
        " project, vs the last session alone",
        machine_line(info),
        f"{'store':<10}{'events':>10}{'items':>9}{'p50 ms':>9}{'p99 ms':>9}",
        f"{'alone':<10}{built_alone['events']:>10,}{built_alone['items']:>9,}"
        f"{result['alone']['p50_ms']:>9.2f}{result['alone']['p99_ms']:>9.2f}",
        f"{'project':<10}{built_project['events']:>10,}{built_project['items']:>9,}"
        f"{result['project']['p50_ms']:>9.2f}{result['project']['p99_ms']:>9.2f}",
        f"pre-step p50 in the project / alone: {result['p50_ratio']}x (target <="
        f" {TARGET_RATIO}x: {status}), {result['queries']} queries",
    ]
    print("\n".join(lines))
    date = args.date or time.strftime("%Y-%m-%d")
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {
        "benchmark": "project-scale",
        "date": date,
        "machine": info,
        "source": source_state(),
        "sessions": args.sessions,
        "events_per_session": args.events,
        "alone": built_alone,
        "project": built_project,
        "prestep": result,
        "target_ratio": TARGET_RATIO,
        "status": status,
    }
    (args.out / "project-scale.json").write_text(json.dumps(doc, indent=2) + "\n")
    (args.out / "project-scale.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
