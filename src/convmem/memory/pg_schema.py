"""The PostgreSQL schema as ordered, named migrations, mirroring ``core/schema.py``.

Each SQLite migration has a PostgreSQL twin of the same name at the same position,
so ``meta.schema`` means the same thing on both backends (a test pins the names).
Tables, columns, keys and the partial unique index are the same; what differs is
the dialect:

* ``INTEGER PRIMARY KEY AUTOINCREMENT`` becomes a ``BIGINT`` identity column;
* identifiers, names, timestamps and JSON columns are ``TEXT COLLATE "C"``, so that
  every ``ORDER BY`` sorts byte-wise exactly as SQLite's BINARY collation does; the
  three searched columns (``events.text``, ``memory_items.content``, ``rules.text``)
  keep the database collation, whose character classes fold case beyond ASCII;
* the FTS5 trigram tables become GIN indexes over ``(session_id, lower(column))``
  (``btree_gin`` + ``pg_trgm``: one index scan finds the session's rows holding a
  term's trigrams; searches compare lowered text, as ``ILIKE`` does), and ``fts_stats``
  keeps per-session document and token counts (maintained by statement-level
  triggers) for the BM25 of ``pg_search``.

A shipped migration is never edited; a change is a new migration appended at the
end of both lists.
"""

from __future__ import annotations

from convmem.core import schema as sqlite_schema
from convmem.core.constants import PERSON_MESSAGE
from convmem.core.schema import Executor, Migration

MIGRATIONS: list[tuple[str, Migration]] = []

#: Tables with an identity ``id`` (SQLite's AUTOINCREMENT), whose inserts report the new id.
IDENTITY_TABLES = frozenset({"memory_events", "skill_versions", "assembly_logs", "validation_logs"})

#: The FTS5 tokenizer's document length: one trigram per position (``chars - 2``).
TRIGRAM_TOKENS = "greatest(char_length({column}) - 2, 0)"


#: GIN buffers new entries in a pending list that every search scans until it is
#: merged. Events arrive in bulk: a small list keeps inserts batched and searches
#: cheap. Items arrive one by one and are searched on every step: no list at all.
_EVENTS_GIN = "fastupdate = on, gin_pending_list_limit = 256"
_ITEMS_GIN = "fastupdate = off"


def migration(func: Migration) -> Migration:
    MIGRATIONS.append((func.__name__, func))
    return func


def _fts(table: str, column: str, storage: str) -> str:
    """A trigram GIN index over ``table.column`` and triggers that keep ``fts_stats``."""
    return f"""
    CREATE INDEX {table}_{column}_trgm ON {table}
        USING gin (session_id, lower({column}) gin_trgm_ops) WITH ({storage});
    """ + _stats_triggers(table, TRIGRAM_TOKENS.format(column=column))


def _stats_triggers(table: str, tokens: str) -> str:
    """Statement-level triggers that keep ``fts_stats`` for ``table``: one document per
    row, ``tokens`` (an expression over the row) tokens."""
    upsert = (
        "INSERT INTO fts_stats AS s (tbl, session_id, docs, tokens)"
        " SELECT '{table}', session_id, sum(docs), sum(tokens) FROM ({rows}) d"
        " GROUP BY session_id HAVING sum(docs) <> 0 OR sum(tokens) <> 0"
        " ON CONFLICT (tbl, session_id) DO UPDATE"
        " SET docs = s.docs + excluded.docs, tokens = s.tokens + excluded.tokens;"
    )
    added = f"SELECT session_id, 1 AS docs, {tokens} AS tokens FROM new_rows"
    removed = f"SELECT session_id, -1 AS docs, -{tokens} AS tokens FROM old_rows"
    return f"""
    CREATE FUNCTION {table}_fts_stats() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            {upsert.format(table=table, rows=added)}
        ELSIF TG_OP = 'DELETE' THEN
            {upsert.format(table=table, rows=removed)}
        ELSE
            {upsert.format(table=table, rows=added + " UNION ALL " + removed)}
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER {table}_fts_ai AFTER INSERT ON {table}
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION {table}_fts_stats();
    CREATE TRIGGER {table}_fts_ad AFTER DELETE ON {table}
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION {table}_fts_stats();
    CREATE TRIGGER {table}_fts_au AFTER UPDATE ON {table}
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION {table}_fts_stats();
    """


