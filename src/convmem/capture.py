"""Capture: committed host events become ``events`` rows, idempotently.

Capture happens after the fact and never edits the host's log. Text is scrubbed
of private spans and secrets, normalized, hashed and capped; an event whose text
was cut, or whose type is configured for it, also keeps its full text in
``archive``. ``(session_id, seq)`` is unique and inserts are ``INSERT OR IGNORE``,
so a replayed or repeated event changes nothing.

Which rows count as the user's words is decided here too
(:func:`is_user_evidence`), because every consumer must agree on it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convmem.core.constants import (
    BLOCK_MARKER,
    CAPTURED_EVENT_TYPES,
    GENERATED_SOURCE_KINDS,
    ROLE_BY_PREFIX,
    USER_SOURCE_KINDS,
)
from convmem.core.text import normalize_text, sha256_hex
from convmem.errors import EventFormatError
from convmem.privacy import scrub, strip_ansi

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore

MAX_SESSION_ID_CHARS = 200
#: Longest metadata field (time, role, source, tool name, call id) accepted.
MAX_FIELD_CHARS = 1000
_STRING_FIELDS = ("time", "role", "source_kind", "source_form", "tool_name", "call_id")


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Event:
    """A host event in canonical form (see docs/event-format.md)."""

    session_id: str
    seq: int
    type: str
    text: str = ""
    time: str | None = None
    turn: int | None = None
    step: int | None = None
    role: str | None = None
    source_kind: str | None = None
    source_form: str | None = None
    tool_name: str | None = None
    call_id: str | None = None

    def validate(self) -> None:
        """Raise :class:`EventFormatError` naming the first bad field."""
        if not isinstance(self.session_id, str) or not self.session_id.strip():
            raise EventFormatError("field 'session_id' must be a non-empty string")
        if len(self.session_id) > MAX_SESSION_ID_CHARS:
            raise EventFormatError(f"field 'session_id' is longer than {MAX_SESSION_ID_CHARS}")
        if isinstance(self.seq, bool) or not isinstance(self.seq, int) or self.seq < 0:
            raise EventFormatError("field 'seq' must be a whole number ≥ 0")
        if self.seq > 2**62:
            raise EventFormatError("field 'seq' is too large")
        if self.type not in CAPTURED_EVENT_TYPES:
            raise EventFormatError(
                f"field 'type' is {self.type!r}; expected one of {', '.join(CAPTURED_EVENT_TYPES)}"
            )
        if not isinstance(self.text, str):
            raise EventFormatError("field 'text' must be a string")
        for name in ("turn", "step"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise EventFormatError(f"field {name!r} must be a whole number or null")
            if value is not None and abs(value) > 2**62:  # SQLite integers are 64-bit
                raise EventFormatError(f"field {name!r} is too large")
        for name in _STRING_FIELDS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise EventFormatError(f"field {name!r} must be a string or null")
            if value is not None and len(value) > MAX_FIELD_CHARS:
                raise EventFormatError(f"field {name!r} is longer than {MAX_FIELD_CHARS}")
        # Text is repaired on the way in (U+FFFD); identifiers are refused, so that two
        # different ids never become one, and SQLite is never handed unencodable text.
        for name in ("session_id", *_STRING_FIELDS):
            value = getattr(self, name)
            if value is not None and not _encodable(value):
                raise EventFormatError(f"field {name!r} is not valid Unicode (a lone surrogate)")

    @property
    def effective_role(self) -> str:
        return self.role or ROLE_BY_PREFIX.get(self.type.split("/", 1)[0], "system")


def is_generated(source_kind: str | None, text: str = "") -> bool:
    """Text a program produced: another plugin's context, or convmem's own block."""
    return source_kind in GENERATED_SOURCE_KINDS or is_convmem_block(text)


def is_user_evidence(
    event_type: str, source_kind: str | None, text: str, role: str | None = None
) -> bool:
    """True only for what the person typed: a user message from a user source kind,
    in the user's role (a ``user/message`` recorded with another role is not)."""
    return (
        event_type == "user/message"
        and source_kind in USER_SOURCE_KINDS
        and role in (None, "user")
        and not is_convmem_block(text)
    )


def user_words(text: str) -> str:
    """A user message without any convmem block pasted into it.

    A block that opens the message makes the whole message generated
    (:func:`is_convmem_block`). One pasted after the person's own words is cut out:
    its marker line, the preamble line after it, and every following line that is a
    block line (a ``## `` heading or a ``- `` item), up to the first line that is not.
    """
    if BLOCK_MARKER not in text:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        at = line.find(BLOCK_MARKER)
        if at < 0:
            kept.append(line)
            i += 1
            continue
        if line[:at].strip():
            kept.append(line[:at].rstrip())
        i += 2  # the marker line and the preamble
        while i < len(lines) and lines[i].lstrip().startswith(("## ", "- ")):
            i += 1
    return "\n".join(kept).strip()


def is_convmem_block(text: str) -> bool:
    """convmem's own block coming back, even with its source lost.

    It opens with :data:`BLOCK_MARKER`; whitespace and invisible format characters
    (a byte-order mark, zero-width spaces) that a host or a copy may put before it
    do not hide it.
    """
    first = text[:1]
    if first.isascii() and not first.isspace():  # no format character is ASCII
        return text.startswith(BLOCK_MARKER)
    start = 0
    while start < len(text) and (
        text[start].isspace() or unicodedata.category(text[start]) == "Cf"
    ):
        start += 1
    return text.startswith(BLOCK_MARKER, start)


