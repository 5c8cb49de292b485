"""The SQLite schema as ordered, named migrations.

Each migration is a function registered with :func:`migration`; registration order is
run order. Opening a database runs the ones it has not seen, each in its own
transaction together with its bookkeeping row in ``meta`` (``migration:<name>``), and
sets ``meta.schema`` to the number applied. A shipped migration is never edited: a
change is a new migration appended at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Executor(Protocol):
    """What a migration runs on: a database inside the migration's transaction."""

    def execute_script(self, sql: str) -> None: ...

    def execute(self, sql: str, params: Any = (), /) -> Any: ...

    def query(self, sql: str, params: Any = (), /) -> list[Any]: ...


Migration = Callable[[Executor], None]

MIGRATIONS: list[tuple[str, Migration]] = []

#: Tables whose row counts ``status`` reports.
REPORT_TABLES = (
    "sessions",
    "events",
    "memory_items",
    "memory_events",
    "task_state",
    "checkpoints",
    "skill_versions",
    "rules",
    "assembly_logs",
    "validation_logs",
)


#: SQLite tables its triggers fill from the events (like the full-text indexes):
#: ``migrate`` and exports leave them out, and the target's triggers fill its own.
DERIVED_TABLES = ("unordered_sessions",)


def migration(func: Migration) -> Migration:
    MIGRATIONS.append((func.__name__, func))
    return func


def _fts(table: str, column: str, name: str) -> str:
    """An external-content trigram FTS5 index over ``table.column`` kept in sync by triggers."""
    return f"""
    CREATE VIRTUAL TABLE {name} USING fts5(
        {column}, content='{table}', content_rowid='rowid', tokenize='trigram'
    );
    CREATE TRIGGER {name}_ai AFTER INSERT ON {table} BEGIN
        INSERT INTO {name}(rowid, {column}) VALUES (new.rowid, new.{column});
    END;
    CREATE TRIGGER {name}_ad AFTER DELETE ON {table} BEGIN
        INSERT INTO {name}({name}, rowid, {column}) VALUES ('delete', old.rowid, old.{column});
    END;
    CREATE TRIGGER {name}_au AFTER UPDATE OF {column} ON {table} BEGIN
        INSERT INTO {name}({name}, rowid, {column}) VALUES ('delete', old.rowid, old.{column});
        INSERT INTO {name}(rowid, {column}) VALUES (new.rowid, new.{column});
    END;
    """


