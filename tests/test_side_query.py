"""The ranked search a pre-step starts ahead on a second connection: the same answer
as the search run in place, and never a stale one."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from convmem.capture import Capture, Event
from convmem.config import load_settings
from convmem.memory.models import StoredEvent
from convmem.memory.store import PREFETCH_MIN_EVENTS, MemoryStore
from convmem.runtime import MemoryRuntime

PERSON = ("user/message",)
TERMS = ["deploy", "window", "rollback"]
N = PREFETCH_MIN_EVENTS + 200


def _text(seq: int) -> str:
    words = ["deploy", "window", "rollback", "cache", "schema"]
    picked = " ".join(words[(seq * k) % 5] for k in range(1, 1 + seq % 4))
    return f"note {seq}: the {picked} plan, step {seq % 17}"


def _fill(path: Path, count: int = N) -> None:
    store = MemoryStore.open(str(path))
    events = [Event("s", seq, "user/message", _text(seq)) for seq in range(1, count + 1)]
    Capture(store, load_settings(env={})).capture_many(events)
    store.close()


def _side_threads_done() -> None:
    for thread in threading.enumerate():
        if thread.name == "convmem-side-query":
            thread.join()


def _ids(found: list[tuple[StoredEvent, float]]) -> list[tuple[int, float]]:
    return [(e.seq, rank) for e, rank in found]


@pytest.fixture(scope="module")
def long_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("side") / "long.sqlite"
    _fill(path)
    return path


def test_the_search_started_ahead_gives_the_same_answer(long_store: Path) -> None:
    plain = MemoryStore.open(str(long_store))
    ahead = MemoryStore.open(str(long_store))
    try:
        want = plain.search_events("s", TERMS, 200, PERSON)
        ahead.prefetch_events("s", TERMS, 200, PERSON)
        got = ahead.search_events("s", TERMS, 200, PERSON)
        assert _ids(got) == _ids(want)
        assert len(got) == 200
        assert ahead._side is not None and ahead._side.served == 1  # it was the side's
        # a search of other terms than the ones started ahead runs in place
        ahead.prefetch_events("s", ["cache"], 200, PERSON)
        assert _ids(ahead.search_events("s", ["schema"], 50, PERSON)) == _ids(
            plain.search_events("s", ["schema"], 50, PERSON)
        )
    finally:
        plain.close()
        ahead.close()


# A change that leaves the session's rowid range as it was (an insert moves its top,
# which the query's parameters already hold): a program rewriting a message in place.
REWRITE = "UPDATE events SET text = 'the zeppelin zeppelin launch' WHERE seq = 7"


def test_a_commit_by_another_connection_after_the_start_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    _fill(path)
    store = MemoryStore.open(str(path))
    other = MemoryStore.open(str(path))
    try:
        store.prefetch_events("s", ["zeppelin"], 10, PERSON)
        _side_threads_done()  # the query ran before the commit below: its answer is stale
        other.db.execute(REWRITE)
        found = store.search_events("s", ["zeppelin"], 10, PERSON)
        assert [e.seq for e, _ in found] == [7]
    finally:
        store.close()
        other.close()


def test_its_own_write_after_the_start_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "w.sqlite"
    _fill(path)
    store = MemoryStore.open(str(path))
    try:
        store.prefetch_events("s", ["zeppelin"], 10, PERSON)
        _side_threads_done()
        store.db.execute(REWRITE)
        found = store.search_events("s", ["zeppelin"], 10, PERSON)
        assert [e.seq for e, _ in found] == [7]
    finally:
        store.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_opens_its_own_side_connection(long_store: Path) -> None:
    store = MemoryStore.open(str(long_store))
    try:
        want = _ids(store.search_events("s", TERMS, 100, PERSON))
        store.prefetch_events("s", TERMS, 100, PERSON)  # the parent's side connection
        assert _ids(store.search_events("s", TERMS, 100, PERSON)) == want
        pid = os.fork()
        if pid == 0:  # the child: as a hook call forked from the resident process
            code = 1
            try:
                child = MemoryStore.open(str(long_store))
                child.prefetch_events("s", TERMS, 100, PERSON)
                code = 0 if _ids(child.search_events("s", TERMS, 100, PERSON)) == want else 2
                child.close()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        # the parent's own side connection still answers
        store.prefetch_events("s", TERMS, 100, PERSON)
        assert _ids(store.search_events("s", TERMS, 100, PERSON)) == want
    finally:
        store.close()


def _on_file_and_in_memory(path: Path) -> tuple[MemoryRuntime, MemoryRuntime]:
    """A runtime on the file, and one on a copy of it held in memory, where nothing
    runs on the side."""
    import sqlite3

    settings = load_settings(env={})
    in_memory = MemoryStore.open(":memory:")
    source = sqlite3.connect(path)
    source.backup(in_memory.db.conn)
    source.close()
    return MemoryRuntime(MemoryStore.open(str(path)), settings), MemoryRuntime(in_memory, settings)


def test_a_pre_step_on_a_long_session_is_the_same_block(long_store: Path) -> None:
    """The whole pre-step gives the block of the same store held in memory, where
    nothing runs on the side."""
    rt, mem = _on_file_and_in_memory(long_store)
    try:
        for query in (
            "what was the rollback plan for the deploy window?",
            "the schema cache, step 3",
        ):
            block = rt.assemble("s", [], query=query, log=False).text
            assert block == mem.assemble("s", [], query=query, log=False).text
            assert "\n- [ev seq:" in block  # evidence was found and quoted
    finally:
        rt.close()
        mem.close()


def test_a_prompt_counted_as_said_inside_a_transaction_is_ranked(long_store: Path) -> None:
    """A prompt the host has not stored yet (DSH) is captured in a write transaction
    rolled back after the block: the side connection cannot see it, so nothing runs
    on the side, and the block is the one the in-memory copy builds."""
    rt, mem = _on_file_and_in_memory(long_store)
    prompt = "zeppelin hangar: the zeppelin rollback needs the hangar window"
    try:
        blocks = [
            runtime.pre_step(
                "s", [], query=prompt, pending=Event("s", N + 1, "user/message", prompt)
            )
            for runtime in (rt, mem)
        ]
        assert blocks[0] == blocks[1]
        assert blocks[0] is not None and "[ev this prompt]" in blocks[0]
    finally:
        rt.close()
        mem.close()


def test_the_side_answers_and_follows_the_file_not_the_directory(
    long_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opened by a relative path, the store's side connection still reads its file
    after the process changes directory, and creates nothing where it now is."""
    monkeypatch.chdir(long_store.parent)
    store = MemoryStore.open(long_store.name)
    plain = MemoryStore.open(str(long_store))
    try:
        monkeypatch.chdir(tmp_path)
        store.prefetch_events("s", TERMS, 100, PERSON)
        assert _ids(store.search_events("s", TERMS, 100, PERSON)) == _ids(
            plain.search_events("s", TERMS, 100, PERSON)
        )
        assert store._side is not None and store._side.served == 1
        assert list(tmp_path.iterdir()) == []
    finally:
        store.close()
        plain.close()
