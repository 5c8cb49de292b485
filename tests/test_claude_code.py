"""Claude Code adapter: transcript parsing, seqs and reconciliation, the hook, install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, Cli
from convmem.adapters.claude_code import (
    CURSOR_SOURCE,
    TranscriptParser,
    capture_transcript,
    is_slash_command,
)
from convmem.adapters.claude_settings import (
    HOOK_EVENTS,
    command_markdown,
    install_command,
    install_hooks,
    merge_hooks,
)
from convmem.capture import is_user_evidence
from convmem.cli.claude_cmds import cli_executable
from convmem.config import load_settings
from convmem.ingest import ingest_file
from convmem.runtime import MemoryRuntime

CC = FIXTURES / "claude_code"
REAL_SID = "3c1f9a52-7d4e-4b8a-9e21-6f0d2c8b4a17"
REAL = CC / f"{REAL_SID}.jsonl"
EDGE = CC / "9d2e4f10-1b2c-4d3e-8f40-5a6b7c8d9e0f.jsonl"
EDGE_LABELS: list[str] = json.loads((CC / "edge_labels.json").read_text())
BUDGET = "The token budget must stay under 3000 tokens at peak load."
PROMPTS = [
    BUDGET,
    "Run the test suite with bash.",
    "Now try the forbidden command.",
    "Thanks, that is all for now.",
    "What was the token budget again?",
]


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def parse_all(path: Path, session: str = "s") -> list[Any]:
    parser = TranscriptParser(session)
    return [e for n, obj in enumerate(lines_of(path), 1) for e in parser.parse_line(n, obj)]


def summary(events: list[Any]) -> list[tuple[Any, ...]]:
    return [(e.seq, e.turn, e.type, e.source_kind, e.tool_name, e.call_id) for e in events]


@pytest.fixture
def runtime(home: Path) -> Iterator[MemoryRuntime]:
    with MemoryRuntime.open(load_settings(home=home)) as rt:
        yield rt


def stored(rt: MemoryRuntime, session: str) -> list[tuple[int, str, str | None, str]]:
    return [(e.seq, e.type, e.source_kind, e.text) for e in rt.store.events(session)]


# --- classification ------------------------------------------------------------------------


def test_real_transcript_events_are_pinned() -> None:
    events = parse_all(REAL)
    assert summary(events) == [
        (1, 1, "user/message", None, None, None),
        (2, 1, "user/message", "hook-context", None, None),
        (3, 1, "assistant/message", "model", None, None),
        (4, 2, "user/message", None, None, None),
        (5, 2, "user/message", "hook-context", None, None),
        (6, 2, "tool/call", "model", "Bash", "toolu_0002"),
        (7, 2, "tool/result", "tool", "Bash", "toolu_0002"),
        (8, 2, "assistant/message", "model", None, None),
        (9, 3, "user/message", None, None, None),
        (10, 3, "user/message", "hook-context", None, None),
        (11, 3, "tool/call", "model", "Bash", "toolu_0004"),
        (12, 3, "tool/result", "tool", "Bash", "toolu_0004"),
        (13, 3, "assistant/message", "model", None, None),
        (14, 4, "user/message", None, None, None),
        (15, 4, "user/message", "hook-context", None, None),
        (16, 4, "assistant/message", "model", None, None),
        (17, 4, "compaction/start", None, None, None),
        (18, 4, "compaction/summary", "compact-summary", None, None),
        (19, 4, "compaction/end", None, None, None),
        (20, 4, "user/message", "client-meta", None, None),
        (21, 5, "command/invoke", "command", None, None),
        (22, 5, "command/output", "command", None, None),
        (23, 6, "user/message", None, None, None),
        (24, 6, "user/message", "hook-context", None, None),
        (25, 6, "assistant/message", "model", None, None),
    ]
    assert events[0].time == "2026-12-02T15:06:56.884Z"
    assert events[5].text == 'Bash({"command": "echo hello-allowed", "description": "ok"})'
    assert events[11].source_form == "error"
    assert events[11].text.startswith("PreToolUse:Bash hook error:")
    assert events[16].text == "Conversation compacted (trigger manual, tokens before 120)."
    assert events[20].text == "/compact"
    assert events[1].source_form == "UserPromptSubmit"


def test_only_typed_prompts_are_user_evidence() -> None:
    events = parse_all(REAL)
    evidence = [e.text for e in events if is_user_evidence(e.type, e.source_kind, e.text)]
    assert evidence == PROMPTS


def test_request_copies_are_never_read_as_messages() -> None:
    # api-request-blob lines carry a ``message`` with the prompt text, but no type we read.
    blobs = [o for o in lines_of(REAL) if o.get("type") == "api-request-blob"]
    assert blobs and any("message" in o for o in blobs)
    parser = TranscriptParser("s")
    assert all(parser.parse_line(1, o) == [] for o in blobs)


EDGE_EXPECTED: dict[str, list[tuple[str, str | None]]] = {
    "queue-operation": [],
    "prompt-text-blocks": [("user/message", None)],
    "api-request-blob": [],
    "hook-context-session-start": [("user/message", "hook-context")],
    "attachment-date": [],
    "assistant-thinking-text-tools": [
        ("assistant/message", "model"),
        ("tool/call", "model"),
        ("tool/call", "model"),
    ],
    "tool-results-with-reminder": [
        ("tool/result", "tool"),
        ("tool/result", "tool"),
        ("user/message", "client-meta"),
    ],
    "tool-result-denied": [("tool/result", "tool")],
    "interrupted": [("user/message", "client-meta")],
    "api-error-assistant": [("assistant/message", "client-meta")],
    "bash-input": [("command/invoke", "command")],
    "bash-output": [("command/output", "command")],
    "sidechain-prompt": [("user/message", "subagent")],
    "meta-caveat": [("user/message", "client-meta")],
    "command-invoke": [("command/invoke", "command")],
    "command-output": [("command/output", "command")],
    "stop-hook-summary": [],
    "system-other": [],
    "old-summary": [],
    "last-prompt": [],
    "cost-state": [],
    "tools-used": [],
    "mode": [],
    "atis-latch": [],
    "prompt-string": [("user/message", None)],
}


@pytest.mark.parametrize("label", EDGE_LABELS)
def test_every_line_shape_is_classified(label: str) -> None:
    lines = lines_of(EDGE)
    parser = TranscriptParser("s")
    for n, obj in enumerate(lines[: EDGE_LABELS.index(label)], 1):
        parser.parse_line(n, obj)
    events = parser.parse_line(0, lines[EDGE_LABELS.index(label)])
    assert [(e.type, e.source_kind) for e in events] == EDGE_EXPECTED[label]
    typed = label.startswith("prompt-")
    for e in events:
        assert is_user_evidence(e.type, e.source_kind, e.text) == typed, e


def test_edge_details() -> None:
    events = {(e.type, e.seq): e for e in parse_all(EDGE)}
    by_type: dict[str, list[Any]] = {}
    for e in sorted(events.values(), key=lambda e: e.seq):
        by_type.setdefault(e.type, []).append(e)
    assert by_type["user/message"][0].text == "Use PostgreSQL 16 for storage."  # image skipped
    assert "secret reasoning" not in by_type["assistant/message"][0].text
    results = by_type["tool/result"]
    assert [(r.tool_name, r.call_id) for r in results] == [
        ("Read", "toolu_a"),
        ("Read", "toolu_b"),
        (None, "toolu_c"),
    ]
    assert results[2].source_form == "error"
    assert [c.text for c in by_type["command/invoke"]] == ["ls src", "/cost"]
    assert by_type["command/output"][1].text == "Total cost: $0.0008"


def test_bad_lines_are_format_errors() -> None:
    from convmem.errors import EventFormatError

    with pytest.raises(EventFormatError):
        TranscriptParser("s").parse_line(1, ["not", "an", "object"])
    assert TranscriptParser("s").parse_line(1, {"type": "user"}) == []
    assert TranscriptParser("s").parse_line(1, {"type": "assistant", "message": None}) == []


def test_slash_commands() -> None:
    assert is_slash_command("/compact")
    assert is_slash_command("  /convmem status")
    assert not is_slash_command("/tmp/x.py is broken")
    assert not is_slash_command("Use /compact later")


# --- seqs: re-reading, reconciliation ------------------------------------------------------


def test_reparse_gives_identical_events() -> None:
    assert parse_all(REAL) == parse_all(REAL)


def _grow(path: Path, lines: list[str], upto: int) -> None:
    path.write_text("".join(line + "\n" for line in lines[:upto]), "utf-8")


def test_incremental_capture_equals_one_read_and_reingest_adds_nothing(
    runtime: MemoryRuntime, tmp_path: Path
) -> None:
    raw = REAL.read_text("utf-8").splitlines()
    transcript = tmp_path / f"{REAL_SID}.jsonl"
    for upto in (0, 3, 10, 33, 34, 61, 66, 67, 80, len(raw), len(raw)):
        _grow(transcript, raw, upto)
        capture_transcript(runtime, REAL_SID, str(transcript))
    fresh = parse_all(REAL, REAL_SID)
    assert [(s, t) for s, t, *_ in stored(runtime, REAL_SID)] == [(e.seq, e.type) for e in fresh]
    report = ingest_file(REAL, runtime.on_events, fmt="claude-code")
    assert (report.inserted, report.duplicates) == (0, len(fresh))


def test_partial_last_line_waits(runtime: MemoryRuntime, tmp_path: Path) -> None:
    raw = REAL.read_text("utf-8").splitlines()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(raw[0] + "\n" + raw[1] + "\n" + raw[2][:40], "utf-8")
    capture_transcript(runtime, "s", str(transcript))
    assert stored(runtime, "s") == []
    position, _ = runtime.store.host_cursor("s", CURSOR_SOURCE)
    assert position == len(raw[0]) + len(raw[1]) + 2
    transcript.write_text("\n".join(raw[:3]) + "\n", "utf-8")
    capture_transcript(runtime, "s", str(transcript))
    assert [t for _, t, _, _ in stored(runtime, "s")] == ["user/message"]


def test_replaced_transcript_is_read_again_without_duplicates(
    runtime: MemoryRuntime, tmp_path: Path
) -> None:
    raw = REAL.read_text("utf-8").splitlines()
    transcript = tmp_path / "t.jsonl"
    _grow(transcript, raw, len(raw))
    capture_transcript(runtime, "s", str(transcript))
    before = stored(runtime, "s")
    _grow(transcript, raw, 20)  # shorter than the cursor: a rewrite
    capture_transcript(runtime, "s", str(transcript))
    _grow(transcript, raw, len(raw))
    capture_transcript(runtime, "s", str(transcript))
    assert stored(runtime, "s") == before


def _prompt_line(raw: list[str], text: str) -> int:
    for n, line in enumerate(raw):
        obj = json.loads(line)
        if obj.get("type") == "user" and obj["message"]["content"] == text:
            return n
    raise AssertionError(text)


def test_hook_flow_reconciles_each_prompt_with_its_line(
    runtime: MemoryRuntime, tmp_path: Path
) -> None:
    """As Claude Code runs: UserPromptSubmit sees the prompt before its line exists."""
    raw = REAL.read_text("utf-8").splitlines()
    transcript = tmp_path / f"{REAL_SID}.jsonl"
    cuts = [_prompt_line(raw, p) for p in PROMPTS]
    for prompt, cut in zip(PROMPTS, cuts, strict=True):
        _grow(transcript, raw, cut)  # the queue-operation lines, not the prompt yet
        prompt_id = json.loads(raw[cut])["promptId"]
        capture_transcript(runtime, REAL_SID, str(transcript), prompt=prompt, prompt_id=prompt_id)
        assert runtime.latest_user_text(REAL_SID) == prompt
        _grow(transcript, raw, cut + 5)  # Stop / PostToolUse see the line later
        capture_transcript(runtime, REAL_SID, str(transcript))
    _grow(transcript, raw, len(raw))
    capture_transcript(runtime, REAL_SID, str(transcript))
    events = stored(runtime, REAL_SID)
    typed = [text for _, t, kind, text in events if t == "user/message" and kind is None]
    assert typed == PROMPTS  # each once
    fresh = parse_all(REAL, REAL_SID)
    assert [(s, t) for s, t, *_ in events] == [(e.seq, e.type) for e in fresh]
    _, state = runtime.store.host_cursor(REAL_SID, CURSOR_SOURCE)
    assert state["pending"] == [] and state["turn"] == 6
    assert ingest_file(REAL, runtime.on_events, fmt="claude-code").inserted == 0


def test_prompt_matched_by_text_when_no_prompt_id(runtime: MemoryRuntime, tmp_path: Path) -> None:
    raw = REAL.read_text("utf-8").splitlines()
    transcript = tmp_path / "t.jsonl"
    cut = _prompt_line(raw, PROMPTS[0])
    _grow(transcript, raw, cut)
    capture_transcript(runtime, "s", str(transcript), prompt=PROMPTS[0])
    _grow(transcript, raw, len(raw))
    capture_transcript(runtime, "s", str(transcript))
    assert [t for _, _, _, t in stored(runtime, "s")].count(PROMPTS[0]) == 1


def test_line_before_the_prompt_line_keeps_counts_equal() -> None:
    """An event line that lands between the reservation and the prompt's line."""
    parser = TranscriptParser("s")
    reserved = parser.reserve_prompt("hello there", "p1")
    other = {
        "type": "attachment",
        "attachment": {"type": "hook_additional_context", "content": ["x"]},
    }
    line = {"type": "user", "promptId": "p1", "message": {"content": "hello there"}}
    first = parser.parse_line(1, other)
    assert parser.parse_line(2, line) == []
    after = parser.parse_line(3, {"type": "assistant", "message": {"content": "ok"}})
    assert (reserved.seq, first[0].seq, after[0].seq) == (1, 2, 3)
    fresh = TranscriptParser("s")
    seqs = [e.seq for n, o in enumerate((other, line), 1) for e in fresh.parse_line(n, o)]
    assert seqs == [1, 2] and parser.state["next"] == fresh.state["next"] + 1 == 4


