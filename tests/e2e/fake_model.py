"""A scripted stand-in for the Anthropic Messages API, for end-to-end tests.

Both real hosts (Claude Code and DSH) speak the Anthropic Messages protocol to a
base URL taken from the environment. :class:`FakeModel` serves that protocol on
``127.0.0.1`` (ephemeral port) using only the standard library, logs every request
it receives (the request body is the ground truth of what the model saw), and
answers from a script:

* each request is classified (:func:`classify`) as ``main``, ``title``, ``compact``,
  ``quota`` or ``count_tokens``; side requests (titles, quota probes, compaction
  summaries) get sensible built-in answers so the hosts never stall on them;
* ``main`` requests are answered by the first matching :class:`Rule`, else the next
  queued reply (:meth:`FakeModel.queue`), else the default reply.

Example::

    with FakeModel(log_path=tmp / "requests.jsonl") as fm:
        fm.add_rule(lambda req: "forbidden" in req.last_user_text,
                    Reply.tool("Bash", {"command": "echo forbidden"}), once=True)
        run_host(base_url=fm.base_url)
        assert "MEMO" in all_user_text(fm.main_requests()[-1].body)
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

JSON = dict[str, Any]
COMPACT_HEADER = "x-deepseek-harness-compact"
_REDACTED = {"x-api-key", "authorization"}


@dataclass
class Reply:
    """One scripted model answer: optional text, then optional tool_use block."""

    text: str = "OK."
    tool_name: str | None = None
    tool_input: JSON = field(default_factory=dict)
    tool_id: str | None = None
    input_tokens: int = 100
    output_tokens: int = 20
    stop_reason: str | None = None  # default: "tool_use" if a tool, else "end_turn"

    @classmethod
    def tool(cls, name: str, tool_input: JSON, text: str = "", **kw: Any) -> Reply:
        return cls(text=text, tool_name=name, tool_input=tool_input, **kw)

    def content(self, seq: int) -> list[JSON]:
        blocks: list[JSON] = []
        if self.text:
            blocks.append({"type": "text", "text": self.text})
        if self.tool_name:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": self.tool_id or f"toolu_{seq:04d}",
                    "name": self.tool_name,
                    "input": self.tool_input,
                }
            )
        return blocks

    @property
    def final_stop_reason(self) -> str:
        return self.stop_reason or ("tool_use" if self.tool_name else "end_turn")


@dataclass
class Request:
    """One logged request."""

    seq: int
    time: float
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: JSON
    kind: str
    reply: JSON | None = None

    @property
    def last_user_text(self) -> str:
        return last_user_text(self.body)

    @property
    def user_text(self) -> str:
        return all_user_text(self.body)

    def to_json(self) -> JSON:
        return {
            "seq": self.seq,
            "time": self.time,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "kind": self.kind,
            "headers": self.headers,
            "body": self.body,
            "reply": self.reply,
        }


Responder = Reply | Callable[[Request], Reply]


@dataclass
class Rule:
    predicate: Callable[[Request], bool]
    reply: Responder
    once: bool = False
    kinds: frozenset[str] = frozenset({"main"})


# --------------------------------------------------------------------------- text helpers
def _block_texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
        return
    for block in content or []:
        if isinstance(block, str):
            yield block
        elif not isinstance(block, dict):
            continue
        elif block.get("type") == "text":
            yield str(block.get("text", ""))
        elif block.get("type") == "tool_result":
            yield from _block_texts(block.get("content"))
        elif block.get("type") == "tool_use":
            yield json.dumps(block.get("input", {}), ensure_ascii=False)


def all_user_text(body: JSON) -> str:
    """Every text the model saw: system + all messages (tool results, reminders...)."""
    parts = list(_block_texts(body.get("system")))
    for msg in body.get("messages", []):
        parts.extend(_block_texts(msg.get("content")))
    return "\n".join(parts)


def last_user_text(body: JSON) -> str:
    """Text of the last ``role: user`` message (all its text-ish blocks)."""
    for msg in reversed(body.get("messages", [])):
        if msg.get("role") == "user":
            return "\n".join(_block_texts(msg.get("content")))
    return ""


def classify(path: str, headers: dict[str, str], body: JSON) -> str:
    """Name the kind of request: main, compact, title, quota, count_tokens, other."""
    if path.endswith("/count_tokens"):
        return "count_tokens"
    if not path.endswith("/v1/messages"):
        return "other"
    if headers.get(COMPACT_HEADER) == "1":
        return "compact"
    last = last_user_text(body)
    if "<summary>" in last and "<analysis>" in last:
        return "compact"  # Claude Code's compaction summariser
    system = "\n".join(_block_texts(body.get("system"))).lower()
    if last.strip() == "quota" or body.get("max_tokens") == 1:
        return "quota"  # Claude Code's quota / connectivity probe
    if not body.get("tools") and ("title" in system or "topic" in system):
        return "title"  # Claude Code title/topic, DSH session title
    return "main"


DEFAULT_SUMMARY = (
    "<analysis>Scripted analysis.</analysis>\n<summary>Scripted summary of "
    "the earlier conversation.</summary>"
)


def _side_reply(req: Request) -> Reply:
    if req.kind == "compact":
        return Reply(text=DEFAULT_SUMMARY, input_tokens=500)
    if req.kind == "title":
        system = "\n".join(_block_texts(req.body.get("system"))).lower()
        if "json" in system:
            return Reply(text='{"title": "Scripted title", "isNewTopic": false}')
        return Reply(text="Scripted title")
    return Reply(text="ok", output_tokens=1)


# --------------------------------------------------------------------------- server
class FakeModel:
    """Context manager running the stand-in server; see the module docstring."""

    def __init__(
        self,
        default: Reply | None = None,
        log_path: str | Path | None = None,
        side_replies: dict[str, Responder] | None = None,
        model: str = "fake-model",
        count_tokens: int = 1000,
    ) -> None:
        self.default: Responder = default or Reply()
        self.rules: list[Rule] = []
        self.side_replies: dict[str, Responder] = dict(side_replies or {})
        self.model = model
        self.count_tokens = count_tokens
        self.log_path = Path(log_path) if log_path else None
        self.requests: list[Request] = []
        self._queue: deque[Responder] = deque()
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # scripting -----------------------------------------------------------
    def add_rule(
        self,
        predicate: Callable[[Request], bool],
        reply: Responder,
        *,
        once: bool = False,
        kinds: tuple[str, ...] = ("main",),
    ) -> Rule:
        rule = Rule(predicate, reply, once, frozenset(kinds))
        with self._lock:
            self.rules.append(rule)
        return rule

    def queue(self, *replies: Responder) -> None:
        """Replies consumed in order by main requests no rule matched."""
        with self._lock:
            self._queue.extend(replies)

    def choose(self, req: Request) -> Reply:
        with self._lock:
            for rule in self.rules:
                if req.kind in rule.kinds and rule.predicate(req):
                    if rule.once:
                        self.rules.remove(rule)
                    responder: Responder = rule.reply
                    break
            else:
                if req.kind in self.side_replies:
                    responder = self.side_replies[req.kind]
                elif req.kind != "main":
                    responder = _side_reply
                elif self._queue:
                    responder = self._queue.popleft()
                else:
                    responder = self.default
        return responder(req) if callable(responder) else responder

    # inspection ----------------------------------------------------------
    def of_kind(self, *kinds: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.kind in kinds]

    def main_requests(self) -> list[Request]:
        return self.of_kind("main")

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def _record(self, req: Request) -> None:
        with self._lock:
            self.requests.append(req)
            if self.log_path:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(req.to_json(), ensure_ascii=False) + "\n")

    # lifecycle -----------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeModel not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeModel:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-model", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _sse_events(reply: Reply, seq: int, model: str) -> Iterator[tuple[str, JSON]]:
    msg_id = f"msg_fake_{seq:04d}"
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1},
            },
        },
    )
    for index, block in enumerate(reply.content(seq)):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            text = block["text"]
            for start in range(0, len(text), 2000) or [0]:
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": text[start : start + 2000]},
                    },
                )
        else:
            start_block = {**block, "input": {}}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start_block},
            )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": json.dumps(block["input"]),
                    },
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.final_stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _make_handler(fm: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send_json(self, status: int, obj: JSON) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            headers = {
                k.lower(): ("<redacted>" if k.lower() in _REDACTED else v)
                for k, v in self.headers.items()
            }
            path = parts.path.rstrip("/") or "/"
            kind = classify(path, headers, body) if self.command == "POST" else "other"
            req = Request(
                next(fm._seq),
                time.time(),
                self.command,
                path,
                parts.query,
                headers,
                body if isinstance(body, dict) else {"_body": body},
                kind,
            )
            if kind == "count_tokens":
                req.reply = {"input_tokens": fm.count_tokens}
                fm._record(req)
                return self._send_json(200, req.reply)
            if kind == "other":
                req.reply = {}
                fm._record(req)
                return self._send_json(200, {})
            reply = fm.choose(req)
            req.reply = {
                "text": reply.text[:500],
                "tool_name": reply.tool_name,
                "tool_input": reply.tool_input,
                "input_tokens": reply.input_tokens,
                "stop_reason": reply.final_stop_reason,
            }
            fm._record(req)
            if not req.body.get("stream"):
                return self._send_json(
                    200,
                    {
                        "id": f"msg_fake_{req.seq:04d}",
                        "type": "message",
                        "role": "assistant",
                        "model": fm.model,
                        "content": reply.content(req.seq),
                        "stop_reason": reply.final_stop_reason,
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": reply.input_tokens,
                            "output_tokens": reply.output_tokens,
                        },
                    },
                )
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for event, data in _sse_events(reply, req.seq, fm.model):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        do_POST = do_GET = do_PUT = _handle

    return Handler
