"""DeepSeek Harness (DSH) 0.2: the session-log parser and the plugin's JSON Lines server.

DSH loads ``dsh_plugin.mjs`` (shipped beside this module) from an absolute path in a
profile patch. The plugin starts one long-lived ``convmem serve dsh`` process and talks
to it over stdin/stdout, one JSON object a line, each request carrying an ``id``::

    -> {"id": 3, "op": "pre_step", "session_id": "session-…", "turn": 2, "step": 1,
        "query": "what was the budget?"}
    <- {"id": 3, "ok": true, "text": "[convmem memory] …", "ms": 1.4}

Operations (every reply has ``id`` and ``ok``; a failed one has ``error``):

``hello``          → ``protocol``, ``version``, ``pid``, ``pre_execute`` (preconditions set?)
``session_start``  ``session_id, source, cwd?`` → record the session, catch up from its log
``event``          ``session_id, event`` (one raw DSH event ``{type, seq, time, data}``)
``events``         ``events: [{session_id, event}, ...]`` (a batch, in host order)
                   → ``inserted``, ``recovered`` (from the log), ``skipped`` (unreadable)
``pre_step``       ``session_id, turn, step, query?`` → ``text`` (the memory block or null)
``pre_execute``    ``session_id, tool, arguments`` → ``allowed``, ``reason``
``command``        ``session_id, args`` (the text after ``/memory``) → ``kind``, ``text``
``catch_up``       ``session_id`` → ``inserted`` (re-read the session log now)

The server never dies on a bad request: it answers ``ok: false``; unexpected failures
and unreadable events are also written to ``<data dir>/convmem.log``. Raw DSH events
are mapped here, in Python, so the plugin stays a thin forwarder. Events the plugin
could not deliver (the process was down, the queue overflowed) are recovered from the
session log itself: on ``session_start``, on the first event of a session this process
has not seen, and whenever the live stream skips a sequence number, the log is re-read
from a stored cursor. Capture is idempotent on ``(session_id, seq)``, so overlapping
reads change nothing.

``command`` serves ``/memory`` in the DSH TUI and web clients only: DSH 0.2.1 runs a
registered command solely through its remote method ``commands/execute``; headless runs
and the SDK send "/memory …" to the model as an ordinary prompt.
"""

from __future__ import annotations

import json
import os
import re
import time
import traceback
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from convmem.adapters.events import content_text
from convmem.capture import Event
from convmem.core.constants import COMPACTION_EVENT_TYPES
from convmem.errors import ConvmemError, EventFormatError
from convmem.projects import project_root

if TYPE_CHECKING:
    from convmem.runtime import MemoryRuntime

PROTOCOL_VERSION = 1
LOG_FILE_NAME = "session.v4.jsonl.zstd"
#: ``host_cursors.source`` of the session-log reader (position = decompressed bytes read).
CURSOR_SOURCE = "dsh-log"
_SAFE_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_TOOL_NAMES_KEPT = 256


