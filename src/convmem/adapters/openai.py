"""OpenAI-style message lists: canonical events, and memory for your own agent loop.

Two shapes are understood, also mixed in one list:

* chat completions messages ``{role, content, tool_calls, tool_call_id, name}``,
  where ``content`` is a string or a list of parts;
* Responses API input items: ``{type: "message", role, content: [parts]}``,
  ``{type: "function_call", call_id, name, arguments}`` and
  ``{type: "function_call_output", call_id, output}`` (other item types, such as
  ``reasoning``, carry no conversation and are skipped).

A user message becomes ``user/message``; assistant text ``assistant/message``; each
tool call ``tool/call`` (text ``name(arguments)``); a tool's answer ``tool/result``;
system and developer messages ``system/message``. A message that convmem inserted
itself (``name: "convmem"``, or text opening with the block marker) is recognised
as generated: source kind ``convmem``, so it is never read as the user's words.

Sequence numbers. :func:`messages_to_events` numbers the events of a list from 1
in order, so the n-th message is seq n whenever every message yields one event
(a chat assistant message that has text and tool calls yields one event per part).
A loop sends its conversation again on every step, and usually trims it once it
grows long; :class:`OpenAIMemory` therefore does not trust positions. It lines the
list up against the newest stored events (by content hash) and appends only what
comes after the last event it already holds, so re-sending, trimming from the
front and inserting a summary all leave the stored history as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from convmem.adapters.events import content_text, is_tool_result_block
from convmem.capture import CaptureResult, Event
from convmem.core.constants import BLOCK_MARKER, CONVMEM_SOURCE_KIND
from convmem.errors import EventFormatError

if TYPE_CHECKING:
    from convmem.runtime import MemoryRuntime

#: The ``name`` convmem gives the chat message it inserts.
MEMORY_NAME = "convmem"

#: Stored events compared with the list when lining it up (the newest ones).
ALIGN_WINDOW = 64
#: Events that must agree, walking back from a candidate anchor, to prefer it.
ALIGN_CONTEXT = 16

_ROLE_TYPES = {
    "user": "user/message",
    "assistant": "assistant/message",
    "system": "system/message",
    "developer": "system/message",
}
_CALL_ITEMS = ("function_call", "custom_tool_call")
_OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output")


def _text(content: Any, *, tool_results: bool = False) -> str:
    """Message content as plain text; refusals count as text; ``tool_result`` blocks
    only with ``tool_results`` (see :func:`~convmem.adapters.events.content_text`)."""
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "refusal":
                parts.append(str(part.get("refusal") or ""))
            else:
                parts.append(content_text([part], tool_results=tool_results))
        return "\n".join(p for p in parts if p)
    return content_text(content, tool_results=tool_results)


def _tool_results(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The ``tool_result`` blocks of a user message (the Anthropic Messages shape)."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return []
    return [b for b in content if is_tool_result_block(b)]


def _is_prompt(message: Mapping[str, Any]) -> bool:
    """A user message with words of its own, not only tool results."""
    if not (_is_message(message) and message.get("role") == "user"):
        return False
    content = message.get("content")
    if not isinstance(content, list) or not _tool_results(message):
        return True
    return any(not is_tool_result_block(b) for b in content)


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _opt_str(message: Mapping[str, Any], name: str) -> str | None:
    value = message.get(name)
    if value is None or isinstance(value, str):
        return value
    raise EventFormatError(f"field {name!r} must be a string or null")


def _is_message(message: Mapping[str, Any]) -> bool:
    return message.get("type") in (None, "message") and "role" in message


def is_memory_message(message: Any) -> bool:
    """True for a message convmem inserted (by name, or by the marker its text opens with)."""
    if not isinstance(message, Mapping) or not _is_message(message):
        return False
    if message.get("role") not in ("user", "system", "developer"):
        return False
    if message.get("name") == MEMORY_NAME:
        return True
    try:
        return _text(message.get("content")).lstrip().startswith(BLOCK_MARKER)
    except EventFormatError:
        return False


def _model_side(message: Mapping[str, Any]) -> bool:
    """Written by the model: assistant messages and tool calls."""
    if _is_message(message):
        return message.get("role") == "assistant"
    return message.get("type") in _CALL_ITEMS


class _Converter:
    """Turns messages into events one at a time, numbering them from ``next_seq``."""

    def __init__(self, session_id: str, next_seq: int = 1, turn: int = 0) -> None:
        self.session_id = session_id
        self.next_seq = next_seq
        self.turn = turn
        self.tool_names: dict[str, str] = {}

    def convert(self, message: Any) -> list[Event]:
        if not isinstance(message, Mapping):
            raise EventFormatError("a message must be a JSON object")
        kind = message.get("type")
        if kind in _CALL_ITEMS:
            name = _opt_str(message, "name") or "tool"
            call_id = _opt_str(message, "call_id")
            args = _arguments(message.get("arguments", message.get("input")))
            return [self._event("tool/call", f"{name}({args})", "assistant", name, call_id)]
        if kind in _OUTPUT_ITEMS:
            call_id = _opt_str(message, "call_id")
            text = content_text(message.get("output"))
            called = self.tool_names.get(call_id or "")
            return [self._event("tool/result", text, "tool", called, call_id)]
        if kind is not None and kind != "message":
            if not isinstance(kind, str):
                raise EventFormatError("field 'type' must be a string")
            return []  # reasoning, hosted tool calls and references carry no conversation
        return self._message(message)

    def _message(self, message: Mapping[str, Any]) -> list[Event]:
        role = message.get("role")
        if role in ("tool", "function"):
            call_id = _opt_str(message, "tool_call_id")
            name = _opt_str(message, "name") or self.tool_names.get(call_id or "")
            text = _text(message.get("content"), tool_results=True)
            return [self._event("tool/result", text, "tool", name, call_id)]
        # A user message may carry tool answers (the Anthropic shape): each is a tool
        # result of its own, before the person's words, never part of them.
        results = []
        for block in _tool_results(message):
            call_id = block.get("tool_use_id", block.get("call_id"))
            call_id = call_id if isinstance(call_id, str) else None
            text = content_text(block.get("content", block.get("output")), tool_results=True)
            called = self.tool_names.get(call_id or "")
            results.append(self._event("tool/result", text, "tool", called, call_id))
        if results and not _is_prompt(message):
            return results
        if not isinstance(role, str) or role not in _ROLE_TYPES:
            raise EventFormatError(
                f"field 'role' is {role!r}; expected system, developer, user, assistant or tool"
            )
        text = _text(message.get("content"))
        source = CONVMEM_SOURCE_KIND if is_memory_message(message) else None
        if role == "user" and source is None:
            self.turn += 1
        calls = self._calls(message) if role == "assistant" else []
        events = results
        if text or not calls:
            type_ = _ROLE_TYPES[role]
            events.append(self._event(type_, text, type_.split("/")[0], source_kind=source))
        for name, call_id, args in calls:
            events.append(self._event("tool/call", f"{name}({args})", "assistant", name, call_id))
        return events

    def _calls(self, message: Mapping[str, Any]) -> list[tuple[str, str | None, str]]:
        raw = message.get("tool_calls") or []
        if not isinstance(raw, list):
            raise EventFormatError("field 'tool_calls' must be a list")
        legacy = message.get("function_call")
        if isinstance(legacy, Mapping):
            raw = [*raw, {"function": legacy}]
        calls = []
        for call in raw:
            if not isinstance(call, Mapping):
                raise EventFormatError("each of 'tool_calls' must be an object")
            function = call.get("function") or {}
            if not isinstance(function, Mapping):
                raise EventFormatError("field 'function' of a tool call must be an object")
            name = _opt_str(function, "name") or "tool"
            calls.append((name, _opt_str(call, "id"), _arguments(function.get("arguments"))))
        return calls

    def _event(
        self,
        type_: str,
        text: str,
        role: str,
        tool_name: str | None = None,
        call_id: str | None = None,
        source_kind: str | None = None,
    ) -> Event:
        if type_ == "tool/call" and call_id and tool_name:
            self.tool_names[call_id] = tool_name
        event = Event(
            session_id=self.session_id,
            seq=self.next_seq,
            type=type_,
            text=text,
            turn=self.turn,
            role=role,
            source_kind=source_kind,
            tool_name=tool_name,
            call_id=call_id,
        )
        event.validate()
        self.next_seq += 1
        return event


def messages_to_events(session_id: str, messages: Sequence[Any]) -> list[Event]:
    """The events of a whole list, numbered 1, 2, ... in order (a pure function)."""
    converter = _Converter(session_id)
    return [event for message in messages for event in converter.convert(message)]


class MessageListParser:
    """``convmem ingest --format openai``: one message per line, numbered in file order.

    A line may instead hold a whole conversation, as a request body would:
    ``{"messages": [...]}`` (chat completions), ``{"input": [...]}`` (Responses) or
    a bare list. Such a line is numbered on its own from 1, so several snapshots of
    one growing conversation ingest to the same events. It may name its session
    with ``session_id``.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._lines = _Converter(session_id)

    def parse_line(self, line_no: int, obj: Any) -> list[Event]:
        if isinstance(obj, list):
            return messages_to_events(self.session_id, obj)
        if isinstance(obj, Mapping) and "role" not in obj and "type" not in obj:
            for key in ("messages", "input"):
                listed = obj.get(key)
                if isinstance(listed, list):
                    session = obj.get("session_id") or self.session_id
                    if not isinstance(session, str):
                        raise EventFormatError("field 'session_id' must be a string")
                    return messages_to_events(session, listed)
        return self._lines.convert(obj)