@migration
def v1_core(db: Executor) -> None:
    """Every table of the data model except validation logs."""
    db.execute_script(
        """
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE EXTENSION IF NOT EXISTS btree_gin;
        CREATE TABLE IF NOT EXISTS meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE fts_stats (
            tbl TEXT COLLATE "C" NOT NULL,
            session_id TEXT COLLATE "C" NOT NULL,
            docs BIGINT NOT NULL DEFAULT 0,
            tokens BIGINT NOT NULL DEFAULT 0,
            PRIMARY KEY (tbl, session_id)
        );

        CREATE TABLE sessions (
            session_id TEXT COLLATE "C" PRIMARY KEY,
            cwd TEXT COLLATE "C", project TEXT COLLATE "C", origin TEXT COLLATE "C",
            host_version TEXT COLLATE "C",
            memory_enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL
        );

        CREATE TABLE events (
            session_id TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            type TEXT COLLATE "C" NOT NULL,
            time TEXT COLLATE "C", turn BIGINT, step BIGINT,
            role TEXT COLLATE "C",
            text TEXT NOT NULL,
            source_kind TEXT COLLATE "C", source_form TEXT COLLATE "C",
            tool_name TEXT COLLATE "C", call_id TEXT COLLATE "C",
            store TEXT COLLATE "C" NOT NULL DEFAULT 'host',
            content_hash TEXT COLLATE "C" NOT NULL,
            truncated INTEGER NOT NULL DEFAULT 0,
            ingested_at TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        CREATE INDEX events_session_type ON events(session_id, type, seq);
        CREATE INDEX events_session_turn ON events(session_id, turn);
        CREATE INDEX events_hash ON events(content_hash);
        """
        + _fts("events", "text", _EVENTS_GIN)
        + """
        CREATE TABLE memory_items (
            id TEXT COLLATE "C" PRIMARY KEY,
            session_id TEXT COLLATE "C" NOT NULL,
            kind TEXT COLLATE "C" NOT NULL,
            content TEXT NOT NULL,
            topic TEXT COLLATE "C" NOT NULL DEFAULT '',
            conditions_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            scope_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            numbers_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            source_refs_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            evidence_type TEXT COLLATE "C" NOT NULL,
            status TEXT COLLATE "C" NOT NULL DEFAULT 'active',
            supersedes_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            superseded_by TEXT COLLATE "C",
            content_hash TEXT COLLATE "C" NOT NULL,
            extractor TEXT COLLATE "C" NOT NULL,
            derived_from_seq BIGINT,
            created_at TEXT COLLATE "C" NOT NULL,
            updated_at TEXT COLLATE "C" NOT NULL
        );
        CREATE UNIQUE INDEX memory_items_active_hash
            ON memory_items(session_id, content_hash) WHERE status = 'active';
        CREATE INDEX memory_items_session_status ON memory_items(session_id, status);
        CREATE INDEX memory_items_topic ON memory_items(session_id, topic);
        """
        + _fts("memory_items", "content", _ITEMS_GIN)
        + """
        CREATE TABLE memory_events (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            memory_id TEXT COLLATE "C" NOT NULL,
            session_id TEXT COLLATE "C" NOT NULL,
            event TEXT COLLATE "C" NOT NULL,
            at TEXT COLLATE "C" NOT NULL,
            actor TEXT COLLATE "C" NOT NULL,
            detail_json TEXT COLLATE "C" NOT NULL DEFAULT '{}'
        );
        CREATE INDEX memory_events_item ON memory_events(memory_id, id);
        CREATE INDEX memory_events_session ON memory_events(session_id, id);

        CREATE TABLE task_state (
            session_id TEXT COLLATE "C" PRIMARY KEY,
            goal TEXT COLLATE "C",
            progress_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            blockers_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            open_items_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            superseded_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            updated_by_seq BIGINT,
            updated_at TEXT COLLATE "C" NOT NULL
        );

        CREATE TABLE checkpoints (
            session_id TEXT COLLATE "C" PRIMARY KEY,
            last_event_seq BIGINT NOT NULL DEFAULT -1,
            last_extract_seq BIGINT NOT NULL DEFAULT -1,
            last_assembly_seq BIGINT NOT NULL DEFAULT -1,
            last_validate_seq BIGINT NOT NULL DEFAULT -1,
            updated_at TEXT COLLATE "C" NOT NULL
        );

        CREATE TABLE skill_versions (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            name TEXT COLLATE "C" NOT NULL,
            source TEXT COLLATE "C" NOT NULL,
            path TEXT COLLATE "C" NOT NULL,
            content TEXT COLLATE "C" NOT NULL,
            content_hash TEXT COLLATE "C" NOT NULL,
            version BIGINT NOT NULL,
            supersedes BIGINT,
            created_at TEXT COLLATE "C" NOT NULL,
            UNIQUE (name, content_hash)
        );

        CREATE TABLE skill_files (
            name TEXT COLLATE "C" PRIMARY KEY,
            version_id BIGINT NOT NULL,
            path TEXT COLLATE "C" NOT NULL,
            enabled INTEGER NOT NULL DEFAULT 1,
            description TEXT COLLATE "C" NOT NULL DEFAULT '',
            when_to_use TEXT COLLATE "C" NOT NULL DEFAULT '',
            invocation TEXT COLLATE "C" NOT NULL DEFAULT '',
            updated_at TEXT COLLATE "C" NOT NULL
        );

        CREATE TABLE rules (
            id TEXT COLLATE "C" PRIMARY KEY,
            skill_name TEXT COLLATE "C" NOT NULL,
            rule_key TEXT COLLATE "C" NOT NULL,
            text TEXT NOT NULL,
            category TEXT COLLATE "C" NOT NULL,
            scope_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            source_path TEXT COLLATE "C" NOT NULL,
            source_line BIGINT NOT NULL,
            active INTEGER NOT NULL DEFAULT 1,
            content_hash TEXT COLLATE "C" NOT NULL,
            version_id BIGINT NOT NULL,
            UNIQUE (skill_name, rule_key)
        );
        CREATE INDEX rules_text_trgm ON rules USING gin (lower(text) gin_trgm_ops);

        CREATE TABLE rule_overrides (
            rule_id TEXT COLLATE "C" PRIMARY KEY,
            category TEXT COLLATE "C",
            active INTEGER,
            scope_json TEXT COLLATE "C",
            updated_at TEXT COLLATE "C" NOT NULL
        );

        CREATE TABLE assembly_logs (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            session_id TEXT COLLATE "C" NOT NULL,
            at TEXT COLLATE "C" NOT NULL,
            trigger TEXT COLLATE "C" NOT NULL,
            turn BIGINT, step BIGINT,
            query TEXT COLLATE "C" NOT NULL DEFAULT '',
            budget BIGINT NOT NULL,
            used_tokens BIGINT NOT NULL,
            token_source TEXT COLLATE "C" NOT NULL,
            content_hash TEXT COLLATE "C",
            injected INTEGER NOT NULL,
            message_seq BIGINT,
            text TEXT COLLATE "C" NOT NULL DEFAULT '',
            sections_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            items_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            omitted_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            reasons_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            errors_json TEXT COLLATE "C" NOT NULL DEFAULT '[]'
        );
        CREATE INDEX assembly_logs_session ON assembly_logs(session_id, id);

        CREATE TABLE archive (
            session_id TEXT COLLATE "C" NOT NULL,
            ref TEXT COLLATE "C" NOT NULL,
            text TEXT COLLATE "C" NOT NULL,
            chars BIGINT NOT NULL,
            truncated INTEGER NOT NULL DEFAULT 0,
            created_at TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (session_id, ref)
        );

        CREATE TABLE pending_extraction (
            session_id TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            attempts BIGINT NOT NULL DEFAULT 0,
            last_error TEXT COLLATE "C",
            updated_at TEXT COLLATE "C" NOT NULL,
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
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            session_id TEXT COLLATE "C" NOT NULL,
            event_seq BIGINT,
            at TEXT COLLATE "C" NOT NULL,
            target TEXT COLLATE "C" NOT NULL,
            ok INTEGER NOT NULL,
            checked BIGINT NOT NULL,
            skipped BIGINT NOT NULL,
            deterministic INTEGER NOT NULL,
            blocked INTEGER NOT NULL,
            repair_reminder TEXT COLLATE "C",
            violations_json TEXT COLLATE "C" NOT NULL DEFAULT '[]',
            errors_json TEXT COLLATE "C" NOT NULL DEFAULT '[]'
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
            session_id TEXT COLLATE "C" NOT NULL,
            source TEXT COLLATE "C" NOT NULL,
            position BIGINT NOT NULL,
            state_json TEXT COLLATE "C" NOT NULL DEFAULT '{}',
            updated_at TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (session_id, source)
        );
        """
    )