@migration
def v1_core(db: Executor) -> None:
    """Every table of the data model except validation logs."""
    db.execute_script(
        """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            cwd TEXT, project TEXT, origin TEXT, host_version TEXT,
            memory_enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL
        );

        CREATE TABLE events (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            time TEXT, turn INTEGER, step INTEGER,
            role TEXT,
            text TEXT NOT NULL,
            source_kind TEXT, source_form TEXT,
            tool_name TEXT, call_id TEXT,
            store TEXT NOT NULL DEFAULT 'host',
            content_hash TEXT NOT NULL,
            truncated INTEGER NOT NULL DEFAULT 0,
            ingested_at TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        CREATE INDEX events_session_type ON events(session_id, type, seq);
        CREATE INDEX events_session_turn ON events(session_id, turn);
        CREATE INDEX events_hash ON events(content_hash);
        """
        + _fts("events", "text", "events_fts")
        + """
        CREATE TABLE memory_items (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            topic TEXT NOT NULL DEFAULT '',
            conditions_json TEXT NOT NULL DEFAULT '[]',
            scope_json TEXT NOT NULL DEFAULT '[]',
            numbers_json TEXT NOT NULL DEFAULT '[]',
            source_refs_json TEXT NOT NULL DEFAULT '[]',
            evidence_type TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active',
            supersedes_json TEXT NOT NULL DEFAULT '[]',
            superseded_by TEXT,
            content_hash TEXT NOT NULL,
            extractor TEXT NOT NULL,
            derived_from_seq INTEGER,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX memory_items_active_hash
            ON memory_items(session_id, content_hash) WHERE status = 'active';
        CREATE INDEX memory_items_session_status ON memory_items(session_id, status);
        CREATE INDEX memory_items_topic ON memory_items(session_id, topic);
        """
        + _fts("memory_items", "content", "memory_fts")
        + """
        CREATE TABLE memory_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            event TEXT NOT NULL,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            detail_json TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX memory_events_item ON memory_events(memory_id, id);
        CREATE INDEX memory_events_session ON memory_events(session_id, id);

        CREATE TABLE task_state (
            session_id TEXT PRIMARY KEY,
            goal TEXT,
            progress_json TEXT NOT NULL DEFAULT '[]',
            blockers_json TEXT NOT NULL DEFAULT '[]',
            open_items_json TEXT NOT NULL DEFAULT '[]',
            superseded_json TEXT NOT NULL DEFAULT '[]',
            updated_by_seq INTEGER,
            updated_at TEXT NOT NULL
        );

        CREATE TABLE checkpoints (
            session_id TEXT PRIMARY KEY,
            last_event_seq INTEGER NOT NULL DEFAULT -1,
            last_extract_seq INTEGER NOT NULL DEFAULT -1,
            last_assembly_seq INTEGER NOT NULL DEFAULT -1,
            last_validate_seq INTEGER NOT NULL DEFAULT -1,
            updated_at TEXT NOT NULL
        );

        CREATE TABLE skill_versions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL,
            source TEXT NOT NULL,
            path TEXT NOT NULL,
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            version INTEGER NOT NULL,
            supersedes INTEGER,
            created_at TEXT NOT NULL,
            UNIQUE (name, content_hash)
        );

        CREATE TABLE skill_files (
            name TEXT PRIMARY KEY,
            version_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            enabled INTEGER NOT NULL DEFAULT 1,
            description TEXT NOT NULL DEFAULT '',
            when_to_use TEXT NOT NULL DEFAULT '',
            invocation TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL
        );

        CREATE TABLE rules (
            id TEXT PRIMARY KEY,
            skill_name TEXT NOT NULL,
            rule_key TEXT NOT NULL,
            text TEXT NOT NULL,
            category TEXT NOT NULL,
            scope_json TEXT NOT NULL DEFAULT '[]',
            source_path TEXT NOT NULL,
            source_line INTEGER NOT NULL,
            active INTEGER NOT NULL DEFAULT 1,
            content_hash TEXT NOT NULL,
            version_id INTEGER NOT NULL,
            UNIQUE (skill_name, rule_key)
        );
        """
        + _fts("rules", "text", "rules_fts")
        + """
        CREATE TABLE rule_overrides (
            rule_id TEXT PRIMARY KEY,
            category TEXT,
            active INTEGER,
            scope_json TEXT,
            updated_at TEXT NOT NULL
        );

        CREATE TABLE assembly_logs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            at TEXT NOT NULL,
            trigger TEXT NOT NULL,
            turn INTEGER, step INTEGER,
            query TEXT NOT NULL DEFAULT '',
            budget INTEGER NOT NULL,
            used_tokens INTEGER NOT NULL,
            token_source TEXT NOT NULL,
            content_hash TEXT,
            injected INTEGER NOT NULL,
            message_seq INTEGER,
            text TEXT NOT NULL DEFAULT '',
            sections_json TEXT NOT NULL DEFAULT '[]',
            items_json TEXT NOT NULL DEFAULT '[]',
            omitted_json TEXT NOT NULL DEFAULT '[]',
            reasons_json TEXT NOT NULL DEFAULT '[]',
            errors_json TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX assembly_logs_session ON assembly_logs(session_id, id);

        CREATE TABLE archive (
            session_id TEXT NOT NULL,
            ref TEXT NOT NULL,
            text TEXT NOT NULL,
            chars INTEGER NOT NULL,
            truncated INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, ref)
        );

        CREATE TABLE pending_extraction (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        """
    )


@migration
def v2_validation_logs(db: Executor) -> None:
    """An audit row per validation run over committed assistant output."""
    db.execute_script(
        """
        CREATE TABLE validation_logs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            event_seq INTEGER,
            at TEXT NOT NULL,
            target TEXT NOT NULL,
            ok INTEGER NOT NULL,
            checked INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            deterministic INTEGER NOT NULL,
            blocked INTEGER NOT NULL,
            repair_reminder TEXT,
            violations_json TEXT NOT NULL DEFAULT '[]',
            errors_json TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX validation_logs_session ON validation_logs(session_id, id);
        """
    )


@migration
def v3_host_cursors(db: Executor) -> None:
    """Where an adapter stopped reading a host's own log (e.g. a transcript byte offset)."""
    db.execute_script(
        """
        CREATE TABLE host_cursors (
            session_id TEXT NOT NULL,
            source TEXT NOT NULL,
            position INTEGER NOT NULL,
            state_json TEXT NOT NULL DEFAULT '{}',
            updated_at TEXT NOT NULL,
            PRIMARY KEY (session_id, source)
        );
        """
    )


