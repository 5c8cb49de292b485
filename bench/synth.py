"""A deterministic generator of long synthetic sessions.

Mixed English and Chinese user messages with constraints, numbers and
corrections; assistant replies; tool calls and results. The same arguments always
give the same events.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from convmem.capture import Event

_SUBJECTS = [
    "the cache",
    "the API",
    "the parser",
    "the importer",
    "the scheduler",
    "the UI",
    "数据库",
    "解析器",
    "缓存层",
    "调度器",
]
_USER = [
    "The p95 latency of {s} must stay under {n} ms at {k}k rps.",
    "We decided to keep {s} behind a feature flag until week {k}.",
    "Never deploy {s} on Fridays.",
    "I prefer small pull requests for {s}, under {n} lines.",
    "Should we split {s} into {k} services?",
    "Actually, make the {s} timeout {n} ms instead.",
    "{s}的连接池大小必须是 {k}0 个，不要超过。",
    "我们决定{s}先不上线，预算改成 {n} tokens。",
    "Please look at src/{f}/main.py and fix the failing test in tests/test_{f}.py.",
    "Remind me what we agreed about {s}.",
]
_ASSISTANT = [
    "I suggest we add a retry with {k} attempts to {s}.",
    "Done: updated {s}; {n} tests pass.",
    "Let me check the logs for {s} first.",
    "我建议{s}增加 {k} 个副本。",
]
_TOOL = [
    "PASSED {n} tests in {k}.{k}s\n" + "ok\n" * 3,
    "ERROR: connection refused after {n} ms (attempt {k})",
    "-rw-r--r-- 1 dev dev {n} src/{f}/main.py\n-rw-r--r-- 1 dev dev {k}00 README.md",
    '{{"status": "ok", "latency_ms": {n}, "rows": {k}000}}',
]
_FILES = ["api", "core", "cache", "io", "jobs"]


def synthetic_events(count: int, sessions: int = 1, seed: int = 1234) -> Iterator[Event]:
    rng = random.Random(seed)
    per = max(1, count // sessions)
    made = 0
    for s in range(sessions):
        sid = f"synth-{s}"
        seq = 0
        turn = 0
        while seq < per and made < count:
            turn += 1
            for kind in ("user", "assistant", "tool/call", "tool/result", "assistant"):
                if seq >= per or made >= count:
                    break
                seq += 1
                made += 1
                fill = {
                    "s": rng.choice(_SUBJECTS),
                    "n": rng.randint(10, 5000),
                    "k": rng.randint(1, 9),
                    "f": rng.choice(_FILES),
                }
                time = f"2026-01-{1 + turn // 500 % 28:02d}T{turn % 24:02d}:00:{seq % 60:02d}Z"
                if kind == "user":
                    yield Event(
                        sid,
                        seq,
                        "user/message",
                        rng.choice(_USER).format(**fill),
                        time=time,
                        turn=turn,
                    )
                elif kind == "assistant":
                    yield Event(
                        sid,
                        seq,
                        "assistant/message",
                        rng.choice(_ASSISTANT).format(**fill),
                        time=time,
                        turn=turn,
                    )
                elif kind == "tool/call":
                    yield Event(
                        sid,
                        seq,
                        "tool/call",
                        f"Bash(pytest -q tests/test_{fill['f']}.py)",
                        time=time,
                        turn=turn,
                        tool_name="Bash",
                        call_id=f"c{seq}",
                    )
                else:
                    yield Event(
                        sid,
                        seq,
                        "tool/result",
                        rng.choice(_TOOL).format(**fill),
                        time=time,
                        turn=turn,
                        tool_name="Bash",
                        call_id=f"c{seq - 1}",
                    )