# SQL both dialects accept is registered as it is, under the same name
migration(sqlite_schema.v4_item_order_indexes)


@migration
def v5_projects(db: Executor) -> None:
    """The project dimension: a project's sessions by an index, and when each item was said."""
    db.execute_script(
        "CREATE INDEX sessions_project ON sessions(project, updated_at);\n"
        'ALTER TABLE memory_items ADD COLUMN said_at TEXT COLLATE "C";\n'
        + sqlite_schema.SAID_AT_BACKFILL
        + ";"
    )


@migration
def v6_item_lookup_indexes(db: Executor) -> None:
    """Items by content hash and by subject key in source order (extraction's lookups)."""
    db.execute_script(sqlite_schema.ITEM_LOOKUP_INDEXES)


@migration
def v7_message_words(db: Executor) -> None:
    """The word index over the person's messages (SQLite's ``words_fts``).

    A row per message: its words (:func:`convmem.query.index_words`, joined by single
    spaces, which convmem computes when it inserts the event) and how many there are.
    A term was a word prefix (``' ' || words LIKE '% term%'``; a whole word since
    :func:`v9_word_stems`), found through a trigram GIN index, and ``fts_stats``
    keeps the session's documents and words for BM25. Rows go with their event (a
    foreign key that cascades); the messages already stored are indexed here, a
    thousand at a time.
    """
    db.execute_script(
        f"""
        CREATE TABLE message_words (
            session_id TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            words TEXT COLLATE "C" NOT NULL,
            n BIGINT NOT NULL,
            PRIMARY KEY (session_id, seq),
            FOREIGN KEY (session_id, seq) REFERENCES events (session_id, seq) ON DELETE CASCADE
        );
        CREATE INDEX message_words_trgm ON message_words
            USING gin (session_id, (' ' || words) gin_trgm_ops) WITH ({_EVENTS_GIN});
        {_stats_triggers("message_words", "n")}
        """
    )
    _fill_message_words(db)


