"""Hostile-input properties for the classes issue 13 added (used by ``test_hostile.py``
and ``bench/soak_hostile.py``):

* **secrets**: a credential from the corpus (``fixtures/secrets/corpus.jsonl``), cut
  into hostile text, maybe behind terminal colour codes, in any event type: the
  stored text never holds it;
* **private spans**: a canary inside a span written with any tag variant, nested,
  in full-width brackets, or split across two events: it is never stored, and the
  text outside the spans is;
* **scrubber runs**: long runs of token characters and keywords (the shapes that
  made the old patterns quadratic): capture takes them, and the time per case is
  recorded for the soak to report;
* **hook transcript lines**: a hostile line between two prompts of a transcript
  read by the hook's capture (not ``ingest``): both prompts are captured, and a
  later prompt still is (capture never stops at a bad line).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from convmem.adapters.claude_code import capture_transcript
from convmem.capture import Event
from convmem.core.text import normalize_text
from convmem.runtime import MemoryRuntime

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "secrets" / "corpus.jsonl"
SECRETS = [
    row
    for row in (json.loads(line) for line in CORPUS.read_text("utf-8").splitlines())
    if row["kind"] == "secret" and "\x1b" not in row["text"]
]
CANARY = "PRIVATE-CANARY-soak"
TYPES = ("user/message", "assistant/message", "tool/result", "tool/call", "compaction/summary")

#: Text around a secret or span: anything but what would open or close a span.
_plain = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="<>\uff1c\uff1e\ufe64\ufe65\u3008\u3009/\uff0f",
    ),
    max_size=80,
).filter(lambda s: "private" not in s.lower() and "ｐｒｉｖａｔｅ" not in s.lower())
_colour = st.sampled_from(["", "\x1b[01;31m\x1b[K", "\x1b[1m", "\x1b[38;5;196m"])

secret_cases = st.tuples(
    st.sampled_from(range(len(SECRETS))), _plain, _plain, _colour, st.sampled_from(TYPES)
)

_OPEN = [
    "<private>",
    "<private >",
    "< PRIVATE>",
    '<private class="x">',
    "<private/>",
    "＜private＞",
    "＜ｐｒｉｖａｔｅ＞",
    "<Private\tid=1>",
]
_CLOSE = ["</private>", "</private >", "</ PRIVATE>", "＜／private＞", "＜/ｐｒｉｖａｔｅ＞"]

private_cases = st.tuples(
    st.sampled_from(_OPEN),
    st.sampled_from(_CLOSE),
    st.integers(0, 3),  # nesting depth around the canary
    st.booleans(),  # closed, or left open (to the end of the message)
    st.booleans(),  # split: the span ends in the next event
    _plain,
    _plain,
    st.sampled_from(TYPES),
)

_RUN_UNITS = [
    "eyJ",
    "-",
    "sk-",
    "xoxb-",
    "ghp_",
    "AKIA",
    "a",
    "0",
    ".",
    "=",
    "Bearer ",
    "://",
    ":",
    "@",
    "password=",
    "<private>",
    "-----BEGIN PRIVATE KEY-----",
    "/",
]
scrubber_runs = st.tuples(
    st.lists(st.sampled_from(_RUN_UNITS), min_size=1, max_size=4),
    st.integers(1_000, 60_000),
)


class PrivacySurface:
    """One runtime for the privacy properties; outcomes and timings are counted."""

    def __init__(self, runtime: MemoryRuntime) -> None:
        self.runtime = runtime
        self.seq = 0
        self.seen: dict[str, int] = {}
        self.slowest: tuple[float, int] = (0.0, 0)  # seconds, characters
        self.folder = Path(str(runtime.settings.data_dir)) / "transcripts"
        self.folder.mkdir(parents=True, exist_ok=True)

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def _count(self, outcome: str) -> None:
        self.seen[outcome] = self.seen.get(outcome, 0) + 1

    def _stored(self, session: str, seq: int) -> str:
        [event] = self.runtime.store.events_by_seq(session, [seq])
        archived = self.runtime.store.archive_text(session, seq) or ""
        return event.text + "\n" + archived

    def check_secret(self, case: tuple[int, str, str, str, str]) -> None:
        index, before, after, colour, etype = case
        row = SECRETS[index]
        secret = row["secret"]
        text = before + " " + row["text"].replace(secret, colour + secret + "\x1b[m") + " " + after
        seq = self._next()
        self.runtime.on_events([Event("secrets", seq, etype, text)])
        stored = self._stored("secrets", seq)
        assert secret not in stored, (row["name"], stored[:300])
        self._count("secret-redacted")

    def check_private(self, case: tuple[Any, ...]) -> None:
        opener, closer, depth, closed, split, before, after, etype = case
        inner = CANARY
        for _ in range(depth):
            inner = f"{opener}x {inner} y{closer}"
        first_seq, second_seq = self._next(), self._next()
        if split:
            first = f"{before} {opener}{inner} part one"
            second = f"{CANARY} part two{closer} {after}"
            events = [
                Event("private", first_seq, etype, first),
                Event("private", second_seq, etype, second),
            ]
        else:
            body = f"{before} {opener}{inner}" + (f"{closer} {after}" if closed else "")
            events = [Event("private", first_seq, etype, body)]
        self.runtime.on_events(events)
        for event in events:
            stored = self._stored("private", event.seq)
            assert CANARY not in stored, (event.text, stored)
        kept = self._stored("private", second_seq if split else first_seq)
        if (split or closed) and after.strip():
            # (stored text is canonical: 豈 U+F900 is kept as its NFC form U+8C48)
            said = normalize_text(after).strip()[:20]
            assert said in kept.replace("\n", " ") or not after.strip().isprintable()
        self._count("private-dropped")

    def check_scrubber_run(self, case: tuple[list[str], int]) -> None:
        units, size = case
        text = ("".join(units) * (size // max(1, len("".join(units))) + 1))[:size]
        seq = self._next()
        began = time.monotonic()
        self.runtime.on_events([Event("runs", seq, "tool/result", text)])
        spent = time.monotonic() - began
        if spent > self.slowest[0]:
            self.slowest = (spent, size)
        self._count("run-captured")

    def check_hook_line(self, hostile: bytes) -> None:
        session = f"hook{self._next()}"
        path = self.folder / f"{session}.jsonl"

        def prompt(text: str) -> bytes:
            line = {"type": "user", "message": {"role": "user", "content": text}}
            return json.dumps(line).encode()

        path.write_bytes(
            prompt(f"first {session}") + b"\n" + hostile + b"\n" + prompt("second") + b"\n"
        )
        capture_transcript(self.runtime, session, str(path))
        with path.open("ab") as fh:
            fh.write(prompt("third") + b"\n")
        capture_transcript(self.runtime, session, str(path))
        texts = [e.text for e in self.runtime.store.events(session, types=["user/message"])]
        assert texts[0] == f"first {session}" and texts[-2:] == ["second", "third"], texts
        self._count("hook-line-passed")
