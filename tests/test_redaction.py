"""Secret redaction over a corpus of credential formats and look-alikes (issue 13, items
4 and 6), through ``convmem ingest`` on both backends.

``fixtures/secrets/corpus.jsonl`` holds about sixty credential formats a session can
carry in tool output (cloud, registries, model hubs, payment, mail, chat, URLs with
passwords, env dumps, ``.env`` lines, authorization headers, JSON credential files,
private keys), some behind ``grep --color`` escape codes, and sixty look-alikes that
must be stored as they are. ``bench/redaction.py`` prints recall and false positives
over the same corpus.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, Cli, write_events
from convmem.core.text import normalize_text
from convmem.privacy import drop_private, strip_ansi
from convmem.redaction import RuleSet, rule_set, skipped_rules, translate

CORPUS = FIXTURES / "secrets" / "corpus.jsonl"


def corpus() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text("utf-8").splitlines()]


def _raw(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_every_vendored_rule_compiles() -> None:
    assert skipped_rules() == []


def test_keyword_trigger_finds_every_keyword_in_one_pass() -> None:
    """The one-pass keyword finder triggers the rules a check of each keyword would:
    on the corpus, and on keywords run together so that they overlap, nest and share
    a start ("eyj" inside "eyjrijoi")."""
    rules = rule_set()
    keywords = sorted(rules.by_keyword)

    def naive(low: str) -> set[int]:
        return {i for k in keywords if k in low for i in rules.by_keyword[k]}

    texts = [case["text"].lower() for case in corpus()]
    texts += ["".join(keywords[i::7]) for i in range(7)]  # runs of keywords, back to back
    texts += [k[:-1] + keywords[n - 1] for n, k in enumerate(keywords)]  # a keyword cut short
    texts += ["".join(j for j in keywords if j[:2] == k[:2]) for k in keywords]  # same start
    assert any(len(naive(t)) > 20 for t in texts)
    for text in texts:
        assert rules.triggered(text) == naive(text), text
    assert RuleSet().triggered("ghp_ sk- akia") == set()  # no rules, no keywords


@pytest.mark.parametrize(
    ("go", "python"),
    [
        (r"\b(LTAI(?i)[a-z0-9]{20})\b", r"\b(LTAI(?i:[a-z0-9]{20}))\b"),
        (r"(?i)x[[:alnum:]_]+y", r"x[0-9A-Za-z_]{1,99}y"),
        (r"a{3,}b*\z", r"a{3,99}b{0,99}\Z"),
        (r"p(?i)ab", r"p(?i:ab)"),
    ],
)
def test_go_patterns_are_translated(go: str, python: str) -> None:
    assert translate(go, 99)[0] == python


def test_corpus_through_ingest(cli: Cli, home: Path, tmp_path: Path, backend: Any) -> None:
    rows = corpus()
    secrets = [r for r in rows if r["kind"] == "secret"]
    assert len(secrets) >= 60 and len(rows) - len(secrets) >= 60
    types = ("tool/result", "user/message", "assistant/message", "tool/call")
    events = [
        {"session_id": "c", "seq": n, "type": types[n % len(types)], "text": row["text"]}
        for n, row in enumerate(rows)
    ]
    assert cli("ingest", str(write_events(tmp_path / "c.jsonl", events))).code == 0
    stored = {
        e["seq"]: e["text"] for e in cli("export", "--session", "c").json()["tables"]["events"]
    }
    missed = [
        r["name"] for n, r in enumerate(rows) if r["kind"] == "secret" and r["secret"] in stored[n]
    ]
    assert missed == []
    changed = [
        r["name"]
        for n, r in enumerate(rows)
        if r["kind"] == "lookalike" and stored[n] != normalize_text(r["text"])
    ]
    assert changed == []
    for n, row in enumerate(rows):
        if row["kind"] == "secret":
            assert "[redacted:" in stored[n], row["name"]
            assert "\x1b" not in stored[n] and "[01;31m" not in stored[n]
    if backend.name == "sqlite":  # nothing of any secret in any file of the data dir
        raw = _raw(home)
        leaked = [r["name"] for r in secrets if r["secret"].encode() in raw]
        assert leaked == []


#: Inputs that made the old scrubber quadratic: a long run of token characters in
#: which a match could start at every few characters and fail only at the end.
PATHOLOGICAL = {
    "jwt-run": "eyJ" + "-eyJ" * 500_000,
    "api-key-run": "sk-" * 700_000,
    "slack-run": "xoxb-" * 400_000,
    "bearer-run": "Bearer " + "a" * 2_000_000,
    "private-tags": "<private>" * 300_000,
    "url-run": "a://" * 500_000,
}


def test_pathological_text_through_serve_dsh_is_handled(home: Path) -> None:
    """Each 2 MB text would take minutes with a quadratic scan; the server must answer
    every request (the process timeout is a generous bound, not a measurement)."""
    events = [
        {
            "session_id": "p",
            "event": {"type": "tool/result", "seq": n, "data": {"message": {"content": text}}},
        }
        for n, text in enumerate(PATHOLOGICAL.values(), 1)
    ]
    requests = [{"id": n, "op": "events", "events": [e]} for n, e in enumerate(events, 1)]
    requests.append({"id": 99, "op": "hello"})
    proc = subprocess.run(
        [sys.executable, "-m", "convmem", "serve", "dsh"],
        input="".join(json.dumps(r) + "\n" for r in requests),
        env={**__import__("os").environ, "CONVMEM_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in replies] == [r["id"] for r in requests]
    assert all(r["ok"] for r in replies), replies
    assert sum(r.get("inserted", 0) for r in replies) == len(PATHOLOGICAL)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("a <private>x <private>y</private> z</private> b", "a [private: not stored] b"),
        ("earlier half</private> public", "[private: not stored] public"),
        ("<private >x</private > y", "[private: not stored] y"),
        ('< PRIVATE id="1">x</ private> y', "[private: not stored] y"),
        ("＜private＞秘密＜／private＞公开", "[private: not stored]公开"),
        ("<private/> rest", "[private: not stored]"),
        (
            "<private>a</private> mid <private>b</private>",
            "[private: not stored] mid [private: not stored]",
        ),
        ("a < b and c > d, private matters", "a < b and c > d, private matters"),
    ],
)
def test_private_span_rules(text: str, kept: str) -> None:
    assert drop_private(text) == kept


def test_colour_codes_are_removed() -> None:
    assert strip_ansi("\x1b[01;31m\x1b[Kghp_x\x1b[m\x1b[K \x1b]0;title\x07ok") == "ghp_x ok"
