"""Redaction benchmark: recall and false positives over a corpus of our own.

The corpus (``tests/fixtures/secrets/corpus.jsonl``) holds credential formats a
session with an agent carries in tool output (each with the secret it hides) and
look-alikes that must be kept as they are. Each text goes through capture's path
(colour codes stripped, normalized, scrubbed). Reported:

* **recall**: secrets of which nothing (not even their first 8 characters) is left;
* **false positives**: look-alikes whose stored text changed;
* per rule set, which rule caught each secret (convmem's own or the vendored
  gitleaks set), and the time per text;
* the worst case: long runs of token characters (the shapes that made the old
  scrubber quadratic), with the time per 100 000 characters.

The corpus was written by the same hands as the rules: read recall as "the formats
we know of are covered", not as an estimate for formats nobody listed. Usage::

    python bench/redaction.py [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from pathlib import Path

from convmem.core.text import normalize_text
from convmem.privacy import scrub, strip_ansi
from convmem.redaction import compile_all, find_secrets, rule_set

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "secrets" / "corpus.jsonl"
RUNS = {
    "jwt-like run": "eyJ" + "-eyJ" * 50_000,
    "sk- chain": "sk-" * 70_000,
    "xoxb- chain": "xoxb-" * 40_000,
    "bearer + 200k chars": "Bearer " + "a" * 200_000,
    "url scheme chain": "a://" * 50_000,
    "password= chain": "password=" * 22_000,
    "<private> chain": "<private>" * 22_000,
    "base64 blob": "QUJD" * 50_000,
}


def _captured(text: str) -> str:
    clean = normalize_text(strip_ansi(text))
    return normalize_text(scrub(clean, limit=200_000))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = [json.loads(line) for line in CORPUS.read_text("utf-8").splitlines()]
    rules = rule_set()
    compile_all()
    own = {r.id for r in rules.rules[: sum(1 for r in rules.rules if not r.go_syntax)]}
    secrets = [r for r in rows if r["kind"] == "secret"]
    looks = [r for r in rows if r["kind"] == "lookalike"]
    missed: list[str] = []
    caught_by: Counter[str] = Counter()
    started = time.perf_counter()
    for row in secrets:
        stored = _captured(row["text"])
        if row["secret"][:8] in stored:
            missed.append(row["name"])
        for _, _, rule_id in find_secrets(normalize_text(strip_ansi(row["text"]))):
            caught_by["convmem" if rule_id in own else "gitleaks"] += 1
    false_pos: list[tuple[str, str]] = []
    for row in looks:
        stored = _captured(row["text"])
        if stored != normalize_text(row["text"]):
            false_pos.append((row["name"], stored[:100]))
    per_text = (time.perf_counter() - started) / len(rows) * 1000
    lines = [
        "redaction benchmark (corpus: tests/fixtures/secrets/corpus.jsonl)",
        f"python {platform.python_version()}, {platform.machine()}",
        f"rules: {len(rules.rules)} in use ({len(own)} convmem, {len(rules.rules) - len(own)}"
        f" gitleaks), {len(rules.skipped)} skipped",
        f"secrets: {len(secrets)}; redacted {len(secrets) - len(missed)};"
        f" recall {(len(secrets) - len(missed)) / len(secrets):.3f}",
        f"look-alikes: {len(looks)}; changed {len(false_pos)};"
        f" false-positive rate {len(false_pos) / len(looks):.3f}",
        f"findings by rule set: {dict(sorted(caught_by.items()))}",
        f"time per corpus text: {per_text:.2f} ms",
    ]
    lines += [f"  missed: {name}" for name in missed]
    lines += [f"  false positive: {name!r} -> {stored!r}" for name, stored in false_pos]
    lines.append("worst-case inputs (capture's scrub of the whole text):")
    for name, text in RUNS.items():
        began = time.perf_counter()
        _captured(text)
        spent = time.perf_counter() - began
        lines.append(
            f"  {name:<22} {len(text):>8} chars {spent:7.3f} s"
            f"  ({spent / len(text) * 100_000:.3f} s per 100k chars)"
        )
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text, "utf-8")
    return 0 if not missed and not false_pos else 1


if __name__ == "__main__":
    sys.exit(main())
