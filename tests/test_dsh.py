"""DSH adapter: session-log parsing, ingest, the plugin server, install, and the plugin file.

The fixture ``fixtures/dsh/session.v4.jsonl`` is a real DSH 0.2.1 session log (eight
turns: a constraint, small talk, a long reply, a forced compaction, a denied ``write``)
with large fields trimmed, plus a ``/memory`` command pair. The server and the plugin
run as real processes: ``python -m convmem serve dsh`` and ``node`` with a stand-in
DSH context (``fixtures/dsh/plugin_harness.mjs``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
import zstandard

from conftest import Cli, unavailable
from convmem.adapters.dsh import MAPPED_TYPES, SessionLogParser, read_complete_lines
from convmem.capture import Event, is_generated, is_user_evidence
from convmem.cli.dsh_cmds import _Loader, plugin_path
from convmem.config import load_settings
from convmem.core.constants import BLOCK_MARKER
from convmem.errors import EventFormatError
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime

FIX = Path(__file__).resolve().parent / "fixtures" / "dsh"
LOG = FIX / "session.v4.jsonl"
HARNESS = FIX / "plugin_harness.mjs"
SESSION = "session-0a1b2c3d4e5f40718293a4b5c6d7e8f9"
PROMPTS = [
    "The token budget must stay under 3000 tokens at peak load.",
    "Let us talk about the cache layer.",
    "Any thoughts on retries?",
    "And logging?",
    "OK, noted.",
    "Please write the long report now.",
    "What is the token budget at peak load?",
    "Create src/new_module.py with a stub.",
]
PRECONDITION_TOML = '[validation]\npreconditions = [{must_exist = "src/**", tools = ["write"]}]\n'


def log_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LOG.read_text("utf-8").splitlines()]


def parse_all(lines: list[dict[str, Any]], session: str | None = None) -> list[Event]:
    parser = SessionLogParser(session)
    return [e for n, obj in enumerate(lines, 1) for e in parser.parse_line(n, obj)]


def write_zstd(path: Path, lines: list[dict[str, Any]], frames: int = 4, mode: str = "wb") -> Path:
    """Write lines the way DSH does: several independent zstd frames, appended."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cctx = zstandard.ZstdCompressor()
    size = max(1, len(lines) // frames)
    with path.open(mode) as fh:
        for start in range(0, len(lines), size):
            chunk = "".join(json.dumps(o) + "\n" for o in lines[start : start + size])
            fh.write(cctx.compress(chunk.encode("utf-8")))
    return path


# --------------------------------------------------------------------------- parser
def test_parser_maps_a_real_session_log() -> None:
    events = parse_all(log_lines())
    assert {e.session_id for e in events} == {SESSION}
    assert Counter(e.type for e in events) == {
        "user/message": 16,
        "assistant/message": 9,
        "system/message": 1,
        "tool/call": 1,
        "tool/result": 1,
        "compaction/start": 4,
        "compaction/summary": 1,
        "compaction/end": 4,
        "command/invoke": 1,
        "command/output": 1,
    }
    typed = [e.text for e in events if is_user_evidence(e.type, e.source_kind, e.text)]
    assert typed == PROMPTS
    by_seq = {e.seq: e for e in events}
    assert by_seq[8].time == "2026-12-02T15:19:37.630Z"
    assert (by_seq[8].turn, by_seq[8].step) == (1, 1)  # from the turn/step markers
    assert by_seq[7].source_kind == "system-prompt"
    assert (by_seq[9].source_kind, by_seq[9].source_form) == ("runtime-context", "snapshot")


def test_generated_messages_never_count_as_user_words() -> None:
    events = parse_all(log_lines())
    kinds = Counter(e.source_kind for e in events if e.type == "user/message")
    assert kinds == {"user": 8, "convmem": 5, "runtime-context": 2, "compact-checkpoint": 1}
    for event in events:
        if event.type == "user/message" and event.source_kind != "user":
            assert is_generated(event.source_kind, event.text), event
            assert not is_user_evidence(event.type, event.source_kind, event.text)
    blocks = [e for e in events if e.source_kind == "convmem"]
    assert all(e.text.startswith(BLOCK_MARKER) for e in blocks)
    checkpoint = next(e for e in events if e.source_kind == "compact-checkpoint")
    assert "<compacted-summary>" in checkpoint.text


def test_tool_calls_results_compaction_and_commands() -> None:
    by_seq = {e.seq: e for e in parse_all(log_lines())}
    call, result, reply = by_seq[96], by_seq[97], by_seq[95]
    assert reply.text == 'write({"file_path": "src/new_module.py", "content": "x = 1\\n"})'
    assert (call.type, call.tool_name, call.call_id, call.turn, call.step) == (
        "tool/call",
        "write",
        "toolu_0011",
        8,
        1,
    )
    assert call.text == reply.text
    assert (result.type, result.role, result.source_kind, result.source_form) == (
        "tool/result",
        "tool",
        "tool",
        "error",
    )
    assert (result.tool_name, result.call_id) == ("write", "toolu_0011")
    assert result.text.startswith("Error: convmem precondition: write on")
    assert by_seq[70].type == "compaction/summary"
    assert "Scripted summary" in by_seq[70].text
    assert (by_seq[68].type, by_seq[68].text, by_seq[72].text) == ("compaction/start", "", "")
    assert by_seq[75].text.startswith("compaction failed: summary is not smaller")
    assert (by_seq[107].type, by_seq[107].text, by_seq[107].call_id) == (
        "command/invoke",
        "/memory status",
        "cmd-1",
    )
    assert (by_seq[108].type, by_seq[108].source_form) == ("command/output", "success")


def test_bookkeeping_lines_are_ignored() -> None:
    parser = SessionLogParser("s")
    for etype in ("turn/start", "step/start", "request/header", "session/title", "job/settled"):
        assert parser.parse_line(1, {"type": etype, "seq": 1, "time": 1, "data": {}}) == []
    assert set(MAPPED_TYPES) >= {"user/message", "tool/result", "compaction/summary"}


@pytest.mark.parametrize(
    ("data", "kind", "form", "text"),
    [
        # the v4 log shape: message fields directly in data
        (
            {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}},
            "user",
            None,
            "hi",
        ),
        # wrapped in data.message, source inside the message
        (
            {"message": {"content": "hi", "source": {"kind": "steer", "form": "f"}}},
            "steer",
            "f",
            "hi",
        ),
        # wrapped, source beside the message
        (
            {"message": {"content": "hi"}, "source": {"kind": "time-context"}},
            "time-context",
            None,
            "hi",
        ),
        # no source at all: the person typed it
        (
            {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            None,
            None,
            "a\nb",
        ),
    ],
)
def test_user_message_shapes(
    data: dict[str, Any], kind: str | None, form: str | None, text: str
) -> None:
    [event] = SessionLogParser("s").parse_line(2, {"type": "user/message", "seq": 5, "data": data})
    assert (event.source_kind, event.source_form, event.text, event.role) == (
        kind,
        form,
        text,
        "user",
    )


def test_tool_call_arguments_object_and_results_without_a_call() -> None:
    parser = SessionLogParser("s")
    [call] = parser.parse_record(
        {"type": "tool/call", "seq": 1, "data": {"name": "bash", "arguments": {"command": "ls"}}}
    )
    assert call.text == 'bash({"command": "ls"})'
    [res] = parser.parse_record(
        {"type": "tool/result", "seq": 2, "data": {"message": {"toolCallId": "x", "content": "ok"}}}
    )
    assert (res.tool_name, res.call_id, res.source_form, res.text) == (None, "x", None, "ok")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ([1, 2], "not a JSON object"),
        ({"type": 5, "seq": 1}, "'type' must be a string"),
        ({"type": "user/message", "seq": -1, "data": {}}, "'seq' must be a whole number"),
        ({"type": "user/message", "seq": True, "data": {}}, "'seq' must be a whole number"),
        ({"type": "user/message", "seq": 1, "data": "x"}, "'data' must be an object"),
        ({"type": "user/message", "seq": 1, "data": {"content": 5}}, "'content' must be"),
    ],
)
def test_bad_lines_raise_a_named_error(line: Any, message: str) -> None:
    with pytest.raises(EventFormatError, match=message):
        SessionLogParser("s").parse_line(3, line)