def _fingerprint(runtime: MemoryRuntime, event: Event, now: str) -> tuple[Any, ...]:
    """What identifies an event across sends: its type, stored-text hash and call id."""
    row, _ = runtime.capture.prepare(event, now)
    return (event.type, row[13], event.call_id)


def _anchor(new: Sequence[tuple[Any, ...]], stored: Sequence[tuple[Any, ...]], whole: bool) -> int:
    """Index in ``new`` of the newest event already stored, or -1.

    The candidate that agrees with the stored history over the most preceding
    events wins. On a tie, a candidate that accounts for the list and the whole
    stored history exactly (``whole``: ``stored`` is all the session holds) wins;
    otherwise the later one, so that a re-send never duplicates. When the newest
    stored event is not in the list (it was edited or dropped), the next newest is
    tried.
    """
    for back in range(len(stored)):
        target = stored[len(stored) - 1 - back]
        history = stored[: len(stored) - back]
        best, best_key = -1, (0, False)
        for p in range(len(new) - 1, -1, -1):
            if new[p] != target:
                continue
            n = 1
            limit = min(p + 1, len(history), ALIGN_CONTEXT)
            while n < limit and new[p - n] == history[-1 - n]:
                n += 1
            key = (n, whole and back == 0 and n == p + 1 == len(history))
            if key > best_key:
                best, best_key = p, key
        if best >= 0:
            return best
    return -1


