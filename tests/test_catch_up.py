"""Bounded extraction: a long backlog is extracted in steps, each of bounded size."""

from __future__ import annotations

from pathlib import Path

from convmem.capture import Event
from pipeline import runtime as make_runtime

STATUSES = ("active", "superseded", "disputed", "retracted")


def _backlog(n: int) -> list[Event]:
    events = []
    for i in range(n):
        text = f"The timeout of service{i} must stay under {100 + i} ms at peak load."
        events.append(Event("s", 2 * i + 1, "user/message", text))
        events.append(Event("s", 2 * i + 2, "tool/result", f"ran {i}", source_kind="tool"))
    events.append(
        Event("s", 2 * n + 1, "user/message", "Actually, make the timeout of service3 250 ms.")
    )
    return events


def test_a_backlog_is_extracted_in_bounded_steps(tmp_path: Path) -> None:
    stepped = make_runtime(tmp_path / "a")
    stepped.capture.capture_many(_backlog(40))  # captured, nothing extracted yet
    assert stepped.backlog("s") == 41
    left = []
    while True:
        left.append(stepped.catch_up("s", 16))
        if left[-1] == 0:
            break
    assert left == [25, 9, 0]
    # the cursor stopped after each step's last message, then passed the rest at the end
    assert stepped.store.checkpoint("s").last_extract_seq == 81

    whole = make_runtime(tmp_path / "b")
    whole.on_events(_backlog(40))
    got = [(i.id, i.status, i.superseded_by) for i in stepped.store.items("s", STATUSES)]
    want = [(i.id, i.status, i.superseded_by) for i in whole.store.items("s", STATUSES)]
    assert got == want and any(status == "superseded" for _, status, _ in got)


def test_a_bounded_capture_leaves_the_rest_for_later(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path)
    rt.extract_limit = 10
    rt.on_events(_backlog(30))
    assert rt.backlog("s") == 21
    assert rt.store.checkpoint("s").last_extract_seq == 19  # the tenth message
    rt.on_events([Event("s", 100, "user/message", "Noted, thanks.")])
    assert rt.backlog("s") == 12
    rt.extract_limit = None
    rt.on_events([Event("s", 101, "user/message", "One more thing.")])
    assert rt.backlog("s") == 0
    assert rt.store.checkpoint("s").last_extract_seq == 101
