"""Long agent sessions of real text, for the scale benchmarks (issues 14 and 15).

No sentence here is made up. A session is assembled, deterministically, from:

* **LoCoMo** (``../shared/data/locomo``): its 5,882 turns of two people talking, as the
  person's and the assistant's messages, several consecutive turns joined into one
  message of 100 to 4,000 characters;
* **CrossWOZ** (``../shared/data/crosswoz``): its Chinese user turns, for one message
  in ten;
* **this project's own recorded work**: its source, tests and docs at a pinned commit
  (``git show``), and its history as diffs (``git log -p``): pasted code and logs in a
  message, and the results of tool calls that read files, search them or show commits;
* **its recorded sessions**: the real Claude Code transcript and DSH session log under
  ``tests/fixtures``, whose texts join the tool results and messages.

The structure is that of an agent session: a turn is the person's message, the
assistant's reply, zero to four tool calls with their results, and a closing reply.
The same arguments always give the same events. Nothing reads LoCoMo's questions,
answers or summaries.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from convmem.capture import Event

HERE = Path(__file__).resolve().parent
#: The checkout (bench/run_all.sh runs a copy of bench/ and src/ and names it here).
ROOT = Path(os.environ.get("CONVMEM_BENCH_REPO") or HERE.parent)
#: The commit whose files and history are read (the base of issues 14 and 15).
PINNED = "bd54e66"
SHARED = ROOT.parent / "shared" / "data"
START = 1_764_547_200  # 2025-12-01T00:00:00Z: event times, ten seconds apart


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


@dataclass
class Corpus:
    """The real texts sessions are drawn from, loaded once."""

    turns: list[list[str]] = field(default_factory=list)  # LoCoMo sessions, turn texts
    chinese: list[list[str]] = field(default_factory=list)  # CrossWOZ dialogues, user turns
    files: list[tuple[str, list[str]]] = field(default_factory=list)  # (path, lines)
    diffs: list[tuple[str, str]] = field(default_factory=list)  # (commit, one file's diff)
    recorded: list[str] = field(default_factory=list)  # texts of the recorded sessions


@lru_cache(maxsize=1)
def corpus() -> Corpus:
    """Load every source (a few seconds)."""
    out = Corpus()
    locomo = json.loads((SHARED / "locomo" / "locomo10.json").read_text("utf-8"))
    for sample in locomo:
        conv = sample["conversation"]
        for key in sorted(k for k in conv if k.startswith("session_") and "date" not in k):
            texts = [t["text"] for t in conv[key] if t.get("text")]
            if texts:
                out.turns.append(texts)
    with zipfile.ZipFile(SHARED / "crosswoz" / "val.json.zip") as zf:
        dialogues = json.loads(zf.read("val.json"))
    for key in sorted(dialogues):
        users = [m["content"] for m in dialogues[key]["messages"] if m["role"] == "usr"]
        if users:
            out.chinese.append(users)
    for path in _git("ls-tree", "-r", "--name-only", PINNED).splitlines():
        if path.endswith((".py", ".md", ".toml", ".mjs", ".sh", ".html", ".css")):
            text = _git("show", f"{PINNED}:{path}")
            out.files.append((path, text.splitlines()))
    log = _git("log", "-p", "--no-color", "--format=commit %h%n%s%n", PINNED)
    commit = ""
    for part in log.split("\ndiff --git "):
        head = part.splitlines()[0] if part else ""
        if part.startswith("commit "):
            commit = head.split()[1]
            continue
        for line in part.splitlines():
            if line.startswith("commit ") and len(line.split()) == 2:
                commit = line.split()[1]
        out.diffs.append((commit, "diff --git " + part[:20_000]))
    out.recorded = _recorded_texts()
    return out


def _recorded_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted((ROOT / "tests" / "fixtures" / "claude_code").glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            texts += _strings(json.loads(line).get("message"))
    for line in (
        (ROOT / "tests" / "fixtures" / "dsh" / "session.v4.jsonl").read_text("utf-8").splitlines()
    ):
        texts += _strings(json.loads(line).get("data"))
    return [t for t in texts if len(t) >= 40]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# --- pieces of text ------------------------------------------------------------------------


def _length(rng: random.Random, low: int, high: int) -> int:
    """Log-uniform between ``low`` and ``high`` characters."""
    return int(math.exp(rng.uniform(math.log(low), math.log(high))))


def _talk(rng: random.Random, c: Corpus, chars: int) -> str:
    """Consecutive LoCoMo turns from a random place, joined up to about ``chars``."""
    session = c.turns[rng.randrange(len(c.turns))]
    i = rng.randrange(len(session))
    parts: list[str] = []
    size = 0
    while size < chars:
        text = session[i % len(session)]
        parts.append(text)
        size += len(text) + 1
        i += 1
        if i % len(session) == 0:
            session = c.turns[rng.randrange(len(c.turns))]
    return " ".join(parts)


def _chinese(rng: random.Random, c: Corpus, chars: int) -> str:
    dialogue = c.chinese[rng.randrange(len(c.chinese))]
    out = ""
    i = rng.randrange(len(dialogue))
    while len(out) < chars:
        out += dialogue[i % len(dialogue)]
        i += 1
        if i % len(dialogue) == 0:
            dialogue = c.chinese[rng.randrange(len(c.chinese))]
    return out


def _slice(rng: random.Random, c: Corpus, chars: int) -> tuple[str, int, int, str]:
    """A run of a file's lines of about ``chars``: (path, first, last, text)."""
    path, lines = c.files[rng.randrange(len(c.files))]
    first = rng.randrange(max(1, len(lines)))
    out: list[str] = []
    size = 0
    last = first
    while last < len(lines) and size < chars:
        out.append(lines[last])
        size += len(lines[last]) + 1
        last += 1
    return path, first + 1, last, "\n".join(out)