def test_compaction_announced_before_its_boundary() -> None:
    parser = TranscriptParser("s")
    start = parser.reserve_compaction()
    assert start is not None and start.type == "compaction/start" and start.seq == 1
    assert parser.reserve_compaction() is None  # one pending compaction at a time
    boundary = {"type": "system", "subtype": "compact_boundary", "compactMetadata": {}}
    summary_line = {"type": "user", "isCompactSummary": True, "message": {"content": "S"}}
    assert parser.parse_line(1, boundary) == []
    assert [(e.seq, e.type) for e in parser.parse_line(2, summary_line)] == [
        (2, "compaction/summary"),
        (3, "compaction/end"),
    ]


def test_a_prompt_whose_line_never_comes_is_kept_once() -> None:
    parser = TranscriptParser("s")
    a = parser.reserve_prompt("blocked by another hook", "p1")
    b = parser.reserve_prompt("second prompt", "p2")
    line = {"type": "user", "promptId": "p2", "message": {"content": "second prompt"}}
    assert parser.parse_line(1, line) == []
    nxt = parser.parse_line(2, {"type": "assistant", "message": {"content": "ok"}})
    assert (a.seq, b.seq, nxt[0].seq) == (1, 2, 3)
    assert parser.state["pending"] == []


def _last_reply_line(raw: list[str]) -> tuple[int, str]:
    for n in range(len(raw) - 1, -1, -1):
        obj = json.loads(raw[n])
        content = obj.get("message", {}).get("content") if obj.get("type") == "assistant" else None
        texts = [
            b["text"] for b in content or () if isinstance(b, dict) and b.get("type") == "text"
        ]
        if texts:
            return n, "\n".join(texts)
    raise AssertionError("no reply")


