"""The store's paged lists (``store_views``), on both backends: every page is what
filtering and sorting all the rows would give, and walking the pages by their keys
visits every row once."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from conftest import new_store
from convmem.capture import Capture, Event
from convmem.config import load_settings
from convmem.memory.models import MemoryItem, Scope
from convmem.memory.store import MemoryStore

TYPES = ("user/message", "assistant/message", "tool/call", "tool/result", "compaction/summary")


@pytest.fixture
def store() -> MemoryStore:
    return new_store()


def _events(store: MemoryStore, session: str = "s", count: int = 40) -> None:
    rows = [
        Event(session, n, TYPES[(n * 7) % 5] if n % 11 else "compaction/summary", f"event {n}")
        for n in range(1, count + 1)
    ]
    Capture(store, load_settings(env={})).capture_many(rows)


def _item(n: int, seq: int | None, **extra: Any) -> MemoryItem:
    fields: dict[str, Any] = {
        "id": f"mem_s_{n:04d}",
        "session_id": "s",
        "kind": ("fact", "decision", "constraint")[n % 3],
        "content": f"item {n}",
        "evidence_type": "user_explicit",
        "status": ("active", "superseded", "retracted", "disputed")[n % 4],
        "content_hash": f"h{n}",
        "extractor": "test",
        "derived_from_seq": seq,
    }
    return MemoryItem(**(fields | extra))


def test_timeline_pages_match_a_filter_of_all_events(store: MemoryStore) -> None:
    _events(store)
    everything = store.events("s")
    for types, limit in itertools.product(
        [(), ("tool/call", "tool/result"), ("compaction/summary",), ("user/message",)], (1, 4, 50)
    ):
        kept = [e.seq for e in everything if not types or e.type in types]
        for bound in (None, 1, 10, 25, 41):
            newest = store.timeline_events("s", types=types, before=bound, limit=limit)
            below = [s for s in kept if bound is None or s < bound]
            assert [e.seq for e in newest] == below[-limit:] if below else newest == []
            oldest = store.timeline_events("s", types=types, after=bound or 0, limit=limit)
            above = [s for s in kept if s > (bound or 0)]
            assert [e.seq for e in oldest] == above[:limit]


def test_item_pages_walk_every_item_once_in_order(store: MemoryStore) -> None:
    seqs = [5, 5, 5, 9, None, 2, 9, None, 14, 1, 5, 3]
    for n, seq in enumerate(seqs):
        assert store.insert_item(_item(n, seq))
    wanted = sorted(
        store.items("s", ()),
        key=lambda i: (i.derived_from_seq is not None, i.derived_from_seq or 0, i.id),
        reverse=True,
    )
    for filters in ({}, {"statuses": ("active", "disputed")}, {"kinds": ("fact",)}):
        expect = [
            i.id
            for i in wanted
            if (not filters.get("statuses") or i.status in filters["statuses"])
            and (not filters.get("kinds") or i.kind in filters["kinds"])
        ]
        got: list[str] = []
        before: tuple[int | None, str] | None = None
        while True:
            page = store.item_page("s", before=before, limit=3, **filters)  # type: ignore[arg-type]
            got += [i.id for i in page]
            if len(page) < 3:
                break
            before = (page[-1].derived_from_seq, page[-1].id)
        assert got == expect
    counts = {(r["kind"], r["status"]): r["n"] for r in store.item_counts("s")}
    assert sum(counts.values()) == len(seqs)
    assert counts[("fact", "active")] == sum(1 for n in range(len(seqs)) if n % 12 == 0)


def test_corrections_are_the_events_whose_item_supersedes_one(store: MemoryStore) -> None:
    store.insert_item(_item(1, 3))
    store.insert_item(_item(2, 8, supersedes=("mem_s_0001",)))
    store.insert_item(_item(3, 12, supersedes=("mem_s_0002",)))
    store.insert_item(_item(4, 12, content_hash="h4b", supersedes=("mem_s_0001",)))
    assert store.correction_seqs("s") == [12, 8]
    assert store.correction_seqs("s", before=12) == [8]
    assert store.correction_seqs("s", limit=1) == [12]


def test_replacement_chain_is_read_in_one_walk(store: MemoryStore) -> None:
    # 1 -> 2 -> 3 (withdrawn); 5 <-> 6 replace each other; 7 points at nothing stored
    links = {1: "2", 2: "3", 5: "6", 6: "5", 7: "99"}
    for n, status in ((1, "superseded"), (2, "superseded"), (3, "retracted"), (4, "active"),
                      (5, "superseded"), (6, "superseded"), (7, "superseded")):  # fmt: skip
        after = f"mem_s_{int(links[n]):04d}" if n in links else None
        store.insert_item(_item(n, n, status=status, superseded_by=after))
    assert store.replacement_chain("mem_s_0001") == {
        "mem_s_0001": ("superseded", "mem_s_0002"),
        "mem_s_0002": ("superseded", "mem_s_0003"),
        "mem_s_0003": ("retracted", None),
    }
    assert store.replacement_chain("mem_s_0004") == {"mem_s_0004": ("active", None)}
    assert set(store.replacement_chain("mem_s_0005")) == {"mem_s_0005", "mem_s_0006"}
    assert store.replacement_chain("mem_s_0007") == {"mem_s_0007": ("superseded", "mem_s_0099")}
    assert store.replacement_chain("mem_s_0404") == {}


def test_sessions_newest_first_by_project(store: MemoryStore) -> None:
    clock = iter(f"2026-01-0{n}T00:00:00Z" for n in range(1, 10))
    store.now = lambda: next(clock)
    for sid, project in (("a", "p1"), ("b", None), ("c", "p1"), ("d", "p2")):
        store.touch_session(sid, project=project)
    _events(store, "c", 5)  # touches c again: the newest
    assert [s["session_id"] for s in store.session_page()] == ["c", "d", "b", "a"]
    page = store.session_page(limit=2)
    after = store.session_page(before=(page[-1]["updated_at"], page[-1]["session_id"]))
    assert [s["session_id"] for s in after] == ["b", "a"]
    assert [s["session_id"] for s in store.session_page(project="p1")] == ["c", "a"]
    assert [s["session_id"] for s in store.session_page(project="")] == ["b"]
    row = store.session_page(project="p1")[0]
    assert (row["events"], row["items"], row["last_seq"]) == (5, 0, 5)
    assert {p["project"]: p["sessions"] for p in store.projects()} == {"p1": 2, "p2": 1, "": 1}
    summary = store.session_summary("c")
    assert summary is not None and summary["project"] == "p1"
    assert summary["first_event"]["seq"] == 1 and summary["last_event"]["seq"] == 5
    assert store.session_summary("nobody") is None


def test_log_pages_newest_first(store: MemoryStore) -> None:
    for n in range(7):
        store.insert_assembly_log(
            {"session_id": "s", "budget": 100, "used_tokens": n, "text": "x" * n}, retention=50
        )
        store.insert_validation_log({"session_id": "s", "ok": n % 2 == 0, "event_seq": n})
        store.record_memory_event(f"mem_{n}", "s", "created", "test", {"n": n})
    logs = store.assembly_log_page("s", limit=3)
    assert [log["used_tokens"] for log in logs] == [6, 5, 4]
    assert "text" not in logs[0] and logs[0]["omitted"] == []
    older = store.assembly_log_page("s", before=logs[-1]["id"], limit=10)
    assert [log["used_tokens"] for log in older] == [3, 2, 1, 0]
    runs = store.validation_log_page("s", limit=2)
    assert [r["event_seq"] for r in runs] == [6, 5] and runs[0]["violations"] == []
    assert [r["event_seq"] for r in store.validation_log_page("s", before=runs[-1]["id"])] == [
        4,
        3,
        2,
        1,
        0,
    ]
    changes = store.memory_events_page("s", limit=2)
    assert [c["detail"]["n"] for c in changes] == [6, 5]
    assert store.memory_events_page("other") == []


def test_items_by_topic_newest_keeps_the_current_session_and_the_latest(store: MemoryStore) -> None:
    for n in range(1, 13):
        sid = "s" if n % 2 else "t"
        item = _item(n, n, session_id=sid, id=f"mem_{sid}_{n:04d}", status="active", topic="cache")
        store.insert_item(item)
    store.insert_item(_item(99, 99, id="mem_s_other", status="active", topic="queue"))
    assert [i.derived_from_seq for i in store.items_by_topic("s", "cache")] == [1, 3, 5, 7, 9, 11]
    assert [i.derived_from_seq for i in store.items_by_topic("s", "cache", newest=2)] == [9, 11]
    # a scope: the current session's newest first, then the other sessions' newest;
    # the answer in the order of the unbounded lookup (session, then derivation)
    scope = Scope("t", ("t", "s"))
    found = store.items_by_topic(scope, "cache", newest=8)
    assert [(i.session_id, i.derived_from_seq) for i in found] == [
        ("s", 9),
        ("s", 11),
        ("t", 2),
        ("t", 4),
        ("t", 6),
        ("t", 8),
        ("t", 10),
        ("t", 12),
    ]
    found = store.items_by_topic(scope, "cache", newest=3)
    assert [(i.session_id, i.derived_from_seq) for i in found] == [("t", 8), ("t", 10), ("t", 12)]
