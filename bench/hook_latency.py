"""Latency of ``convmem hook claude-code``, the process Claude Code starts on every prompt.

Whole-process wall time (start, imports, store, capture, assembly, exit) of the hook
for a UserPromptSubmit payload, against a store that already holds a few hundred
events of one session, beside a bare ``python -c pass`` and ``python -c "import
sqlite3, json"`` with the same interpreter. Before each hook run the transcript grows
by one realistic turn (prompt line, hook attachment, assistant text, a tool call and
its result, bookkeeping lines), so every run also captures new lines. Usage::

    python bench/hook_latency.py [--runs 20] [--turns 60] [--out bench/results]

Target: the UserPromptSubmit hook at most 3x a bare interpreter start.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 3.0
SESSION = "b7e0c1d2-3f45-4a67-8b9c-0d1e2f3a4b5c"


def hook_command() -> list[str]:
    script = Path(sys.executable).with_name("convmem")
    if script.is_file():
        return [str(script), "hook", "claude-code"]
    return [sys.executable, "-m", "convmem", "hook", "claude-code"]


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--turns", type=int, default=60, help="turns in the store before timing")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="convmem-hook-bench-") as tmp:
        home, transcript = Path(tmp) / "home", Path(tmp) / f"{SESSION}.jsonl"
        env = {**os.environ, "CONVMEM_HOME": str(home)}
        hook = hook_command()

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
        timed(hook, payload("Stop"), env)
        with __import__("sqlite3").connect(home / "memory.sqlite") as db:
            events = db.execute("SELECT count(*) FROM events").fetchone()[0]

        bare = [timed([sys.executable, "-c", "pass"]) for _ in range(args.runs)]
        imports = [timed([sys.executable, "-c", "import sqlite3, json"]) for _ in range(args.runs)]
        ups, pre_tool, stop = [], [], []
        for i in range(args.runs):
            n = args.turns + i
            write_lines(transcript, turn_lines(n - 1, prompt(n - 1))[5:])  # the last turn's end
            ups.append(
                timed(hook, payload("UserPromptSubmit", prompt=prompt(n), prompt_id=f"p{n}"), env)
            )
            pre_tool.append(
                timed(
                    hook, payload("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}), env
                )
            )
            write_lines(transcript, turn_lines(n, prompt(n))[:5])  # the prompt's own lines
            stop.append(timed(hook, payload("Stop"), env))
        log = home / "convmem.log"
        if log.exists():
            raise SystemExit(f"the hook logged errors:\n{log.read_text()}")

    rows = {
        "python -c pass": stats(bare),
        "python -c 'import sqlite3, json'": stats(imports),
        "hook UserPromptSubmit": stats(ups),
        "hook PreToolUse (no preconditions)": stats(pre_tool),
        "hook Stop": stats(stop),
    }
    ratio = rows["hook UserPromptSubmit"]["median_ms"] / rows["python -c pass"]["median_ms"]
    print(f"convmem hook claude-code, {args.runs} runs each, store with {events} events\n")
    print(f"{'command':<38}{'median ms':>11}{'min ms':>9}{'p90 ms':>9}")
    for name, row in rows.items():
        print(f"{name:<38}{row['median_ms']:>11.1f}{row['min_ms']:>9.1f}{row['p90_ms']:>9.1f}")
    verdict = "meets" if ratio <= TARGET_RATIO else "misses"
    print(
        f"\nUserPromptSubmit / bare python = {ratio:.2f}x ({verdict} the {TARGET_RATIO:g}x target)"
    )

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": "hook-latency",
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "runs": args.runs,
        "store_events": events,
        "hook_command": [Path(hook[0]).name, *hook[1:]],
        "rows": rows,
        "ratio_ups_to_bare_python": round(ratio, 2),
        "target_ratio": TARGET_RATIO,
    }
    (out / "hook-latency.json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