@migration
def v4_item_order_indexes(db: Executor) -> None:
    """Indexes for the per-step item lookups: newest by status, and by source event."""
    db.execute_script(
        """
        CREATE INDEX memory_items_status_seq ON memory_items(session_id, status, derived_from_seq);
        CREATE INDEX memory_items_seq ON memory_items(session_id, derived_from_seq);
        DROP INDEX memory_items_session_status;
        """
    )


#: ``said_at`` of items stored before it existed: their source event's host time.
SAID_AT_BACKFILL = """
    UPDATE memory_items SET said_at = coalesce(
        (SELECT e.time FROM events e
         WHERE e.session_id = memory_items.session_id AND e.seq = memory_items.derived_from_seq),
        created_at)
"""


@migration
def v5_projects(db: Executor) -> None:
    """The project dimension: a project's sessions by an index, and when each item was said.

    A session's project stays a column of ``sessions`` (no event is rewritten); a
    project's sessions are one index range, newest activity last. Items gain
    ``said_at``, the host time of the event they came from, which dates an item from an
    earlier session; existing items are dated here.
    """
    db.execute_script(
        "CREATE INDEX sessions_project ON sessions(project, updated_at);\n"
        "ALTER TABLE memory_items ADD COLUMN said_at TEXT;\n" + SAID_AT_BACKFILL + ";\n"
    )


#: Item indexes for extraction's per-clause lookups (both backends).
ITEM_LOOKUP_INDEXES = """
    CREATE INDEX memory_items_hash ON memory_items(session_id, content_hash);
    CREATE INDEX memory_items_topic_seq ON memory_items(session_id, topic, derived_from_seq);
    DROP INDEX memory_items_topic;
"""


@migration
def v6_item_lookup_indexes(db: Executor) -> None:
    """Indexes for lookups that otherwise scan a session: items by content hash whatever
    the status and by subject key in source order (extraction asks both per clause),
    and events by session alone, whose next column is the rowid, so that a session's
    lowest and highest rowid are two index seeks (the full-text search reads only
    that range of the index, see ``MemoryStore.search_events``)."""
    db.execute_script(ITEM_LOOKUP_INDEXES + "CREATE INDEX events_session ON events(session_id);")


@migration
def v7_message_words(db: Executor) -> None:
    """A word index over the person's messages (``words_fts``), what a pre-step's
    ranked evidence search reads by default.

    The trigram index matches any substring, so each term of a query intersects
    several long trigram doclists, and ``bm25()`` counts them all; here a term is one
    word over the person's messages only. The indexed text is
    ``convmem_words(text)`` (:func:`convmem.query.index_words` joined by spaces, a
    function each connection registers; the text goes in as a BLOB, see ``core/db``),
    kept in sync by triggers on ``events``; the ``ascii`` tokenizer splits it back
    into exactly those words."""
    db.execute_script(
        """
        CREATE VIRTUAL TABLE words_fts USING fts5(words, tokenize='ascii');
        CREATE TRIGGER words_fts_ai AFTER INSERT ON events
        WHEN new.type = 'user/message' BEGIN
            INSERT INTO words_fts(rowid, words)
                VALUES (new.rowid, convmem_words(CAST(new.text AS BLOB)));
        END;
        CREATE TRIGGER words_fts_ad AFTER DELETE ON events
        WHEN old.type = 'user/message' BEGIN
            DELETE FROM words_fts WHERE rowid = old.rowid;
        END;
        CREATE TRIGGER words_fts_au AFTER UPDATE OF text, type ON events BEGIN
            DELETE FROM words_fts WHERE rowid = old.rowid;
            INSERT INTO words_fts(rowid, words)
                SELECT new.rowid, convmem_words(CAST(new.text AS BLOB))
                WHERE new.type = 'user/message';
        END;
        INSERT INTO words_fts(rowid, words)
            SELECT rowid, convmem_words(CAST(text AS BLOB)) FROM events WHERE type = 'user/message';
        """
    )


