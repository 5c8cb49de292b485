"""The PostgreSQL store: dialect, schema, BM25 parity with SQLite, locks, diagnostics.

The rest of the suite runs on both backends (``conftest.BACKEND_MODULES``); these
tests pin what is specific to PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pg_server
from conftest import Cli, ev, write_events
from convmem.capture import Capture, Event
from convmem.config import load_settings
from convmem.core import schema as sqlite_schema
from convmem.errors import SchemaTooNewError, StoreError
from convmem.memory.models import MemoryItem
from convmem.memory.pg_db import PgDatabase, dialect, redact
from convmem.memory.pg_schema import MIGRATIONS, SCHEMA_VERSION
from convmem.memory.pg_search import has_border, occurrence_regex
from convmem.memory.pg_store import PgMemoryStore, session_lock_key
from convmem.memory.store import MemoryStore
from convmem.runtime import open_store


@pytest.fixture
def pg(pg_pool: pg_server.SchemaPool) -> Iterator[pg_server.PgBackend]:
    """Fresh PostgreSQL schemas for one test (also when the test is not parametrized)."""
    backend = pg_server.PgBackend(pg_pool)
    yield backend
    backend.close()


# --- no server needed ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sqlite", "postgresql"),
    [
        (
            "INSERT OR IGNORE INTO archive (session_id, ref) VALUES (?,?)",
            "INSERT INTO archive (session_id, ref) VALUES (%s,%s) ON CONFLICT DO NOTHING",
        ),
        (
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            "INSERT INTO meta(key, value) VALUES (%s, %s)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        ),
        (
            "SELECT id FROM rules WHERE text LIKE ? ESCAPE '\\' AND x = '10%' AND y = '?'",
            "SELECT id FROM rules WHERE text ILIKE %s COLLATE \"C\" ESCAPE '\\' AND x = '10%%'"
            " AND y = '?'",
        ),
        (
            "INSERT INTO assembly_logs (session_id) VALUES (?)",
            "INSERT INTO assembly_logs (session_id) VALUES (%s) RETURNING id",
        ),
    ],
)
def test_sqlite_dialect_is_rewritten_exactly(sqlite: str, postgresql: str) -> None:
    assert dialect(sqlite)[0] == postgresql


def test_migrations_mirror_the_sqlite_ones_name_for_name() -> None:
    # so that meta.schema (and `status`) means the same on both backends
    assert [name for name, _ in MIGRATIONS] == [name for name, _ in sqlite_schema.MIGRATIONS]
    assert SCHEMA_VERSION == sqlite_schema.SCHEMA_VERSION


def test_passwords_never_reach_messages() -> None:
    assert redact("postgresql://me:s3cret@db:5432/mem") == "postgresql://me:***@db:5432/mem"
    assert "s3cret" not in redact("postgresql://db/mem?password=s3cret&sslmode=require")


def test_occurrence_regex_escapes_ascii_punctuation_only() -> None:
    assert occurrence_regex("a.b(c)") == r"(?=a\.b\(c\))"
    assert occurrence_regex("连接池 x") == r"(?=连接池\ x)"
    assert has_border("ana") and has_border("abab") and not has_border("cache")
    assert session_lock_key("s") == session_lock_key("s") != session_lock_key("t")


# --- search: the same sets and the same BM25 numbers as FTS5 -------------------------------

_WORDS = ["cache", "Cache", "CACHE", "banana", "anana", "aaa", "abab", "数据库", "连接池"]
_WORDS += ["Ünïcode", "ÄÖÜ", "äöü", "200 ms", "p95", "a_b", "50%", "x\\y", "o'k", "ms"]
_text = st.lists(st.sampled_from(_WORDS), max_size=14).map(" ".join)
_term = st.one_of(
    st.sampled_from([*_WORDS, "ana", "aba", "che", "cach", "e 2", "50", "%", "_", "xyz"]),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=6),
)


@pytest.fixture
def twins(pg: pg_server.PgBackend) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    lite = MemoryStore.open(":memory:")
    yield lite, pg.store()
    lite.close()


def _fill(store: MemoryStore, session: str, texts: list[str]) -> None:
    Capture(store, load_settings(env={})).capture_many(
        [Event(session, i, "user/message", t) for i, t in enumerate(texts)]
    )
    for i, text in enumerate(texts):
        item = MemoryItem(f"m{session}_{i}", session, "fact", text or "-", "user_explicit")
        store.insert_item(replace(item, content_hash=f"{session}{i}", derived_from_seq=i))


def _one_session_each(
    twins: tuple[MemoryStore, MemoryStore], texts: list[str]
) -> tuple[MemoryStore, MemoryStore, str]:
    """The texts as one more session of the shared PostgreSQL store, and as the only
    session of a fresh SQLite store (the caller closes it)."""
    shared = twins[1]
    session = f"s{shared.count_events()}"
    _fill(shared, session, texts)
    lite = MemoryStore.open(":memory:")
    _fill(lite, session, texts)
    return shared, lite, session


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(_text, min_size=1, max_size=12), terms=st.lists(_term, max_size=4))
def test_search_returns_the_same_rows_and_scores_on_both_backends(
    twins: tuple[MemoryStore, MemoryStore], texts: list[str], terms: list[str]
) -> None:
    # PostgreSQL holds every example as one more session of a shared store; SQLite
    # holds this session alone. PostgreSQL's BM25 statistics are per session, so
    # its ranks must equal SQLite's to the last bit all the same.
    shared, lite, session = _one_session_each(twins, texts)
    assert [(e.seq, r) for e, r in shared.search_events(session, terms, 50)] == [
        (e.seq, r) for e, r in lite.search_events(session, terms, 50)
    ]
    # the person's messages alone: the word index when every term is a word
    messages = ("user/message",)
    assert [(e.seq, r) for e, r in shared.search_events(session, terms, 50, messages)] == [
        (e.seq, r) for e, r in lite.search_events(session, terms, 50, messages)
    ]
    statuses = ("active",)
    assert [(m.id, r) for m, r in shared.search_items(session, terms, 50, statuses)] == [
        (m.id, r) for m, r in lite.search_items(session, terms, 50, statuses)
    ]
    assert [m.id for m in shared.like_items(session, terms, 50, statuses)] == [
        m.id for m in lite.like_items(session, terms, 50, statuses)
    ]
    # a correction's lookup of earlier items: the newest few holding each term
    assert [m.id for m in shared.items_with_terms(session, terms, 3, statuses)] == [
        m.id for m in lite.items_with_terms(session, terms, 3, statuses)
    ]
    for term in terms:
        assert [e.seq for e in shared.events_containing(session, term, 50)] == [
            e.seq for e in lite.events_containing(session, term, 50)
        ], term
    lite.close()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(_text, min_size=1, max_size=12), data=st.data())
def test_long_needles_find_the_same_rows_on_both_backends(
    twins: tuple[MemoryStore, MemoryStore], texts: list[str], data: st.DataObject
) -> None:
    # SQLite looks a long needle up by three pieces and checks the rows whole;
    # PostgreSQL compares lower() of the whole text: the rows must be the same
    shared, lite, session = _one_session_each(twins, texts)
    text = data.draw(st.sampled_from(texts))
    start = data.draw(st.integers(0, len(text)))
    needle = text[start : start + data.draw(st.integers(19, 60))]
    needle = data.draw(st.sampled_from([needle, needle.upper(), needle.swapcase()]))
    assert [e.seq for e in shared.events_containing(session, needle, 50)] == [
        e.seq for e in lite.events_containing(session, needle, 50)
    ], needle
    lite.close()


def test_the_short_term_fallback_keeps_the_newest_items_on_both_backends(
    twins: tuple[MemoryStore, MemoryStore],
) -> None:
    # a one-character word is found by a substring scan capped at a limit: in a long
    # session the cap must keep the items said last, not the first ones
    shared, lite, session = _one_session_each(twins, [f"第{n}只猫要喂" for n in range(30)])
    for store in (shared, lite):
        found = store.like_items(session, ["猫"], 10, ("active",))
        assert [i.derived_from_seq for i in found] == list(range(29, 19, -1)), store.backend
    lite.close()


def test_bm25_statistics_are_per_session_on_postgresql_only(
    twins: tuple[MemoryStore, MemoryStore],
) -> None:
    # On purpose, pinned on both sides: FTS5 takes documents, average length and
    # rows per term from the whole table; PostgreSQL from the session. Another
    # session full of the term moves SQLite's score for "a" and not PostgreSQL's.
    for store in twins:
        _fill(store, "a", ["the cache is warm", "cold start", "cache miss"])
    before = {store.backend: store.search_events("a", ["cache"], 5) for store in twins}
    assert before["sqlite"] == before["postgresql"]
    for store in twins:
        _fill(store, "b", ["cache " * 20] * 30)
    after = {store.backend: store.search_events("a", ["cache"], 5) for store in twins}
    assert after["postgresql"] == before["postgresql"]
    assert [e.seq for e, _ in after["sqlite"]] == [e.seq for e, _ in before["sqlite"]]
    assert [r for _, r in after["sqlite"]] != [r for _, r in before["sqlite"]]


def test_case_folding_differs_only_where_unicode_tables_do(
    twins: tuple[MemoryStore, MemoryStore],
) -> None:
    # On purpose, pinned on both sides: FTS5 folds with its own (simple case folding)
    # tables, PostgreSQL with lower() of the database's UTF-8 locale. They disagree on
    # about 400 of 139,000 code points (docs/storage.md), e.g. Greek final sigma.
    lite, pg = twins
    for store in twins:
        Capture(store, load_settings(env={})).capture_many(
            [
                Event("f", 1, "user/message", "ΛΌΓΟΣ and Ärger"),
                Event("f", 2, "user/message", "λόγος and ärger"),
            ]
        )
    assert [e.seq for e in lite.events_containing("f", "λόγοσ", 5)] == [1, 2]
    assert [e.seq for e in pg.events_containing("f", "λόγοσ", 5)] == [1]
    for store in twins:  # everywhere else the two agree: Unicode case for long needles...
        assert [e.seq for e in store.events_containing("f", "ärger", 5)] == [1, 2]
        # ...and SQLite LIKE's ASCII-only folding for short ones
        assert [e.seq for e in store.events_containing("f", "Är", 5)] == [1]


# --- schema ---------------------------------------------------------------------------------


def _pg_database_at(pg_pool: pg_server.SchemaPool, version: int) -> tuple[PgDatabase, str]:
    """A PostgreSQL schema as convmem left it at schema ``version`` (not migrated on),
    and its URL."""
    url = pg_pool.url(pg_pool.checkout(migrated=False))
    db = PgDatabase(url, migrate=False)
    with db.transaction():
        for _, func in MIGRATIONS[:version]:
            func(db)
        db.execute("INSERT INTO meta(key, value) VALUES ('schema', ?)", (str(version),))
    return db, url


def test_oldest_schema_migrates_forward(pg_pool: pg_server.SchemaPool) -> None:
    db, url = _pg_database_at(pg_pool, 1)
    db.execute(
        "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at)"
        " VALUES ('old', 1, 'user/message', 'kept across migrations', 'h', 'then')"
    )
    db.execute(
        "INSERT INTO memory_items (id, session_id, kind, content, evidence_type, content_hash,"
        " extractor, created_at, updated_at)"
        " VALUES ('m1', 'old', 'fact', 'migrations keep items', 'user_explicit', 'h', 'x',"
        " 'then', 'then')"
    )
    db.close()
    store = PgMemoryStore.open(url)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert [e.text for e in store.events("old")] == ["kept across migrations"]
        # v7 indexed the message stored before it by word
        found = store.search_events("old", ["migration"], 5, ("user/message",))
        assert [e.seq for e, _ in found] == [1]
        # v8 the item stored before it
        items = store.search_items("old", ["migration"], 5, ("active",))
        assert [m.id for m, _ in items] == ["m1"] and store.integrity_check() == []
        assert store.latest_validation_log() is None  # v2 table exists now
        assert store.meta(f"migration:{MIGRATIONS[-1][0]}") is not None
    finally:
        store.close()


def test_word_indexes_are_rebuilt_with_english_stems(pg_pool: pg_server.SchemaPool) -> None:
    # schema 12 held a short root's inflections as they were written
    db, url = _pg_database_at(pg_pool, 12)
    db.execute(
        "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at)"
        " VALUES ('old', 1, 'user/message', 'we went hiking', 'h', 'then')"
    )
    db.execute("INSERT INTO message_words VALUES ('old', 1, ' went  hiking ', 2)")
    db.close()
    store = PgMemoryStore.open(url)
    try:
        assert store.db.scalar("SELECT words FROM message_words") == " went  hike "
        found = store.search_events("old", ["hikes"], 5, ("user/message",))
        assert [e.seq for e, _ in found] == [1]
        assert store.integrity_check() == []
    finally:
        store.close()


def test_word_indexes_of_whole_words_are_rebuilt_with_stems(
    pg_pool: pg_server.SchemaPool,
) -> None:
    # before schema 9 a row held its words as written, joined by single spaces
    db, url = _pg_database_at(pg_pool, 8)
    db.execute(
        "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at)"
        " VALUES ('old', 1, 'user/message', 'caching the pages', 'h', 'then')"
    )
    db.execute("INSERT INTO message_words VALUES ('old', 1, 'caching pages', 2)")
    db.execute(
        "INSERT INTO memory_items (id, session_id, kind, content, evidence_type, content_hash,"
        " extractor, created_at, updated_at)"
        " VALUES ('m1', 'old', 'fact', 'caching the pages', 'user_explicit', 'h', 'x',"
        " 'then', 'then')"
    )
    db.execute("INSERT INTO item_words VALUES ('m1', 'old', 'caching pages', 2)")
    db.close()
    store = PgMemoryStore.open(url)
    try:
        assert store.db.scalar("SELECT words FROM message_words") == " cach  page "
        assert store.db.scalar("SELECT words FROM item_words") == " cach  page "
        stats = store.db.query("SELECT tbl, docs, tokens FROM fts_stats ORDER BY tbl")
        counts = {r["tbl"]: (r["docs"], r["tokens"]) for r in stats}
        assert counts["message_words"] == counts["item_words"] == (1, 2)
        found = store.search_events("old", ["cache", "page"], 5, ("user/message",))
        assert [e.seq for e, _ in found] == [1]
        assert [m.id for m, _ in store.search_items("old", ["cached"], 5, ("active",))] == ["m1"]
        assert store.integrity_check() == []
    finally:
        store.close()


def test_hosts_opening_a_new_database_together_migrate_it_once(
    pg_pool: pg_server.SchemaPool,
) -> None:
    url = pg_pool.url(pg_pool.checkout(migrated=False))
    errors: list[BaseException] = []
    applied: list[list[str]] = []

    def open_one() -> None:
        try:
            db = PgDatabase(url, migrate=False)
            applied.append(db.migrate())
            db.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(len(a) for a in applied) == [0, 0, 0, SCHEMA_VERSION]


def test_a_newer_schema_is_refused(pg: pg_server.PgBackend) -> None:
    url = pg.url()
    PgMemoryStore.open(url).set_meta("schema", str(SCHEMA_VERSION + 1))
    with pytest.raises(SchemaTooNewError, match="upgrade convmem"):
        PgMemoryStore.open(url)


def test_an_unreachable_server_is_one_sentence() -> None:
    with pytest.raises(StoreError, match=r"cannot use PostgreSQL at .*database exists"):
        PgMemoryStore.open("postgresql://nobody@/nowhere?host=/nonexistent&connect_timeout=2")


def test_the_store_setting_selects_postgresql(pg: pg_server.PgBackend) -> None:
    store = open_store(load_settings(env={}).with_values(store=pg.url()))
    try:
        assert isinstance(store, PgMemoryStore) and store.backend == "postgresql"
    finally:
        store.close()


# --- diagnostics -----------------------------------------------------------------------------


def test_integrity_check_is_real(pg: pg_server.PgBackend) -> None:
    store = pg.store()
    Capture(store, load_settings(env={})).capture(Event("s", 1, "user/message", "hello there"))
    assert store.integrity_check() == []
    store.db.execute("UPDATE fts_stats SET docs = docs + 1 WHERE tbl = 'events'")
    assert store.integrity_check() == ["fts_stats for events do not match its rows"]
    store.db.execute("UPDATE fts_stats SET docs = docs - 1 WHERE tbl = 'events'")
    store.db.execute("DELETE FROM message_words")  # as an older convmem's insert leaves it
    assert store.integrity_check() == [
        "1 of the person's messages are missing from message_words"
        " (written by a convmem older than schema 7?)"
    ]
    store.db.execute("DELETE FROM events")
    store.insert_item(MemoryItem("m1", "s", "fact", "hello there", "user_explicit"))
    assert store.integrity_check() == []
    store.db.execute("DELETE FROM item_words")
    assert store.integrity_check() == [
        "1 memory items are missing from item_words (written by a convmem older than schema 8?)"
    ]


def test_status_and_check_on_postgresql(cli: Cli, pg: pg_server.PgBackend, tmp_path: Path) -> None:
    url = pg.url()
    cli(
        "--store",
        url,
        "ingest",
        str(write_events(tmp_path / "e.jsonl", [ev(1, "user/message", "hi")])),
    )
    data = cli("--store", url, "status", "--check", "--json").json()
    assert data["store"]["backend"] == "postgresql"
    assert data["store"]["schema_version"] == data["store"]["schema_expected"] == SCHEMA_VERSION
    assert data["counts"]["events"] == 1
    assert data["integrity"] == {"ok": True, "problems": []}
    human = cli("status", env={"CONVMEM_STORE": url})
    assert human.code == 0 and "store: postgresql postgresql://" in human.out


def test_status_never_shows_a_password(cli: Cli, pg: pg_server.PgBackend) -> None:
    url = pg.url().replace("postgresql://convmem@", "postgresql://convmem:s3cret@")
    data = cli("--store", url, "status", "--json")
    assert data.code == 0, data
    assert "s3cret" not in data.out and "convmem:***@" in data.json()["store"]["location"]


def test_text_postgresql_cannot_hold_is_repaired_not_refused(pg: pg_server.PgBackend) -> None:
    # SQLite stores U+0000; PostgreSQL text cannot, so the adapter writes U+FFFD instead
    store = pg.store()
    store.set_meta("probe", "a\x00b")
    assert store.meta("probe") == "a\ufffdb"
    assert store.search_events("s", ["a\x00b"], 5) == []


# --- locks ------------------------------------------------------------------------------------


def _wait_for_a_lock_waiter(url: str) -> None:
    """Until another connection waits for an advisory lock (the condition, not a time)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as watcher:
        for _ in range(3000):
            row = watcher.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()
            if row and row[0]:
                return
            time.sleep(0.01)
    raise AssertionError("no connection ever waited for the session's lock")


def test_a_session_runs_one_read_then_write_transaction_at_a_time(
    pg: pg_server.PgBackend,
) -> None:
    url = pg.url()
    first, second = PgMemoryStore.open(url), PgMemoryStore.open(url)
    order: list[str] = []

    def contend(session: str) -> None:
        with second.transaction():
            second.checkpoint(session)  # waits while `first` holds the session
            order.append(f"second:{session}")

    try:
        with first.transaction():
            first.checkpoint("s")
            other = threading.Thread(target=contend, args=("t",))
            other.start()
            other.join(5)  # another session never waits
            same = threading.Thread(target=contend, args=("s",))
            same.start()
            _wait_for_a_lock_waiter(url)  # `second` is blocked on the session's lock
            order.append("first:s")
        same.join(5)
        assert order == ["second:t", "first:s", "second:s"]
    finally:
        first.close()
        second.close()