# --------------------------------------------------------------------------- parsing
def _iso_time(value: Any) -> str | None:
    """DSH stamps events with epoch milliseconds; store ISO 8601 UTC."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            moment = datetime.fromtimestamp(value / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            return None
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class SessionLogParser:
    """Maps DSH v4 session-log lines (and live ``session/event`` payloads) to events.

    The first log line, ``{"type": "session", "version": 4, "id": …, "cwd": …}``, names
    the session unless one was given. Every later line is ``{type, seq, time, data}``;
    message, tool, compaction and command lines become canonical events, bookkeeping
    lines (turn and step markers, request headers, titles, jobs …) are ignored.
    """

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self.cwd: str | None = None
        self._tool_names: dict[str, str] = {}
        self._turn: int | None = None
        self._step: int | None = None

    def parse_line(self, line_no: int, obj: Any) -> list[Event]:
        """One decoded log line → zero or one events (``line_no`` is for messages)."""
        if not isinstance(obj, Mapping):
            raise EventFormatError("the line is not a JSON object")
        if obj.get("type") == "session" and "seq" not in obj:
            if self.session_id is None:
                sid = obj.get("id")
                if not isinstance(sid, str) or not sid:
                    raise EventFormatError("session header has no string 'id'")
                self.session_id = sid
            self.cwd = _str_or_none(obj.get("cwd")) or self.cwd
            return []
        return self.parse_record(obj)

    def parse_record(self, obj: Mapping[str, Any]) -> list[Event]:
        etype = obj.get("type")
        if not isinstance(etype, str):
            raise EventFormatError("field 'type' must be a string")
        data = obj.get("data")
        if data is not None and not isinstance(data, Mapping):
            raise EventFormatError("field 'data' must be an object")
        data = data or {}
        if etype in ("turn/start", "step/start"):  # remembered for messages that lack them
            self._turn = _int_or_none(data.get("turn"))
            self._step = _int_or_none(data.get("step")) if etype == "step/start" else None
        handler = _HANDLERS.get(etype)
        if handler is None:
            return []
        if self.session_id is None:
            raise EventFormatError("no session header line before the first event; pass --session")
        seq = obj.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise EventFormatError("field 'seq' must be a whole number ≥ 0")
        fields = handler(self, data)
        event = Event(
            session_id=self.session_id,
            seq=seq,
            time=_iso_time(obj.get("time")),
            turn=_int_or_none(data.get("turn")) or self._turn,
            step=_int_or_none(data.get("step")) or self._step,
            **fields,
        )
        event.validate()
        return [event]

    # one method per mapped type -----------------------------------------------------
    def _message(self, data: Mapping[str, Any], etype: str, role: str) -> dict[str, Any]:
        message = data.get("message")
        msg = message if isinstance(message, Mapping) else data
        source = _mapping(msg.get("source")) or _mapping(data.get("source"))
        return {
            "type": etype,
            "role": role,
            "text": content_text(msg.get("content")),
            "source_kind": _str_or_none(source.get("kind")),
            "source_form": _str_or_none(source.get("form")),
        }

    def _user(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return self._message(data, "user/message", "user")

    def _assistant(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return self._message(data, "assistant/message", "assistant")

    def _system(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return self._message(data, "system/message", "system")

    def _tool_call(self, data: Mapping[str, Any]) -> dict[str, Any]:
        name = _str_or_none(data.get("name")) or "tool"
        call_id = _str_or_none(data.get("callId"))
        args = data.get("arguments")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if call_id:
            self._tool_names[call_id] = name
            if len(self._tool_names) > _TOOL_NAMES_KEPT:
                del self._tool_names[next(iter(self._tool_names))]
        return {
            "type": "tool/call",
            "role": "assistant",
            "text": f"{name}({args})",
            "source_kind": "model",
            "tool_name": name,
            "call_id": call_id,
        }

    def _tool_result(self, data: Mapping[str, Any]) -> dict[str, Any]:
        # Tool output is untrusted input: stored and searchable, never user evidence.
        msg = _mapping(data.get("message")) or data
        source = _mapping(msg.get("source"))
        call_id = _str_or_none(msg.get("toolCallId")) or _str_or_none(source.get("callId"))
        return {
            "type": "tool/result",
            "role": "tool",
            "text": content_text(msg.get("content")),
            "source_kind": _str_or_none(source.get("kind")) or "tool",
            "source_form": "error" if msg.get("isError") is True else None,
            "tool_name": self._tool_names.get(call_id or ""),
            "call_id": call_id,
        }

    def _compaction(self, etype: str, data: Mapping[str, Any]) -> dict[str, Any]:
        if etype == "compaction/summary":
            text = content_text(data.get("summary"))
        elif isinstance(data.get("error"), str):
            text = f"compaction failed: {data['error']}"  # nothing was shadowed
        else:
            text = ""
        return {"type": etype, "role": "system", "text": text}

    def _command_run(self, data: Mapping[str, Any]) -> dict[str, Any]:
        name = _str_or_none(data.get("name")) or "command"
        args = data.get("args")
        args_text = args if isinstance(args, str) else json.dumps(args) if args else ""
        source = _mapping(data.get("source"))
        return {
            "type": "command/invoke",
            "role": "command",
            "text": f"/{name} {args_text}".rstrip(),
            "source_kind": _str_or_none(source.get("kind")),
            "call_id": _str_or_none(data.get("commandId")),
        }

    def _command_done(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "type": "command/output",
            "role": "command",
            "text": _str_or_none(data.get("text")) or "",
            "source_form": _str_or_none(data.get("kind")),
            "call_id": _str_or_none(data.get("commandId")),
        }


def _handlers() -> dict[str, Callable[[SessionLogParser, Mapping[str, Any]], dict[str, Any]]]:
    table: dict[str, Callable[[SessionLogParser, Mapping[str, Any]], dict[str, Any]]] = {
        "user/message": SessionLogParser._user,
        "assistant/message": SessionLogParser._assistant,
        "system/message": SessionLogParser._system,
        "tool/call": SessionLogParser._tool_call,
        "tool/result": SessionLogParser._tool_result,
        "command/run": SessionLogParser._command_run,
        "command/done": SessionLogParser._command_done,
    }
    for etype in COMPACTION_EVENT_TYPES:
        table[etype] = _compaction_handler(etype)
    return table


def _compaction_handler(
    etype: str,
) -> Callable[[SessionLogParser, Mapping[str, Any]], dict[str, Any]]:
    def handle(parser: SessionLogParser, data: Mapping[str, Any]) -> dict[str, Any]:
        return parser._compaction(etype, data)

    return handle


_HANDLERS = _handlers()
#: DSH event types that become canonical events (the plugin forwards their data).
MAPPED_TYPES = tuple(sorted(_HANDLERS))


# --------------------------------------------------------------------------- session logs
def find_session_log(session_id: str, dsh_home: str | os.PathLike[str] | None) -> Path | None:
    """``$DSH_HOME/sessions/<slug>/<session_id>/session.v4.jsonl.zstd``, if it exists."""
    if not dsh_home or not _SAFE_SESSION_ID.match(session_id):
        return None
    sessions = Path(dsh_home) / "sessions"
    try:
        for slug in sorted(sessions.iterdir()):
            candidate = slug / session_id / LOG_FILE_NAME
            if candidate.is_file():
                return candidate
    except OSError:
        return None
    return None


def read_complete_lines(path: Path, start: int) -> tuple[list[bytes], int]:
    """Complete lines after decompressed offset ``start``, and the new offset.

    The log is appended to while DSH runs, so the last zstd frame or line may be
    unfinished: whatever cannot be decoded yet is left for the next read.
    """
    import zstandard

    data = bytearray()
    with path.open("rb") as raw:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        try:
            while chunk := reader.read(1 << 20):
                data += chunk
        except zstandard.ZstdError:
            pass  # an unfinished frame at the end: read it next time
    if len(data) < start:
        start = 0  # the file was replaced; idempotent capture makes a re-read harmless
    end = data.rfind(b"\n") + 1
    if end <= start:
        return [], start
    return bytes(data[start:end]).splitlines(), end


# --------------------------------------------------------------------------- the server
class BadRequest(ConvmemError):
    """The request itself is wrong (answered, not logged)."""


class DshServer:
    """Handles one request object at a time against a :class:`MemoryRuntime`."""

    def __init__(
        self,
        runtime: MemoryRuntime,
        *,
        dsh_home: str | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.runtime = runtime
        self.dsh_home = dsh_home if dsh_home is not None else os.environ.get("DSH_HOME")
        self.log_path = log_path
        self._parsers: dict[str, SessionLogParser] = {}
        self._last_seq: dict[str, int] = {}
        self._cwd: dict[str, str] = {}
        self._ops: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "hello": self.hello,
            "session_start": self.session_start,
            "event": self.event,
            "events": self.events,
            "pre_step": self.pre_step,
            "pre_execute": self.pre_execute,
            "command": self.command,
            "catch_up": self.catch_up_op,
        }

    # --- dispatch ------------------------------------------------------------------
    def handle_line(self, line: bytes) -> dict[str, Any]:
        """One request line → one reply object (never raises)."""
        request_id: Any = None
        try:
            try:
                request = json.loads(line)
            except (ValueError, RecursionError):
                raise BadRequest("the request is not valid JSON") from None
            if not isinstance(request, dict):
                raise BadRequest("the request is not a JSON object")
            request_id = request.get("id")
            op = request.get("op")
            handler = self._ops.get(op) if isinstance(op, str) else None
            if handler is None:
                raise BadRequest(f"unknown op {op!r}; expected one of {', '.join(self._ops)}")
            return {"id": request_id, "ok": True, **handler(request)}
        except Exception as exc:
            if not isinstance(exc, BadRequest):
                self.log_error(f"request {request_id!r} failed")
            return {"id": request_id, "ok": False, "error": f"{type(exc).__name__}: {exc}"}

    def log_error(self, what: str) -> None:
        if self.log_path is None:
            return
        from convmem.core.paths import append_private

        try:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            append_private(self.log_path, f"{stamp} dsh server: {what}\n{traceback.format_exc()}\n")
        except OSError:
            pass

    # --- helpers ---------------------------------------------------------------------
    @staticmethod
    def _session(request: Mapping[str, Any]) -> str:
        sid = request.get("session_id")
        if not isinstance(sid, str) or not sid:
            raise BadRequest("field 'session_id' must be a non-empty string")
        return sid

    def _parser(self, session_id: str) -> SessionLogParser:
        parser = self._parsers.get(session_id)
        if parser is None:
            parser = self._parsers[session_id] = SessionLogParser(session_id)
        return parser

    def _ensure_seen(self, session_id: str) -> None:
        """First contact with a session in this process: recover what we missed."""
        if session_id not in self._last_seq:
            self._last_seq[session_id] = -1
            self.catch_up(session_id)

    def catch_up(self, session_id: str) -> int:
        """Read the session log from the stored cursor; returns events inserted."""
        path = find_session_log(session_id, self.dsh_home)
        if path is None:
            return 0
        store = self.runtime.store
        position, state = store.host_cursor(session_id, CURSOR_SOURCE)
        lines, end = read_complete_lines(path, position)
        parser = SessionLogParser(session_id)
        parser._tool_names.update(state.get("tools") or {})
        events: list[Event] = []
        last = -1
        for number, raw in enumerate(lines, 1):
            try:
                obj = json.loads(raw)
                if isinstance(obj, dict) and isinstance(obj.get("seq"), int):
                    last = max(last, obj["seq"])
                events.extend(parser.parse_line(number, obj))
            except (ValueError, RecursionError, EventFormatError):
                self.log_error(f"{path}: skipped a bad line after byte {position}")
        if parser.cwd:  # before capture, so that extraction links to the project
            self.runtime.join_project(session_id, project_root(parser.cwd))
        inserted = self.runtime.on_events(events).inserted if events else 0
        tools = dict(list(parser._tool_names.items())[-64:])
        with store.transaction():
            store.set_host_cursor(session_id, CURSOR_SOURCE, end, {"tools": tools})
        if parser.cwd and session_id not in self._cwd:
            self._cwd[session_id] = parser.cwd
            with store.transaction():
                store.touch_session(session_id, cwd=parser.cwd)
        self._last_seq[session_id] = max(self._last_seq.get(session_id, -1), last)
        return inserted

    # --- operations ------------------------------------------------------------------
    def hello(self, request: dict[str, Any]) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            our_version = version("convmem")
        except PackageNotFoundError:
            our_version = "unknown"
        settings = self.runtime.settings
        # Import the pre-step path now, so the first step does not pay for it.
        import convmem.assembly
        import convmem.memory.extraction
        import convmem.retrieval  # noqa: F401

        return {
            "protocol": PROTOCOL_VERSION,
            "version": our_version,
            "pid": os.getpid(),
            "pre_execute": bool(settings["validation.preconditions"]),
            "data_dir": str(settings.data_dir),
        }

    def session_start(self, request: dict[str, Any]) -> dict[str, Any]:
        sid = self._session(request)
        source = request.get("source") if isinstance(request.get("source"), str) else "startup"
        cwd = request.get("cwd") if isinstance(request.get("cwd"), str) else None
        self.runtime.session_start(sid, str(source), cwd=cwd, project=project_root(cwd))
        if cwd:
            self._cwd[sid] = cwd
        self._last_seq.setdefault(sid, -1)
        return {"inserted": self.catch_up(sid)}

    def event(self, request: dict[str, Any]) -> dict[str, Any]:
        return self._capture([(self._session(request), request.get("event"))])

    def events(self, request: dict[str, Any]) -> dict[str, Any]:
        items = request.get("events")
        if not isinstance(items, list):
            raise BadRequest("field 'events' must be a list")
        pairs = []
        for item in items:
            if isinstance(item, Mapping):
                pairs.append((self._session(item), item.get("event")))
        return self._capture(pairs)

    def _capture(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        batch: list[Event] = []
        inserted = recovered = skipped = 0

        def flush() -> None:
            nonlocal inserted
            if batch:
                try:
                    inserted += self.runtime.on_events(batch).inserted
                except Exception:
                    # Whatever did not go in is re-read from the log on the next contact.
                    for sid in {e.session_id for e in batch}:
                        self._last_seq.pop(sid, None)
                    raise
                batch.clear()

        for sid, raw in pairs:
            if not isinstance(raw, Mapping):
                skipped += 1
                continue
            seq = raw.get("seq")
            first = sid not in self._last_seq
            gap = isinstance(seq, int) and seq > self._last_seq.get(sid, -1) + 1 >= 1
            kind = raw.get("type")
            known = isinstance(kind, str) and kind in _HANDLERS
            if first or gap or (known and raw.get("data") is None):
                # Read the log before this event, so events reach capture in seq order.
                flush()
                self._last_seq.setdefault(sid, -1)
                recovered += self.catch_up(sid)
            try:
                batch.extend(self._parser(sid).parse_record(raw))
            except EventFormatError:
                skipped += 1
                # the error names the field; the event's text stays out of the log
                self.log_error(f"bad DSH event for {sid} (seq {seq!r})")
            if isinstance(seq, int) and not isinstance(seq, bool):
                self._last_seq[sid] = max(self._last_seq[sid], seq)
        flush()
        return {"inserted": inserted, "recovered": recovered, "skipped": skipped}

    def pre_step(self, request: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        sid = self._session(request)
        self._ensure_seen(sid)
        query = request.get("query")
        text = self.runtime.pre_step(
            sid,
            None,
            _int_or_none(request.get("turn")),
            _int_or_none(request.get("step")),
            query=query if isinstance(query, str) and query.strip() else None,
        )
        return {"text": text, "ms": round((time.perf_counter() - started) * 1000, 3)}

    def pre_execute(self, request: dict[str, Any]) -> dict[str, Any]:
        sid = self._session(request)
        self._ensure_seen(sid)
        tool = request.get("tool")
        if not isinstance(tool, str):
            raise BadRequest("field 'tool' must be a string")
        args = request.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                args = {"raw": args}
        tool_input = dict(_mapping(args))
        # Relative paths are the session's: DSH resolves them against its working
        # directory (or a bash call's workdir), not against this process's cwd.
        base = self._cwd.get(sid)
        workdir = tool_input.get("workdir")
        if isinstance(workdir, str) and workdir:
            base = os.path.join(base or os.getcwd(), workdir)
        if base and "cwd" not in tool_input:
            tool_input["cwd"] = base
        decision = self.runtime.pre_execute(sid, tool, tool_input)
        return {"allowed": decision.allowed, "reason": decision.reason}

    def catch_up_op(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"inserted": self.catch_up(self._session(request))}

    def command(self, request: dict[str, Any]) -> dict[str, Any]:
        sid = request.get("session_id")
        kind, text = memory_command(
            self.runtime,
            sid if isinstance(sid, str) and sid else None,
            str(request.get("args") or ""),
        )
        return {"kind": kind, "text": text}


# --------------------------------------------------------------------------- /memory
MEMORY_USAGE = (
    "usage: /memory status | explain | inspect <item id> | search <words>\n"
    "convmem keeps this session's memory; the block it injects is labelled [convmem memory]."
)
_COMMAND_TEXT_CHARS = 6000


def _line(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()) if v not in (None, "", []))
    return str(value)


def memory_command(runtime: MemoryRuntime, session_id: str | None, args: str) -> tuple[str, str]:
    """Answer ``/memory ARGS`` inside DSH: ``("success" | "error", text)``."""
    word, _, rest = args.strip().partition(" ")
    rest = rest.strip()
    store = runtime.store
    out: list[str] = []
    if word in ("", "status"):
        from convmem.diagnostics import status

        data = status(store, runtime.settings, session_id)
        counts = data["counts"]
        out.append(f"convmem store: {data['store']['location']}")
        out.append("counts: " + _line(counts))
        for s in data["sessions"]:
            out.append(
                f"session {s['session_id']}: {s['events']} events; " + _line(s["checkpoints"])
            )
        latest = data.get("latest_assembly")
        out.append("latest assembly: " + (_line(latest) if latest else "none yet"))
        out.append("compaction: " + _line(data["compatibility"]["compaction_events"] or "none"))
    elif word == "explain":
        log = store.latest_assembly_log(session_id)
        if log is None:
            return "success", "no memory block has been assembled for this session yet"
        out.append(
            f"assembly #{log['id']} ({log['trigger']}, turn {log['turn']}, step {log['step']}): "
            f"{log['used_tokens']}/{log['budget']} tokens ({log['token_source']}), "
            + ("injected" if log["injected"] else "not injected")
        )
        out.append(f"query: {log['query'][:200]!r}")
        out.extend(f"section {_line(s)}" for s in log["sections"])
        if log["items"]:
            out.append("included: " + ", ".join(map(str, log["items"])))
        out.extend(f"note: {r}" for r in [*log["reasons"], *log["errors"]])
        out.extend(f"omitted {_line(o)}"[:300] for o in log["omitted"][:30])
    elif word == "inspect":
        from convmem.retrieval import Retriever

        item = store.item(rest) if rest else None
        if item is None:
            return "error", f"no memory item {rest!r}; `/memory search WORDS` lists item ids"
        query = runtime.latest_user_text(item.session_id) or ""
        data = Retriever(store, runtime.settings).inspect_item(item.id, query) or {}
        out.append(f"{item.id} [{item.kind}, {item.evidence_type}, {item.status}]")
        out.append(item.content)
        if item.conditions:
            out.append("conditions: " + "; ".join(item.conditions))
        out.extend(f"[ev seq:{src['seq']}] {src['text'][:200]}" for src in data.get("sources", []))
        out.extend(
            f"{row['at']} {row['event']} by {row['actor']}" for row in data.get("lifecycle", [])
        )
    elif word == "search":
        from convmem.retrieval import Retriever

        if not rest or session_id is None:
            return "error", "usage: /memory search <words> (inside a session)"
        retriever = Retriever(store, runtime.settings)
        found = retriever.retrieve(session_id, rest, 10)
        out.extend(f"{s.item.id} [{s.item.kind}] {s.item.content[:200]}" for s in found.items)
        for event, _ in retriever.rank_events(session_id, found.signals, 10):
            out.append(f"[ev seq:{event.seq}] {event.text[:200]}")
        if not out:
            out.append(f"nothing in this session's memory matches {rest!r}")
    else:
        return "error", MEMORY_USAGE
    text = "\n".join(out)
    return "success", text if len(text) <= _COMMAND_TEXT_CHARS else text[:_COMMAND_TEXT_CHARS] + "…"


def serve(
    stdin: IO[bytes],
    stdout: IO[bytes],
    runtime: MemoryRuntime,
    *,
    dsh_home: str | None = None,
    log_path: Path | None = None,
) -> int:
    """Answer request lines from ``stdin`` on ``stdout`` until end of input."""
    server = DshServer(runtime, dsh_home=dsh_home, log_path=log_path)
    while True:
        line = stdin.readline()
        if not line:
            return 0
        if not line.strip():
            continue
        reply = server.handle_line(line)
        data = json.dumps(reply, ensure_ascii=False, separators=(",", ":"), default=str)
        try:
            stdout.write(data.encode("utf-8") + b"\n")
            stdout.flush()
        except (BrokenPipeError, ValueError):
            return 0  # the plugin went away; nothing left to answer