def test_a_reply_the_stop_hook_sees_before_its_line_is_stored_once(
    runtime: MemoryRuntime, tmp_path: Path
) -> None:
    """Claude Code may run the Stop hook before the reply's line is in the file."""
    raw = REAL.read_text("utf-8").splitlines()
    transcript = tmp_path / f"{REAL_SID}.jsonl"
    cut, reply = _last_reply_line(raw)
    _grow(transcript, raw, cut)
    capture_transcript(runtime, REAL_SID, str(transcript), reply=reply)
    assert stored(runtime, REAL_SID)[-1][1:] == ("assistant/message", "model", reply)
    capture_transcript(runtime, REAL_SID, str(transcript), reply=reply)  # a second Stop
    _grow(transcript, raw, len(raw))
    capture_transcript(runtime, REAL_SID, str(transcript), reply=reply)
    events = stored(runtime, REAL_SID)
    fresh = parse_all(REAL, REAL_SID)
    assert [t for *_, t in events].count(reply) == [e.text for e in fresh].count(reply) > 0
    assert [(s, t) for s, t, *_ in events] == [(e.seq, e.type) for e in fresh]
    _, state = runtime.store.host_cursor(REAL_SID, CURSOR_SOURCE)
    assert state["pending"] == []
    assert ingest_file(REAL, runtime.on_events, fmt="claude-code").inserted == 0


