"""Hostile-input soak: 10^5 hypothesis cases over every input surface.

Runs the properties of ``tests/helpers/hostile.py`` (the same ones
``tests/test_hostile.py`` runs a few hundred times) with a fixed seed: event lines,
Claude Code transcript lines, DSH session-log lines, search queries, ``SKILL.md``
files, settings files, validation checks and tool preconditions. A case passes when
nothing raised, a refused input was reported with where it was, and the good input
around it was still taken. Usage::

    python bench/soak_hostile.py [--cases 100000] [--seed 1] [--out FILE]
"""

from __future__ import annotations

import argparse
import platform
import sqlite3
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from convmem.ingest import ingest_file
from helpers import hostile

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
#: Share of the cases per surface.
SHARES = {
    "event lines": 0.22,
    "Claude Code transcript lines": 0.18,
    "DSH session-log lines": 0.12,
    "DSH server requests": 0.06,
    "search queries": 0.12,
    "SKILL.md files": 0.08,
    "settings files": 0.08,
    "validation checks": 0.08,
    "tool preconditions": 0.06,
}


def _targets(surface: hostile.Surface) -> dict[str, tuple[dict[str, Any], Callable[..., None]]]:
    return {
        "event lines": ({"hostile": hostile.event_lines}, surface.check_event_line),
        "Claude Code transcript lines": (
            {"hostile": hostile.claude_lines},
            surface.check_claude_line,
        ),
        "DSH session-log lines": ({"hostile": hostile.dsh_lines}, surface.check_dsh_line),
        "DSH server requests": (
            {"record": hostile.dsh_records, "raw": hostile.request_lines},
            surface.check_dsh_request,
        ),
        "search queries": (
            {"query": hostile.queries, "session": st.sampled_from(["en1", "zh1", "mix1"])},
            lambda query, session: surface.check_query(session, query),
        ),
        "SKILL.md files": (
            {"content": hostile.skill_files()},
            surface.check_skill_file,
        ),
        "settings files": ({"content": hostile.settings_files()}, surface.check_settings_file),
        "validation checks": (
            {"checks": hostile.checks, "text": hostile.hostile_text},
            surface.check_validation,
        ),
        "tool preconditions": (
            {
                "rules": hostile.preconditions,
                "tool": hostile.hostile_text,
                "tool_input": hostile.tool_inputs,
            },
            surface.check_preconditions,
        ),
    }


def run_target(
    name: str, strategies: dict[str, Any], check: Callable[..., None], cases: int, at: int
) -> tuple[int, str | None]:
    """Run ``cases`` examples; the number tried and the failure, if any."""
    tried = 0

    def counted(**kwargs: Any) -> None:
        nonlocal tried
        tried += 1
        check(**kwargs)

    test = settings(
        max_examples=cases,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )(seed(at)(given(**strategies)(counted)))
    try:
        test()
    except Exception:
        return tried, traceback.format_exc(limit=-6)
    return tried, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = [
        f"hostile-input soak: {args.cases} cases, seed {args.seed}",
        f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version},"
        f" {platform.machine()}",
        f"{'surface':<30} {'cases':>7} {'seconds':>8}  result",
    ]
    failures: list[str] = []
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        surface = hostile.Surface(Path(tmp) / "surface")
        for fixture in ("en_basic.jsonl", "zh_basic.jsonl", "mixed_tools.jsonl"):
            ingest_file(FIXTURES / fixture, surface.runtime.on_events)
        for n, (name, (strategies, check)) in enumerate(_targets(surface).items()):
            cases = round(args.cases * SHARES[name])
            started = time.monotonic()
            tried, failure = run_target(name, strategies, check, cases, args.seed * 100 + n)
            total += tried
            verdict = "ok" if failure is None else "FAILED"
            lines.append(f"{name:<30} {tried:>7} {time.monotonic() - started:>8.0f}  {verdict}")
            print(lines[-1], flush=True)
            if failure:
                failures.append(f"{name}:\n{failure}")
        problems = surface.runtime.store.integrity_check()
        surface.close()
    lines.append(f"{'total':<30} {total:>7}")
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(surface.seen.items()))
    lines.append(f"outcomes: {outcomes}")
    ok = not failures and not problems
    lines.append(f"store integrity after the soak: {problems or 'ok'}")
    good = "OK, no crash; every refusal named its place; good input around it kept"
    lines.append(f"verdict: {good if ok else 'FAILED'}")
    lines += failures
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text, "utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
