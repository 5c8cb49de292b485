"""Long hostile messages: does reading a message take time linear in its length?

Each shape is a piece repeated 500 to 4,000 times into one message (thousands of
values, config lines, log lines, Chinese with spaces, a run of spaces). Beside the
extractor's reading of the whole message (``candidates``, which segments it, reads
its numbers and classifies every clause) the same run times a bare scan of the same
text (``re.findall(r"\\w+")``). Printed per shape: the time at each size, and the
growth from the smallest to the largest size over the growth of the text (1.0 is
linear, 8.0 would be quadratic over these sizes). Usage::

    python bench/long_messages.py [--out FILE]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from convmem.memory.candidates import candidates

SIZES = (500, 1000, 2000, 4000)
SHAPES = {
    "durations": "3 days, ",
    "yen": "¥5 ",
    "10k (running)": "10k run ",
    "weekday beside date": "Friday May 5, ",
    "ranges in Chinese": "三到五天 ",
    "exponents": "x=1.5e-3\n",
    "log lines": "#14 12.81 step done\n",
    "Chinese, Latin, spaces": "用 redis 做缓存",
    "options in Chinese": "MinIO 和 Ceph ",
    "values with spaces": "端口 9000 已经被占了 ",
    # each value once looked back over the whole message before it (12-07)
    "decimals": "0.9 ",
    "counted nouns": "3 workers ",
    "versions": "go 1.22 ",
    "status codes": "got 502s ",
}
_WORD = re.compile(r"\w+")


def _best(fn: object, text: str, runs: int = 2) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn(text)  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = [
        "time to read one message made of a piece repeated N times (best of 2), seconds",
        f"{'shape':24} {'N':>5} {'chars':>7} {'candidates':>11} {'bare scan':>10}",
    ]
    verdicts = []
    for name, piece in SHAPES.items():
        times = []
        for n in SIZES:
            text = piece * n
            read = _best(lambda t: list(candidates(t, True, False)), text)
            bare = _best(_WORD.findall, text)
            times.append(read)
            lines.append(f"{name:24} {n:>5} {len(text):>7} {read:>11.3f} {bare:>10.4f}")
        growth = (times[-1] / max(times[0], 1e-9)) / (SIZES[-1] / SIZES[0])
        verdicts.append(f"{name:24} growth {growth:5.2f} (1.0 linear, 8.0 quadratic)")
    out = "\n".join([*lines, "", *verdicts]) + "\n"
    print(out, end="")
    if args.out:
        args.out.write_text(out, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