def test_a_reply_already_read_is_not_reserved_again() -> None:
    parser = TranscriptParser("s")
    parser.reserve_prompt("hi", "p1")
    parser.parse_line(1, {"type": "user", "promptId": "p1", "message": {"content": "hi"}})
    assert parser.parse_line(2, {"type": "assistant", "message": {"content": "Done."}})
    assert parser.reserve_reply("Done.") is None
    parser.reserve_prompt("again", "p2")  # a new turn may end with the same words
    reserved = parser.reserve_reply("Done.")
    assert reserved is not None and reserved.seq == 4 and reserved.role == "assistant"
    assert (
        parser.parse_line(3, {"type": "user", "promptId": "p2", "message": {"content": "again"}})
        == []
    )
    assert parser.parse_line(4, {"type": "assistant", "message": {"content": "Done."}}) == []
    assert parser.state["pending"] == []


def test_a_reply_repeated_after_a_stop_hooks_feedback_is_judged_again() -> None:
    """A blocked reply, the hook's feedback line, then the same words again: the second
    reply is a new one and is reserved for validation before its line is written."""
    parser = TranscriptParser("s")
    parser.reserve_prompt("fix it", "p1")
    parser.parse_line(1, {"type": "user", "promptId": "p1", "message": {"content": "fix it"}})
    first = parser.reserve_reply("Done, all tests pass.")
    assert first is not None
    assert (
        parser.parse_line(2, {"type": "assistant", "message": {"content": "Done, all tests pass."}})
        == []
    )
    feedback = {
        "type": "user",
        "isMeta": True,
        "message": {"content": "Stop hook feedback: run them"},
    }
    assert len(parser.parse_line(3, feedback)) == 1
    second = parser.reserve_reply("Done, all tests pass.")
    assert second is not None and second.seq == first.seq + 2


