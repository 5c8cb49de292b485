"""Store methods for memory items, their lifecycle audit, task state and retries."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from convmem.memory.models import (
    MemoryItem,
    Scope,
    StoredEvent,
    TaskState,
    scope_sessions,
    source_seqs,
)
from convmem.query import searchable, session_words, substrings, word_terms

if TYPE_CHECKING:
    from convmem.core.db import MemoryDatabase


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def fts_phrase(term: str) -> str:
    """One FTS5 string literal: any text a user types becomes a literal, never syntax."""
    return '"' + term.replace('"', '""') + '"'


#: A needle longer than ``PIECES * PIECE_CHARS`` characters is looked up by
#: :data:`PIECES` pieces of :data:`PIECE_CHARS` (its start, middle and end) and checked
#: whole on the rows that hold them all. A trigram phrase reads one doclist per character, most of
#: them spanning the session: a pasted sentence of seventy characters read sixty-eight.
PIECES = 3
PIECE_CHARS = 6


def substring_match(needle: str) -> tuple[str, bool]:
    """The trigram index's query for text containing ``needle``, and whether the rows
    it finds must still be checked for the whole needle (``convmem_contains()``)."""
    if len(needle) <= PIECES * PIECE_CHARS:
        return fts_phrase(needle), False
    step = (len(needle) - PIECE_CHARS) / (PIECES - 1)
    starts = [round(i * step) for i in range(PIECES)]
    return " AND ".join(fts_phrase(needle[i : i + PIECE_CHARS]) for i in starts), True


def word_match(where: str | Scope, words: Sequence[str]) -> str:
    """The FTS5 query of ``words`` in a word index (``words_fts``, ``item_words_fts``).

    One session's search looks the words up with its tag in ``session_words``, whose
    doclists hold that session's rows alone; a scope of several sessions looks them up
    in ``words``.
    """
    sessions = scope_sessions(where)
    if len(sessions) == 1:
        words = session_words(sessions[0], words)
    return " OR ".join(fts_phrase(w) for w in words)


def like_pattern(term: str) -> str:
    """A LIKE pattern (escape character ``\\``) matching text that contains ``term``."""
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def events_like(
    db: MemoryDatabase,
    where: str | Scope,
    match: str,
    needle: str,
    limit: int,
    types: Sequence[str],
) -> list[StoredEvent]:
    """The scope's events for which ``match`` (a LIKE of ``e.text`` against one
    pattern) holds with ``needle``'s pattern, oldest first in scope order."""
    cond, params = session_in("e.session_id", where)
    sql = f"SELECT e.* FROM events e WHERE {cond} AND {match} ESCAPE '\\'"
    params = [*params, like_pattern(needle)]
    if types:
        sql += f" AND e.type IN ({','.join('?' * len(types))})"
        params += list(types)
    order, order_params = scope_order("e.session_id", where)
    rows = db.query(f"{sql} ORDER BY {order}, e.seq LIMIT ?", [*params, *order_params, limit])
    return StoredEvent.from_rows(rows)


def session_in(column: str, where: str | Scope) -> tuple[str, list[Any]]:
    """SQL restricting ``column`` to one session, or to a scope's sessions."""
    sessions = scope_sessions(where)
    if len(sessions) == 1:
        return f"{column} = ?", [sessions[0]]
    return f"{column} IN ({','.join('?' * len(sessions))})", list(sessions)


def scope_order(column: str, where: str | Scope) -> tuple[str, list[Any]]:
    """SQL that sorts rows by their session's place in the scope (its own session
    first), so that a LIMIT keeps the current session's rows before older ones."""
    sessions = scope_sessions(where)
    if len(sessions) == 1:
        return column, []
    whens = " ".join(f"WHEN ? THEN {n}" for n in range(len(sessions)))
    return f"CASE {column} {whens} END", list(sessions)


