"""Plain records the store hands out, independent of the database driver."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from operator import itemgetter
from typing import Any, TypeVar


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
        return cls.from_rows([row])[0]

    @classmethod
    def from_rows(cls, rows: Sequence[Any]) -> list[StoredEvent]:
        """Events from ``rows`` of one query (all with the same columns)."""
        events = _bare(cls, rows, _EVENT_COLUMNS)
        for event in events:
            values = event.__dict__
            values["seq"] = int(values["seq"])
            values["truncated"] = bool(values["truncated"])
        return events

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
        return cls.from_rows([row])[0]

    @classmethod
    def from_rows(cls, rows: Sequence[Any]) -> list[MemoryItem]:
        """Items from ``rows`` of one query (all with the same columns)."""
        items = _bare(cls, rows, _ITEM_COLUMNS + _JSON_COLUMNS)
        for item in items:
            values = item.__dict__
            # one decode for the five JSON columns: this runs for every candidate item
            decoded = json.loads(f"[{','.join([values.pop(c) for c in _JSON_COLUMNS])}]")
            for name, value in zip(_JSON_FIELDS, decoded, strict=True):
                values[name] = tuple(value)
        return items

    @property
    def source_seqs(self) -> tuple[int, ...]:
        return source_seqs(self.source_refs)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("conditions", "scope", "numbers", "source_refs", "supersedes"):
            data[key] = list(data[key])
        return data


_T = TypeVar("_T")


def _bare(cls: type[_T], rows: Sequence[Any], columns: tuple[str, ...]) -> list[_T]:
    """Instances of the frozen record ``cls``, each holding a row's ``columns`` as they are.

    The store decodes a few hundred rows for every step; a frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``, which costs about
    half of that. These records have no ``__post_init__``, so filling ``__dict__``
    gives the same object. A ``sqlite3.Row`` finds a column by name by comparing it
    with each column's name, so the columns' positions are found once, in the first
    row (the first column of that name, as ``row[name]`` takes); a dict row (what
    PostgreSQL's driver gives) is read by name.
    """
    if not rows:
        return []
    first = rows[0]
    keys: Sequence[Any] = columns
    if not isinstance(first, dict):
        names = [name.lower() for name in first.keys()]  # noqa: SIM118 (a Row yields values)
        keys = [names.index(name) for name in columns]
    values_of = itemgetter(*keys)
    new = object.__new__
    records = []
    for row in rows:
        record = new(cls)
        record.__dict__.update(zip(columns, values_of(row), strict=True))
        records.append(record)
    return records


_EVENT_COLUMNS = tuple(f.name for f in fields(StoredEvent))
_JSON_FIELDS = ("conditions", "scope", "numbers", "source_refs", "supersedes")
_JSON_COLUMNS = tuple(f"{name}_json" for name in _JSON_FIELDS)
_ITEM_COLUMNS = tuple(f.name for f in fields(MemoryItem) if f.name not in _JSON_FIELDS)


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
