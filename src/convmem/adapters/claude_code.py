"""Claude Code: its transcript as canonical events, and its hook settings.

Claude Code writes each session to an append-only JSON Lines transcript. Most
lines are not conversation (queue operations, request copies, cost state); of
the conversation lines, only some are the person's own words. The classification
below follows what a real install writes (docs/hosts/claude-code.md):

* ``user`` lines whose content is a string or text blocks, with no flag: a
  prompt the person typed (``user/message``, no source kind);
* ``tool_result`` blocks: ``tool/result`` (untrusted tool output);
* ``isCompactSummary``: ``compaction/summary`` then ``compaction/end``; the
  ``compact_boundary`` system line before it: ``compaction/start``;
* ``isMeta`` and other client-written user text: ``user/message`` with source
  kind ``client-meta`` (generated);
* ``<command-name>`` / ``<local-command-stdout>``: ``command/invoke`` /
  ``command/output``;
* ``attachment`` lines of type ``hook_additional_context``: ``user/message``
  with source kind ``hook-context`` (convmem's own block coming back);
* ``assistant`` lines: ``assistant/message`` (text) and ``tool/call`` (tool_use).

Sequence numbers are ordinals over the transcript: the n-th event the file
yields gets seq n, so reading a transcript again (after a lost cursor, or with
``convmem ingest``) yields the same seqs and inserts nothing. A hook sees the
person's prompt (and a compaction) before its transcript line exists; it
*reserves* the seq that line will take (:meth:`TranscriptParser.reserve_prompt`),
and when the line arrives it is matched to the reservation instead of becoming a
second event. The parser state (next ordinal, turn, reservations, tool names)
travels in the store's host cursor beside the byte offset.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from convmem.adapters.events import content_text
from convmem.capture import Event
from convmem.core.text import fix_surrogates, normalize_text, sha256_hex
from convmem.errors import EventFormatError
from convmem.privacy import scrub

if TYPE_CHECKING:
    from convmem.runtime import MemoryRuntime

#: ``host_cursors.source`` of the transcript byte cursor.
CURSOR_SOURCE = "claude-code/transcript"
STATE_VERSION = 1
MAX_REMEMBERED_TOOLS = 256
#: replies reserved by the Stop hook whose transcript lines are still awaited
MAX_OPEN_REPLIES = 4

_COMMAND_TAGS = ("<command-name>", "<command-message>", "<bash-input>")
_OUTPUT_TAGS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_CLIENT_TEXT = ("[Request interrupted by user", "<local-command-caveat>", "<system-reminder>")
_TAG = re.compile(r"<([a-z-]+)>(.*?)</\1>", re.S)
_SLASH_COMMAND = re.compile(r"/[A-Za-z][\w:.-]*(?:\s|$)")


def _tags(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in _TAG.finditer(text)}


def _prompt_key(text: str) -> str:  # stored: scrubbed, never a private span's fingerprint
    return sha256_hex(normalize_text(scrub(normalize_text(text))))[:16]


def _now_iso() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def is_slash_command(prompt: str) -> bool:
    """``/compact``, ``/convmem status``: the transcript records these as commands."""
    return bool(_SLASH_COMMAND.match(prompt.strip()))


class TranscriptParser:
    """Turns transcript lines into events, with seqs that do not depend on who reads."""

    def __init__(self, session_id: str, state: Mapping[str, Any] | None = None) -> None:
        self.session_id = session_id
        state = state or {}
        self.next_seq = int(state.get("next", 1))
        self.turn = int(state.get("turn", 0))
        self.pending: list[dict[str, Any]] = [dict(p) for p in state.get("pending", ())]
        self.taken: list[int] = [int(s) for s in state.get("taken", ())]
        self.tools: dict[str, str] = dict(state.get("tools", {}))
        self.version: str | None = state.get("version")
        #: key of the last reply text read from the file (see :meth:`reserve_reply`)
        self.last_reply: str | None = state.get("reply")
        #: key of the last reply read from the file as a new one (not the line of a
        #: reservation) since the last Stop hook's reply (see :meth:`reserve_reply`)
        self.replied_since_stop: str | None = state.get("replied")

    @property
    def state(self) -> dict[str, Any]:
        """Everything needed to continue after the last line read, as JSON data."""
        tools = dict(list(self.tools.items())[-MAX_REMEMBERED_TOOLS:])
        state: dict[str, Any] = {
            "v": STATE_VERSION,
            "next": self.next_seq,
            "turn": self.turn,
            "pending": self.pending,
            "taken": self.taken,
            "tools": tools,
        }
        if self.version:
            state["version"] = self.version
        if self.last_reply:
            state["reply"] = self.last_reply
        if self.replied_since_stop:
            state["replied"] = self.replied_since_stop
        return state

    # --- sequence numbers ------------------------------------------------------------

    def _used(self) -> set[int]:
        return {int(p["seq"]) for p in self.pending} | set(self.taken)

    def _take_seq(self) -> int:
        used = self._used()
        while self.next_seq in used:
            self.next_seq += 1
        seq = self.next_seq
        self.next_seq += 1
        self.taken = [s for s in self.taken if s >= self.next_seq]
        return seq

    def _free_seq(self) -> int:
        """The seq the next transcript event would get, without taking it."""
        used = self._used()
        seq = self.next_seq
        while seq in used:
            seq += 1
        return seq

    def _settle(self, kind: str, prompt_id: Any = None, text: str = "") -> bool:
        """If a line matches a reservation, settle it and report True.

        The line's event is already stored under the reserved seq, which stays used,
        so the file still yields exactly one seq per event, as a fresh read would.
        """
        for n, p in enumerate(self.pending):
            if p["kind"] != kind:
                continue
            if kind == "prompt":
                same_id = prompt_id and p.get("prompt_id") and p["prompt_id"] == prompt_id
                if not same_id and p.get("key") != _prompt_key(text):
                    continue
            if kind == "reply" and p.get("key") != _prompt_key(text):
                continue
            del self.pending[n]
            self._settled(int(p["seq"]))
            if kind == "reply":
                # the file keeps replies in order: an older reservation still open
                # now never meets its line (its event stays stored)
                for older in [q for q in self.pending[:n] if q["kind"] == "reply"]:
                    self.pending.remove(older)
                    self._settled(int(older["seq"]))
            return True
        return False

    def _settled(self, seq: int) -> None:
        if seq >= self.next_seq:
            self.taken.append(seq)
        used = self._used()
        while self.next_seq in used:
            self.next_seq += 1
        self.taken = sorted(s for s in self.taken if s >= self.next_seq)

    def reserve_prompt(
        self, text: str, prompt_id: str | None = None, when: str | None = None
    ) -> Event:
        """The event for a prompt seen before its transcript line (UserPromptSubmit)."""
        for p in [p for p in self.pending if p["kind"] == "prompt"]:
            # An older prompt whose line never came (another hook blocked it): its
            # event stays stored, and its seq stays used.
            self.pending.remove(p)
            self._settled(int(p["seq"]))
        self.last_reply = None  # a new turn: its reply is yet to come
        seq = self._free_seq()
        self.pending.append(
            {"kind": "prompt", "seq": seq, "prompt_id": prompt_id, "key": _prompt_key(text)}
        )
        self.turn += 1
        return Event(
            self.session_id, seq, "user/message", text, when or _now_iso(), self.turn, role="user"
        )

    def reserve_reply(
        self, text: str, when: str | None = None, continued: bool = False
    ) -> Event | None:
        """The event for the final reply when the Stop hook runs before its line is written.

        Claude Code hands the Stop hook the reply (``last_assistant_message``) but may
        not have appended it to the transcript yet (seen on 2.1.328, about one time
        in two); validation must judge it now. The line, when it comes, settles the
        reservation instead of adding a second event. None: the file already had it,
        or this Stop was already told of it.

        ``continued`` (the payload's ``stop_hook_active``): the model is answering a
        Stop hook's feedback, so this is a new reply even in the words of the last
        one (a model repeating the reply a check blocked); the file had it only if a
        reply in these words was read as a new one since the last Stop. Lines come
        late (the first reply's, even the prompt's, after the first Stop), so what
        was read since then says nothing more.
        """
        key = _prompt_key(text)
        read = key == (self.replied_since_stop if continued else self.last_reply)
        waiting = any(p["kind"] == "reply" and p.get("key") == key for p in self.pending)
        self.replied_since_stop = None
        if read or (waiting and not continued):
            return None
        # An older reservation stays open: Claude Code may write a reply's line after
        # the next Stop (seen on 2.1.328 when a blocked reply was repaired), and a
        # line read then must settle it rather than be judged as a new reply.
        replies = [p for p in self.pending if p["kind"] == "reply"]
        for p in replies[: max(0, len(replies) - MAX_OPEN_REPLIES + 1)]:
            self.pending.remove(p)  # its line never came: its event stays stored
            self._settled(int(p["seq"]))
        seq = self._free_seq()
        self.pending.append({"kind": "reply", "seq": seq, "key": key})
        self.last_reply = key
        return Event(
            self.session_id,
            seq,
            "assistant/message",
            text,
            when or _now_iso(),
            self.turn or None,
            role="assistant",
            source_kind="model",
        )

    def reserve_compaction(self, trigger: str = "", when: str | None = None) -> Event | None:
        """The ``compaction/start`` for a compaction announced before its boundary line."""
        if any(p["kind"] == "compaction" for p in self.pending):
            return None
        seq = self._free_seq()
        self.pending.append({"kind": "compaction", "seq": seq})
        text = f"Conversation compacted ({trigger or 'reported by the SessionStart hook'})."
        return Event(
            self.session_id,
            seq,
            "compaction/start",
            text,
            when or _now_iso(),
            self.turn,
            role="system",
        )

    # --- lines -----------------------------------------------------------------------

    def parse_line(self, line_no: int, obj: Any) -> list[Event]:
        """The events of one decoded transcript line (often none)."""
        if not isinstance(obj, Mapping):
            raise EventFormatError("the line is not a JSON object")
        kind = obj.get("type")
        if self.version is None and isinstance(obj.get("version"), str):
            self.version = obj["version"]
        if kind == "user":
            # anything the client or the person adds after a reply (a Stop hook's
            # feedback, a tool result, a prompt) means the next reply is a new one,
            # even in the same words
            self.last_reply = None
            return self._user(obj)
        if kind == "assistant":
            return self._assistant(obj)
        if kind == "system" and obj.get("subtype") == "compact_boundary":
            return self._boundary(obj)
        if kind == "attachment":
            return self._attachment(obj)
        return []  # queue-operation, api-request*, cost-state, last-prompt, mode, ...

    def _event(self, obj: Mapping[str, Any], type_: str, text: str, **kw: Any) -> Event:
        when = obj.get("timestamp")
        return Event(
            self.session_id,
            self._take_seq(),
            type_,
            text,
            when if isinstance(when, str) else None,
            self.turn or None,
            **kw,
        )

    def _user(self, obj: Mapping[str, Any]) -> list[Event]:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if obj.get("isCompactSummary"):
            return [
                self._event(
                    obj,
                    "compaction/summary",
                    content_text(content),
                    role="system",
                    source_kind="compact-summary",
                ),
                self._event(obj, "compaction/end", "Compaction finished.", role="system"),
            ]
        blocks = content if isinstance(content, list) else []
        results: list[Mapping[str, Any]] = [
            b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"
        ]
        if results or ("toolUseResult" in obj and not blocks):
            return self._tool_results(obj, results or [{"content": content}], blocks)
        text = content_text(content) if isinstance(content, str | list) else ""
        stripped = text.lstrip()
        if obj.get("isMeta") or obj.get("isVisibleInTranscriptOnly"):
            return [self._event(obj, "user/message", text, role="user", source_kind="client-meta")]
        if stripped.startswith(_COMMAND_TAGS):
            tags = _tags(text)
            name = (
                tags.get("command-name")
                or tags.get("bash-input")
                or tags.get("command-message", "")
            )
            args = tags.get("command-args", "")
            self.turn += 1
            self.last_reply = None
            return [
                self._event(
                    obj,
                    "command/invoke",
                    f"{name} {args}".strip(),
                    role="command",
                    source_kind="command",
                )
            ]
        if stripped.startswith(_OUTPUT_TAGS):
            body = "\n".join(v for v in _tags(text).values() if v)
            return [self._event(obj, "command/output", body, role="command", source_kind="command")]
        if not text.strip():
            return []
        if stripped.startswith(_CLIENT_TEXT):
            return [self._event(obj, "user/message", text, role="user", source_kind="client-meta")]
        if obj.get("isSidechain"):
            # A sub-agent's task, written by the model, not by the person.
            return [self._event(obj, "user/message", text, role="user", source_kind="subagent")]
        if self._settle("prompt", obj.get("promptId"), text):
            return []  # already captured from the UserPromptSubmit payload
        self.turn += 1
        self.last_reply = None
        return [self._event(obj, "user/message", text, role="user")]

    def _tool_results(
        self, obj: Mapping[str, Any], results: list[Mapping[str, Any]], blocks: list[Any]
    ) -> list[Event]:
        events: list[Event] = []
        for block in results:
            call_id = block.get("tool_use_id")
            call_id = call_id if isinstance(call_id, str) else None
            events.append(
                self._event(
                    obj,
                    "tool/result",
                    content_text(block.get("content"), tool_results=True),
                    role="tool",
                    source_kind="tool",
                    source_form="error" if block.get("is_error") else None,
                    tool_name=self.tools.get(call_id or ""),
                    call_id=call_id,
                )
            )
        extra = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"]
        if extra:  # reminders the client put beside the results
            events.append(
                self._event(
                    obj, "user/message", content_text(extra), role="user", source_kind="client-meta"
                )
            )
        return events

    def _assistant(self, obj: Mapping[str, Any]) -> list[Event]:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        blocks = [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []
        synthetic = bool(obj.get("isApiErrorMessage")) or (
            isinstance(message, Mapping) and message.get("model") == "<synthetic>"
        )
        events: list[Event] = []
        texts = [b for b in blocks if b.get("type") == "text"]
        text = content_text(texts)
        stored = False  # already stored: the Stop hook reserved this reply
        if text.strip() and not synthetic:
            self.last_reply = _prompt_key(text)
            stored = self._settle("reply", text=text)
            if not stored:
                self.replied_since_stop = self.last_reply
        if text.strip() and not stored:
            events.append(
                self._event(
                    obj,
                    "assistant/message",
                    text,
                    role="assistant",
                    source_kind="client-meta" if synthetic else "model",
                )
            )
        for block in blocks:
            if block.get("type") != "tool_use":
                continue
            name = block.get("name") if isinstance(block.get("name"), str) else None
            call_id = block.get("id") if isinstance(block.get("id"), str) else None
            if call_id and name:  # (no lone surrogate: the state must stay storable)
                self.tools[fix_surrogates(call_id)[:1000]] = fix_surrogates(name)[:1000]
            events.append(
                self._event(
                    obj,
                    "tool/call",
                    content_text([block]),
                    role="assistant",
                    source_kind="model",
                    tool_name=name,
                    call_id=call_id,
                )
            )
        return events

    def _boundary(self, obj: Mapping[str, Any]) -> list[Event]:
        if self._settle("compaction"):
            return []
        meta = obj.get("compactMetadata")
        meta = meta if isinstance(meta, Mapping) else {}
        details = ", ".join(
            f"{label} {meta[key]}"
            for key, label in (("trigger", "trigger"), ("preTokens", "tokens before"))
            if meta.get(key) is not None
        )
        text = f"Conversation compacted ({details})." if details else "Conversation compacted."
        return [self._event(obj, "compaction/start", text, role="system")]

    def _attachment(self, obj: Mapping[str, Any]) -> list[Event]:
        attachment = obj.get("attachment")
        if not isinstance(attachment, Mapping):
            return []
        if attachment.get("type") != "hook_additional_context":
            return []
        content = attachment.get("content")
        parts = content if isinstance(content, list) else [content]
        text = "\n".join(p for p in parts if isinstance(p, str))
        hook = attachment.get("hookEvent") or attachment.get("hookName")
        return [
            self._event(
                obj,
                "user/message",
                text,
                role="user",
                source_kind="hook-context",
                source_form=hook if isinstance(hook, str) else None,
            )
        ]


# --- reading the transcript after the fact ---------------------------------------------


def _head(fh: Any) -> str:
    fh.seek(0)
    first = fh.readline(4096)
    return sha256_hex(first.decode("utf-8", "replace"))[:16] if first.endswith(b"\n") else ""


def read_new_lines(
    path: str | os.PathLike[str] | None, position: int, state: Mapping[str, Any]
) -> tuple[list[tuple[int, Any]], int, dict[str, Any]]:
    """Complete lines past ``position``: ``([(line_no, obj | None)], new_position, state)``.

    A transcript that shrank or whose first line changed was replaced; it is read
    again from the start with a fresh parser state (same seqs, so nothing doubles).
    A partial last line is left for the next read.
    """
    state = dict(state)
    if not path or not os.path.isfile(path):
        return [], position, state
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        head = _head(fh)
        if position > size or (position and state.get("head") and state["head"] != head):
            position, state = 0, {}
        fh.seek(position)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    lines: list[tuple[int, Any]] = []
    line_no = int(state.get("lines", 0))
    for raw in data[:end].splitlines():
        line_no += 1
        try:
            obj = json.loads(raw) if raw.strip() else None
        except (ValueError, RecursionError):
            obj = None  # a torn, foreign or absurdly nested line: skipped, never fatal
        lines.append((line_no, obj))
    state["lines"] = line_no
    if head:
        state["head"] = head
    return lines, position + end, state


def capture_transcript(
    runtime: MemoryRuntime,
    session_id: str,
    transcript_path: str | None,
    *,
    prompt: str | None = None,
    prompt_id: str | None = None,
    reply: str | None = None,
    continued: bool = False,
    compacted: bool = False,
) -> TranscriptParser:
    """Capture what the transcript gained since the stored cursor (plus a prompt or reply
    the hook payload carries ahead of its line; ``continued``: see
    :meth:`TranscriptParser.reserve_reply`).

    One write transaction covers cursor, events and derived memory, so two hook
    processes never interleave and a failure leaves the cursor where it was.
    """
    store = runtime.store
    with store.transaction():
        position, state = store.host_cursor(session_id, CURSOR_SOURCE)
        lines, position, state = read_new_lines(transcript_path, position, state)
        parser = TranscriptParser(session_id, state)
        events: list[Event] = []
        for line_no, obj in lines:
            if not isinstance(obj, Mapping):
                continue
            try:  # a malformed line yields nothing (ingest drops it too, so later seqs
                found = parser.parse_line(line_no, obj)  # agree); raising would keep
                for event in found:  # the cursor before it for good
                    event.validate()
            except (EventFormatError, RecursionError):
                continue
            events += found
        if compacted and not any(e.type == "compaction/start" for e in events):
            reserved = parser.reserve_compaction()
            if reserved is not None:
                events.append(reserved)
        if prompt and prompt.strip() and not is_slash_command(prompt):
            events.append(parser.reserve_prompt(prompt, prompt_id))
        if reply and reply.strip():
            reserved_reply = parser.reserve_reply(reply, continued=continued)
            if reserved_reply is not None:
                events.append(reserved_reply)
        if events:
            runtime.on_events(events)
        new_state = parser.state
        for key in ("head", "lines"):
            if key in state:
                new_state[key] = state[key]
        store.set_host_cursor(session_id, CURSOR_SOURCE, position, new_state)
    return parser
