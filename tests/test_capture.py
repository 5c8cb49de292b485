from __future__ import annotations

import random

import pytest

from convmem.capture import Capture, Event
from convmem.config import load_settings
from convmem.errors import EventFormatError
from convmem.memory.store import MemoryStore
from pipeline import new_store


@pytest.fixture
def store() -> MemoryStore:
    return new_store()


def capture(store: MemoryStore, **overrides: object) -> Capture:
    return Capture(store, load_settings(env={}).with_values(**overrides))


def test_duplicated_and_shuffled_events_are_stored_once(store: MemoryStore) -> None:
    events = [Event("s", i, "user/message", f"message {i}") for i in range(200)]
    mixed = events + events[:50] + events[100:]
    random.Random(7).shuffle(mixed)
    cap = capture(store)
    first = cap.capture_many(mixed[:150])
    second = cap.capture_many(mixed[150:])
    assert first.inserted + second.inserted == 200
    assert store.count_events("s") == 200
    assert [e.seq for e in store.events("s")] == list(range(200))
    assert store.checkpoint("s").last_event_seq == 199
    again = cap.capture_many(events)
    assert again.inserted == 0 and again.duplicates == 200


def test_long_text_is_capped_and_archived(store: MemoryStore) -> None:
    text = "数据" * 15_000  # 30,000 chars
    result = capture(store).capture(Event("s", 1, "tool/result", text))
    assert result.truncated == 1 and result.archived == 1
    row = store.events("s")[0]
    assert row.truncated and len(row.text) == 20_000 and row.store == "archive"
    assert store.archive_text("s", 1) == text


def test_compaction_summaries_are_archived_even_when_short(store: MemoryStore) -> None:
    capture(store).capture(Event("s", 1, "compaction/summary", "summary of earlier work"))
    assert store.archive_text("s", 1) == "summary of earlier work"


def test_cjk_and_mixed_text_search_with_trigrams(store: MemoryStore) -> None:
    cap = capture(store)
    cap.capture_many(
        [
            Event("s", 1, "user/message", "数据库连接池大小必须是 50"),
            Event("s", 2, "user/message", "The p95 latency must stay under 200 ms"),
            Event("s", 3, "user/message", "混合 mixed 文本 text"),
        ]
    )
    assert [e.seq for e, _ in store.search_events("s", ["连接池"], 5)] == [1]
    assert [e.seq for e, _ in store.search_events("s", ["latency"], 5)] == [2]
    assert [e.seq for e, _ in store.search_events("s", ["LATENCY"], 5)] == [2]
    assert [e.seq for e, _ in store.search_events("s", ["混合 mixed"], 5)] == [3]
    # terms shorter than a trigram go through LIKE
    assert [e.seq for e in store.events_containing("s", "50", 5)] == [1]


def test_secrets_and_private_spans_never_reach_the_store(store: MemoryStore) -> None:
    text = (
        "key AKIAABCDEFGHIJKLMNOP and sk-ant-abcdefghijklmnopqrstuvwxyz123 "
        "<private>my home address</private> Authorization: Bearer abcdefghijklmnopqrstuvwxyz"
    )
    capture(store).capture(Event("s", 1, "user/message", text))
    stored = store.events("s")[0].text
    assert "AKIA" not in stored and "sk-ant" not in stored and "home address" not in stored
    assert "[redacted:aws-access-key]" in stored and "[redacted:api-key]" in stored
    assert "Bearer [redacted:bearer-token]" in stored
    off = new_store()
    capture(off, capture__redact_secrets=False).capture(Event("s", 1, "user/message", text))
    assert "AKIAABCDEFGHIJKLMNOP" in off.events("s")[0].text


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (Event("", 1, "user/message"), "session_id"),
        (Event("s", -1, "user/message"), "seq"),
        (Event("s", 1, "bogus/type"), "type"),
        (Event("s", 1, "user/message", turn="3"), "turn"),  # type: ignore[arg-type]
    ],
)
def test_invalid_events_name_the_field(store: MemoryStore, event: Event, field: str) -> None:
    with pytest.raises(EventFormatError, match=field):
        capture(store).capture(event)
    assert store.count_events() == 0


def test_purge_leaves_other_sessions_untouched(store: MemoryStore) -> None:
    cap = capture(store)
    cap.capture_many([Event(s, i, "user/message", f"{s} {i}") for s in "abc" for i in range(5)])
    before_b = store.export_session("b")
    removed = store.purge_session("a")
    assert removed["events"] == 5
    assert store.count_events("a") == 0
    assert store.export_session("b") == before_b
    assert store.count_events() == 10
    assert [e.seq for e, _ in store.search_events("b", ["b 1"], 5)] == [1]
    assert store.search_events("a", ["a 1"], 5) == []
