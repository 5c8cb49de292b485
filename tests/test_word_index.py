"""The word indexes over the person's messages and over memory items: what they hold,
which searches read them, and that they follow their rows through migration, purge and
odd text."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convmem.capture import Event
from convmem.config import load_settings
from convmem.core.db import MemoryDatabase
from convmem.core.schema import MIGRATIONS
from convmem.memory.models import MemoryItem, Scope
from convmem.memory.store import MemoryStore
from convmem.query import (
    TAG_MARK,
    index_words,
    query_signals,
    session_tag,
    stem,
    word_stem,
    word_terms,
)
from convmem.retrieval import Retriever
from convmem.runtime import MemoryRuntime
from pg_server import SqliteBackend

MESSAGES = ("user/message",)
#: An item written by SQL alone, with RAW_EVENT's parameters (the type unused).
ITEM_ROW = (
    "INSERT INTO memory_items (id, session_id, derived_from_seq, kind, content, evidence_type,"
    " status, content_hash, created_at, updated_at)"
    " VALUES ('i' || ?2, ?1, ?2, 'fact', ?4, 'user_explicit', 'active', 'h', 'now', 'now')"
)
#: An event written by SQL alone, as another program would: (session, seq, type, text).
RAW_EVENT = (
    "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at)"
    " VALUES (?, ?, ?, {text}, 'h' || ?2, 'now')"
)


@pytest.mark.sqlite_only
def test_index_words_mirror_the_query_terms() -> None:
    text = "The caches weren't warm: we're caching 16 GB in p95 of Ünïcode runs, 数据库 too"
    assert index_words(text) == ["cach", "warm", "cach", "p95", "ünïcod", "run", "数据", "据库"]
    # a query's terms are prefix stems of words; they meet the index's stems
    terms = query_signals("caching the cache; running runs").terms
    assert terms == ("cach", "cache", "runn", "runs")
    assert word_terms(terms) == ["cach", "run"]
    assert word_terms(["Cache", "it's", "o'k"]) == ["cach", "its"]


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("words", "key"),
    [
        (["cache", "caches", "cached", "caching"], "cach"),
        (["run", "runs", "running"], "run"),
        (["deploy", "deployed", "deploys", "deployment", "deploying"], "deplo"),
        (["configure", "configured", "configuring", "configuration"], "configur"),
        (["stuff", "stuffed"], "stuf"),
        (["call", "called", "calls"], "call"),
        (["company", "companies"], "compan"),
        # a short root: the English stemmer restores what the suffix took
        (["hike", "hikes", "hiked", "hiking"], "hike"),
        (["love", "loves", "loved", "loving"], "love"),
        (["bake", "baked", "baking"], "bake"),
        (["travel", "travels", "traveled", "travelling"], "travel"),
    ],
)
def test_a_word_and_its_inflections_are_one_word_in_the_index(words: list[str], key: str) -> None:
    assert {word_stem(w) for w in words} == {key}
    assert {word_stem(stem(w)) for w in words} == {key}


@pytest.mark.sqlite_only
@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abcdeilnorstuyz", min_size=3, max_size=14))
def test_word_stem_is_a_fixed_point(word: str) -> None:
    key = word_stem(word)
    assert word_stem(key) == key and len(key) >= 3


@pytest.mark.sqlite_only
@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abeginorsuyzéßü'0 ", max_size=60))
def test_a_message_is_found_by_a_query_of_its_own_words(text: str) -> None:
    # the query side stems each word, then drops its apostrophes; the index must agree
    terms = word_terms(query_signals(text).terms)
    assert terms is not None
    assert set(terms) <= set(index_words(text))


@pytest.mark.sqlite_only
def test_a_word_with_an_apostrophe_is_stemmed_as_the_query_stems_it() -> None:
    assert index_words("I was ssh'ing into the box") == ["ssh", "box"]
    assert word_terms(query_signals("ssh'ing").terms) == ["ssh"]


@pytest.mark.sqlite_only
def test_a_cjk_or_punctuated_term_needs_the_substring_index() -> None:
    assert word_terms(["cache", "数据库"]) is None
    assert word_terms(["cache", "数据"]) == ["cach", "数据"]  # a pair is a word of the index
    assert word_terms(["p95", "200 ms"]) is None
    assert word_terms(["a_b"]) is None
    assert word_terms(["ok"]) == []


def _runtime(backend: SqliteBackend) -> MemoryRuntime:
    return MemoryRuntime(backend.store(), load_settings(env={}))


def test_the_persons_messages_are_searched_by_whole_word(backend: SqliteBackend) -> None:
    rt = _runtime(backend)
    rt.on_events(
        [
            Event("a", 1, "user/message", "the cache is cold after a deploy"),
            Event("a", 2, "user/message", "caching works now; run pytest again"),
            Event("a", 3, "tool/result", "cache hit ratio 0.97"),
            Event("a", 4, "user/message", "we use a Cachet status page"),
            Event("b", 1, "user/message", "cache everything"),
        ]
    )
    store = rt.store
    found = [e.seq for e, _ in store.search_events("a", ["cach"], 10, MESSAGES)]
    assert sorted(found) == [1, 2]  # cache and caching, messages only; not Cachet
    assert [e.seq for e, _ in store.search_events("a", ["cachet"], 10, MESSAGES)] == [4]
    # a whole word, not a substring: "test" is inside "pytest"
    assert store.search_events("a", ["test"], 10, MESSAGES) == []
    # every type, or a CJK term: the trigram index, substrings as before
    assert [e.seq for e, _ in store.search_events("a", ["test"], 10)] == [2]
    assert sorted(e.seq for e, _ in store.search_events("a", ["cach"], 10)) == [1, 2, 3, 4]


def test_a_chinese_query_of_the_persons_messages_still_finds_them(backend: SqliteBackend) -> None:
    rt = _runtime(backend)
    rt.on_events([Event("z", 1, "user/message", "数据库连接池上限改成 50 个")])
    found = rt.store.search_events("z", ["连接池", "pool"], 10, MESSAGES)
    assert [e.seq for e, _ in found] == [1]
    # its two-character words are words of the word index
    assert [e.seq for e, _ in rt.store.search_events("z", ["连接", "pool"], 10, MESSAGES)] == [1]
    assert [e.seq for e, _ in rt.store.search_events("z", ["上限"], 10, ())] == []  # no trigram


@pytest.mark.parametrize(
    "query", ["连接池上限是多少？", "pool 上限 again", "what did we say about 连接池"]
)
def test_a_chinese_word_is_found_however_long_ago_it_was_said(
    backend: SqliteBackend, query: str
) -> None:
    """A two-character Chinese word was searched in the newest thousand events only: a
    limit set early in a long session was lost to a query that named it so."""
    rt = _runtime(backend)
    said = "数据库连接池上限改成 50 个"
    rt.on_events([Event("z", 1, "user/message", said)])
    chatter = [f"step {n}: running the {n % 7}th batch of migrations" for n in range(2, 1600)]
    for start in range(0, len(chatter), 400):
        rt.on_events(
            [
                Event("z", n, "user/message", text)
                for n, text in enumerate(chatter[start : start + 400], start + 2)
            ]
        )
    retriever = Retriever(rt.store, rt.settings)
    ranked = retriever.rank_events("z", retriever.signals(query), 10)
    assert ranked and ranked[0][0].seq == 1, [(e.seq, e.text[:30]) for e, _ in ranked[:3]]


def test_a_purged_session_leaves_nothing_in_the_word_index(backend: SqliteBackend) -> None:
    rt = _runtime(backend)
    rt.on_events([Event(s, 1, "user/message", "deploy on friday") for s in ("a", "b")])
    store = rt.store
    store.purge_session("a")
    assert store.search_events("a", ["deploy"], 10, MESSAGES) == []
    assert [e.session_id for e, _ in store.search_events("b", ["deploy"], 10, MESSAGES)] == ["b"]
    assert store.integrity_check() == []


def _database_at(path: Path, version: int) -> MemoryDatabase:
    """A SQLite store as convmem left it at schema ``version`` (open, not migrated on)."""
    db = MemoryDatabase(path, migrate=False)
    with db.transaction():
        for _, func in MIGRATIONS[:version]:
            func(db)
        db.execute("INSERT INTO meta(key, value) VALUES ('schema', ?)", (str(version),))
    return db


@pytest.mark.sqlite_only
def test_a_store_from_before_the_word_index_is_indexed_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v6.sqlite"
    db = _database_at(path, 6)
    for seq, type_ in ((1, "user/message"), (2, "tool/result")):
        db.execute(RAW_EVENT.format(text="?"), ("old", seq, type_, "the deploy window"))
    db.close()
    store = MemoryStore.open(str(path))
    try:
        assert store.db.scalar("SELECT count(*) FROM words_fts") == 1
        found = store.search_events("old", ["deploy"], 5, MESSAGES)
        assert [e.seq for e, _ in found] == [1]
        assert store.integrity_check() == []
    finally:
        store.close()


@pytest.mark.sqlite_only
def test_a_v10_store_learns_which_sessions_were_stored_out_of_seq_order(tmp_path: Path) -> None:
    path = tmp_path / "v10.sqlite"
    db = _database_at(path, 10)
    for session, seqs in (("ordered", (1, 2, 5)), ("backfilled", (4, 5, 1, 2))):
        for seq in seqs:
            db.execute(RAW_EVENT.format(text="?"), (session, seq, "user/message", "deploy"))
    db.close()
    store = MemoryStore.open(str(path))
    try:
        flagged = store.db.query("SELECT session_id FROM unordered_sessions")
        assert [r["session_id"] for r in flagged] == ["backfilled"]
        assert [e.seq for e in store.events_containing("backfilled", "deploy", 2)] == [1, 2]
        assert [e.seq for e in store.events_containing("ordered", "deploy", 2)] == [1, 2]
        store.purge_session("backfilled")  # a session stored again starts afresh
        assert store.db.query("SELECT session_id FROM unordered_sessions") == []
    finally:
        store.close()


def _items(store: MemoryStore, session: str, contents: list[str]) -> None:
    for n, content in enumerate(contents, 1):
        item = MemoryItem(f"{session}{n}", session, "fact", content, "user_explicit")
        assert store.insert_item(replace(item, content_hash=f"{session}{n}", derived_from_seq=n))


def test_items_of_other_statuses_ranked_first_do_not_hide_the_rest(
    backend: SqliteBackend,
) -> None:
    # SQLite ranks one session's items in the index alone, twice the limit at a time,
    # and reads their rows afterwards: here that first page holds only retracted items
    store = backend.store()
    _items(store, "a", ["deploy deploy deploy", "deploy deploy again", "deploy the service"])
    for item_id in ("a1", "a2"):
        store.update_item(item_id, status="retracted")
    assert [m.id for m, _ in store.search_items("a", ["deploy"], 1, ("active",))] == ["a3"]
    both = store.search_items("a", ["deploy"], 5, ("active", "retracted"))
    assert [m.id for m, _ in both] == ["a1", "a2", "a3"]


def test_the_lookup_behind_links_keeps_each_words_newest_items(backend: SqliteBackend) -> None:
    # what a correction is compared with: per word, the newest items holding it, so that
    # a word most of a long session's items share costs no ranking of every match, and
    # a rarer word's old item is still found
    store = backend.store()
    _items(
        store, "a", ["the redis timeout is 5 s"] + [f"timeout {n} ms, api{n}" for n in range(2, 40)]
    )
    _items(store, "b", ["redis timeout 9 s"])
    found = store.items_with_terms("a", ["redis", "timeout"], 3, ("active",))
    assert [m.id for m in found] == ["a1", "a39", "a38", "a37"]
    store.update_item("a39", status="superseded")
    found = store.items_with_terms("a", ["timeouts", "ms,", "api39"], 3, ("active",))
    assert [m.id for m in found] == ["a38", "a37", "a36"]  # a stem; a substring; not kept
    both = Scope("a", ("a", "b"))
    assert [m.id for m in store.items_with_terms(both, ["redis"], 3, ("active",))] == ["a1", "b1"]


def test_items_are_searched_by_whole_word(backend: SqliteBackend) -> None:
    store = backend.store()
    _items(
        store, "a", ["cache the rendered pages", "caching is off; run pytest", "数据库连接池 50"]
    )
    _items(store, "b", ["cache everything"])
    found = store.search_items("a", ["cach"], 10, ("active",))
    assert sorted(m.id for m, _ in found) == ["a1", "a2"]  # cache and caching
    assert store.search_items("a", ["ca"], 10, ("active",)) == []  # too short to rank
    assert store.search_items("a", ["test"], 10, ("active",)) == []  # not inside pytest
    # a CJK term or a punctuated one: the trigram index, substrings as before
    mixed = store.search_items("a", ["连接池", "test"], 10, ("active",))
    assert sorted(m.id for m, _ in mixed) == ["a2", "a3"]
    store.update_item("a1", status="superseded")
    assert [m.id for m, _ in store.search_items("a", ["cach"], 10, ("active",))] == ["a2"]
    store.purge_session("a")
    assert store.search_items("a", ["cach"], 10, ("active", "superseded")) == []
    assert [m.id for m, _ in store.search_items("b", ["cach"], 10, ("active",))] == ["b1"]
    assert store.integrity_check() == []


def test_other_sessions_do_not_move_a_sessions_word_ranks(backend: SqliteBackend) -> None:
    # "alpha" and "beta" are each in one of session a's rows; session b says alpha forty
    # times. Counted over the store, alpha would be the commoner word and a2 would
    # outrank a1; counted over the session (its own doclists), they rank alike
    rt = _runtime(backend)
    rt.on_events(
        [
            Event("a", 1, "user/message", "alpha report"),
            Event("a", 2, "user/message", "beta report"),
        ]
    )
    # (one word each: extraction keeps nothing of them, only the items written below)
    rt.on_events([Event("b", n, "user/message", "alpha") for n in range(1, 41)])
    store = rt.store
    _items(store, "a", ["alpha report", "beta report"])
    _items(store, "b", [f"alpha {n}" for n in range(1, 41)])
    events = {e.seq: rank for e, rank in store.search_events("a", ["alpha", "beta"], 5, MESSAGES)}
    items = {m.id: rank for m, rank in store.search_items("a", ["alpha", "beta"], 5, ("active",))}
    assert set(events) == {1, 2} and events[1] == events[2]
    assert set(items) == {"a1", "a2"} and items["a1"] == items["a2"]
    # a scope of both sessions still finds both sessions' rows
    both = Scope("a", ("a", "b"))
    found = store.search_events(both, ["alpha"], 50, MESSAGES)
    assert {e.session_id for e, _ in found} == {"a", "b"}
    found_items = store.search_items(both, ["alpha"], 50, ("active",))
    assert {m.session_id for m, _ in found_items} == {"a", "b"}


@pytest.mark.sqlite_only
@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_no_word_of_a_message_looks_like_a_tagged_word(text: str) -> None:
    assert not any(TAG_MARK in word for word in index_words(text))


@pytest.mark.sqlite_only
def test_the_session_tag_is_the_same_in_every_process() -> None:
    # stored in the index: a tag that changed between versions would hide every row
    assert session_tag("s000") == "7046ff4adc42" + TAG_MARK
    assert session_tag(b"s000") == session_tag("s000")
    assert len({session_tag(f"s{n}") for n in range(1000)}) == 1000


@pytest.mark.sqlite_only
def test_a_store_without_session_words_is_reindexed(tmp_path: Path) -> None:
    path = tmp_path / "v9.sqlite"
    db = _database_at(path, 9)
    db.execute(RAW_EVENT.format(text="?"), ("old", 1, "user/message", "caching the pages"))
    _items(MemoryStore(db), "old", ["caching the pages"])
    db.close()
    store = MemoryStore.open(str(path))
    try:
        tag = session_tag("old")
        for table in ("words_fts", "item_words_fts"):
            row = store.db.one(f"SELECT words, session_words FROM {table}")
            assert row is not None
            assert (row["words"], row["session_words"]) == ("cach page", f"{tag}cach {tag}page")
        assert [m.id for m, _ in store.search_items("old", ["cache"], 5, ("active",))] == ["old1"]
        assert [e.seq for e, _ in store.search_events("old", ["cache"], 5, MESSAGES)] == [1]
        store.db.execute(RAW_EVENT.format(text="?"), ("old", 2, "user/message", "cached"))
        # convmem never rewrites an item's content; the trigger follows it all the same
        store.db.execute("UPDATE memory_items SET content = 'deploy friday' WHERE id = 'old1'")
        found = store.search_events("old", ["cache"], 5, MESSAGES)
        assert sorted(e.seq for e, _ in found) == [1, 2]
        assert [m.id for m, _ in store.search_items("old", ["deploy"], 5, ("active",))] == ["old1"]
        assert store.search_items("old", ["cache"], 5, ("active",)) == []
        assert store.integrity_check() == []
    finally:
        store.close()


@pytest.mark.sqlite_only
def test_items_from_before_their_word_index_are_indexed_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v7.sqlite"
    _database_at(path, 7).close()
    old = MemoryStore(MemoryDatabase(path, migrate=False))
    _items(old, "old", ["the deploy window is friday", "数据库"])
    old.close()
    store = MemoryStore.open(str(path))
    try:
        assert store.db.scalar("SELECT count(*) FROM item_words_fts") == 2
        assert [m.id for m, _ in store.search_items("old", ["deploy"], 5, ("active",))] == ["old1"]
        assert store.integrity_check() == []
    finally:
        store.close()


@pytest.mark.sqlite_only
def test_a_store_whose_word_indexes_held_whole_words_is_reindexed(tmp_path: Path) -> None:
    # before schema 9 both word indexes held each word as written, searched by prefix
    path = tmp_path / "v8.sqlite"
    db = _database_at(path, 8)
    db.conn.create_function("convmem_words", 1, lambda text: "caching pages")  # the old one
    db.execute(RAW_EVENT.format(text="?"), ("old", 1, "user/message", "caching the pages"))
    _items(MemoryStore(db), "old", ["caching the pages"])
    assert db.scalar("SELECT words FROM item_words_fts") == "caching pages"
    db.close()
    store = MemoryStore.open(str(path))
    try:
        assert store.db.scalar("SELECT words FROM words_fts") == "cach page"
        assert store.db.scalar("SELECT words FROM item_words_fts") == "cach page"
        assert [m.id for m, _ in store.search_items("old", ["cache"], 5, ("active",))] == ["old1"]
        assert [e.seq for e, _ in store.search_events("old", ["cache"], 5, MESSAGES)] == [1]
        store.db.execute(RAW_EVENT.format(text="?"), ("old", 2, "user/message", "cached"))
        assert store.db.scalar("SELECT count(*) FROM words_fts") == 2  # the trigger is back
        assert store.integrity_check() == []
    finally:
        store.close()


def test_a_chinese_query_of_every_event_type_keeps_the_substring_search(
    backend: SqliteBackend,
) -> None:
    """Quoting other event types (``evidence_types = ["*"]``) takes the trigram index,
    which has no two-character terms: the query's trigrams go there and its pairs to
    the scan of recent events, as before the word indexes held pairs."""
    settings = load_settings(env={}, overrides={"assembly.evidence_types": ["*"]})
    rt = MemoryRuntime(backend.store(), settings)
    rt.on_events(
        [
            Event("z", 1, "user/message", "数据库连接池上限改成 50 个"),
            Event("z", 2, "assistant/message", "好的，上限已改", source_kind="model"),
        ]
    )
    retriever = Retriever(rt.store, rt.settings)
    for query in ("连接池上限是多少", "上限"):
        terms, short = retriever.terms(retriever.signals(query), events=True)
        assert all(len(t) >= 3 for t in terms) and short
        ranked = retriever.rank_events("z", retriever.signals(query), 5)
        assert 1 in [e.seq for e, _ in ranked], query
    # items are always searched by word: the pairs go there
    terms, short = retriever.terms(retriever.signals("上限"), events=False)
    assert terms == ("上限",) and short == ()


def _latin_words_only(text: bytes) -> str:
    return " ".join(w for w in index_words(text.decode()) if w.isascii())


@pytest.mark.sqlite_only
def test_a_v11_store_indexes_the_cjk_pairs_of_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "v11.sqlite"
    db = _database_at(path, 11)
    db.conn.create_function("convmem_words", 1, _latin_words_only)  # schema 11's
    for seq, text in ((1, "把超时改成 30 秒"), (2, "deploy on friday"), (3, "超时 is 30s")):
        db.execute(RAW_EVENT.format(text="?"), ("old", seq, "user/message", text))
    _items(MemoryStore(db), "old", ["超时是 30 秒", "deploy on friday"])
    db.close()
    store = MemoryStore.open(str(path))
    try:
        words = store.db.query("SELECT words FROM words_fts ORDER BY rowid")
        assert [r["words"] for r in words] == ["把超 超时 时改 改成", "deplo frida", "30s 超时"]
        found = store.search_events("old", ["超时"], 5, MESSAGES)
        assert sorted(e.seq for e, _ in found) == [1, 3]
        assert [m.id for m, _ in store.search_items("old", ["超时"], 5, ("active",))] == ["old1"]
        assert store.integrity_check() == []
    finally:
        store.close()


@pytest.mark.sqlite_only
def test_a_v12_store_is_indexed_again_with_english_stems(tmp_path: Path) -> None:
    path = tmp_path / "v12.sqlite"
    db = _database_at(path, 12)
    db.execute(RAW_EVENT.format(text="?"), ("old", 1, "user/message", "we went hiking"))
    _items(MemoryStore(db), "old", ["loved the hiking trip"])
    # schema 12 held a short root's inflections as they were written
    for index, words in (("words_fts", "went hiking"), ("item_words_fts", "loved hiking trip")):
        db.execute(
            f"UPDATE {index} SET words = ?,"
            " session_words = convmem_session_words(CAST('old' AS BLOB), ?)",
            (words, words),
        )
    db.close()
    store = MemoryStore.open(str(path))
    try:
        assert store.db.scalar("SELECT words FROM words_fts") == "went hike"
        assert store.db.scalar("SELECT words FROM item_words_fts") == "love hike trip"
        assert [e.seq for e, _ in store.search_events("old", ["hikes"], 5, MESSAGES)] == [1]
        assert [m.id for m, _ in store.search_items("old", ["love"], 5, ("active",))] == ["old1"]
        assert store.integrity_check() == []
    finally:
        store.close()


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("text", "value", "words"),
    [
        ("?", b"\xff\xfe binary", "binar"),  # a BLOB where text belongs
        # bytes that are not UTF-8 stored as TEXT: Python could not even convert
        # them to pass to the words function, and the insert would fail
        ("CAST(? AS TEXT)", b"deploy \xffnow", "deplo now"),
    ],
)
def test_text_the_words_function_cannot_read_never_fails_the_insert(
    tmp_path: Path, text: str, value: bytes, words: str
) -> None:
    # only another program could store such values
    store = MemoryStore.open(str(tmp_path / "m.sqlite"))
    try:
        store.db.execute(RAW_EVENT.format(text=text), ("s", 1, "user/message", value))
        assert store.db.scalar("SELECT words FROM words_fts") == words
        assert store.count_events("s") == 1
    finally:
        store.close()


@pytest.mark.sqlite_only
def test_another_program_cannot_add_an_event_without_convmem(tmp_path: Path) -> None:
    # the index's trigger calls convmem_words(), which only convmem's connections
    # have: a foreign writer gets an error instead of leaving the index behind
    path = tmp_path / "m.sqlite"
    MemoryStore.open(str(path)).close()
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.OperationalError, match="convmem_words"):
        conn.execute(RAW_EVENT.format(text="?"), ("s", 1, "user/message", "hello there"))
    # a convmem from before schema 10 has convmem_words() alone: its writes fail
    # rather than leave rows its searches of one session would never find
    conn.create_function("convmem_words", 1, lambda text: "hello")
    for sql in (RAW_EVENT.format(text="?"), ITEM_ROW):
        with pytest.raises(sqlite3.OperationalError, match="convmem_session_words"):
            conn.execute(sql, ("s", 1, "user/message", "hello there"))
    conn.close()


@pytest.mark.parametrize("count", [5, 20, 60])
def test_equal_ranks_at_the_limit_keep_the_lowest_seqs(backend: SqliteBackend, count: int) -> None:
    # identical messages rank alike; they arrive newest first, so rowid order is the
    # reverse of seq order, and the answer must still be the lowest seqs in seq order
    rt = _runtime(backend)
    rt.on_events([Event("t", seq, "user/message", "deploy now") for seq in range(count, 0, -1)])
    rt.on_events([Event("t", 100, "user/message", "nothing to see")])
    for types in (MESSAGES, ()):
        found = rt.store.search_events("t", ["deploy"], 10, types)
        assert [e.seq for e, _ in found] == list(range(1, min(count, 10) + 1))


def test_interleaved_sessions_are_searched_exactly(backend: SqliteBackend) -> None:
    rt = _runtime(backend)
    for seq in range(1, 31):
        for sid in ("a", "b"):
            text = f"deploy window {seq}" if sid == "a" else "deploy deploy deploy"
            rt.on_events([Event(sid, seq, "user/message", text)])
    found = rt.store.search_events("a", ["deploy"], 10, MESSAGES)
    assert [(e.session_id, e.seq) for e, _ in found] == [("a", seq) for seq in range(1, 11)]


def test_a_range_grown_over_another_sessions_event_is_searched_exactly(
    backend: SqliteBackend,
) -> None:
    # the range known to be a's alone grows by a's new events (counted on their own),
    # then by one of b's among them
    rt = _runtime(backend)
    counted: list[str] = []
    if rt.store.backend == "sqlite":
        rt.store.db.conn.set_trace_callback(counted.append)
    rt.on_events([Event("a", seq, "user/message", f"deploy step {seq}") for seq in (1, 2, 3)])
    assert len(rt.store.search_events("a", ["deploy"], 10, ())) == 3
    for seq, other in ((4, None), (5, "b"), (6, None)):
        if other:
            rt.on_events([Event(other, 1, "user/message", "deploy the secret plan")])
        rt.on_events([Event("a", seq, "user/message", f"deploy step {seq}")])
        for types in (MESSAGES, ()):  # the word index (tagged by session), the trigram one
            found = rt.store.search_events("a", ["deploy"], 10, types)
            assert sorted((e.session_id, e.seq) for e, _ in found) == [
                ("a", n) for n in range(1, seq + 1)
            ]
    if rt.store.backend == "sqlite":  # the new rows were counted on their own
        assert any("count(*) FROM events WHERE rowid > 3 AND rowid <= 4" in q for q in counted)


@pytest.mark.sqlite_only
def test_a_range_seen_in_a_rolled_back_transaction_is_not_trusted_later(tmp_path: Path) -> None:
    # DSH counts its prompt as said inside a transaction it rolls back: the rowid that
    # prompt had is given again, here to another session
    rt = MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite")), load_settings(env={}))
    store = rt.store
    rt.on_events([Event("a", seq, "user/message", f"deploy step {seq}") for seq in (1, 2, 3)])
    assert len(store.search_events("a", ["deploy"], 10, ())) == 3
    with pytest.raises(RuntimeError), store.transaction():
        rt.capture.capture_many([Event("a", 4, "user/message", "deploy step 4")])
        assert len(store.search_events("a", ["deploy"], 10, ())) == 4
        raise RuntimeError
    rt.on_events([Event("b", 1, "user/message", "deploy the secret plan")])
    rt.on_events([Event("a", seq, "user/message", f"deploy step {seq}") for seq in (4, 5)])
    found = store.search_events("a", ["deploy"], 10, ())
    assert sorted((e.session_id, e.seq) for e, _ in found) == [("a", n) for n in range(1, 6)]
    rt.close()


@pytest.mark.sqlite_only
def test_rowids_given_again_after_a_purge_never_leak_another_session(tmp_path: Path) -> None:
    # the session at the top of the table is purged and written again, interleaved
    # with another: its range is the same rowids as before, now shared
    path = tmp_path / "m.sqlite"
    rt = MemoryRuntime(MemoryStore.open(str(path)), load_settings(env={}))
    store = rt.store
    rt.on_events([Event("a", seq, "user/message", f"deploy step {seq}") for seq in (1, 2, 3)])
    assert len(store.search_events("a", ["deploy"], 10, MESSAGES)) == 3
    store.purge_session("a")
    rt.on_events([Event("a", 1, "user/message", "deploy one")])
    rt.on_events([Event("b", 1, "user/message", "deploy the secret plan")])
    rt.on_events([Event("a", 2, "user/message", "deploy two")])
    found = store.search_events("a", ["deploy"], 10, MESSAGES)
    assert sorted((e.session_id, e.seq) for e, _ in found) == [("a", 1), ("a", 2)]
    rt.close()


@pytest.mark.sqlite_only
def test_another_connections_purge_is_seen_too(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    rt = MemoryRuntime(MemoryStore.open(str(path)), load_settings(env={}))
    rt.on_events([Event("a", seq, "user/message", f"deploy step {seq}") for seq in (1, 2, 3)])
    assert len(rt.store.search_events("a", ["deploy"], 10, MESSAGES)) == 3
    other = MemoryRuntime(MemoryStore.open(str(path)), load_settings(env={}))
    other.store.purge_session("a")
    other.on_events([Event("a", 1, "user/message", "deploy one")])
    other.on_events([Event("c", 1, "user/message", "deploy elsewhere")])
    other.on_events([Event("a", 2, "user/message", "deploy two")])
    other.close()
    assert rt.store.rowid_span("a") == (1, 3)  # the range this process saw before
    found = rt.store.search_events("a", ["deploy"], 10, MESSAGES)
    assert sorted((e.session_id, e.seq) for e, _ in found) == [("a", 1), ("a", 2)]
    rt.close()


def test_a_thai_query_searches_substrings(backend: SqliteBackend) -> None:
    rt = _runtime(backend)
    rt.on_events([Event("th", 1, "user/message", "ผมชอบภาษาไทยมาก")])
    found = rt.store.search_events("th", ["ภาษาไทย"], 10, MESSAGES)
    assert [e.seq for e, _ in found] == [1]
