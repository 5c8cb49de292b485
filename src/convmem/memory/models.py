"""Plain records the store hands out, independent of the database driver."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class StoredEvent:
    """One ``events`` row."""

    session_id: str
    seq: int
    type: str
    text: str
    time: str | None = None
    turn: int | None = None
    step: int | None = None
    role: str | None = None
    source_kind: str | None = None
    source_form: str | None = None
    tool_name: str | None = None
    call_id: str | None = None
    store: str = "host"
    content_hash: str = ""
    truncated: bool = False

    @classmethod
    def from_row(cls, row: Any) -> StoredEvent:
        return cls(
            session_id=row["session_id"],
            seq=int(row["seq"]),
            type=row["type"],
            text=row["text"],
            time=row["time"],
            turn=row["turn"],
            step=row["step"],
            role=row["role"],
            source_kind=row["source_kind"],
            source_form=row["source_form"],
            tool_name=row["tool_name"],
            call_id=row["call_id"],
            store=row["store"],
            content_hash=row["content_hash"],
            truncated=bool(row["truncated"]),
        )

    @property
    def ref(self) -> str:
        return f"seq:{self.seq}"


@dataclass(frozen=True)
class MemoryItem:
    """One ``memory_items`` row with its JSON columns decoded."""

    id: str
    session_id: str
    kind: str
    content: str
    evidence_type: str
    status: str = "active"
    topic: str = ""
    conditions: tuple[str, ...] = ()
    scope: tuple[str, ...] = ()
    numbers: tuple[dict[str, Any], ...] = ()
    source_refs: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    content_hash: str = ""
    extractor: str = ""
    derived_from_seq: int | None = None
    created_at: str = ""
    updated_at: str = ""
    #: When the person said it: the source event's host time, else when it was stored.
    said_at: str | None = None

    @classmethod
    def from_row(cls, row: Any) -> MemoryItem:
        # one decode for the five JSON columns: this runs for every candidate item
        conditions, scope, nums, refs, supersedes = json.loads(
            f"[{row['conditions_json']},{row['scope_json']},{row['numbers_json']},"
            f"{row['source_refs_json']},{row['supersedes_json']}]"
        )
        return cls(
            id=row["id"],
            session_id=row["session_id"],
            kind=row["kind"],
            content=row["content"],
            evidence_type=row["evidence_type"],
            status=row["status"],
            topic=row["topic"],
            conditions=tuple(conditions),
            scope=tuple(scope),
            numbers=tuple(nums),
            source_refs=tuple(refs),
            supersedes=tuple(supersedes),
            superseded_by=row["superseded_by"],
            content_hash=row["content_hash"],
            extractor=row["extractor"],
            derived_from_seq=row["derived_from_seq"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            said_at=row["said_at"],
        )

    @property
    def source_seqs(self) -> tuple[int, ...]:
        return source_seqs(self.source_refs)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("conditions", "scope", "numbers", "source_refs", "supersedes"):
            data[key] = list(data[key])
        return data


def source_seqs(refs: Iterable[str]) -> tuple[int, ...]:
    """The event seqs among source refs (``seq:N``)."""
    out = []
    for ref in refs:
        if ref.startswith("seq:") and ref[4:].lstrip("-").isdigit():
            out.append(int(ref[4:]))
    return tuple(out)


@dataclass(frozen=True)
class Scope:
    """The sessions whose memory one step may draw on: its own, or its project's.

    ``sessions`` starts with ``session_id``; the project's other sessions follow, most
    recently active first. Only sessions of one project are ever in it, so nothing a
    scope reaches crosses projects.
    """

    session_id: str
    sessions: tuple[str, ...] = ()
    project: str | None = None

    def __post_init__(self) -> None:
        if not self.sessions or self.sessions[0] != self.session_id:
            rest = tuple(s for s in self.sessions if s != self.session_id)
            object.__setattr__(self, "sessions", (self.session_id, *rest))

    @property
    def others(self) -> tuple[str, ...]:
        """The project's other sessions, most recently active first."""
        return self.sessions[1:]

    @property
    def wide(self) -> bool:
        return len(self.sessions) > 1


def scope_sessions(where: str | Scope) -> tuple[str, ...]:
    """The session ids a store lookup covers: one session id, or a scope's sessions."""
    return (where,) if isinstance(where, str) else where.sessions


@dataclass
class TaskState:
    """The ``task_state`` row of a session."""

    session_id: str
    goal: str | None = None
    progress: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    open_items: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    updated_by_seq: int | None = None

    def is_empty(self) -> bool:
        return not (self.goal or self.progress or self.blockers or self.open_items)


@dataclass(frozen=True)
class Checkpoint:
    session_id: str
    last_event_seq: int = -1
    last_extract_seq: int = -1
    last_assembly_seq: int = -1
    last_validate_seq: int = -1
