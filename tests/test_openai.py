"""OpenAI-style message lists: conversion, stable seqs, and the memory helper."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Cli
from convmem.adapters.openai import (
    MEMORY_NAME,
    MessageListParser,
    OpenAIMemory,
    is_memory_message,
    messages_to_events,
)
from convmem.capture import Event
from convmem.core.constants import BLOCK_MARKER, CONVMEM_SOURCE_KIND
from convmem.errors import EventFormatError
from convmem.retrieval import Retriever
from convmem.runtime import MemoryRuntime
from pipeline import runtime

LATENCY = "The p95 latency of the sync endpoint must stay under 200 ms at 1k rps."
SQLITE = "We decided to use SQLite for the local index."
RETRIES = "Retry failed uploads at most 3 times."

CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "developer", "content": [{"type": "text", "text": "Answer briefly."}]},
    {"role": "user", "content": LATENCY},
    {"role": "assistant", "content": "Understood."},
    {"role": "user", "content": [{"type": "text", "text": SQLITE}, {"type": "image_url"}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path": "a.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "print(1)"},
    {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot do that."}]},
    {"role": "user", "content": RETRIES},
]

CHAT_EVENTS = [
    (1, "system/message", "system", "You are a coding agent.", None, None, 0),
    (2, "system/message", "system", "Answer briefly.", None, None, 0),
    (3, "user/message", "user", LATENCY, None, None, 1),
    (4, "assistant/message", "assistant", "Understood.", None, None, 1),
    (5, "user/message", "user", SQLITE, None, None, 2),
    (6, "tool/call", "assistant", 'read({"path": "a.py"})', "read", "call_1", 2),
    (7, "tool/result", "tool", "print(1)", "read", "call_1", 2),
    (8, "assistant/message", "assistant", "I cannot do that.", None, None, 2),
    (9, "user/message", "user", RETRIES, None, None, 3),
]

RESPONSES: list[dict[str, Any]] = [
    {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "Be brief."}],
    },
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": LATENCY}]},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "function_call", "call_id": "fc_1", "name": "grep", "arguments": '{"q": "p95"}'},
    {"type": "function_call_output", "call_id": "fc_1", "output": "sync.py:12: p95"},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Found it in sync.py."}],
    },
    {"role": "user", "content": SQLITE},
]

RESPONSES_EVENTS = [
    (1, "system/message", "system", "Be brief.", None, None, 0),
    (2, "user/message", "user", LATENCY, None, None, 1),
    (3, "tool/call", "assistant", 'grep({"q": "p95"})', "grep", "fc_1", 1),
    (4, "tool/result", "tool", "sync.py:12: p95", "grep", "fc_1", 1),
    (5, "assistant/message", "assistant", "Found it in sync.py.", None, None, 1),
    (6, "user/message", "user", SQLITE, None, None, 2),
]


def shape(events: list[Event]) -> list[tuple[Any, ...]]:
    return [(e.seq, e.type, e.role, e.text, e.tool_name, e.call_id, e.turn) for e in events]


def stored(rt: MemoryRuntime, session: str) -> list[tuple[Any, ...]]:
    return [(e.seq, e.type, e.text, e.source_kind) for e in rt.store.events(session)]


@pytest.fixture
def rt(tmp_path: Path) -> MemoryRuntime:
    return runtime(tmp_path, **{"assembly.locale": "en"})


# --- conversion ---------------------------------------------------------------------------


def test_chat_completions_messages_become_events() -> None:
    events = messages_to_events("c1", CHAT)
    assert shape(events) == CHAT_EVENTS
    assert all(e.session_id == "c1" and e.source_kind is None for e in events)


def test_responses_items_become_events() -> None:
    assert shape(messages_to_events("r1", RESPONSES)) == RESPONSES_EVENTS


def test_parallel_calls_and_text_get_one_event_each() -> None:
    message = {
        "role": "assistant",
        "content": "Reading both.",
        "tool_calls": [
            {"id": "a", "function": {"name": "read", "arguments": {"path": "x"}}},
            {"id": "b", "function": {"name": "read", "arguments": '{"path": "y"}'}},
        ],
    }
    events = messages_to_events(
        "c1", [message, {"role": "tool", "tool_call_id": "b", "content": "y!"}]
    )
    assert [(e.seq, e.type, e.text, e.call_id) for e in events] == [
        (1, "assistant/message", "Reading both.", None),
        (2, "tool/call", 'read({"path": "x"})', "a"),
        (3, "tool/call", 'read({"path": "y"})', "b"),
        (4, "tool/result", "y!", "b"),
    ]
    assert events[3].tool_name == "read"


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ("hello", "must be a JSON object"),
        ({"role": "robot", "content": "hi"}, "field 'role' is 'robot'"),
        ({"role": "user", "content": 42}, "field 'content'"),
        ({"role": "assistant", "tool_calls": "x"}, "field 'tool_calls'"),
        ({"role": "tool", "tool_call_id": 7, "content": "x"}, "field 'tool_call_id'"),
    ],
)
def test_bad_messages_name_the_problem(message: Any, error: str) -> None:
    with pytest.raises(EventFormatError, match=error):
        messages_to_events("c1", [message])


def test_memory_messages_are_recognised() -> None:
    block = f"{BLOCK_MARKER} session c1\nremembered things"
    assert is_memory_message({"role": "user", "name": MEMORY_NAME, "content": "anything"})
    assert is_memory_message({"role": "user", "content": block})
    assert is_memory_message(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": block}]}
    )
    assert not is_memory_message({"role": "user", "content": "what is " + BLOCK_MARKER})
    assert not is_memory_message({"role": "tool", "tool_call_id": "x", "content": block})
    assert not is_memory_message({"type": "function_call_output", "output": block})
    events = messages_to_events("c1", [{"role": "user", "content": block}, CHAT[2]])
    assert [(e.type, e.source_kind, e.turn) for e in events] == [
        ("user/message", CONVMEM_SOURCE_KIND, 0),
        ("user/message", None, 1),
    ]


# --- recording ---------------------------------------------------------------------------


def test_growing_list_is_recorded_once(rt: MemoryRuntime) -> None:
    memory = OpenAIMemory(rt, "c1")
    inserted = [memory.record(CHAT[:n]).inserted for n in range(1, len(CHAT) + 1)]
    assert inserted == [1, 1, 1, 1, 1, 1, 1, 1, 1]
    assert memory.record(CHAT).inserted == 0
    # the same seqs a one-shot conversion gives: a resumed loop (new helper) agrees
    assert memory.record(CHAT).duplicates == 0
    assert OpenAIMemory(rt, "c1").record(CHAT).inserted == 0
    expected = [(e.seq, e.type, e.text, None) for e in messages_to_events("c1", CHAT)]
    assert stored(rt, "c1") == expected
    assert [i.content for i in rt.store.items("c1", ("active",))] == [LATENCY, SQLITE, RETRIES]


def test_trimmed_or_summarised_lists_append_only_what_is_new(rt: MemoryRuntime) -> None:
    memory = OpenAIMemory(rt, "c1")
    memory.record(CHAT)
    trimmed = [CHAT[0], *CHAT[-3:], {"role": "assistant", "content": "OK."}]
    assert memory.record(trimmed).inserted == 1
    summary = {"role": "user", "content": "Summary of earlier turns: latency and SQLite."}
    again = [CHAT[0], summary, CHAT[-1], trimmed[-1], {"role": "user", "content": "Next?"}]
    assert memory.record(again).inserted == 1
    rows = stored(rt, "c1")
    assert [r[1:3] for r in rows[-2:]] == [
        ("assistant/message", "OK."),
        ("user/message", "Next?"),
    ]
    assert [r[0] for r in rows] == list(range(1, 12))
    assert rt.store.events("c1", newest_first=True, limit=1)[0].turn == 4


def test_repeated_short_messages_are_not_lost(rt: MemoryRuntime) -> None:
    memory = OpenAIMemory(rt, "c1")
    convo = [
        {"role": "user", "content": "yes"},
        {"role": "assistant", "content": "ok"},
    ]
    memory.record(convo)
    convo += [{"role": "user", "content": "yes"}, {"role": "assistant", "content": "ok"}]
    assert memory.record(convo).inserted == 2
    assert memory.record(convo).inserted == 0
    assert len(rt.store.events("c1")) == 4


# --- the helper ---------------------------------------------------------------------------


def test_with_memory_inserts_before_the_last_user_message(rt: MemoryRuntime) -> None:
    memory = OpenAIMemory(rt, "c1")
    memory.record(CHAT)
    window = [CHAT[0], *CHAT[6:]]  # the loop trimmed its context
    before = copy.deepcopy(window)
    out = memory.with_memory(window)
    assert window == before
    assert out is not window
    assert len(out) == len(window) + 1
    block = out[-2]
    assert block["role"] == "user" and block["name"] == MEMORY_NAME
    assert block["content"].startswith(f"{BLOCK_MARKER} session c1")
    assert LATENCY in block["content"] and SQLITE in block["content"]
    assert RETRIES not in block["content"]  # it is visible in the window
    assert out[-1] == CHAT[-1] and out[:-2] == window[:-1]
    log = rt.store.latest_assembly_log("c1")
    assert log is not None and log["injected"] and log["turn"] == 3


def test_with_memory_copies_unchanged_when_nothing_to_inject(rt: MemoryRuntime) -> None:
    memory = OpenAIMemory(rt, "c1")
    before = copy.deepcopy(CHAT)
    out = memory.with_memory(CHAT)  # everything is still visible
    assert out == before and out is not CHAT
    assert all(a is not b for a, b in zip(out, CHAT, strict=True))
    assert before == CHAT


def test_with_memory_speaks_the_responses_shape(rt: MemoryRuntime) -> None:
    memory = OpenAIMemory(rt, "r1")
    memory.record(RESPONSES)
    out = memory.with_memory([RESPONSES[0], RESPONSES[-1]])
    assert out[1]["type"] == "message" and out[1]["role"] == "user"
    assert "name" not in out[1]
    [part] = out[1]["content"]
    assert part["type"] == "input_text" and part["text"].startswith(BLOCK_MARKER)
    assert LATENCY in part["text"]
    assert is_memory_message(out[1])


def test_memory_message_coming_back_is_never_user_memory(rt: MemoryRuntime) -> None:
    memory = OpenAIMemory(rt, "c1")
    memory.record(CHAT)
    window = [CHAT[0], *CHAT[6:]]
    out = memory.with_memory(window)
    block = out[-2]["content"]
    # the loop kept the returned list and sends it back: nothing new, nothing twice
    out.append({"role": "assistant", "content": "Done."})
    assert memory.record(out).inserted == 1
    out.append({"role": "user", "content": "And now?"})
    again = memory.with_memory(out)
    assert sum(1 for m in again if is_memory_message(m)) == 1
    assert block not in [e.text for e in rt.store.events("c1")]

    # a log that kept the block, ingested as a whole: stored, marked, never used
    events = messages_to_events("logged", out)
    block_seq = next(e.seq for e in events if e.text == block)
    assert rt.on_events(events).inserted == len(events)
    [row] = [e for e in rt.store.events("logged") if e.seq == block_seq]
    assert row.type == "user/message" and row.source_kind == CONVMEM_SOURCE_KIND
    items = rt.store.items("logged", ("active", "disputed", "superseded", "retracted"))
    assert [i.content for i in items] == [RETRIES]  # not LATENCY nor SQLITE from the block
    query = "p95 latency SQLite index retry uploads"
    retriever = Retriever(rt.store, rt.settings)
    ranked = retriever.rank_events("logged", retriever.signals(query), 50)
    assert ranked and block_seq not in [e.seq for e, _ in ranked]
    text = rt.pre_step("logged", [], query=query) or ""
    assert RETRIES in text and LATENCY not in text and SQLITE not in text
    assert f"[ev seq:{block_seq}]" not in text
    assert rt.latest_user_text("logged") == "And now?"


# --- ingest -------------------------------------------------------------------------------


def write_lines(path: Path, objs: list[Any]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), "utf-8")
    return path


def test_parser_numbers_lines_and_whole_lists() -> None:
    parser = MessageListParser("p1")
    per_line = [e for n, m in enumerate(CHAT, 1) for e in parser.parse_line(n, m)]
    assert shape(per_line) == CHAT_EVENTS
    snapshot = MessageListParser("p1").parse_line(1, {"messages": CHAT[:3], "session_id": "x"})
    assert [(e.session_id, e.seq) for e in snapshot] == [("x", 1), ("x", 2), ("x", 3)]
    assert shape(MessageListParser("p1").parse_line(1, {"input": RESPONSES})) == RESPONSES_EVENTS
    assert shape(MessageListParser("p1").parse_line(1, CHAT)) == CHAT_EVENTS


def test_cli_ingests_openai_files(cli: Cli, tmp_path: Path) -> None:
    lines = write_lines(tmp_path / "chat.jsonl", [*CHAT, {"role": "robot", "content": "x"}])
    result = cli("ingest", "--format", "openai", "--session", "c1", "--json", str(lines))
    assert result.code == 1, result
    report = result.json()
    assert report["inserted"] == len(CHAT_EVENTS)
    assert report["problems"] == [
        {
            "path": str(lines),
            "line": len(CHAT) + 1,
            "message": "field 'role' is 'robot'; expected system, developer, user, assistant "
            "or tool",
        }
    ]
    snapshots = write_lines(
        tmp_path / "snapshots.jsonl",
        [{"session_id": "c2", "messages": CHAT[: n + 1]} for n in range(len(CHAT))],
    )
    result = cli("ingest", "--format", "openai", "--json", str(snapshots))
    assert result.code == 0, result
    assert result.json()["inserted"] == len(CHAT_EVENTS)
    again = cli("ingest", "--format", "openai", "--json", str(snapshots))
    assert again.json()["inserted"] == 0
    again = cli("ingest", "--format", "openai", "--session", "c1", "--json", str(lines))
    assert again.json()["inserted"] == 0
    found = cli("search", "SQLite", "--session", "c2", "--json").json()
    assert [i["content"] for i in found["items"]][:1] == [SQLITE]


# --- the example --------------------------------------------------------------------------


def test_example_agent_loop_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "agent_loop.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "From my context: We decided to use SQLite for the local index." in proc.stdout
    assert "without memory it would say: I don't know" in proc.stdout
    assert BLOCK_MARKER in proc.stdout


def test_a_whole_conversation_on_one_line_is_detected(cli: Cli, tmp_path: Path) -> None:
    array = tmp_path / "array.json"
    array.write_text(json.dumps(CHAT), "utf-8")  # one line: a bare list of messages
    body = write_lines(tmp_path / "body.jsonl", [{"session_id": "b", "messages": CHAT}])
    result = cli("ingest", "--json", str(array), str(body))
    assert result.code == 0, result
    assert result.json()["inserted"] == 2 * len(CHAT_EVENTS)
    assert sorted(result.json()["sessions"]) == ["array", "b"]


def test_two_chats_filed_under_one_session_name_are_reported(cli: Cli, tmp_path: Path) -> None:
    # the session's id comes from the file name: two folders' chat.jsonl are one session
    for folder in ("d1", "d2"):
        (tmp_path / folder).mkdir()
    first = write_lines(tmp_path / "d1" / "chat.jsonl", CHAT)
    other = [{**m, "content": f"{m.get('content')} (another chat)"} for m in CHAT]
    second = write_lines(tmp_path / "d2" / "chat.jsonl", other)
    assert cli("ingest", str(first)).code == 0
    result = cli("ingest", str(second))
    assert result.code == 1
    assert "is already stored with different text; the stored one stays" in result.err
