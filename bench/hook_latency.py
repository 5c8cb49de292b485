"""Latency of ``convmem-hook claude-code``, the process Claude Code starts on every prompt.

Whole-process wall time (start, imports, store, capture, assembly, exit) of the hook
for UserPromptSubmit, PreToolUse and Stop payloads, against a store that already holds
a few hundred events of one session, beside a bare ``python -c pass`` and ``python -c
"import sqlite3, json"`` with the same interpreter. Each hook row is measured twice:

* **in-process** (``CONVMEM_HOOK_DAEMON=0``): the process imports convmem and answers;
* **daemon, warm**: the process hands the call to the resident hook process of its data
  folder (``convmem.adapters.hook_daemon``), which was started by the first call and
  has warmed up; every one of these calls is checked to have been served by it.

Each mode has its own data folder over the same transcript. Before each round the
transcript grows by one realistic turn (prompt line, hook attachment, assistant text,
a tool call and its result, bookkeeping lines), so every run also captures new lines.
The hooks run a compiled copy of ``src/convmem`` taken at the start, as an install
would have it (and so that an edit in the working tree does not restart the daemon
halfway). Usage::

    python bench/hook_latency.py [--runs 20] [--turns 60] [--out bench/results]

The hooks run the plain ``convmem-hook`` script that ``convmem install claude-code``
writes; one more row runs the same call through ``convmem hook claude-code``, the
launcher pip writes for the console script (it imports ``re`` first).

Target: the UserPromptSubmit hook at most 3x a bare interpreter start. The rows are
measured interleaved (one of each per round); the ratios are of the medians. Writes
``hook-latency.json`` and ``hook-latency.txt`` (what it prints) in ``--out``.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 3.0
EVENTS = ("UserPromptSubmit", "PreToolUse (no preconditions)", "Stop")
LAUNCHER_ROW = "hook UserPromptSubmit, daemon, convmem launcher"
SESSION = "b7e0c1d2-3f45-4a67-8b9c-0d1e2f3a4b5c"


def hook_command() -> list[str]:
    """What ``convmem install claude-code`` writes: the plain ``convmem-hook`` script."""
    script = Path(sys.executable).with_name("convmem-hook")
    if not script.is_file():
        raise SystemExit(f"no {script}: install convmem (pip install -e .) in this environment")
    return [str(script), "claude-code"]


def launcher_command() -> list[str]:
    """``convmem hook claude-code`` through the console-script launcher pip writes."""
    return [str(Path(sys.executable).with_name("convmem")), "hook", "claude-code"]


def turn_lines(n: int, prompt: str) -> list[dict[str, Any]]:
    """One Claude Code turn as transcript lines (shapes from a real 2.1.328 transcript)."""
    t = f"2026-12-02T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    common = {"sessionId": SESSION, "timestamp": t, "version": "2.1.328", "cwd": "/home/dev/p"}
    call = f"toolu_{n:04d}"
    return [
        {"type": "queue-operation", "operation": "enqueue", "content": prompt, **common},
        {"type": "queue-operation", "operation": "dequeue", **common},
        {
            "type": "user",
            "promptId": f"p{n}",
            "uuid": f"u{n}",
            "message": {"role": "user", "content": prompt},
            **common,
        },
        {
            "type": "attachment",
            "uuid": f"a{n}",
            "attachment": {
                "type": "hook_additional_context",
                "content": ["[convmem memory] session x"],
                "hookEvent": "UserPromptSubmit",
            },
            **common,
        },
        {"type": "api-request-blob", "message": {"role": "user", "content": prompt}, **common},
        {
            "type": "assistant",
            "uuid": f"m{n}",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": f"Running the checks for step {n}; p95 was {100 + n} ms.",
                    },
                ],
            },
            **common,
        },
        {
            "type": "assistant",
            "uuid": f"t{n}",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call,
                        "name": "Bash",
                        "input": {
                            "command": f"pytest -q tests/test_{n}.py",
                            "description": "tests",
                        },
                    },
                ],
            },
            **common,
        },
        {
            "type": "user",
            "uuid": f"r{n}",
            "toolUseResult": {"stdout": "ok"},
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call,
                        "content": f"{n} passed in 0.{n % 10}s",
                    }
                ],
            },
            **common,
        },
        {"type": "system", "subtype": "stop_hook_summary", "uuid": f"s{n}", **common},
        {"type": "cost-state", "totalCostUSD": 0.01 * n, **common},
    ]


PROMPTS = [
    "The token budget must stay under 3000 tokens at peak load.",
    "We decided to use PostgreSQL 16 for storage.",
    "The p95 latency must stay under 200 ms at 1k rps.",
    "Never touch the production database directly; use db/migrations/.",
    "I prefer small pull requests, under 400 lines.",
    "Should we shard by customer id or by region?",
]


def prompt(n: int) -> str:
    return PROMPTS[n] if n < len(PROMPTS) else f"Step {n}: continue with the next endpoint."


def write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")


def timed(cmd: list[str], stdin: str = "", env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr}")
    return elapsed


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "min_ms": round(ordered[0] * 1000, 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 2),
    }


def wait_for_daemon(home: Path, timeout: float = 60.0) -> int:
    """The pid of the daemon serving ``home`` once it listens (started by a first call)."""
    deadline = time.monotonic() + timeout
    log, pid_file = home / "hook-daemon.log", home / "hook.pid"
    while time.monotonic() < deadline:
        try:
            pid = int(pid_file.read_text())
            if f"daemon {pid}: listening" in log.read_text():
                return pid
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise SystemExit(f"no hook daemon started in {home}")


def served(home: Path) -> int:
    log = home / "hook-daemon.log"
    return log.read_text().count(": served ") if log.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--turns", type=int, default=60, help="turns in the store before timing")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="convmem-hook-bench-") as tmp:
        package = Path(tmp) / "src"
        shutil.copytree(
            Path(__file__).resolve().parents[1] / "src" / "convmem",
            package / "convmem",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        compileall.compile_dir(package, quiet=1)
        base_env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(package), os.environ.get("PYTHONPATH")])
            ),
        }
        transcript = Path(tmp) / f"{SESSION}.jsonl"
        homes = {"in-process": Path(tmp) / "inproc", "daemon": Path(tmp) / "daemon"}
        envs = {
            "in-process": {
                **base_env,
                "CONVMEM_HOME": str(homes["in-process"]),
                "CONVMEM_HOOK_DAEMON": "0",
            },
            "daemon": {
                **base_env,
                "CONVMEM_HOME": str(homes["daemon"]),
                "CONVMEM_HOOK_DAEMON": "1",
                "CONVMEM_HOOK_DAEMON_DEBUG": "1",  # to count the calls it served
            },
        }
        hook, launcher = hook_command(), launcher_command()

        def payload(event: str, **extra: Any) -> str:
            base = {
                "session_id": SESSION,
                "transcript_path": str(transcript),
                "cwd": tmp,
                "hook_event_name": event,
            }
            return json.dumps({**base, **extra})

        for n in range(args.turns):  # the history: a few hundred events
            write_lines(transcript, turn_lines(n, prompt(n)))
        for mode in homes:  # the first call writes bytecode; the daemon's starts it
            timed(hook, payload("Stop"), envs[mode])
        daemon_pid = wait_for_daemon(homes["daemon"])
        timed(hook, payload("Stop"), envs["daemon"])  # one warm call before timing
        with __import__("sqlite3").connect(homes["in-process"] / "memory.sqlite") as db:
            events = db.execute("SELECT count(*) FROM events").fetchone()[0]

        # Interleaved, one of each per round, so a busy machine slows all rows alike.
        samples: dict[str, list[float]] = {}

        def measure(name: str, cmd: list[str], stdin: str = "", env: Any = None) -> None:
            samples.setdefault(name, []).append(timed(cmd, stdin, env))

        before = served(homes["daemon"])
        try:
            for i in range(args.runs):
                n = args.turns + i
                measure("python -c pass", [sys.executable, "-c", "pass"])
                measure(
                    "python -c 'import sqlite3, json'",
                    [sys.executable, "-c", "import sqlite3, json"],
                )
                write_lines(transcript, turn_lines(n - 1, prompt(n - 1))[5:])  # last turn's end
                ups = payload("UserPromptSubmit", prompt=prompt(n), prompt_id=f"p{n}")
                tool = payload("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
                for mode in homes:
                    measure(f"hook UserPromptSubmit, {mode}", hook, ups, envs[mode])
                measure(LAUNCHER_ROW, launcher, ups, envs["daemon"])
                for mode in homes:
                    measure(f"hook PreToolUse (no preconditions), {mode}", hook, tool, envs[mode])
                write_lines(transcript, turn_lines(n, prompt(n))[:5])  # the prompt's own lines
                for mode in homes:
                    measure(f"hook Stop, {mode}", hook, payload("Stop"), envs[mode])
            daemon_calls = served(homes["daemon"]) - before
        finally:
            with contextlib.suppress(OSError):
                os.kill(daemon_pid, signal.SIGTERM)
        for home in homes.values():
            log = home / "convmem.log"
            if log.exists():
                raise SystemExit(f"the hook logged errors:\n{log.read_text()}")
        if daemon_calls != 4 * args.runs:
            notes = (homes["daemon"] / "hook-daemon.log").read_text()
            notes = "\n".join(line for line in notes.splitlines() if ": served " not in line)
            raise SystemExit(f"the daemon served {daemon_calls} of {4 * args.runs} calls:\n{notes}")

    order = [
        "python -c pass",
        "python -c 'import sqlite3, json'",
        *(f"hook {event}, {mode}" for event in EVENTS for mode in homes),
        LAUNCHER_ROW,
    ]
    rows = {name: stats(samples[name]) for name in order}
    bare = rows["python -c pass"]["median_ms"]
    ratios = {
        mode: round(rows[f"hook UserPromptSubmit, {mode}"]["median_ms"] / bare, 2) for mode in homes
    }
    lines = [
        f"convmem-hook claude-code, {args.runs} runs each (interleaved),"
        f" store with {events} events",
        "(the last row: `convmem hook claude-code`, through the launcher pip writes)",
        f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus",
        "",
        f"{'command':<48}{'median ms':>11}{'min ms':>9}{'p90 ms':>9}{'x bare':>8}",
    ]
    for name, row in rows.items():
        lines.append(
            f"{name:<48}{row['median_ms']:>11.1f}{row['min_ms']:>9.1f}{row['p90_ms']:>9.1f}"
            f"{row['median_ms'] / bare:>8.2f}"
        )
    lines.append("")
    ratios["daemon, convmem launcher"] = round(rows[LAUNCHER_ROW]["median_ms"] / bare, 2)
    for mode, ratio in ratios.items():
        verdict = "meets" if ratio <= TARGET_RATIO else "misses"
        lines.append(
            f"UserPromptSubmit {mode} / bare python = {ratio:.2f}x"
            f" ({verdict} the {TARGET_RATIO:g}x target)"
        )
    report = "\n".join(lines)
    print(report)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": "hook-latency",
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "runs": args.runs,
        "store_events": events,
        "hook_command": [Path(hook[0]).name, *hook[1:]],
        "rows": rows,
        "ratio_ups_in_process_to_bare_python": ratios["in-process"],
        "ratio_ups_daemon_to_bare_python": ratios["daemon"],
        "launcher_ratio_ups_daemon_to_bare_python": ratios["daemon, convmem launcher"],
        "target_ratio": TARGET_RATIO,
    }
    (out / "hook-latency.json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    (out / "hook-latency.txt").write_text(report + "\n", "utf-8")


if __name__ == "__main__":
    main()