def test_a_reply_whose_line_comes_after_the_next_stop_is_stored_once() -> None:
    """Seen on Claude Code 2.1.328 about one run in twenty: a blocked reply's line and
    the hook's feedback are written only after the repaired reply's Stop hook ran. The
    late line settles the first reservation; it is not a new reply to judge again."""
    parser = TranscriptParser("s")
    parser.reserve_prompt("publish?", "p1")
    parser.parse_line(1, {"type": "user", "promptId": "p1", "message": {"content": "publish?"}})
    blocked = parser.reserve_reply("Just force push it.")
    repaired = parser.reserve_reply("Open a pull request.")
    assert blocked is not None and repaired is not None and repaired.seq == blocked.seq + 1
    late = {"type": "assistant", "message": {"content": "Just force push it."}}
    assert parser.parse_line(2, late) == []
    feedback = {"type": "user", "isMeta": True, "message": {"content": "Stop hook feedback: no"}}
    [event] = parser.parse_line(3, feedback)
    assert event.seq == repaired.seq + 1
    assert (
        parser.parse_line(4, {"type": "assistant", "message": {"content": "Open a pull request."}})
        == []
    )
    assert parser.state["pending"] == []


def test_a_reservation_whose_line_never_comes_is_closed_by_a_later_reply() -> None:
    parser = TranscriptParser("s")
    parser.reserve_prompt("go", "p1")
    parser.parse_line(1, {"type": "user", "promptId": "p1", "message": {"content": "go"}})
    assert parser.reserve_reply("Text the hook saw") is not None
    assert parser.reserve_reply("Done.") is not None
    # the file words the first reply differently; the second's line closes both
    assert parser.parse_line(2, {"type": "assistant", "message": {"content": "Done."}}) == []
    assert parser.state["pending"] == []
    assert [
        e.seq for e in parser.parse_line(3, {"type": "assistant", "message": {"content": "More."}})
    ] == [4]


REPEATED = "Just force push it."


def _feedback(n: int) -> dict[str, Any]:
    return {"type": "user", "isMeta": True, "message": {"content": f"Stop hook feedback {n}"}}


def _said(text: str) -> dict[str, Any]:
    return {"type": "assistant", "message": {"content": text}}


def _asked() -> TranscriptParser:
    parser = TranscriptParser("s")
    parser.reserve_prompt("publish?", "p1")
    parser.parse_line(1, {"type": "user", "promptId": "p1", "message": {"content": "publish?"}})
    return parser


def test_a_blocked_reply_repeated_word_for_word_is_a_new_reply() -> None:
    """``stop_hook_active``: the model answers a Stop hook's feedback. The same words
    again are a new reply for validation to judge, whether or not the first reply's
    line is in the file yet; its line and the repeat's each settle one reservation."""
    parser = _asked()
    first = parser.reserve_reply(REPEATED)
    again = parser.reserve_reply(REPEATED, continued=True)  # no line written yet
    assert first is not None and again is not None and again.seq == first.seq + 1
    assert parser.parse_line(2, _said(REPEATED)) == []
    assert [e.type for e in parser.parse_line(3, _feedback(1))] == ["user/message"]
    assert parser.parse_line(4, _said(REPEATED)) == []
    assert parser.state["pending"] == []
    # the first reply's line read, its feedback not yet: the repeat is new
    parser = _asked()
    assert parser.reserve_reply(REPEATED) is not None
    assert parser.parse_line(2, _said(REPEATED)) == []
    assert parser.reserve_reply(REPEATED, continued=True) is not None
    # seen on 2.1.328: even the prompt's line came only after the first Stop
    parser = TranscriptParser("s")
    parser.reserve_prompt("publish?", "p1")
    assert parser.reserve_reply(REPEATED) is not None
    prompt = {"type": "user", "promptId": "p1", "message": {"content": "publish?"}}
    assert parser.parse_line(1, prompt) == parser.parse_line(2, _said(REPEATED)) == []
    assert parser.reserve_reply(REPEATED, continued=True) is not None


def test_a_repeat_whose_line_was_read_after_the_feedback_is_not_stored_twice() -> None:
    parser = _asked()
    assert parser.reserve_reply(REPEATED) is not None
    parser.parse_line(2, _said(REPEATED))
    parser.parse_line(3, _feedback(1))
    [repeat] = parser.parse_line(4, _said(REPEATED))  # the file had it: read as new
    assert repeat.type == "assistant/message"
    # the next hook process reads on from the stored state
    later = TranscriptParser("s", json.loads(json.dumps(parser.state)))
    assert later.reserve_reply(REPEATED, continued=True) is None
    assert parser.reserve_reply(REPEATED, continued=True) is None


def test_a_second_stop_for_the_same_reply_stores_it_once() -> None:
    parser = _asked()
    assert parser.reserve_reply(REPEATED) is not None
    assert parser.reserve_reply(REPEATED) is None  # not continued: the same reply


# --- the hook, through a real process -------------------------------------------------------


def hook(
    payload: Any, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "convmem", "hook", "claude-code", *args],
        input=text,
        capture_output=True,
        text=True,
        env={**os.environ, "CONVMEM_HOME": str(home), **(env or {})},
        timeout=120,
    )


def payload(event: str, transcript: Path, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": REAL_SID,
        "transcript_path": str(transcript),
        "cwd": str(transcript.parent),
        "hook_event_name": event,
        **extra,
    }


