"""DSH 0.2's session log: its lines (and live ``session/event`` payloads) as canonical events.

DSH writes each session to ``$DSH_HOME/sessions/<slug>/<id>/session.v4.jsonl.zstd``:
zstd-compressed JSON Lines, appended while it runs. :class:`SessionLogParser` maps its
message, tool, compaction and command lines to events (DSH's own sequence numbers are
the seqs) and ignores bookkeeping; it also notes which seqs a compaction hid from the
model. :func:`read_complete_lines` reads what was appended since a cursor, leaving an
unfinished frame or line for the next read. The server in :mod:`convmem.adapters.dsh`
uses both; ``convmem ingest`` uses the parser.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from convmem.adapters.events import content_text
from convmem.capture import Event
from convmem.core.constants import COMPACTION_EVENT_TYPES
from convmem.errors import EventFormatError

LOG_FILE_NAME = "session.v4.jsonl.zstd"
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
    # (out of SQLite's range: a remembered turn would make every later message unstorable)
    ok = isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 2**62
    return value if ok else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _runs(seqs: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted seqs as ``(first, last)`` runs of consecutive numbers."""
    runs: list[tuple[int, int]] = []
    for seq in sorted(set(seqs)):
        if runs and seq == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs


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
        #: ``(start, end)`` seq ranges compactions hid, as their summaries said (new ones).
        self.shadowed: list[tuple[int, int]] = []

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
            "text": content_text(msg.get("content"), tool_results=True),
            "source_kind": _str_or_none(source.get("kind")) or "tool",
            "source_form": "error" if msg.get("isError") is True else None,
            "tool_name": self._tool_names.get(call_id or ""),
            "call_id": call_id,
        }

    def _compaction(self, etype: str, data: Mapping[str, Any]) -> dict[str, Any]:
        if etype == "compaction/summary":
            text = content_text(data.get("summary"))
            # ``shadowedSeqs`` lists the seqs it hid; ``shadowedRange`` is in the order of
            # the surface (a checkpoint first), not a range of seqs, so it is not used
            hidden = data.get("shadowedSeqs")
            if isinstance(hidden, list):
                self.shadowed += _runs(s for s in hidden if _int_or_none(s) is not None)
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
