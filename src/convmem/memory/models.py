"""Plain records the store hands out, independent of the database driver."""

from __future__ import annotations

import json
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
        )

    @property
    def source_seqs(self) -> tuple[int, ...]:
        out = []
        for ref in self.source_refs:
            if ref.startswith("seq:") and ref[4:].lstrip("-").isdigit():
                out.append(int(ref[4:]))
        return tuple(out)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("conditions", "scope", "numbers", "source_refs", "supersedes"):
            data[key] = list(data[key])
        return data


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
