"""Full-text and exact search over a scope: bounded by the scope's rowid range, nothing
of the scope missed, the current session's rows first when a limit cuts."""

from __future__ import annotations

import pytest

from convmem.capture import Event
from convmem.config import load_settings
from convmem.memory.models import Scope
from convmem.runtime import MemoryRuntime
from pg_server import SqliteBackend


def _events(sid: str, start: int, count: int, text: str = "") -> list[Event]:
    return [
        Event(
            sid,
            seq,
            "user/message",
            text or f"{sid} note {seq}: the deploy window is {seq} minutes",
        )
        for seq in range(start, start + count)
    ]


def test_a_search_reads_the_scope_and_misses_nothing(backend: SqliteBackend) -> None:
    rt = MemoryRuntime(backend.store(), load_settings(env={}))
    # a and b interleave (their ranges overlap), c comes after both
    for start in (1, 6, 11):
        rt.on_events(_events("a", start, 5))
        rt.on_events(_events("b", start, 5))
    rt.on_events(_events("c", 1, 15))
    store = rt.store
    for where, want in (("a", {"a"}), ("c", {"c"}), (Scope("a", ("a", "b")), {"a", "b"})):
        found = store.search_events(where, ["deploy"], 100)
        assert {e.session_id for e, _ in found} == want
        assert len(found) == 15 * len(want)
        near = store.events_containing(where, "window", 100)
        assert len(near) == 15 * len(want)
    assert store.search_events("nobody", ["deploy"], 10) == []
    assert store.events_containing("nobody", "window", 10) == []


@pytest.mark.sqlite_only  # PostgreSQL has no rowid; it bounds its ranking by session in SQL
def test_the_rowid_span_covers_a_session(backend: SqliteBackend) -> None:
    rt = MemoryRuntime(backend.store(), load_settings(env={}))
    rt.on_events(_events("a", 1, 5))
    rt.on_events(_events("b", 1, 5))
    rt.on_events(_events("a", 6, 5))
    store = rt.store
    span_a, span_b = store.rowid_span("a"), store.rowid_span("b")
    assert span_a is not None and span_b is not None
    assert span_a[0] < span_b[0] <= span_b[1] < span_a[1]  # b lies inside a's range
    assert store.rowid_span("nobody") is None


def test_a_limit_keeps_the_current_sessions_exact_matches(backend: SqliteBackend) -> None:
    rt = MemoryRuntime(backend.store(), load_settings(env={}))
    rt.on_events(_events("a-old", 1, 6, "see config/deploy.yaml for the old rollout"))
    rt.on_events(_events("z-cur", 1, 1, "config/deploy.yaml now pins the region"))
    scope = Scope("z-cur", ("z-cur", "a-old"))
    found = rt.store.events_containing(scope, "config/deploy.yaml", 5)
    assert found[0].session_id == "z-cur"
    assert len(found) == 5


def test_a_long_needle_is_found_by_its_pieces_and_checked_whole(backend: SqliteBackend) -> None:
    # SQLite looks "the deploy window closes at noon" up by "the de", "ndow c" and
    # "t noon" (store_items.substring_match); the second message has all three
    rt = MemoryRuntime(backend.store(), load_settings(env={}))
    texts = [
        "Note: THE DEPLOY WINDOW CLOSES AT NOON on Fridays",
        "the deploy is late; the window closes, then at noon we eat",
        "nothing to see",
        "and again: the deploy window closes at noon.",
    ]
    rt.on_events([Event("s", n, "user/message", t) for n, t in enumerate(texts, 1)])
    found = rt.store.events_containing("s", "the deploy window closes at noon", 5)
    assert [e.seq for e in found] == [1, 4]
    assert [
        e.seq for e in rt.store.events_containing("s", "the deploy window closes at noon", 1)
    ] == [1]