class ItemStoreMixin:
    db: MemoryDatabase
    now: Callable[[], str]

    # --- items --------------------------------------------------------------------------

    def insert_item(self, item: MemoryItem) -> bool:
        """Insert unless the id exists or an active item has the same content hash."""
        now = self.now()
        cur = self.db.execute(
            "INSERT OR IGNORE INTO memory_items (id, session_id, kind, content, topic,"
            " conditions_json, scope_json, numbers_json, source_refs_json, evidence_type, status,"
            " supersedes_json, superseded_by, content_hash, extractor, derived_from_seq,"
            " created_at, updated_at, said_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
            " coalesce(?, (SELECT time FROM events WHERE session_id = ? AND seq = ?), ?))",
            (
                item.id,
                item.session_id,
                item.kind,
                item.content,
                item.topic,
                _dumps(list(item.conditions)),
                _dumps(list(item.scope)),
                _dumps(list(item.numbers)),
                _dumps(list(item.source_refs)),
                item.evidence_type,
                item.status,
                _dumps(list(item.supersedes)),
                item.superseded_by,
                item.content_hash,
                item.extractor,
                item.derived_from_seq,
                item.created_at or now,
                item.updated_at or now,
                item.said_at,
                item.session_id,
                item.derived_from_seq,
                item.created_at or now,
            ),
        )
        return cur.rowcount > 0

    def item(self, item_id: str) -> MemoryItem | None:
        row = self.db.one("SELECT * FROM memory_items WHERE id = ?", (item_id,))
        return None if row is None else MemoryItem.from_row(row)

    def replacement_chain(self, item_id: str) -> dict[str, tuple[str, str | None]]:
        """Each item on the chain of replacements that starts at ``item_id``, with its
        status and what replaced it: one query, however often the value was corrected
        (a cycle ends it, as UNION keeps each row once)."""
        rows = self.db.query(
            "WITH RECURSIVE chain(id, status, next) AS ("
            "SELECT id, status, superseded_by FROM memory_items WHERE id = ?"
            " UNION SELECT m.id, m.status, m.superseded_by FROM memory_items m"
            " JOIN chain c ON m.id = c.next WHERE c.status = 'superseded')"
            " SELECT id, status, next FROM chain",
            (item_id,),
        )
        return {str(r["id"]): (str(r["status"]), r["next"]) for r in rows}

    def items_by_id(self, ids: Iterable[str]) -> list[MemoryItem]:
        wanted = sorted(set(ids))
        if not wanted:
            return []
        rows = self.db.query(
            f"SELECT * FROM memory_items WHERE id IN ({','.join('?' * len(wanted))}) ORDER BY id",
            wanted,
        )
        return MemoryItem.from_rows(rows)

    def items(
        self,
        session_id: str,
        statuses: Sequence[str] = ("active",),
        kinds: Sequence[str] = (),
        *,
        newest: int | None = None,
        from_seqs: Sequence[int] | None = None,
    ) -> list[MemoryItem]:
        """Items in derivation order; ``newest`` keeps only the N most recent ones,
        ``from_seqs`` only those derived from these events."""
        sql = "SELECT * FROM memory_items WHERE session_id = ?"
        params: list[Any] = [session_id]
        if statuses:
            sql += f" AND status IN ({','.join('?' * len(statuses))})"
            params += list(statuses)
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        if from_seqs is not None:
            seqs = sorted(set(from_seqs))
            sql += f" AND derived_from_seq IN ({','.join('?' * len(seqs))})"
            params += seqs
        if newest is not None:
            # NULLS LAST/FIRST: SQLite's own order, spelled out for PostgreSQL
            inner = sql + " ORDER BY derived_from_seq DESC NULLS LAST, id DESC LIMIT ?"
            rows = self.db.query(inner, [*params, newest])
            return MemoryItem.from_rows(rows[::-1])
        sql += " ORDER BY derived_from_seq NULLS FIRST, id"
        return MemoryItem.from_rows(self.db.query(sql, params))

    def item_sources(
        self, session_id: str, statuses: Sequence[str], from_seqs: Sequence[int]
    ) -> list[tuple[int, ...]]:
        """The source seqs of each of the session's items of these statuses derived from
        these events (the items themselves unread)."""
        seqs = sorted(set(from_seqs))
        if not seqs or not statuses:
            return []
        rows = self.db.query(
            "SELECT source_refs_json FROM memory_items WHERE session_id = ?"
            f" AND status IN ({','.join('?' * len(statuses))})"
            f" AND derived_from_seq IN ({','.join('?' * len(seqs))})",
            [session_id, *statuses, *seqs],
        )
        return [source_seqs(json.loads(r["source_refs_json"])) for r in rows]

    def count_items(self, where: str | Scope, status: str) -> int:
        """Items with this status in a session, or in a scope's sessions."""
        cond, params = session_in("session_id", where)
        return int(
            self.db.scalar(
                f"SELECT count(*) FROM memory_items WHERE {cond} AND status = ?",
                [*params, status],
            )
        )

    def active_item_by_hash(self, session_id: str, content_hash: str) -> MemoryItem | None:
        row = self.db.one(
            "SELECT * FROM memory_items WHERE session_id = ? AND content_hash = ?"
            " AND status = 'active'",
            (session_id, content_hash),
        )
        return None if row is None else MemoryItem.from_row(row)

    def items_with_hash(self, session_id: str, content_hash: str) -> list[MemoryItem]:
        """Every item of the session with this content hash, whatever its status."""
        rows = self.db.query(
            "SELECT * FROM memory_items WHERE session_id = ? AND content_hash = ? ORDER BY id",
            (session_id, content_hash),
        )
        return MemoryItem.from_rows(rows)

    def items_by_topic(
        self,
        where: str | Scope,
        topic: str,
        statuses: Sequence[str] = ("active", "disputed"),
        newest: int | None = None,
    ) -> list[MemoryItem]:
        """Items about this subject key in a session (or a scope's sessions); with
        ``newest``, only the N most recent (the current session's first)."""
        cond, params = session_in("session_id", where)
        sql = (
            f"SELECT * FROM memory_items WHERE {cond} AND topic = ?"
            f" AND status IN ({','.join('?' * len(statuses))})"
        )
        params += [topic, *statuses]
        if newest is not None:
            order, order_params = scope_order("session_id", where)
            sql = (
                f"SELECT * FROM ({sql} ORDER BY {order}, derived_from_seq DESC NULLS LAST, id DESC"
                " LIMIT ?) AS newest"
            )
            params += [*order_params, newest]
        order_by = " ORDER BY session_id, derived_from_seq NULLS FIRST, id"
        rows = self.db.query(sql + order_by, params)
        return MemoryItem.from_rows(rows)

    def update_item(self, item_id: str, **fields: Any) -> None:
        allowed = {
            "status",
            "superseded_by",
            "evidence_type",
            "kind",
            "supersedes_json",
            "source_refs_json",
        }
        sets, params = [], []
        for key, value in fields.items():
            if key not in allowed:
                raise ValueError(f"cannot update {key}")
            sets.append(f"{key} = ?")
            params.append(value)
        sets.append("updated_at = ?")
        params += [self.now(), item_id]
        self.db.execute(f"UPDATE memory_items SET {', '.join(sets)} WHERE id = ?", params)

    def search_items(
        self, where: str | Scope, terms: Sequence[str], limit: int, statuses: Sequence[str]
    ) -> list[tuple[MemoryItem, float]]:
        """Items matching any term (terms ≥ 3 chars, or CJK pairs), best BM25 first.

        Terms that are all words read the word index (``item_words_fts``: each term a
        whole word, as :func:`convmem.query.word_stem` holds it), others the trigram
        index (each term a substring), as for events.
        """
        terms = searchable(terms)
        words = word_terms(terms)
        if words is None:
            terms = substrings(terms)
        if not terms or words == []:
            return []
        if words is None:
            index, match = "memory_fts", " OR ".join(fts_phrase(t) for t in terms)
        else:
            index, match = "item_words_fts", word_match(where, words)
            if len(scope_sessions(where)) == 1:
                found = self._session_items_by_rank(match, where, limit, statuses)
                if found is not None:
                    return found
        cond, params = session_in("m.session_id", where)
        rows = self.db.query(
            f"SELECT m.*, bm25({index}) AS rank FROM {index} JOIN memory_items m"
            f" ON m.rowid = {index}.rowid WHERE {index} MATCH ? AND {cond}"
            f" AND m.status IN ({','.join('?' * len(statuses))}) ORDER BY rank, m.id LIMIT ?",
            [match, *params, *statuses, limit],
        )
        return [
            (i, float(r["rank"])) for i, r in zip(MemoryItem.from_rows(rows), rows, strict=True)
        ]

    def items_with_terms(
        self, where: str | Scope, terms: Sequence[str], per_term: int, statuses: Sequence[str]
    ) -> list[MemoryItem]:
        """For each term, the newest ``per_term`` items holding it (the scope's own
        session first), in term order, each item once.

        A term is a whole word where the word index holds it, else a substring (three
        characters or more). Nothing is ranked: a word shared by most of a long
        session's items costs a read of its matches' rows, not a score of each.
        """
        found: dict[str, MemoryItem] = {}
        cond, params = session_in("m.session_id", where)
        order, order_params = scope_order("m.session_id", where)
        kept = ",".join("?" * len(statuses))
        for term in searchable(terms):
            word = word_terms([term])
            if word == [] or (word is None and not substrings([term])):
                continue
            holds, holds_params = self._holding(where, word[0] if word else None, term)
            rows = self.db.query(
                f"SELECT m.* FROM memory_items m WHERE {holds} AND {cond}"
                f" AND m.status IN ({kept}) ORDER BY {order},"
                " m.derived_from_seq DESC NULLS LAST, m.id DESC LIMIT ?",
                [*holds_params, *params, *statuses, *order_params, per_term],
            )
            for item in MemoryItem.from_rows(rows):
                found.setdefault(str(item.id), item)
        return list(found.values())

    def _holding(self, where: str | Scope, word: str | None, term: str) -> tuple[str, list[Any]]:
        """SQL true for an item ``m`` holding ``word`` (word index) or else ``term``."""
        if word is not None:
            index, match = "item_words_fts", word_match(where, [word])
        else:
            index, match = "memory_fts", fts_phrase(term)
        return f"m.rowid IN (SELECT rowid FROM {index} WHERE {index} MATCH ?)", [match]

    def _session_items_by_rank(
        self, match: str, where: str | Scope, limit: int, statuses: Sequence[str]
    ) -> list[tuple[MemoryItem, float]] | None:
        """One session's items by rank, ranked in the index alone (its session-tagged
        words) and read by rowid afterwards: a join would carry every match's row
        through the sort. None when the first ``2 * limit`` ranks do not settle the
        answer (too many of them are items of other statuses)."""
        page = 2 * limit
        ranked = self.db.query(
            "SELECT rowid, bm25(item_words_fts) AS rank FROM item_words_fts"
            " WHERE item_words_fts MATCH ? ORDER BY rank, rowid LIMIT ?",
            (match, page),
        )
        if not ranked:
            return []
        rank = {int(r["rowid"]): float(r["rank"]) for r in ranked}
        # unary plus keeps the planner on the rowids: with the session's index it
        # would walk every item of the session of those statuses (3x slower at 1e5)
        cond, params = session_in("+session_id", where)
        rows = self.db.query(
            f"SELECT rowid AS rid, * FROM memory_items WHERE rowid IN ({','.join('?' * len(rank))})"
            f" AND {cond} AND +status IN ({','.join('?' * len(statuses))})",
            [*rank, *params, *statuses],
        )
        kept = sorted(rows, key=lambda r: (rank[r["rid"]], r["id"]))
        if len(ranked) == page:
            # an item past the page ranks at least as low as its last one
            edge = float(ranked[-1]["rank"])
            if sum(1 for r in kept if rank[r["rid"]] < edge) < limit:
                return None
        kept = kept[:limit]
        return [(i, rank[r["rid"]]) for i, r in zip(MemoryItem.from_rows(kept), kept, strict=True)]

    def like_items(
        self, where: str | Scope, terms: Sequence[str], limit: int, statuses: Sequence[str]
    ) -> list[MemoryItem]:
        """Fallback for short terms the trigram index cannot serve: the newest ``limit``
        items holding one, the scope's own session first (a long session's oldest items
        would otherwise fill the limit)."""
        terms = [t for t in terms if t]
        if not terms:
            return []
        scope_cond, params = session_in("session_id", where)
        order, order_params = scope_order("session_id", where)
        cond = " OR ".join("content LIKE ? ESCAPE '\\'" for _ in terms)
        rows = self.db.query(
            f"SELECT * FROM memory_items WHERE {scope_cond} AND ({cond})"
            f" AND status IN ({','.join('?' * len(statuses))})"
            f" ORDER BY {order}, derived_from_seq DESC NULLS LAST, id LIMIT ?",
            [*params, *(like_pattern(t) for t in terms), *statuses, *order_params, limit],
        )
        return MemoryItem.from_rows(rows)

    # --- lifecycle audit -----------------------------------------------------------------

    def record_memory_event(
        self,
        memory_id: str,
        session_id: str,
        event: str,
        actor: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        self.db.execute(
            "INSERT INTO memory_events (memory_id, session_id, event, at, actor, detail_json)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (memory_id, session_id, event, self.now(), actor, _dumps(detail or {})),
        )

    def memory_events(self, memory_id: str) -> list[dict[str, Any]]:
        rows = self.db.query(
            "SELECT id, memory_id, session_id, event, at, actor, detail_json FROM memory_events"
            " WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        )
        out = []
        for r in rows:
            row = dict(r)
            row["detail"] = json.loads(row.pop("detail_json"))
            out.append(row)
        return out

    # --- task state -------------------------------------------------------------------------

    def task_state(self, session_id: str) -> TaskState:
        row = self.db.one("SELECT * FROM task_state WHERE session_id = ?", (session_id,))
        if row is None:
            return TaskState(session_id)
        return TaskState(
            session_id=session_id,
            goal=row["goal"],
            progress=json.loads(row["progress_json"]),
            blockers=json.loads(row["blockers_json"]),
            open_items=json.loads(row["open_items_json"]),
            superseded=json.loads(row["superseded_json"]),
            updated_by_seq=row["updated_by_seq"],
        )

    def save_task_state(self, state: TaskState) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO task_state (session_id, goal, progress_json, blockers_json,"
            " open_items_json, superseded_json, updated_by_seq, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                state.session_id,
                state.goal,
                _dumps(state.progress),
                _dumps(state.blockers),
                _dumps(state.open_items),
                _dumps(state.superseded),
                state.updated_by_seq,
                self.now(),
            ),
        )

    # --- extraction retries -------------------------------------------------------------------

    def add_pending(self, session_id: str, seq: int, error: str) -> None:
        self.db.execute(
            "INSERT INTO pending_extraction (session_id, seq, attempts, last_error, updated_at)"
            " VALUES (?, ?, 1, ?, ?) ON CONFLICT(session_id, seq) DO UPDATE SET"
            " attempts = pending_extraction.attempts + 1, last_error = excluded.last_error,"
            " updated_at = excluded.updated_at",
            (session_id, seq, error[:2000], self.now()),
        )

    def pending(self, session_id: str, max_attempts: int = 5) -> list[dict[str, Any]]:
        rows = self.db.query(
            "SELECT session_id, seq, attempts, last_error FROM pending_extraction"
            " WHERE session_id = ? AND attempts < ? ORDER BY seq",
            (session_id, max_attempts),
        )
        return [dict(r) for r in rows]

    def clear_pending(self, session_id: str, seq: int) -> None:
        self.db.execute(
            "DELETE FROM pending_extraction WHERE session_id = ? AND seq = ?", (session_id, seq)
        )

    def count_pending(self, session_id: str | None = None) -> int:
        if session_id is None:
            return int(self.db.scalar("SELECT count(*) FROM pending_extraction"))
        return int(
            self.db.scalar(
                "SELECT count(*) FROM pending_extraction WHERE session_id = ?", (session_id,)
            )
        )
