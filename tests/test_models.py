"""Records decoded from rows are the same objects their constructors make."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest

from convmem.memory.models import MemoryItem, StoredEvent


def _row(values: dict[str, object]) -> sqlite3.Row:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    names = ", ".join(f"? AS {name}" for name in values)
    row: sqlite3.Row = conn.execute(f"SELECT {names}", list(values.values())).fetchone()
    return row


def test_event_from_row_equals_the_constructed_event() -> None:
    row = _row(
        {"rowid": 7, "session_id": "s", "seq": "12", "type": "user/message", "text": "keep 3",
         "time": "2026-12-05T10:00:00Z", "turn": 2, "step": None, "role": "user",
         "source_kind": "user", "source_form": None, "tool_name": None, "call_id": None,
         "store": "host", "content_hash": "h", "truncated": 0, "ingested_at": "now"}
    )  # fmt: skip
    event = StoredEvent.from_row(row)
    made = StoredEvent(
        "s", 12, "user/message", "keep 3", "2026-12-05T10:00:00Z", 2, None, "user", "user",
        content_hash="h",
    )  # fmt: skip
    assert event == made and hash(event) == hash(made)
    assert event.seq == 12 and event.truncated is False  # decoded, not the row's raw values
    assert not hasattr(event, "rowid") and not hasattr(event, "ingested_at")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.text = "other"  # type: ignore[misc]
    assert dataclasses.replace(event, seq=13).seq == 13


def test_item_from_row_decodes_its_json_columns() -> None:
    row = _row(
        {"rid": 3, "id": "mem_1", "session_id": "s", "kind": "constraint",
         "content": "at most 3 replicas", "topic": "replicas", "conditions_json": '["in prod"]',
         "scope_json": "[]", "numbers_json": '[{"value": 3, "unit": null}]',
         "source_refs_json": '["seq:4"]', "evidence_type": "user_explicit", "status": "active",
         "supersedes_json": '["mem_0"]', "superseded_by": None, "content_hash": "c",
         "extractor": "rules", "derived_from_seq": 4, "created_at": "t0", "updated_at": "t1",
         "said_at": None, "rank": -2.5}
    )  # fmt: skip
    item = MemoryItem.from_row(row)
    made = MemoryItem(
        "mem_1", "s", "constraint", "at most 3 replicas", "user_explicit", "active", "replicas",
        ("in prod",), (), ({"value": 3, "unit": None},), ("seq:4",), ("mem_0",), None, "c",
        "rules", 4, "t0", "t1", None,
    )  # fmt: skip
    assert item == made
    assert item.source_seqs == (4,) and item.as_dict()["conditions"] == ["in prod"]
    assert not hasattr(item, "rank") and not hasattr(item, "rid")
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.status = "superseded"  # type: ignore[misc]
