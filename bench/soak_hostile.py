"""Hostile-input soak: 10^5 hypothesis cases over every input surface.

Since issue 13 it also runs the privacy classes of ``tests/helpers/hostile_privacy.py``:
secrets cut into hostile text (with colour codes), private spans in every tag
variant (nested, full-width, split across events), long scrubber runs (timed: the
slowest is reported), and hostile lines in transcripts read by the hook's capture.

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

from convmem.config import load_settings
from convmem.ingest import ingest_file
from convmem.runtime import MemoryRuntime
from helpers import hostile, hostile_privacy

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
#: Share of the cases per surface.
SHARES = {
    "event lines": 0.18,
    "Claude Code transcript lines": 0.14,
    "DSH session-log lines": 0.10,
    "DSH server requests": 0.05,
    "search queries": 0.10,
    "SKILL.md files": 0.07,
    "settings files": 0.06,
    "validation checks": 0.06,
    "tool preconditions": 0.04,
    # the classes of issue 13 (tests/helpers/hostile_privacy.py)
    "secrets in hostile text": 0.08,
    "private-span variants": 0.06,
    "hook transcript lines": 0.055,
    "scrubber runs (1k-60k chars)": 0.005,
}


def _targets(
    surface: hostile.Surface, privacy: hostile_privacy.PrivacySurface
) -> dict[str, tuple[dict[str, Any], Callable[..., None]]]:
    return {
        "secrets in hostile text": (
            {"case": hostile_privacy.secret_cases},
            privacy.check_secret,
        ),
        "private-span variants": (
            {"case": hostile_privacy.private_cases},
            privacy.check_private,
        ),
        "hook transcript lines": ({"hostile": hostile.claude_lines}, privacy.check_hook_line),
        "scrubber runs (1k-60k chars)": (
            {"case": hostile_privacy.scrubber_runs},
            privacy.check_scrubber_run,
        ),
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
        private_rt = MemoryRuntime.open(load_settings(home=Path(tmp) / "privacy", env={}))
        privacy = hostile_privacy.PrivacySurface(private_rt)
        for n, (name, (strategies, check)) in enumerate(_targets(surface, privacy).items()):
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
        problems += private_rt.store.integrity_check()
        surface.close()
        private_rt.close()
    lines.append(f"{'total':<30} {total:>7}")
    seen = {**surface.seen, **privacy.seen}
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(seen.items()))
    lines.append(f"outcomes: {outcomes}")
    spent, size = privacy.slowest
    lines.append(f"slowest scrubber run: {size} characters captured in {spent:.2f} s")
    lines.append("leaks: 0 (every secret and private canary case asserts it is not stored)")
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