def db_events(home: Path) -> list[tuple[int, str, str | None, str]]:
    with MemoryRuntime.open(load_settings(home=home)) as rt:
        return stored(rt, REAL_SID)


def test_hook_session_through_subprocesses(home: Path, tmp_path: Path) -> None:
    raw = REAL.read_text("utf-8").splitlines()
    transcript = tmp_path / f"{REAL_SID}.jsonl"
    start = hook(payload("SessionStart", transcript, source="startup"), home)
    assert (start.returncode, start.stdout, start.stderr) == (0, "", "")
    cut = _prompt_line(raw, BUDGET)
    _grow(transcript, raw, cut)
    ups = hook(payload("UserPromptSubmit", transcript, prompt=BUDGET, prompt_id="x"), home)
    assert ups.returncode == 0 and ups.stderr == ""
    compact_at = next(n for n, line in enumerate(raw) if '"compact_boundary"' in line)
    _grow(transcript, raw, compact_at)
    for event in ("PostToolUse", "Stop", "SessionEnd", "PreCompact"):
        assert hook(payload(event, transcript), home).stdout == ""
    # SessionStart(compact) fires before the boundary line is written; it re-injects
    out = hook(payload("SessionStart", transcript, source="compact"), home)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    assert "[convmem memory]" in answer["additionalContext"]
    assert BUDGET in answer["additionalContext"]
    last = _prompt_line(raw, PROMPTS[-1])
    _grow(transcript, raw, last)
    out = hook(payload("UserPromptSubmit", transcript, prompt=PROMPTS[-1]), home)
    answer = json.loads(out.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit"
    assert BUDGET in answer["additionalContext"]
    _grow(transcript, raw, len(raw))
    assert hook(payload("Stop", transcript), home).stdout == ""
    events = db_events(home)
    assert [t for _, t, k, _ in events if t == "compaction/start"] == ["compaction/start"]
    typed = [text for _, t, kind, text in events if t == "user/message" and kind is None]
    assert typed == PROMPTS
    assert [s for s, *_ in events] == list(range(1, len(parse_all(REAL)) + 1))
    assert not (home / "convmem.log").exists()


def test_hook_pre_tool_use_denies_by_precondition(home: Path, tmp_path: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        '[validation]\npreconditions = [{must_exist = "src/**", tools = ["Write", "Edit"]}]\n'
    )
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "there.py").write_text("x = 1\n")
    base = payload("PreToolUse", project / "t.jsonl", tool_name="Edit", tool_use_id="toolu_1")
    missing = {"file_path": str(project / "src" / "missing.py"), "old_string": "a"}
    denied = hook({**base, "tool_input": missing}, home)
    assert denied.returncode == 0 and denied.stderr == ""
    out = json.loads(denied.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    assert "src/missing.py" in out["permissionDecisionReason"]
    present = {"file_path": str(project / "src" / "there.py"), "old_string": "x"}
    assert hook({**base, "tool_input": present}, home).stdout == ""
    other_tool = {**base, "tool_name": "Read", "tool_input": missing}
    assert hook(other_tool, home).stdout == ""


@pytest.mark.parametrize(
    "stdin",
    ["this is not json", "[1, 2]", '{"hook_event_name": "UserPromptSubmit"}'],
    ids=["garbage", "not-an-object", "no-session"],
)
def test_hook_errors_exit_0_silently_and_are_logged(home: Path, stdin: str) -> None:
    result = hook(stdin, home)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    log = (home / "convmem.log").read_text("utf-8").splitlines()
    assert "hook claude-code" in log[0] and "Error" in log[0]
    assert any(line.startswith("Traceback") for line in log)


def test_hook_unknown_event_is_ignored(home: Path, tmp_path: Path) -> None:
    result = hook(payload("Notification", tmp_path / "t.jsonl", message="hi"), home)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (home / "convmem.log").exists()


def test_hook_home_option_after_the_host(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    transcript = tmp_path / "t.jsonl"
    result = hook(payload("SessionStart", transcript), home, "--home", str(other))
    assert result.returncode == 0 and result.stderr == ""
    assert (other / "memory.sqlite").exists() and not (home / "memory.sqlite").exists()


def test_hook_help_and_usage(cli: Cli) -> None:
    helped = cli("hook", "claude-code", "--help")
    assert helped.code == 0 and "JSON payload on stdin" in helped.out
    bad = cli("hook", "claude-code", "--bogus", input="{}")
    assert bad.code == 1 and "unexpected argument" in bad.err
    unknown = cli("hook", "nope", input="{}")
    assert unknown.code == 1 and "unknown host" in unknown.err


def test_hook_path_does_not_import_click_or_heavy_libraries(home: Path, tmp_path: Path) -> None:
    raw = REAL.read_text("utf-8").splitlines()
    transcript = tmp_path / "t.jsonl"
    _grow(transcript, raw, 40)
    code = (
        "import io, json, sys\n"
        "from convmem.adapters.hook_entry import run_hook\n"
        f"sys.stdin = io.StringIO({json.dumps(json.dumps(payload('UserPromptSubmit', transcript, prompt=BUDGET)))})\n"  # noqa: E501
        "rc = run_hook(['claude-code'])\n"
        "heavy = sorted(m for m in ('click', 'pydantic', 'yaml') if m in sys.modules)\n"
        "print(json.dumps({'rc': rc, 'heavy': heavy}), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "CONVMEM_HOME": str(home)},
        timeout=120,
    )
    assert json.loads(result.stderr.strip().splitlines()[-1]) == {"rc": 0, "heavy": []}
    assert not (home / "convmem.log").exists()


# --- install ----------------------------------------------------------------------------------

OTHER_HOOK = {"type": "command", "command": "/usr/local/bin/lint-on-save"}


def existing_settings() -> dict[str, Any]:
    return {
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [OTHER_HOOK]}],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        },
        "zUnknownKey": {"kept": True},
    }