class OpenAIMemory:
    """convmem for an agent loop that keeps its conversation as an OpenAI message list.

    Call :meth:`with_memory` with the list before each model call and send what it
    returns; your own list is never changed. :meth:`record` only captures.
    """

    def __init__(self, runtime: MemoryRuntime, session_id: str, *, api: str = "auto") -> None:
        if api not in ("auto", "chat", "responses"):
            raise ValueError("api must be 'auto', 'chat' or 'responses'")
        self.runtime = runtime
        self.session_id = session_id
        self.api = api
        self._started = False
        self._turn = 0

    def record(self, messages: Sequence[Mapping[str, Any]]) -> CaptureResult:
        """Capture what is new in the list (sending the same list again adds nothing)."""
        if not self._started:
            self.runtime.session_start(self.session_id, source="openai")
            self._started = True
        return self.runtime.on_events(self._new_events(messages))

    def _new_events(self, messages: Sequence[Mapping[str, Any]]) -> list[Event]:
        # convmem's own blocks are not recorded: they are the runtime's output (the
        # assembly log keeps them), and a loop may or may not keep them in its list
        events = messages_to_events(
            self.session_id, [m for m in messages if not is_memory_message(m)]
        )
        store = self.runtime.store
        tail = store.events(self.session_id, newest_first=True, limit=ALIGN_WINDOW)[::-1]
        if not tail:
            self._turn = (events[-1].turn or 0) if events else 0
            return events
        now = store.now()
        fingerprints = [_fingerprint(self.runtime, e, now) for e in events]
        anchor = _anchor(
            fingerprints,
            [(t.type, t.content_hash, t.call_id) for t in tail],
            whole=len(tail) < ALIGN_WINDOW,
        )
        seq, turn = tail[-1].seq + 1, tail[-1].turn or 0
        fresh = []
        for event in events[anchor + 1 :]:
            if event.type == "user/message" and event.source_kind is None:
                turn += 1
            fresh.append(replace(event, seq=seq, turn=turn))
            seq += 1
        self._turn = turn
        return fresh

    def with_memory(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        query: str | None = None,
        budget: int | None = None,
    ) -> list[dict[str, Any]]:
        """Record, then return a new list with the memory message before the last user message.

        Blocks convmem inserted earlier are left out of the result; when there is
        nothing to inject the result is otherwise a plain copy. ``query`` defaults
        to the newest user text; ``budget`` overrides the token budget.
        """
        kept = [dict(m) for m in messages if not is_memory_message(m)]
        # a user message of tool results only answers the call before it and must stay
        # right after it: the block goes before the person's last own message
        last_user = max((i for i, m in enumerate(kept) if _is_prompt(m)), default=None)
        try:
            text = self._block(messages, kept, last_user, query, budget)
        except Exception as exc:  # memory must never break the agent loop: fail open
            _log_failure(self.runtime, exc)
            return kept
        if text is None:
            return kept
        if last_user is None:
            last_user = 0
            while last_user < len(kept) and kept[last_user].get("role") in ("system", "developer"):
                last_user += 1
        kept.insert(last_user, self._memory_message(text, kept))
        return kept

    def _block(
        self,
        messages: Sequence[Mapping[str, Any]],
        kept: list[dict[str, Any]],
        last_user: int | None,
        query: str | None,
        budget: int | None,
    ) -> str | None:
        """Record the list, then assemble; the block text or None."""
        self.record(messages)
        visible = []
        now = self.runtime.store.now()
        for event in messages_to_events(self.session_id, kept):
            stored_text = self.runtime.capture.prepare(event, now)[0][7]
            if stored_text:
                visible.append(stored_text)
        step = 1
        previous_model = False
        for message in kept[(last_user or 0) :]:
            model = _model_side(message)
            step += int(model and not previous_model)
            previous_model = model
        text: str | None = self.runtime.pre_step(
            self.session_id, visible, self._turn, step, query, budget=budget
        )
        return text

    def _memory_message(self, text: str, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        api = self.api
        if api == "auto":
            api = "responses" if any("type" in m for m in messages) else "chat"
        if api == "responses":
            return {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            }
        return {"role": "user", "name": MEMORY_NAME, "content": text}


def _log_failure(runtime: MemoryRuntime, exc: BaseException) -> None:
    import traceback

    from convmem.core.paths import append_private

    try:
        log = runtime.settings.data_dir / str(runtime.settings["diagnostics.log_file"])
        append_private(
            log,
            f"openai adapter: {type(exc).__name__}: {exc}\n"
            + "".join(traceback.format_exception(exc))
            + "\n",
        )
    except Exception:
        pass