def test_session_header_is_needed_unless_a_session_is_given() -> None:
    line = {"type": "user/message", "seq": 1, "data": {"content": "x"}}
    with pytest.raises(EventFormatError, match="no session header"):
        SessionLogParser().parse_line(1, line)
    assert SessionLogParser().parse_line(1, {"type": "turn/start", "seq": 0, "data": {}}) == []
    header = {"type": "session", "version": 4, "id": "from-header", "cwd": "/p"}
    parser = SessionLogParser("given")
    assert parser.parse_line(1, header) == []
    assert parser.parse_line(2, line)[0].session_id == "given"
    assert parser.cwd == "/p"
    with pytest.raises(EventFormatError, match="no string 'id'"):
        SessionLogParser().parse_line(1, {"type": "session", "version": 4})


def test_read_complete_lines_leaves_an_unfinished_tail(tmp_path: Path) -> None:
    path = write_zstd(tmp_path / "session.v4.jsonl.zstd", log_lines()[:10], frames=2)
    lines, end = read_complete_lines(path, 0)
    assert len(lines) == 10
    # DSH is mid-way through a frame: a cut-off frame must not break the reader
    frame = zstandard.ZstdCompressor().compress(b'{"type":"turn/start","seq":99}\n' * 50)
    with path.open("ab") as fh:
        fh.write(frame[: len(frame) // 2])
    more, end2 = read_complete_lines(path, end)
    assert end2 >= end
    assert all(json.loads(line)["seq"] == 99 for line in more)


# --------------------------------------------------------------------------- ingest (CLI)
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "zstd"])
def test_ingest_a_session_log(cli: Cli, home: Path, tmp_path: Path, compressed: bool) -> None:
    if compressed:
        path = write_zstd(tmp_path / "session.v4.jsonl.zstd", log_lines())
    else:
        path = tmp_path / "session.v4.jsonl"
        shutil.copyfile(LOG, path)
    first = cli("ingest", str(path), "--json")
    assert first.code == 0, first
    report = first.json()
    assert (report["inserted"], report["duplicates"], report["sessions"]) == (39, 0, [SESSION])
    again = cli("ingest", str(path), "--json")
    assert (again.json()["inserted"], again.json()["duplicates"]) == (0, 39)
    store = MemoryStore.open(str(home / "memory.sqlite"))
    try:
        items = store.items(SESSION)
        sources = {ref for item in items for ref in item.source_refs}
        # memory only from what the person typed (seqs of the eight prompts)
        prompt_seqs = {8, 21, 30, 40, 50, 59, 77, 92}
        assert sources and {int(ref.split(":")[1]) for ref in sources} <= prompt_seqs
        assert any("3000" in item.content for item in items)
    finally:
        store.close()