@migration
def v8_item_words(db: Executor) -> None:
    """A word index over memory items (``item_words_fts``), as ``words_fts`` is over the
    person's messages: a pre-step's item search and extraction's search for related
    items read it when every term is a word. Every item is indexed, whatever its
    status (a search filters on the status)."""
    db.execute_script(
        """
        CREATE VIRTUAL TABLE item_words_fts USING fts5(words, tokenize='ascii');
        CREATE TRIGGER item_words_fts_ai AFTER INSERT ON memory_items BEGIN
            INSERT INTO item_words_fts(rowid, words)
                VALUES (new.rowid, convmem_words(CAST(new.content AS BLOB)));
        END;
        CREATE TRIGGER item_words_fts_ad AFTER DELETE ON memory_items BEGIN
            DELETE FROM item_words_fts WHERE rowid = old.rowid;
        END;
        CREATE TRIGGER item_words_fts_au AFTER UPDATE OF content ON memory_items BEGIN
            DELETE FROM item_words_fts WHERE rowid = old.rowid;
            INSERT INTO item_words_fts(rowid, words)
                VALUES (new.rowid, convmem_words(CAST(new.content AS BLOB)));
        END;
        INSERT INTO item_words_fts(rowid, words)
            SELECT rowid, convmem_words(CAST(content AS BLOB)) FROM memory_items;
        """
    )


@migration
def v9_word_stems(db: Executor) -> None:
    """Both word indexes rebuilt with each word as its stem
    (:func:`convmem.query.word_stem`): a term is then looked up as a whole word. A
    prefix term made FTS5 merge the doclists of every word it begins, in every
    session of the store, before the session's rows were picked. The triggers call
    ``convmem_words()`` and stay as they are."""
    db.execute_script(
        """
        DROP TABLE words_fts;
        CREATE VIRTUAL TABLE words_fts USING fts5(words, tokenize='ascii');
        INSERT INTO words_fts(rowid, words)
            SELECT rowid, convmem_words(CAST(text AS BLOB)) FROM events WHERE type = 'user/message';
        DROP TABLE item_words_fts;
        CREATE VIRTUAL TABLE item_words_fts USING fts5(words, tokenize='ascii');
        INSERT INTO item_words_fts(rowid, words)
            SELECT rowid, convmem_words(CAST(content AS BLOB)) FROM memory_items;
        """
    )


@migration
def v10_session_words(db: Executor) -> None:
    """Both word indexes gain a second column, ``session_words``: the same words, each
    prefixed with its session's tag (:func:`convmem.query.session_tag`). A search of
    one session looks its terms up there, so FTS5 reads, and ``bm25()`` counts, that
    session's doclists alone, however many other sessions the store holds; a search
    of several sessions (a project) reads ``words`` as before. Both columns hold the
    same number of words, so ranks over ``words`` do not move. The words already
    stored are tagged as they are (computing them again from the text would take
    most of the migration's time)."""
    db.execute_script(
        _session_words_index("words_fts", "events", "text", "type = 'user/message'")
        + _session_words_index("item_words_fts", "memory_items", "content", None)
    )


def _session_words_index(index: str, table: str, column: str, only: str | None) -> str:
    """SQL replacing ``index``, schema 9's word index over ``table.column`` (the rows
    where ``only`` holds), by one with the tagged column, filled from the old one's
    rows, and its triggers."""
    words = f"convmem_words(CAST(new.{column} AS BLOB))"
    row = f"new.rowid, {words}, convmem_session_words(CAST(new.session_id AS BLOB), {words})"
    when_new, when_old = (f"WHEN new.{only}", f"WHEN old.{only}") if only else ("", "")
    insert_if = f"SELECT {row} WHERE new.{only}" if only else f"VALUES ({row})"
    return f"""
        DROP TRIGGER {index}_ai;
        DROP TRIGGER {index}_ad;
        DROP TRIGGER {index}_au;
        ALTER TABLE {index} RENAME TO {index}_v9;
        CREATE VIRTUAL TABLE {index} USING fts5(words, session_words, tokenize='ascii');
        INSERT INTO {index}(rowid, words, session_words)
            SELECT o.rowid, o.words, convmem_session_words(CAST(t.session_id AS BLOB), o.words)
            FROM {index}_v9 o JOIN {table} t ON t.rowid = o.rowid;
        DROP TABLE {index}_v9;
        CREATE TRIGGER {index}_ai AFTER INSERT ON {table} {when_new} BEGIN
            INSERT INTO {index}(rowid, words, session_words) VALUES ({row});
        END;
        CREATE TRIGGER {index}_ad AFTER DELETE ON {table} {when_old} BEGIN
            DELETE FROM {index} WHERE rowid = old.rowid;
        END;
        CREATE TRIGGER {index}_au AFTER UPDATE OF session_id, {column}{", type" if only else ""}
        ON {table} BEGIN
            DELETE FROM {index} WHERE rowid = old.rowid;
            INSERT INTO {index}(rowid, words, session_words) {insert_if};
        END;
        """