def _fill_message_words(db: Executor) -> None:
    """Index the words of every message of the person, a thousand at a time."""
    from convmem.memory.pg_search import WORDS_INSERT, word_rows, words_insert

    after: tuple[str, int] = ("", -1)
    while True:
        rows = db.query(
            "SELECT session_id, seq, type, content_hash, text FROM events"
            " WHERE type = ? AND (session_id, seq) > (?, ?) ORDER BY session_id, seq LIMIT 1000",
            (PERSON_MESSAGE, *after),
        )
        if not rows:
            return
        db.execute(WORDS_INSERT, words_insert(word_rows(rows)))
        after = (rows[-1]["session_id"], rows[-1]["seq"])


@migration
def v8_item_words(db: Executor) -> None:
    """The word index over memory items (SQLite's ``item_words_fts``), as
    ``message_words`` is over the person's messages: a row per item (its words and
    their count, computed by convmem when it inserts the item), gone with its item."""
    db.execute_script(
        f"""
        CREATE TABLE item_words (
            id TEXT COLLATE "C" PRIMARY KEY REFERENCES memory_items (id) ON DELETE CASCADE,
            session_id TEXT COLLATE "C" NOT NULL,
            words TEXT COLLATE "C" NOT NULL,
            n BIGINT NOT NULL
        );
        CREATE INDEX item_words_trgm ON item_words
            USING gin (session_id, (' ' || words) gin_trgm_ops) WITH ({_EVENTS_GIN});
        {_stats_triggers("item_words", "n")}
        """
    )
    _fill_item_words(db)