@dataclass
class CaptureResult:
    inserted: int = 0
    duplicates: int = 0
    archived: int = 0
    #: Texts cut in the event log (``capture.max_text_chars``) ...
    truncated: int = 0
    #: ... of which the archive does not hold the whole either.
    lost: int = 0
    #: (session, seq) of duplicates whose stored text differs from the one sent: the
    #: stored one stays, as for any duplicate, but a reader of files should hear of it.
    changed: list[tuple[str, int]] = field(default_factory=list)

    def add(self, other: CaptureResult) -> None:
        self.inserted += other.inserted
        self.duplicates += other.duplicates
        self.archived += other.archived
        self.truncated += other.truncated
        self.lost += other.lost
        self.changed += other.changed


class Capture:
    """Writes canonical events through the store."""

    def __init__(self, store: MemoryStore, settings: Settings) -> None:
        self.store = store
        self.max_chars = int(settings["capture.max_text_chars"])
        self.redact = bool(settings["capture.redact_secrets"])
        self.drop_private = bool(settings["capture.drop_private"])
        self.archive_enabled = bool(settings["archive.enabled"])
        self.archive_types = frozenset(settings["archive.event_types"])
        self.archive_max = int(settings["archive.max_chars_per_event"])
        self.enabled = bool(settings["capture.enabled"])

    def prepare(self, event: Event, now: str) -> tuple[tuple[Any, ...], tuple[Any, ...] | None]:
        """The ``events`` row (and ``archive`` row, if any) for one event."""
        # Scrub the normalized text: a control character inside a secret or a private
        # tag would hide it from the patterns, then vanish in normalization. Colour
        # codes go first, while their ESC is still there to recognise them by. Only
        # what can be stored is scanned (the archive's cap, or the row's).
        text = normalize_text(strip_ansi(event.text)) if event.text else ""
        limit = max(self.max_chars, self.archive_max if self.archive_enabled else 0)
        scrubbed = scrub(text, private=self.drop_private, secrets=self.redact, limit=limit)
        if scrubbed != text:
            text = normalize_text(scrubbed)
        truncated = len(text) > self.max_chars
        stored = text[: self.max_chars] if truncated else text
        archive_row = None
        store_mode = "host"
        if self.archive_enabled and (truncated or event.type in self.archive_types) and text:
            store_mode = "archive"
            full = text[: self.archive_max]
            archive_row = (
                event.session_id,
                f"seq:{event.seq}",
                full,
                len(full),
                int(len(text) > self.archive_max),
                now,
            )
        row = (
            event.session_id,
            event.seq,
            event.type,
            event.time,
            event.turn,
            event.step,
            event.effective_role,
            stored,
            event.source_kind,
            event.source_form,
            event.tool_name,
            event.call_id,
            store_mode,
            sha256_hex(text),
            int(truncated),
            now,
        )
        return row, archive_row

    def capture(self, event: Event) -> CaptureResult:
        return self.capture_many([event])

    def capture_many(self, events: Iterable[Event]) -> CaptureResult:
        """Insert a batch in one transaction; already-present events are ignored."""
        result = CaptureResult()
        if not self.enabled:
            return result
        now = self.store.now()
        by_session: dict[str, tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]] = {}
        for event in events:
            event.validate()
            row, archive_row = self.prepare(event, now)
            rows, archives = by_session.setdefault(event.session_id, ([], []))
            rows.append(row)
            if archive_row is not None:
                archives.append(archive_row)
            result.truncated += row[14]
            result.lost += row[14] and (archive_row is None or archive_row[4])
        with self.store.transaction():
            for session_id, (rows, archives) in by_session.items():
                inserted = self._insert(session_id, rows)
                result.inserted += inserted
                result.duplicates += len(rows) - inserted
                if inserted < len(rows):
                    result.changed += self._changed(session_id, rows)
                if inserted:
                    result.archived += self.store.insert_archive(archives)
                    self.store.touch_session(session_id)
                    self.store.advance_checkpoint(
                        session_id, "last_event_seq", max(r[1] for r in rows)
                    )
        return result

    def _changed(self, session_id: str, rows: list[tuple[Any, ...]]) -> list[tuple[str, int]]:
        """The rows whose (session, seq) the store holds with another text."""
        stored = {
            e.seq: e.content_hash
            for e in self.store.events_by_seq(session_id, [r[1] for r in rows])
        }
        return [(session_id, r[1]) for r in rows if stored.get(r[1], r[13]) != r[13]]

    def _insert(self, session_id: str, rows: list[tuple[Any, ...]]) -> int:
        """Insert one session's rows; the new ones behind the extraction cursor are queued.

        Extraction reads forward from ``last_extract_seq``, so an event that arrives
        after the cursor passed its seq (a backfill, an out-of-order file, a second
        writer) would never be read; it goes to ``pending_extraction`` instead.
        """
        cursor = self.store.checkpoint(session_id).last_extract_seq
        late = [r for r in rows if r[1] <= cursor]
        ahead = [r for r in rows if r[1] > cursor]
        inserted = self.store.insert_events(ahead) if ahead else 0
        for row in late:
            if self.store.insert_events([row]):
                inserted += 1
                self.store.add_pending(session_id, row[1], "captured after extraction passed it")
        return inserted