@migration
def v11_unordered_sessions(db: Executor) -> None:
    """``unordered_sessions`` names the sessions holding an event stored after one with a
    higher seq (a backfill, a file read out of order). In every other session rowid
    order is seq order, so a search for the oldest events containing a term can walk
    the trigram index in rowid order and stop at the first matches
    (``MemoryStore.events_containing``) instead of reading every match to sort it.
    Triggers keep the table; a new row is out of order when its session already holds
    a higher seq (its rowid is above every other)."""
    db.execute_script(
        """
        CREATE TABLE unordered_sessions (session_id TEXT PRIMARY KEY) WITHOUT ROWID;
        INSERT INTO unordered_sessions
            SELECT DISTINCT session_id FROM (
                SELECT session_id, seq,
                       lag(seq) OVER (PARTITION BY session_id ORDER BY rowid) AS before
                FROM events
            ) WHERE seq < before;
        CREATE TRIGGER events_order_ai AFTER INSERT ON events
        WHEN EXISTS (SELECT 1 FROM events WHERE session_id = new.session_id AND seq > new.seq)
        BEGIN
            INSERT OR IGNORE INTO unordered_sessions(session_id) VALUES (new.session_id);
        END;
        CREATE TRIGGER events_order_au AFTER UPDATE OF session_id, seq ON events BEGIN
            INSERT OR IGNORE INTO unordered_sessions(session_id) VALUES (new.session_id);
        END;
        CREATE TRIGGER events_order_ad AFTER DELETE ON events
        WHEN NOT EXISTS (SELECT 1 FROM events WHERE session_id = old.session_id)
        BEGIN
            DELETE FROM unordered_sessions WHERE session_id = old.session_id;
        END;
        """
    )


@migration
def v12_cjk_pairs(db: Executor) -> None:
    """The word indexes hold every two-character window of each CJK run too
    (:func:`convmem.query.index_words`), so a Chinese query is ranked over the whole
    session by the words of its own rows, as an English one is; before, its trigrams
    went to the substring index and its two-character words (most Chinese words) to a
    scan of the newest thousand events. The triggers are unchanged; the rows whose
    text holds CJK are indexed again."""
    from convmem.core.text import cjk_runs

    for table, index, column, only in (
        ("events", "words_fts", "text", "AND type = 'user/message'"),
        ("memory_items", "item_words_fts", "content", ""),
    ):
        words = "convmem_words(CAST(? AS BLOB))"
        update = (
            f"UPDATE {index} SET words = {words},"
            f" session_words = convmem_session_words(CAST(? AS BLOB), {words}) WHERE rowid = ?"
        )
        last = 0
        while rows := db.query(
            f"SELECT rowid AS id, session_id, {column} AS text FROM {table}"
            f" WHERE rowid > ? {only} ORDER BY rowid LIMIT 2000",
            (last,),
        ):
            for row in rows:
                text = row["text"]
                if isinstance(text, bytes):
                    text = text.decode("utf-8", "replace")
                if isinstance(text, str) and cjk_runs(text):
                    db.execute(update, (text, row["session_id"], text, row["id"]))
            last = int(rows[-1]["id"])


@migration
def v13_english_stems(db: Executor) -> None:
    """Both word indexes indexed again with English words through the Porter2 stemmer
    as well (:func:`convmem.query.word_stem`), so that ``hiking`` meets ``hike`` and
    ``loved`` meets ``love``; the triggers are unchanged."""
    for table, index, column, only in (
        ("events", "words_fts", "text", "WHERE type = 'user/message'"),
        ("memory_items", "item_words_fts", "content", ""),
    ):
        words = f"convmem_words(CAST({column} AS BLOB))"
        db.execute_script(
            f"""
            DELETE FROM {index};
            INSERT INTO {index}(rowid, words, session_words)
                SELECT rowid, {words},
                       convmem_session_words(CAST(session_id AS BLOB), {words})
                FROM {table} {only};
            """
        )


SCHEMA_VERSION = len(MIGRATIONS)