def _fill_item_words(db: Executor) -> None:
    """Index the words of every memory item, a thousand at a time."""
    from convmem.memory.pg_search import ITEM_WORDS_INSERT, item_words_insert

    after = ""
    while True:
        rows = db.query(
            "SELECT id, content FROM memory_items WHERE id > ? ORDER BY id LIMIT 1000", (after,)
        )
        if not rows:
            return
        db.execute(ITEM_WORDS_INSERT, item_words_insert((r["id"], r["content"]) for r in rows))
        after = rows[-1]["id"]


@migration
def v9_word_stems(db: Executor) -> None:
    """Both word indexes rebuilt as SQLite's are: each word as its stem
    (:func:`convmem.query.word_stem`), a term looked up as a whole word. The words of
    a row are now stored each between two spaces (`` cach  size ``), so that
    ``LIKE '% term %'`` finds a whole word and removing ``' term '`` counts every
    occurrence; the trigram indexes are over that column itself."""
    db.execute_script(
        f"""
        DROP INDEX message_words_trgm;
        DELETE FROM message_words;
        CREATE INDEX message_words_trgm ON message_words
            USING gin (session_id, words gin_trgm_ops) WITH ({_EVENTS_GIN});
        DROP INDEX item_words_trgm;
        DELETE FROM item_words;
        CREATE INDEX item_words_trgm ON item_words
            USING gin (session_id, words gin_trgm_ops) WITH ({_EVENTS_GIN});
        """
    )
    _fill_message_words(db)
    _fill_item_words(db)


@migration
def v10_session_words(db: Executor) -> None:
    """Nothing to change: SQLite's word indexes gain a column of session-tagged words so
    that a search of one session reads that session's doclists alone. Here each word
    row carries its session already, the leading column of its GIN index, and the
    statistics are per session (``fts_stats``)."""


@migration
def v11_unordered_sessions(db: Executor) -> None:
    """Nothing to change: SQLite notes the sessions whose rowid order is not their seq
    order, so that its substring search can stop at the first matches of the trigram
    index. Here that search is one ordered scan of the session's rows already."""


@migration
def v12_cjk_pairs(db: Executor) -> None:
    """Both word indexes indexed again, as SQLite's are: a row's words now end with the
    two-character windows of its CJK runs (:func:`convmem.query.index_words`)."""
    _refill_word_indexes(db)


@migration
def v13_english_stems(db: Executor) -> None:
    """Both word indexes indexed again, as SQLite's are: English words now go through
    the Porter2 stemmer as well (:func:`convmem.query.word_stem`)."""
    _refill_word_indexes(db)


def _refill_word_indexes(db: Executor) -> None:
    """Both word indexes computed again from the text, as ``index_words`` gives them now."""
    db.execute_script("DELETE FROM message_words; DELETE FROM item_words;")
    _fill_message_words(db)
    _fill_item_words(db)


SCHEMA_VERSION = len(MIGRATIONS)
