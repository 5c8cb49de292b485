"""Explicit lifecycle changes of memory items: retract, forget, promote, resolve, reactivate.

Each change is a status update plus a ``memory_events`` row naming the actor and
the detail, so ``inspect`` can tell how an item reached its state. Nothing here
deletes a row. Every change takes an item id, whichever session of a project the item
came from; ``forget`` also reaches the same clause restated in the project's other
sessions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from convmem.core.constants import MEMORY_KINDS
from convmem.errors import ConvmemError, NotFoundError
from convmem.memory.models import MemoryItem

if TYPE_CHECKING:
    from convmem.memory.store import MemoryStore


def _get(store: MemoryStore, item_id: str) -> MemoryItem:
    item = store.item(item_id)
    if item is None:
        raise NotFoundError(f"no memory item {item_id!r}; `convmem search` finds item ids")
    return item


def retract(store: MemoryStore, item_id: str, actor: str = "user", reason: str = "") -> MemoryItem:
    """Withdraw an item: excluded from retrieval, kept in the audit trail."""
    item = _get(store, item_id)
    if item.status == "retracted":
        return item
    with store.transaction():
        store.update_item(item_id, status="retracted")
        store.record_memory_event(
            item_id, item.session_id, "retracted", actor, {"from": item.status, "reason": reason}
        )
    return _get(store, item_id)


def forget(
    store: MemoryStore, item_id: str, actor: str = "user", reason: str = ""
) -> list[MemoryItem]:
    """The agent should no longer remember this: retract the item, and the same clause
    wherever the project's other sessions restated it, with the reason in each audit row.

    Returns the item, then the restatements retracted with it.
    """
    item = _get(store, item_id)
    why = f"forgotten: {reason}" if reason else "forgotten"
    project = store.session_project(item.session_id)
    sessions = store.project_sessions(project) if project else [item.session_id]
    same = [
        other
        for sid in sessions
        for other in store.items_with_hash(sid, item.content_hash)
        if other.id != item.id and other.status in ("active", "disputed")
    ]
    with store.transaction():
        forgotten = [retract(store, item_id, actor, why)]
        for other in same:
            store.update_item(other.id, status="retracted")
            store.record_memory_event(
                other.id,
                other.session_id,
                "retracted",
                actor,
                {"from": other.status, "reason": why, "with": item_id},
            )
    return forgotten + [_get(store, other.id) for other in same]


def promote(
    store: MemoryStore, item_id: str, actor: str = "user", kind: str = "decision"
) -> MemoryItem:
    """Accept an assistant proposal as the user's own (never happens automatically)."""
    item = _get(store, item_id)
    if kind not in MEMORY_KINDS or kind == "proposal":
        raise ConvmemError(
            f"cannot promote to kind {kind!r}; use decision, constraint, fact or preference"
        )
    if item.evidence_type == "user_explicit" and item.kind == kind:
        return item
    if item.kind != "proposal" and item.evidence_type != "assistant_proposal":
        # what the person said already is theirs: promoting it would only change its kind
        raise ConvmemError(
            f"item {item_id} is a {item.kind} ({item.evidence_type}), not an assistant"
            " proposal; promote accepts only proposals (`convmem items` shows their kind)"
        )
    if item.status not in ("active", "disputed"):
        raise ConvmemError(f"item {item_id} is {item.status}; reactivate it before promoting")
    with store.transaction():
        store.update_item(item_id, evidence_type="user_explicit", kind=kind)
        store.record_memory_event(
            item_id,
            item.session_id,
            "promoted",
            actor,
            {"from_kind": item.kind, "from_evidence": item.evidence_type, "kind": kind},
        )
    return _get(store, item_id)


def resolve(store: MemoryStore, keep_id: str, actor: str = "user") -> list[MemoryItem]:
    """Settle a dispute: ``keep_id`` becomes active, the items it disputed are superseded."""
    keep = _get(store, keep_id)
    if keep.status != "disputed":
        raise ConvmemError(f"item {keep_id} is {keep.status}, not disputed")
    rivals = set()
    for row in store.memory_events(keep_id):
        if row["event"] == "disputed" and row["detail"].get("with"):
            rivals.add(row["detail"]["with"])
    others = [i for i in store.items_by_id(rivals) if i.status == "disputed"]
    with store.transaction():
        for other in others:
            store.update_item(other.id, status="superseded", superseded_by=keep_id)
            store.record_memory_event(
                other.id, other.session_id, "superseded", actor, {"by": keep_id, "resolution": True}
            )
        store.update_item(keep_id, status="active")
        store.record_memory_event(
            keep_id, keep.session_id, "resolved", actor, {"over": sorted(o.id for o in others)}
        )
    return [_get(store, keep_id), *(_get(store, o.id) for o in others)]


def reactivate(store: MemoryStore, item_id: str, actor: str = "user") -> MemoryItem:
    """Bring a retracted or superseded item back into retrieval."""
    item = _get(store, item_id)
    if item.status == "active":
        return item
    clash = store.active_item_by_hash(item.session_id, item.content_hash)
    if clash is not None:
        raise ConvmemError(f"item {clash.id} already holds the same content; retract it first")
    with store.transaction():
        store.update_item(item_id, status="active", superseded_by=None)
        store.record_memory_event(
            item_id, item.session_id, "reactivated", actor, {"from": item.status}
        )
    return _get(store, item_id)
