"""A child process for the concurrency suite: a capturing host or an assembling host.

    python worker.py write HOME EVENTS.jsonl BATCH START_AT
    python worker.py assemble HOME SESSIONS STOP_FILE START_AT

Both wait until ``START_AT`` (a ``time.time()`` value) so that every child hits the
database at once, then call :class:`~convmem.runtime.MemoryRuntime` the way a host
adapter does. Every exception a call raises, and every error an assembly reports,
is counted instead of ending the process; the summary is one JSON object on stdout.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any


def _wait(start_at: float) -> None:
    while time.time() < start_at:
        time.sleep(0.005)


def write(home: str, events_file: str, batch: int, start_at: float) -> dict[str, Any]:
    from convmem.adapters.events import parse_event
    from convmem.config import load_settings
    from convmem.runtime import MemoryRuntime

    lines = Path(events_file).read_text("utf-8").splitlines()
    events = [parse_event(json.loads(line)) for line in lines]
    errors: list[str] = []
    slowest = 0.0
    inserted = 0
    _wait(start_at)
    runtime = MemoryRuntime.open(load_settings(home=home))
    for i in range(0, len(events), batch):
        began = time.monotonic()
        try:
            inserted += runtime.on_events(events[i : i + batch]).inserted
        except Exception as exc:  # a host would see this: count it
            errors.append(f"{type(exc).__name__}: {exc}")
        slowest = max(slowest, time.monotonic() - began)
    runtime.close()
    return {
        "calls": -(-len(events) // batch),
        "inserted": inserted,
        "errors": errors,
        "slowest": slowest,
    }


def assemble(home: str, sessions: str, stop_file: str, start_at: float) -> dict[str, Any]:
    from convmem.config import load_settings
    from convmem.runtime import MemoryRuntime

    queries = ["what is the latency budget?", "缓存层的连接池", "what did we decide?", ""]
    errors: list[str] = []
    calls = injected = 0
    slowest = 0.0
    _wait(start_at)
    runtime = MemoryRuntime.open(load_settings(home=home))
    stop = Path(stop_file)
    names = sessions.split(",")
    while not stop.exists() or calls < 4:
        sid, query = names[calls % len(names)], queries[calls % len(queries)]
        began = time.monotonic()
        try:
            result = runtime.assemble(sid, [], query=query or None, trigger="concurrency")
            errors += [f"assembly error: {e}" for e in result.errors]
            injected += bool(result.injected)
            runtime.pre_step(sid, None, turn=calls, step=1)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        slowest = max(slowest, time.monotonic() - began)
        calls += 1
    runtime.close()
    return {"calls": calls, "injected": injected, "errors": errors, "slowest": slowest}


def main(argv: list[str]) -> int:
    mode, home, data, extra, start_at = argv
    if mode == "write":
        summary = write(home, data, int(extra), float(start_at))
    elif mode == "assemble":
        summary = assemble(home, data, extra, float(start_at))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