def test_ingest_reports_bad_lines_and_keeps_the_rest(cli: Cli, tmp_path: Path) -> None:
    lines = log_lines()
    lines.insert(20, {"type": "user/message", "seq": "twenty", "data": {}})
    path = tmp_path / "session.v4.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), "utf-8")
    result = cli("ingest", str(path), "--json")
    assert result.code == 1
    report = result.json()
    assert report["inserted"] == 39
    [problem] = report["problems"]
    assert problem["line"] == 21 and "'seq'" in problem["message"]


# --------------------------------------------------------------------------- serve (subprocess)
class Server:
    """``python -m convmem serve dsh`` with helpers to send lines and read replies."""

    def __init__(self, home: Path, dsh_home: Path | None = None) -> None:
        env = {**os.environ, "CONVMEM_HOME": str(home)}
        env.pop("DSH_HOME", None)
        if dsh_home is not None:
            env["DSH_HOME"] = str(dsh_home)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "convmem", "serve", "dsh"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self._watchdog = threading.Timer(120, self.proc.kill)
        self._watchdog.start()
        self.next_id = 1

    def send_raw(self, raw: bytes) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"server died: {self.close()}"
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        reply = self.send_raw(json.dumps({"id": self.next_id, "op": op, **fields}).encode())
        assert reply["id"] == self.next_id
        return reply

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin and self.proc.stderr
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        self._watchdog.cancel()
        return code, self.proc.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def server(home: Path) -> Iterator[Server]:
    srv = Server(home)
    yield srv
    if srv.proc.poll() is None:
        srv.close()


