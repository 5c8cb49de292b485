"""Full-text and exact search over a scope: bounded by the scope's rowid range, nothing
of the scope missed, the current session's rows first when a limit cuts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convmem.capture import Event
from convmem.config import load_settings
from convmem.memory.models import Scope
from convmem.memory.store import MemoryStore
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


def test_the_oldest_matches_come_first_when_events_arrive_out_of_order(
    backend: SqliteBackend,
) -> None:
    # SQLite walks the trigram index in rowid order and stops at the first rows only
    # in a session stored in seq order; the backfilled seqs 1-3 come after 10-14 here
    rt = MemoryRuntime(backend.store(), load_settings(env={}))
    rt.on_events(_events("s", 10, 5, "the deploy window moved"))
    rt.on_events(_events("s", 1, 3, "the deploy window moved"))
    rt.on_events(_events("t", 1, 5, "the deploy window moved"))
    for needle in ("deploy", "the deploy window moved"):
        assert [e.seq for e in rt.store.events_containing("s", needle, 2)] == [1, 2]
        assert [e.seq for e in rt.store.events_containing("t", needle, 2)] == [1, 2]
        both = rt.store.events_containing(Scope("t", ("t", "s")), needle, 7)
        assert [(e.session_id, e.seq) for e in both] == [("t", n) for n in range(1, 6)] + [
            ("s", 1),
            ("s", 2),
        ]


@pytest.mark.sqlite_only  # the arrival order matters to SQLite's search alone
@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(st.lists(st.integers(1, 30), min_size=1, max_size=6), max_size=6),
    limit=st.integers(1, 8),
)
def test_a_substring_search_returns_the_oldest_matches_whatever_the_arrival_order(
    batches: list[list[int]], limit: int
) -> None:
    store = MemoryStore.open(":memory:")
    rt = MemoryRuntime(store, load_settings(env={}))
    for batch in batches:
        texts = {seq: "the DEPLOY window moved" if seq % 3 else "nothing here" for seq in batch}
        rt.on_events([Event("s", seq, "user/message", text) for seq, text in texts.items()])
    stored = sorted({seq for batch in batches for seq in batch})
    for needle in ("deploy", "the deploy window moved"):
        want = [seq for seq in stored if seq % 3][:limit]
        assert [e.seq for e in store.events_containing("s", needle, limit)] == want
    store.close()


class _Undo(Exception):
    pass


@pytest.mark.sqlite_only  # rowid ranges are SQLite's
def test_a_step_rolled_back_keeps_what_it_knew_of_the_committed_range(
    backend: SqliteBackend,
) -> None:
    # a host that stores its prompt for one step and rolls it back (DSH's pending prompt)
    # must not count the whole session again at every step, nor be misled by its own rows
    rt = MemoryRuntime(backend.store(), load_settings(env={}))
    rt.on_events(_events("other", 1, 5))
    rt.on_events(_events("s", 1, 40))
    store = rt.store
    counted: list[str] = []
    store.db.conn.set_trace_callback(counted.append)

    def step(*extra: Event) -> set[tuple[str, int]]:
        try:
            with store.transaction():
                rt.capture.capture_many([*extra, Event("s", 41, "user/message", "deploy again")])
                found = {
                    (e.session_id, e.seq) for e, _ in store.search_events("s", ["deploy"], 100)
                }
                raise _Undo
        except _Undo:
            return found

    for _ in range(3):
        assert step() == {("s", n) for n in range(1, 42)}
    whole = [q for q in counted if "count(*) FROM events WHERE session_id IN" in q]
    assert len(whole) == 1  # the committed range was counted once, then known
    # another session's row inside the step's range: the search still returns s alone
    assert step(Event("other", 6, "user/message", "deploy too")) == {("s", n) for n in range(1, 42)}
    # nothing of the steps stayed
    assert {e.seq for e, _ in store.search_events("s", ["deploy"], 100)} == set(range(1, 41))