def _pasted(rng: random.Random, c: Corpus) -> str:
    """Code or a diff the person pasted."""
    if rng.random() < 0.5:
        return _slice(rng, c, _length(rng, 200, 3000))[3]
    return c.diffs[rng.randrange(len(c.diffs))][1][: _length(rng, 200, 3000)]


def _tool(rng: random.Random, c: Corpus) -> tuple[str, str, str]:
    """A tool call and its real result: (tool name, call text, result text)."""
    pick = rng.random()
    if pick < 0.45:
        path, first, last, text = _slice(rng, c, _length(rng, 150, 4000))
        return "Bash", json.dumps({"command": f"sed -n {first},{last}p {path}"}), text
    if pick < 0.7:
        path, lines = c.files[rng.randrange(len(c.files))]
        words = [w for w in " ".join(lines[:50]).split() if w.isidentifier() and len(w) > 4]
        word = words[rng.randrange(len(words))] if words else "def"
        hits = [f"{path}:{n + 1}:{line}" for n, line in enumerate(lines) if word in line]
        return "Grep", json.dumps({"pattern": word, "path": path}), "\n".join(hits[:60])
    if pick < 0.9:
        commit, diff = c.diffs[rng.randrange(len(c.diffs))]
        return (
            "Bash",
            json.dumps({"command": f"git show {commit}"}),
            diff[: _length(rng, 300, 5000)],
        )
    text = c.recorded[rng.randrange(len(c.recorded))]
    return "Read", json.dumps({"file_path": "transcript.jsonl"}), text


# --- sessions --------------------------------------------------------------------------------


def real_session(session_id: str, events: int, seed: int = 0) -> Iterator[Event]:
    """``events`` events of one agent session, in seq order from 1."""
    c = corpus()
    rng = random.Random(f"{seed}:{session_id}")
    seq = 0
    turn = 0

    def event(etype: str, text: str, **kw: Any) -> Event:
        nonlocal seq
        seq += 1
        when = START + 10 * seq
        stamp = f"{_iso(when)}"
        return Event(session_id, seq, etype, text, time=stamp, turn=turn, **kw)

    while seq < events:
        turn += 1
        if rng.random() < 0.1:
            said = _chinese(rng, c, _length(rng, 40, 600))
        else:
            said = _talk(rng, c, _length(rng, 100, 4000))
        if rng.random() < 0.25:
            said += "\n\n" + _pasted(rng, c)
        out = [event("user/message", said, role="user")]
        out.append(
            event("assistant/message", _talk(rng, c, _length(rng, 80, 2500)), source_kind="model")
        )
        for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4))):
            name, call, result = _tool(rng, c)
            call_id = f"call_{seq}"
            out.append(
                event("tool/call", call, tool_name=name, call_id=call_id, source_kind="model")
            )
            out.append(
                event("tool/result", result, tool_name=name, call_id=call_id, source_kind="tool")
            )
        if len(out) > 2:
            out.append(
                event(
                    "assistant/message", _talk(rng, c, _length(rng, 60, 1200)), source_kind="model"
                )
            )
        for e in out:
            if e.seq <= events:
                yield e


def _iso(seconds: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def real_project(
    project_sessions: int, events_each: int, seed: int = 0, prefix: str = "s"
) -> Iterator[Event]:
    """Several sessions of the same length, one after another."""
    for n in range(project_sessions):
        yield from real_session(f"{prefix}{n:03d}", events_each, seed)
