"""Full-text search bounded by the scope's rowid range finds what an unbounded one does."""

from __future__ import annotations

from pathlib import Path

from convmem.capture import Event
from convmem.config import load_settings
from convmem.memory.models import Scope
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime


def _events(sid: str, start: int, count: int) -> list[Event]:
    return [
        Event(sid, seq, "user/message", f"{sid} note {seq}: the deploy window is {seq} minutes")
        for seq in range(start, start + count)
    ]


def test_a_search_reads_the_scope_range_and_misses_nothing(tmp_path: Path) -> None:
    rt = MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={}))
    try:
        # a and b interleave (their ranges overlap), c comes after both
        for start in (1, 6, 11):
            rt.on_events(_events("a", start, 5))
            rt.on_events(_events("b", start, 5))
        rt.on_events(_events("c", 1, 15))
        store = rt.store
        span_a, span_c = store.rowid_span("a"), store.rowid_span("c")
        assert span_a is not None and span_c is not None and span_a[1] < span_c[0]
        assert store.rowid_span("nobody") is None
        for where, want in (("a", {"a"}), ("c", {"c"}), (Scope("a", ("a", "b")), {"a", "b"})):
            found = store.search_events(where, ["deploy"], 100)
            assert {e.session_id for e, _ in found} == want
            assert len(found) == 15 * len(want)
            near = store.events_containing(where, "window", 100)
            assert len(near) == 15 * len(want)
        assert store.search_events("nobody", ["deploy"], 10) == []
        assert store.events_containing("nobody", "window", 10) == []
    finally:
        rt.close()
