"""DeepSeek Harness (DSH) 0.2: the plugin's JSON Lines server (the log is in dsh_log).

DSH loads ``dsh_plugin.mjs`` (shipped beside this module; ``convmem install dsh`` copies
it into the profile) from an absolute path in a profile patch. The plugin starts one
long-lived ``convmem serve dsh`` process and talks to it over stdin/stdout, one JSON
object a line, each request carrying an ``id``::

    -> {"id": 3, "op": "pre_step", "session_id": "session-…", "turn": 2, "step": 1,
        "query": "what was the budget?"}
    <- {"id": 3, "ok": true, "text": "[convmem memory] …", "ms": 1.4}

Operations (every reply has ``id`` and ``ok``; a failed one has ``error``):

``hello``          → ``protocol``, ``version``, ``pid``, ``pre_execute`` (preconditions set?)
``session_start``  ``session_id, source, cwd?`` → record the session, catch up from its log
``event``          ``session_id, event`` (one raw DSH event ``{type, seq, time, data}``)
``events``         ``events: [{session_id, event}, ...]`` (a batch, in host order)
                   → ``inserted``, ``recovered`` (from the log), ``skipped`` (unreadable)
``pre_step``       ``session_id, turn, step, query?, trigger?`` → ``text`` (the memory block
                   or null; ``trigger: "compaction"`` when a compaction is why it asks)
``pre_execute``    ``session_id, tool, arguments`` → ``allowed``, ``reason``
``turn_stopping``  ``session_id, turn`` → ``repair`` (a repair reminder, or null)
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
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from convmem.adapters.dsh_log import (
    _HANDLERS,
    LOG_FILE_NAME,
    MAPPED_TYPES,
    SessionLogParser,
    _int_or_none,
    _mapping,
    _runs,
    find_session_log,
    read_complete_lines,
)
from convmem.capture import Event
from convmem.errors import ConvmemError, EventFormatError
from convmem.projects import project_root

if TYPE_CHECKING:
    from convmem.runtime import MemoryRuntime

__all__ = [
    "LOG_FILE_NAME",
    "MAPPED_TYPES",
    "DshServer",
    "SessionLogParser",
    "find_session_log",
    "memory_command",
    "read_complete_lines",
    "serve",
]

PROTOCOL_VERSION = 1
#: ``host_cursors.source`` of the session-log reader (position = decompressed bytes read).
CURSOR_SOURCE = "dsh-log"
#: ``host_cursors.source`` of the seq ranges DSH's compactions hid from the model.
SHADOWED_SOURCE = "dsh-shadowed"
_MAX_SHADOWED_RANGES = 5000


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
            "turn_stopping": self.turn_stopping,
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
            if op in (
                "session_start",
                "events",
                "event",
                "pre_step",
                "pre_execute",
                "turn_stopping",
            ):
                from convmem.core.seen import mark_seen

                mark_seen(self.runtime.settings.data_dir, "dsh", str(op))
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
        self._keep_shadowed(session_id, parser)
        tools = dict(list(parser._tool_names.items())[-64:])
        with store.transaction():
            store.set_host_cursor(session_id, CURSOR_SOURCE, end, {"tools": tools})
        if parser.cwd and session_id not in self._cwd:
            self._cwd[session_id] = parser.cwd
            with store.transaction():
                store.touch_session(session_id, cwd=parser.cwd)
        self._last_seq[session_id] = max(self._last_seq.get(session_id, -1), last)
        return inserted

    def _keep_shadowed(self, session_id: str, parser: SessionLogParser) -> None:
        """Store the ranges new compaction summaries hid (the pre-step reads them)."""
        if not parser.shadowed:
            return
        store = self.runtime.store
        with store.transaction():
            _, state = store.host_cursor(session_id, SHADOWED_SOURCE)
            hidden = {s for a, b in state.get("ranges") or () for s in range(a, b + 1)}
            hidden.update(s for a, b in parser.shadowed for s in range(a, b + 1))
            kept = _runs(hidden)[-_MAX_SHADOWED_RANGES:]
            store.set_host_cursor(
                session_id, SHADOWED_SOURCE, len(kept), {"ranges": [list(r) for r in kept]}
            )
        parser.shadowed.clear()

    def shadowed(self, session_id: str) -> list[tuple[int, int]] | None:
        """The ranges DSH's compactions hid from the model; None when none is known."""
        store = self.runtime.store
        with store.transaction():
            _, state = store.host_cursor(session_id, SHADOWED_SOURCE)
        ranges = [(int(a), int(b)) for a, b in state.get("ranges") or ()]
        return ranges or None

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
                if self._parser(sid).shadowed:
                    flush()
                    self._keep_shadowed(sid, self._parser(sid))
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
        query = query if isinstance(query, str) and query.strip() else None
        turn, step = _int_or_none(request.get("turn")), _int_or_none(request.get("step"))
        # DSH commits the step's prompt after the pre-step, as the event after the last
        # one seen: a correction in it must still count in this step's block
        pending = None
        if query is not None:
            self.catch_up(sid)  # events the log has and the live stream has not sent yet
            guess = self._last_seq.get(sid, -1) + 1
            pending = Event(sid, guess, "user/message", query, None, turn, step, role="user")
        # "compaction": the plugin asks because a compaction folded the earlier block away
        trigger = "compaction" if request.get("trigger") == "compaction" else "pre-step"
        text = self.runtime.pre_step(
            sid,
            None,
            turn,
            step,
            query=query,
            trigger=trigger,
            shadowed=self.shadowed(sid),
            pending=pending,
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

    def turn_stopping(self, request: dict[str, Any]) -> dict[str, Any]:
        """The turn is about to end: the repair reminder to go on with, if the reply
        broke a blocking check (the events before this request were captured first)."""
        sid = self._session(request)
        self._ensure_seen(sid)
        return {"repair": self.runtime.repair_block(sid)}

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
    out: list[str] = []
    if word in ("", "status"):
        from convmem.diagnostics import status

        data = status(runtime.store, runtime.settings, session_id)
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
        log = runtime.explain(session_id)
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
        from convmem.diagnostics import validation_line

        out.append(validation_line(log["latest_validation"]))
    elif word == "inspect":
        found = runtime.inspect(rest) if rest else None
        if found is None:
            return "error", f"no memory item {rest!r}; `/memory search WORDS` lists item ids"
        item = found["item"]
        out.append(f"{item['id']} [{item['kind']}, {item['evidence_type']}, {item['status']}]")
        out.append(item["content"])
        if item["conditions"]:
            out.append("conditions: " + "; ".join(item["conditions"]))
        out.extend(f"[ev seq:{src['seq']}] {src['text'][:200]}" for src in found["sources"])
        out.extend(f"{row['at']} {row['event']} by {row['actor']}" for row in found["lifecycle"])
    elif word == "search":
        if not rest or session_id is None:
            return "error", "usage: /memory search <words> (inside a session)"
        hits = runtime.search(rest, session_id, 10)
        out.extend(f"{r['id']} [{r['kind']}] {r['content'][:200]}" for r in hits["items"])
        out.extend(f"[ev seq:{r['seq']}] {r['text'][:200]}" for r in hits["evidence"])
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