def test_merge_is_idempotent_and_uninstall_removes_only_ours() -> None:
    settings = existing_settings()
    assert merge_hooks(settings, "/venv/bin/convmem hook claude-code")
    hooks = settings["hooks"]
    assert list(hooks) == [
        "PreToolUse",
        "Notification",
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PreCompact",
        "Stop",
        "SessionEnd",
    ]
    assert hooks["PreToolUse"][0] == {"matcher": "Bash", "hooks": [OTHER_HOOK]}
    ours = {"type": "command", "command": "/venv/bin/convmem hook claude-code"}
    assert hooks["PreToolUse"][1] == {"matcher": "*", "hooks": [ours]}
    assert hooks["UserPromptSubmit"] == [{"hooks": [ours]}]
    assert not merge_hooks(settings, "/venv/bin/convmem hook claude-code")
    # a new path replaces the old entry instead of adding a second one
    assert merge_hooks(settings, "/new/bin/convmem hook claude-code")
    assert len(settings["hooks"]["Stop"]) == 1
    assert merge_hooks(settings, "", uninstall=True)
    assert settings == existing_settings()
    assert not merge_hooks(settings, "", uninstall=True)


def test_our_hook_inside_a_shared_group_is_removed_alone() -> None:
    ours = {"type": "command", "command": "convmem hook claude-code"}
    settings = {"hooks": {"Stop": [{"hooks": [OTHER_HOOK, ours]}]}}
    merge_hooks(settings, "convmem hook claude-code", uninstall=True)
    assert settings == {"hooks": {"Stop": [{"hooks": [OTHER_HOOK]}]}}


def test_install_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(existing_settings(), indent=2) + "\n")
    original = path.read_bytes()
    assert install_hooks(path, "convmem hook claude-code")
    once = path.read_bytes()
    assert not install_hooks(path, "convmem hook claude-code")
    assert path.read_bytes() == once
    assert install_hooks(path, "convmem hook claude-code", uninstall=True)
    assert path.read_bytes() == original
    assert not install_hooks(tmp_path / "absent.json", "x", uninstall=True)


def test_install_refuses_a_broken_settings_file(tmp_path: Path) -> None:
    from convmem.errors import ConvmemError

    path = tmp_path / "settings.json"
    path.write_text("{ not json")
    with pytest.raises(ConvmemError, match="cannot read"):
        install_hooks(path, "convmem hook claude-code")
    assert path.read_text() == "{ not json"


def test_install_command(cli: Cli, tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps(existing_settings(), indent=2) + "\n")
    shared = project / ".claude" / "settings.json"
    first = cli("install", "claude-code", "--project", str(project))
    assert first.code == 0 and "installed" in first.out, first
    assert str(local) in first.out and not shared.exists()  # the team's file is untouched
    data = json.loads(local.read_text())
    command = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == "convmem-hook claude-code"  # by name: survives a moved install
    slash = (project / ".claude" / "commands" / "convmem.md").read_text()
    assert "!`convmem explain --session" in slash
    assert "Bash(convmem status:*)" in slash
    assert data["zUnknownKey"] == {"kept": True}
    again = cli("install", "claude-code", "--project", str(project))
    assert again.code == 0 and "nothing changed" in again.out
    with_home = cli("--home", str(home), "install", "claude-code", "--project", str(project))
    assert with_home.code == 0
    data = json.loads(local.read_text())
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == (
        f"convmem-hook claude-code --home {home.resolve()}"
    )
    custom = cli(
        "install", "claude-code", "--project", str(project), "--command", "cm hook claude-code"
    )
    assert custom.code == 0
    assert "'cm' is not on PATH" in custom.err and "pipx install" in custom.err
    assert json.loads(local.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"] == (
        "cm hook claude-code"
    )
    slash_file = project / ".claude" / "commands" / "convmem.md"
    assert "!`cm status --session ${CLAUDE_SESSION_ID}`" in slash_file.read_text()
    # the committed file too: each event would run twice, and both installs say so
    team = cli("install", "claude-code", "--project", str(project), "--shared")
    assert team.code == 0 and str(shared) in team.out
    assert "run twice" in team.err and "--uninstall" in team.err
    assert json.loads(shared.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"] == (
        "convmem-hook claude-code"
    )
    assert "run twice" in cli("install", "claude-code", "--project", str(project)).err
    assert cli("install", "claude-code", "--project", str(project), "--shared", "--uninstall")
    assert not shared.exists() or "hooks" not in json.loads(shared.read_text())
    removed = cli("install", "claude-code", "--project", str(project), "--uninstall")
    assert removed.code == 0 and "removed" in removed.out
    assert json.loads(local.read_text()) == existing_settings()
    assert not slash_file.exists()
    both = cli("install", "claude-code", "--project", str(project), "--user")
    assert both.code != 0 and "not both" in both.err


