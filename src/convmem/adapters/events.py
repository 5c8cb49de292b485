"""The canonical JSON Lines event format: parsing one object into an :class:`Event`.

The format is documented in docs/event-format.md. Parsing is strict about types
and lenient about extra fields; every problem is an :class:`EventFormatError`
that names the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from convmem.capture import Event
from convmem.errors import EventFormatError

MAX_BLOCK_DEPTH = 8
#: Events that mark a moment rather than carry words: they may come without text.
MARKER_TYPES = ("compaction/start", "compaction/prune", "compaction/end")
TOOL_RESULT_BLOCKS = ("tool_result", "tool-result", "function_call_output")


def content_text(content: Any, depth: int = 0, *, tool_results: bool = False) -> str:
    """Flatten message content (a string or a list of blocks) to plain text.

    Text blocks contribute their text; tool calls are rendered as
    ``name(arguments)``; images and unknown blocks are skipped. ``tool_result``
    blocks contribute their content only with ``tool_results`` (the text of a tool's
    own answer): inside a message they are a tool's output, never the author's words,
    and the adapters turn them into ``tool/result`` events of their own.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if depth > MAX_BLOCK_DEPTH:
        return ""
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        raise EventFormatError("field 'content' must be a string or a list of blocks")
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text"):
            text = block.get("text")
            if text is not None and not isinstance(text, str):
                raise EventFormatError(f"a {kind!r} block's field 'text' must be a string")
            parts.append(text or "")
        elif kind in ("tool-call", "tool_use", "function_call"):
            name = block.get("name") or "tool"
            args = block.get("arguments", block.get("input"))
            if not isinstance(args, str):
                args = json.dumps(args, ensure_ascii=False, sort_keys=True)
            parts.append(f"{name}({args})")
        elif kind in TOOL_RESULT_BLOCKS and tool_results:
            inner = block.get("content", block.get("output"))
            parts.append(content_text(inner, depth + 1, tool_results=True))
    return "\n".join(p for p in parts if p)


def is_tool_result_block(block: Any) -> bool:
    """A ``tool_result`` block (Anthropic), or its spellings in other formats."""
    return isinstance(block, Mapping) and block.get("type") in TOOL_RESULT_BLOCKS


def _opt_str(obj: Mapping[str, Any], name: str) -> str | None:
    value = obj.get(name)
    if value is None or isinstance(value, str):
        return value
    raise EventFormatError(f"field {name!r} must be a string or null")


def _iso_time(obj: Mapping[str, Any]) -> str | None:
    """The event's time, which must read as ISO 8601 ("2026-11-02T09:00:00Z"): day
    headings and "when" in the block come from it."""
    value = _opt_str(obj, "time")
    if value is None:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise EventFormatError(
            f"field 'time' is {value[:40]!r}, not an ISO 8601 time such as 2026-11-02T09:00:00Z"
        ) from None
    return value


def _opt_int(obj: Mapping[str, Any], name: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise EventFormatError(f"field {name!r} must be a whole number or null")
    return value


def parse_event(obj: Any, default_session: str | None = None) -> Event:
    """Build a validated :class:`Event` from one decoded JSON object."""
    if not isinstance(obj, Mapping):
        raise EventFormatError("the line is not a JSON object")
    session_id = obj.get("session_id", default_session)
    if default_session is not None and obj.get("session_id") is None:
        session_id = default_session
    if "seq" not in obj:
        raise EventFormatError("field 'seq' is missing")
    if "type" not in obj:
        raise EventFormatError("field 'type' is missing")
    if not isinstance(obj["type"], str):
        raise EventFormatError("field 'type' must be a string")
    if "text" in obj and obj["text"] is not None:
        if not isinstance(obj["text"], str):
            raise EventFormatError("field 'text' must be a string")
        text = obj["text"]
    else:
        # a tool's answer inside another event's content is not that event's text
        text = content_text(obj.get("content"), tool_results=obj["type"] == "tool/result")
    source = obj.get("source")
    if source is not None and not isinstance(source, Mapping):
        raise EventFormatError("field 'source' must be an object or null")
    source = source or {}
    event = Event(
        session_id=session_id,
        seq=obj["seq"],
        type=obj["type"],
        text=text,
        time=_iso_time(obj),
        turn=_opt_int(obj, "turn"),
        step=_opt_int(obj, "step"),
        role=_opt_str(obj, "role"),
        source_kind=_opt_str(source, "kind"),
        source_form=_opt_str(source, "form"),
        tool_name=_opt_str(obj, "tool_name"),
        call_id=_opt_str(obj, "call_id"),
    )
    event.validate()
    # checked last, so that a line's first problem is the one named
    if obj.get("text") is None and obj.get("content") is None and event.type not in MARKER_TYPES:
        raise EventFormatError("field 'text' (or 'content') is missing or null")
    return event


def event_to_json(event: Event) -> dict[str, Any]:
    """The canonical JSON object for an event (the inverse of :func:`parse_event`)."""
    out: dict[str, Any] = {"session_id": event.session_id, "seq": event.seq, "type": event.type}
    for name in ("time", "turn", "step", "role"):
        value = getattr(event, name)
        if value is not None:
            out[name] = value
    out["text"] = event.text
    if event.source_kind or event.source_form:
        out["source"] = {"kind": event.source_kind, "form": event.source_form}
    if event.tool_name:
        out["tool_name"] = event.tool_name
    if event.call_id:
        out["call_id"] = event.call_id
    return out