def events_of(lines: list[dict[str, Any]], until: int) -> list[dict[str, Any]]:
    return [
        {"session_id": SESSION, "event": o}
        for o in lines
        if isinstance(o.get("seq"), int) and o["seq"] <= until
    ]


def test_serve_answers_every_line_and_survives_bad_ones(server: Server) -> None:
    hello = server.ask("hello")
    assert hello["ok"] and hello["protocol"] == 1 and hello["pre_execute"] is False
    bad = [
        (b"this is not json", "not valid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b"\xff\xfe{", "not valid JSON"),
        (b'{"id": 7, "op": "frobnicate"}', "unknown op 'frobnicate'"),
        (b'{"id": 8, "op": "pre_step"}', "'session_id'"),
        (b'{"id": 9, "op": "events", "events": 3}', "'events' must be a list"),
        (b'{"id": 10, "op": "pre_execute", "session_id": "s"}', "'tool' must be a string"),
    ]
    for raw, message in bad:
        reply = server.send_raw(raw)
        assert reply["ok"] is False and message in reply["error"], reply
    assert server.send_raw(b'{"id": 7, "op": "frobnicate"}')["id"] == 7
    assert server.ask("hello")["ok"]  # still alive
    code, err = server.close()
    assert code == 0 and "Traceback" not in err


def test_serve_pre_step_brings_the_constraint_back_after_compaction(server: Server) -> None:
    lines = log_lines()
    start = server.ask("session_start", session_id=SESSION, source="startup", cwd="/home/dev/proj")
    assert start["ok"] and start["inserted"] == 0  # no DSH_HOME: nothing to re-read
    sent = server.ask("events", events=events_of(lines, 62))  # turns 1-6, before compaction
    assert sent["ok"] and sent["inserted"] > 0 and sent["skipped"] == 0
    before = server.ask(
        "pre_step", session_id=SESSION, turn=7, step=1, query="What is the token budget?"
    )
    assert before["ok"] and "3000" not in (before["text"] or "")  # still visible to the model
    assert server.ask("events", events=events_of(lines, 76)[len(events_of(lines, 62)) :])["ok"]
    after = server.ask(
        "pre_step", session_id=SESSION, turn=7, step=1, query="What is the token budget?"
    )
    assert after["ok"] and after["text"].startswith(BLOCK_MARKER)
    assert "3000 tokens at peak load" in after["text"]
    assert isinstance(after["ms"], float)
    # the same events again change nothing
    assert server.ask("events", events=events_of(lines, 76))["inserted"] == 0
    # one event at a time works too
    single = server.ask("event", session_id=SESSION, event=lines[-1])
    assert single["ok"] and single["inserted"] == 1


def test_a_correction_in_the_steps_own_prompt_counts_before_dsh_stores_it(
    server: Server, home: Path
) -> None:
    """DSH commits a step's prompt after the pre-step: the block must still apply it,
    and nothing of the prompt may be stored until DSH delivers it itself."""
    lines = log_lines()
    assert server.ask("events", events=events_of(lines, 76))["ok"]  # through the compaction
    first = server.ask("pre_step", session_id=SESSION, turn=7, step=1, query="token budget?")
    assert "3000 tokens at peak load" in first["text"]
    last = max(o["seq"] for o in lines if isinstance(o.get("seq"), int) and o["seq"] <= 76)
    first_block = {
        "type": "user/message",
        "seq": last + 1,
        "time": 0,
        "data": {"role": "user", "content": first["text"], "source": {"kind": "convmem"}},
    }
    assert server.ask("events", events=[{"session_id": SESSION, "event": first_block}])["ok"]
    correction = "Actually, make the token budget 2000 tokens, not 3000."
    block = server.ask("pre_step", session_id=SESSION, turn=8, step=1, query=correction)
    text = block["text"]
    current, notice = text.split("## Memory: notices")
    assert "Memory update" in current
    assert "2000 tokens, not 3000. [ev this prompt]" in current
    assert "3000 tokens at peak load" not in current  # shown only as replaced
    assert "superseded" in notice and "3000 tokens at peak load" in notice
    with MemoryRuntime.open(load_settings(home=home, env={})) as rt:
        assert correction not in [e.text for e in rt.store.events(SESSION)]
        assert not [i for i in rt.store.items(SESSION) if "2000" in i.content]


def test_serve_commands(server: Server) -> None:
    assert server.ask("events", events=events_of(log_lines(), 200))["ok"]
    status = server.ask("command", session_id=SESSION, args="status")
    assert status["kind"] == "success" and f"session {SESSION}" in status["text"]
    found = server.ask("command", session_id=SESSION, args="search token budget")
    assert found["kind"] == "success" and "3000" in found["text"]
    item_id = found["text"].split()[0]
    inspected = server.ask("command", session_id=SESSION, args=f"inspect {item_id}")
    assert inspected["kind"] == "success" and "[ev seq:8]" in inspected["text"]
    assert server.ask("command", session_id=SESSION, args="inspect nope")["kind"] == "error"
    assert "no memory block" in server.ask("command", session_id=SESSION, args="explain")["text"]
    server.ask("pre_step", session_id=SESSION, turn=9, step=1, query="token budget")
    explained = server.ask("command", session_id=SESSION, args="explain")
    assert explained["text"].startswith("assembly #1 (pre-step, turn 9, step 1)")
    usage = server.ask("command", session_id=SESSION, args="frobnicate")
    assert usage["kind"] == "error" and usage["text"].startswith("usage: /memory")


def test_serve_logs_events_it_cannot_read(server: Server, home: Path) -> None:
    reply = server.ask(
        "events",
        events=[
            {"session_id": SESSION, "event": {"type": "user/message", "seq": -4, "data": {}}},
            {"session_id": SESSION, "event": "not an event"},
            {"session_id": SESSION, "event": log_lines()[9]},
        ],
    )
    assert reply["ok"] and reply["skipped"] == 2 and reply["inserted"] == 1
    server.close()
    assert "bad DSH event" in (home / "convmem.log").read_text("utf-8")


def test_serve_pre_execute_applies_preconditions(home: Path, tmp_path: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(PRECONDITION_TOML, "utf-8")
    project = tmp_path / "proj"
    (project / "lib").mkdir(parents=True)
    srv = Server(home)
    try:
        assert srv.ask("hello")["pre_execute"] is True
        srv.ask("session_start", session_id="s1", source="startup", cwd=str(project))
        denied = srv.ask(
            "pre_execute", session_id="s1", tool="write", arguments={"file_path": "src/new.py"}
        )
        assert denied["ok"] and denied["allowed"] is False
        assert 'write on "src/new.py" denied' in denied["reason"] and "src/**" in denied["reason"]
        for tool, args in [
            ("write", {"file_path": "lib/new.py", "content": "x"}),
            ("bash", {"command": "touch src/new.py", "description": "x"}),  # not a listed tool
            ("write", '{"file_path": "docs/a.md"}'),  # arguments as a JSON string
        ]:
            reply = srv.ask("pre_execute", session_id="s1", tool=tool, arguments=args)
            assert reply["ok"] and reply["allowed"] is True, (tool, reply)
        (project / "src").mkdir()
        (project / "src" / "new.py").write_text("", "utf-8")
        allowed = srv.ask(
            "pre_execute", session_id="s1", tool="write", arguments={"file_path": "src/new.py"}
        )
        assert allowed["allowed"] is True
    finally:
        srv.close()


def test_serve_recovers_missed_events_from_the_session_log(home: Path, tmp_path: Path) -> None:
    dsh_home = tmp_path / "dsh"
    log = dsh_home / "sessions" / "--home-dev-proj--" / SESSION / "session.v4.jsonl.zstd"
    lines = log_lines()
    write_zstd(log, lines[:40])  # the header and the first turns
    srv = Server(home, dsh_home)
    try:
        first = srv.ask("session_start", session_id=SESSION, source="resume")
        early = len(parse_all(lines[:40]))
        assert first["ok"] and first["inserted"] == early > 0
        assert srv.ask("session_start", session_id=SESSION, source="resume")["inserted"] == 0
        # DSH appends more frames; the plugin was down and only the latest event arrives
        write_zstd(log, lines[40:], mode="ab")
        gap = srv.ask("events", events=[{"session_id": SESSION, "event": lines[-1]}])
        assert gap["ok"] and gap["recovered"] == 39 - early and gap["inserted"] == 0
        status = srv.ask("command", session_id=SESSION, args="status")
        assert f"session {SESSION}: 39 events" in status["text"]
    finally:
        srv.close()
    # a new process (after a crash) reads only what is new: here, nothing
    srv = Server(home, dsh_home)
    try:
        assert srv.ask("catch_up", session_id=SESSION)["inserted"] == 0
        assert srv.ask("catch_up", session_id="../etc")["inserted"] == 0  # never a path
    finally:
        srv.close()


# --------------------------------------------------------------------------- install
DEFAULT_PATCH = (
    "# Your patch layer for this dsh profile, applied after every bundle layer:\n"
    "# a top-level YAML array of loader patch entries (id-targeted config\n"
    "# overrides, disables, and insert lists; `!!js` expressions allowed).\n"
    "[]\n"
)
OTHER_PATCHES = """\
# my tweaks
- id: compaction-basic
  config: {headroomTokens: 1000, threshold: !!js "ctx => ctx * 0.8"}
- insert:
    - id: other-plugin
      name: /opt/other.mjs
    - id: convmem
      name: /old/place/dsh_plugin.mjs
      config: {}
"""


def profile(tmp_path: Path, content: str | None = DEFAULT_PATCH) -> tuple[Path, Path]:
    dsh_home = tmp_path / "dsh"
    folder = dsh_home / "profiles" / "work"
    folder.mkdir(parents=True)
    if content is not None:
        (folder / "cordis.patch.yml").write_text(content, "utf-8")
    return dsh_home, folder / "cordis.patch.yml"


def load_patch(path: Path) -> Any:
    return yaml.load(path.read_text("utf-8"), Loader=_Loader)


def test_install_writes_one_insert_and_is_idempotent(cli: Cli, home: Path, tmp_path: Path) -> None:
    dsh_home, patch = profile(tmp_path)
    args = ("install", "dsh", "--profile", "work", "--dsh-home", str(dsh_home))
    first = cli(*args)
    assert first.code == 0 and "installed in" in first.out, first
    text = patch.read_text("utf-8")
    assert text.startswith(DEFAULT_PATCH.removesuffix("[]\n"))  # the header comment is kept
    [entry] = load_patch(patch)[0]["insert"]
    assert entry["id"] == "convmem"
    # a copy in the profile, started by name: a moved install leaves the profile working
    copy = dsh_home / "profiles" / "work" / "convmem-plugin.mjs"
    assert entry["name"] == str(copy.resolve()) or entry["name"] == str(copy)
    assert copy.read_bytes() == plugin_path().read_bytes()
    assert entry["config"]["command"] == ["convmem", "serve", "dsh"]
    assert entry["config"]["home"] == str(home.resolve())
    second = cli(*args)
    assert second.code == 0 and "unchanged" in second.out
    assert patch.read_text("utf-8") == text
    removed = cli(*args, "--uninstall")
    assert removed.code == 0 and "removed from" in removed.out
    assert patch.read_text("utf-8") == DEFAULT_PATCH
    assert not copy.exists()
    assert "unchanged" in cli(*args, "--uninstall").out


def test_install_keeps_other_entries_and_tags(cli: Cli, tmp_path: Path) -> None:
    dsh_home, patch = profile(tmp_path, OTHER_PATCHES)
    env = {"DSH_HOME": str(dsh_home)}
    assert cli("install", "dsh", "--profile", "work", env=env).code == 0
    data = load_patch(patch)
    assert data[0]["config"]["threshold"].tag == "tag:yaml.org,2002:js"
    assert data[0]["config"]["threshold"].value == "ctx => ctx * 0.8"
    assert data[1]["insert"] == [{"id": "other-plugin", "name": "/opt/other.mjs"}]
    assert [e["id"] for e in data[2]["insert"]] == ["convmem"]  # the stale copy was replaced
    assert patch.read_text("utf-8").startswith("# my tweaks\n")
    assert cli("install", "dsh", "--profile", "work", "--uninstall", env=env).code == 0
    data = load_patch(patch)
    assert len(data) == 2 and data[1]["insert"] == [
        {"id": "other-plugin", "name": "/opt/other.mjs"}
    ]
    assert "!!js" in patch.read_text("utf-8")


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (DEFAULT_PATCH, ("--profile", "missing"), "profile 'missing' does not exist"),
        ("{a: 1}\n", ("--profile", "work"), "is not a YAML list"),
        ("- [unclosed\n", ("--profile", "work"), "is not valid YAML"),
    ],
)
def test_install_refuses_what_it_cannot_handle(
    cli: Cli, tmp_path: Path, content: str, args: tuple[str, ...], message: str
) -> None:
    dsh_home, patch = profile(tmp_path, content)
    result = cli("install", "dsh", *args, "--dsh-home", str(dsh_home))
    assert result.code != 0 and message in result.err, result
    assert patch.read_text("utf-8") == content


def test_install_needs_dsh_home(cli: Cli) -> None:
    result = cli("install", "dsh", "--profile", "work", env={"DSH_HOME": ""})
    assert result.code != 0 and "DSH_HOME is not set" in result.err


# --------------------------------------------------------------------------- the plugin file
NODE = shutil.which("node")
needs_node = pytest.mark.usefixtures("node")


@pytest.fixture
def node() -> str:
    """The node binary the DSH plugin runs on (in CI its absence fails the run)."""
    if NODE is None:
        unavailable(
            "node is not installed (apt-get install nodejs), so the plugin test did not run"
        )
    return NODE


def run_harness(scenario: str, config: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    assert NODE is not None
    proc = subprocess.run(
        [NODE, str(HARNESS), str(plugin_path()), scenario, json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=timeout,  # a hang here means the plugin keeps the host alive
        env={k: v for k, v in os.environ.items() if k != "DSH_HOME"},
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def serve_command() -> list[str]:
    return [sys.executable, "-m", "convmem", "serve", "dsh"]


@needs_node
def test_plugin_file_is_a_plain_es_module() -> None:
    text = plugin_path().read_text("utf-8")
    imports = [line for line in text.splitlines() if line.startswith("import ")]
    assert imports and all("from 'node:" in line for line in imports)
    assert "export const name = 'convmem';" in text
    subprocess.run([NODE or "node", "--check", str(plugin_path())], check=True)


@needs_node
@pytest.mark.parametrize("dispose", [False, True])
def test_plugin_injects_once_per_turn_and_denies(
    tmp_path: Path, dispose: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(PRECONDITION_TOML, "utf-8")
    out = run_harness(
        "happy",
        {"command": serve_command(), "home": str(home), "cwd": str(tmp_path), "dispose": dispose},
    )
    assert out["name"] == "convmem" and out["commands"] == ["memory"]
    assert out["hooks"] == [
        "agent/created",
        "agent/pre-step",
        "agent/turn-stopping",
        "dispose",
        "session/event",
        "tools/pre-execute",
    ]
    assert all(m["kind"] == "convmem" and m["role"] == "user" for m in out["turn1"]["added"])
    [block] = out["turn2"]["added"]  # after the compaction: the constraint comes back
    # right after the step's own input, before what the host adds after it
    assert out["turn2"]["order"] == ["user", "convmem", "runtime-context"]
    assert block["text"].startswith(BLOCK_MARKER) and "3000 tokens at peak load" in block["text"]
    assert out["turn2again"]["added"] == []  # once per turn
    assert out["turn2step2"]["added"] == []  # a tool follow-up step carries no user input
    assert out["turn3"]["added"] == []  # our own block is not user input
    assert out["denied"]["nextCalled"] is False
    assert out["denied"]["decision"]["kind"] == "deny"
    assert 'write on "src/new_module.py" denied' in out["denied"]["decision"]["reason"]
    assert out["allowed"]["nextCalled"] is True
    assert out["status"]["kind"] == "success" and "session session-harness" in out["status"]["text"]
    assert out["bogus"]["kind"] == "error"
    store = MemoryStore.open(str(home / "memory.sqlite"))
    try:
        assert store.count_events("session-harness0000000000000000000001") == 7
    finally:
        store.close()


@needs_node
def test_plugin_places_a_mid_turn_block_first_among_the_steps_messages(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    out = run_harness("midturn", {"command": serve_command(), "home": str(home)})
    [block] = out["step2"]["added"]  # after the compaction, in the middle of a turn
    assert "3000 tokens at peak load" in block["text"]
    # no input claimed: before DSH's runtime context, not after it
    assert out["step2"]["order"] == ["convmem", "runtime-context"]


@needs_node
@pytest.mark.parametrize(
    ("command", "logged"),
    [
        (["/nonexistent/convmem", "serve", "dsh"], "ENOENT; running without memory"),
        ([sys.executable, "-c", "import sys\nfor _ in sys.stdin: pass"], "no answer to pre_step"),
        ([sys.executable, "-c", "import sys; sys.exit(3)"], "convmem child exited (3)"),
    ],
    ids=["missing", "silent", "crashing"],
)
def test_plugin_fails_open(tmp_path: Path, command: list[str], logged: str) -> None:
    config = {
        "command": command,
        "home": str(tmp_path),
        "preStepTimeoutMs": 300,
        "preExecuteTimeoutMs": 200,
        "commandTimeoutMs": 300,
        "restartDelayMs": 20,
    }
    out = run_harness("unavailable", config)
    for key in ("preStep", "preStep2", "preStep3", "preStep4"):
        assert out[key]["added"] == []  # (how soon it gives up: bench/dsh_roundtrip.py)
    assert out["preExecute"]["nextCalled"] is True
    assert out["status"]["kind"] == "error"
    assert logged in (tmp_path / "dsh-plugin.log").read_text("utf-8")


@needs_node
def test_plugin_restarts_the_child_and_resends_queued_events(tmp_path: Path) -> None:
    marker = tmp_path / "crashed-once"
    flaky = (
        "import os, sys\n"
        "if not os.path.exists(sys.argv[1]):\n"
        "    open(sys.argv[1], 'w').close(); sys.exit(1)\n"
        "os.execv(sys.argv[2], sys.argv[2:])\n"
    )
    home = tmp_path / "home"
    config = {
        "command": [sys.executable, "-c", flaky, str(marker), *serve_command()],
        "home": str(home),
        "restartDelayMs": 50,
        # the harness waits this long for the restarted child before each step: a loaded
        # machine took longer than 300 ms to start it again, and the step went without
        "waitMs": 2000,
        # and the fresh child's first step (its first block, its patterns compiled on first
        # use) gets time to answer: the test is about the restart, not the step's deadline
        "preStepTimeoutMs": 10000,
    }
    out = run_harness("restart", config)
    assert marker.exists()
    [block] = out["first"]["added"]  # the resent events were captured before the step
    assert "3000 tokens at peak load" in block["text"]
    log = (home / "dsh-plugin.log").read_text("utf-8")
    assert "convmem child exited (1)" in log