def test_install_for_the_user(cli: Cli, tmp_path: Path) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    done = cli("install", "claude-code", "--user", env={"HOME": str(user_home)})
    assert done.code == 0, done
    data = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert len(data["hooks"]) == len(HOOK_EVENTS)


def test_plugin_layout_is_valid() -> None:
    from importlib.resources import files

    root = files("convmem.adapters").joinpath("claude_plugin")
    manifest = json.loads(root.joinpath(".claude-plugin/plugin.json").read_text())
    assert manifest["name"] == "convmem"
    hooks = json.loads(root.joinpath("hooks/hooks.json").read_text())["hooks"]
    assert list(hooks) == [event for event, _ in HOOK_EVENTS]
    for groups in hooks.values():
        assert groups[0]["hooks"][0]["command"] == "convmem-hook claude-code"
    command = root.joinpath("commands/convmem.md").read_text()
    assert command.startswith("---\n") and "convmem explain" in command


@pytest.mark.parametrize(
    ("command", "executable"),
    [
        ("convmem-hook claude-code", "convmem"),
        ("convmem-hook claude-code --home /h", "convmem"),
        ("/opt/venv/bin/convmem-hook claude-code", "/opt/venv/bin/convmem"),
        ("'/my tools/convmem-hook' claude-code", "'/my tools/convmem'"),
        ("/venv/bin/convmem hook claude-code --home /h", "/venv/bin/convmem"),
        ("python -m convmem hook claude-code", "python -m convmem"),
    ],
)
def test_the_slash_command_calls_the_hooks_convmem(command: str, executable: str) -> None:
    assert cli_executable(command) == executable


def test_a_hook_command_with_unbalanced_quotes_is_refused(cli: Cli, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    bad = cli(
        "install", "claude-code", "--project", str(project), "--command", "'cm hook claude-code"
    )
    assert bad.code == 2 and "--command" in bad.err and "quotation" in bad.err, bad
    assert "Traceback" not in bad.err and not (project / ".claude").exists()


def test_slash_command_file_belongs_to_its_author(tmp_path: Path) -> None:
    path = tmp_path / "commands" / "convmem.md"
    text = command_markdown("/opt/bin/convmem")
    assert install_command(path, text)
    assert not install_command(path, text)
    assert "!`/opt/bin/convmem status" in path.read_text()
    path.write_text("my own /convmem command\n")
    assert not install_command(path, text)
    assert not install_command(path, text, uninstall=True)
    assert path.read_text() == "my own /convmem command\n"


def test_hook_skips_its_own_slash_command(home: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    _grow(transcript, REAL.read_text("utf-8").splitlines(), 30)
    first = hook(payload("UserPromptSubmit", transcript, prompt=BUDGET), home)
    assert first.returncode == 0 and first.stderr == ""
    own = hook(payload("UserPromptSubmit", transcript, prompt="/convmem:convmem explain"), home)
    assert (own.returncode, own.stdout, own.stderr) == (0, "", "")
    with MemoryRuntime.open(load_settings(home=home)) as rt:
        log = rt.store.latest_assembly_log(REAL_SID)
        assert log is not None and log["query"] == BUDGET  # explain shows the real prompt
        texts = [t for _, _, _, t in stored(rt, REAL_SID)]
    assert "/convmem:convmem explain" not in texts  # the transcript records the command


def test_ingest_detects_transcripts(cli: Cli) -> None:
    first = cli("ingest", "--json", str(REAL), str(EDGE))
    assert first.code == 0, first
    report = first.json()
    assert report["sessions"] == sorted([REAL_SID, EDGE.stem])
    assert report["inserted"] == len(parse_all(REAL)) + len(parse_all(EDGE))
    assert report["problems"] == []
    # piped, the transcript is the session its lines name: nothing new goes in
    piped = cli("ingest", "--json", "-", input=REAL.read_text("utf-8"))
    assert piped.code == 0, piped
    assert (piped.json()["sessions"], piped.json()["inserted"]) == ([REAL_SID], 0)
    again = cli("ingest", "--json", str(REAL), str(EDGE)).json()
    assert again["inserted"] == 0 and again["duplicates"] == report["inserted"]
