"""Ranked search on PostgreSQL: FTS5's BM25 over case-insensitive substring matches.

SQLite finds rows with an FTS5 trigram index and ranks them with ``bm25()``. Here a
``pg_trgm`` GIN index over ``lower(column)`` finds the same rows (a row matches when
it contains any term, ignoring case), and one statement computes, for each of them,
the formula of FTS5's ``fts5_aux.c`` with its constants, step by step in the same
floating-point order::

    idf(t)  = ln((N - n(t) + 0.5) / (n(t) + 0.5)), at least 1e-6
    score   = sum over terms of idf(t) * (f(t) * (k1 + 1)) / (f(t) + k1 * (1 - b + b * D / avgD))
    rank    = -score

where ``f(t)`` counts the (overlapping) occurrences of the term in the row, ``D`` is
the row's trigram count (``chars - 2``), and ``N``, ``avgD`` and ``n(t)`` describe the
documents searched.

The person's messages and the memory items searched by word (``MESSAGE_WORDS`` and
``ITEM_WORDS``, SQLite's ``words_fts`` and ``item_words_fts``) follow the same formula
over their words: ``f(t)`` counts the words equal to the term, ``D`` is the row's word
count.

One deliberate difference: FTS5 takes ``N``, ``avgD`` and ``n(t)`` from the whole
table, this takes them from the session (``fts_stats`` keeps documents and tokens
per session). On a store that holds one session the ranks are the same numbers as
SQLite's, bit for bit; on a shared server another team's sessions do not move this
session's ranking, and a search costs what the session holds, not what the whole
database holds (counting a term over every session is a scan per term).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from convmem.core.constants import PERSON_MESSAGE
from convmem.memory.store_items import like_pattern

#: FTS5's bm25() parameters (``fts5_aux.c``).
K1 = 1.2
B = 0.75
#: FTS5's floor for the IDF of a term present in more than half of the documents.
MIN_IDF = 1e-6
_ASCII_SPECIAL = re.compile(r"([\x20-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e])")


@dataclass(frozen=True)
class Corpus:
    """A searchable table: the table whose rows a search returns, its row key, the
    value a search filters on, and the order of equal ranks (SQLite's).

    ``index`` is the table the terms are looked up in (its rows share the returned
    table's session and key), ``searched`` the text they are matched against and
    ``length`` a row's document length, SQL over the index row ``x`` like ``kind``
    (and over the rows ``join`` adds).
    """

    table: str
    key: str
    kind: str
    order: tuple[str, ...]
    index: str
    searched: str
    length: str
    join: str = ""

    @property
    def words(self) -> bool:
        """Terms are whole words (SQLite's ``words_fts``), not substrings."""
        return self.index.endswith("_words")


EVENTS = Corpus(
    "events", "seq", "x.type", ("sid", "k"), "events", "lower(x.text)",
    "greatest(char_length(x.text) - 2, 0)",
)  # fmt: skip
ITEMS = Corpus(
    "memory_items", "id", "x.status", ("k",), "memory_items", "lower(x.content)",
    "greatest(char_length(x.content) - 2, 0)",
)  # fmt: skip
#: The person's messages by word (SQLite's ``words_fts``): a term is a whole word,
#: found as ``' term '`` in the row's words (:func:`spaced`); a row has ``n`` words.
MESSAGE_WORDS = Corpus(
    "events", "seq", f"'{PERSON_MESSAGE}'", ("sid", "k"), "message_words", "x.words", "x.n",
)  # fmt: skip
#: Memory items by word (SQLite's ``item_words_fts``); the status is the item's own.
ITEM_WORDS = Corpus(
    "memory_items", "id", "i.status", ("k",), "item_words", "x.words", "x.n",
    "JOIN memory_items i ON i.id = x.id",
)  # fmt: skip

#: The words of the person's messages, for those of the given events that are stored
#: (type and content hash checked against ``events``, so an insert that was ignored
#: for an existing key indexes nothing).
WORDS_INSERT = """
    INSERT INTO message_words (session_id, seq, words, n)
    SELECT u.s, u.q, u.w, u.n
    FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[]) AS u(s, q, h, w, n)
    JOIN events e ON e.session_id = u.s AND e.seq = u.q AND e.content_hash = u.h
    WHERE e.type = ?
    ON CONFLICT DO NOTHING
"""


def spaced(words: Sequence[str]) -> str:
    """Words as a word index row holds them: each between two spaces (`` a  b ``), so
    that the occurrences of ``' a '`` never share a space and each is counted."""
    return "".join(f" {w} " for w in words)


def word_rows(rows: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, int, str, str, str]]:
    """Events read as mappings (a query's rows, exported rows) as :func:`words_insert`
    takes them."""
    for row in rows:
        yield row["session_id"], row["seq"], row["type"], row["content_hash"], row["text"]


def words_insert(events: Iterable[tuple[str, int, str, str, str]]) -> list[Any] | None:
    """Parameters of :data:`WORDS_INSERT` for ``(session_id, seq, type, content_hash,
    text)`` events (None: none is a message of the person)."""
    from convmem.query import index_words

    columns: list[list[Any]] = [[], [], [], [], []]
    for session_id, seq, type_, content_hash, text in events:
        if type_ != PERSON_MESSAGE:
            continue
        words = index_words(text)
        for column, value in zip(
            columns, (session_id, seq, content_hash, spaced(words), len(words)), strict=True
        ):
            column.append(value)
    return [*columns, PERSON_MESSAGE] if columns[0] else None


#: The words of items just stored (their content checked against ``memory_items``, so
#: an insert that was ignored for an existing id indexes nothing).
ITEM_WORDS_INSERT = """
    INSERT INTO item_words (id, session_id, words, n)
    SELECT m.id, m.session_id, u.w, u.n
    FROM unnest(?::text[], ?::text[], ?::bigint[]) AS u(i, w, n)
    JOIN memory_items m ON m.id = u.i
    ON CONFLICT DO NOTHING
"""


def item_words_insert(items: Iterable[tuple[str, str]]) -> list[Any]:
    """Parameters of :data:`ITEM_WORDS_INSERT` for ``(id, content)`` items."""
    from convmem.query import index_words

    ids: list[str] = []
    texts: list[str] = []
    counts: list[int] = []
    for item_id, content in items:
        words = index_words(content)
        ids.append(item_id)
        texts.append(spaced(words))
        counts.append(len(words))
    return [ids, texts, counts]


def occurrence_regex(term: str) -> str:
    """A regex that matches the empty string before each (overlapping) occurrence.

    ASCII punctuation is escaped; PostgreSQL reads a backslash before any other
    non-alphanumeric character as that character, and letters stay as they are.
    """
    return "(?=" + _ASCII_SPECIAL.sub(r"\\\1", term) + ")"


def has_border(term: str) -> bool:
    """Whether a proper prefix equals a suffix ("ana", "abab"): then occurrences overlap."""
    return any(term[:k] == term[-k:] for k in range(1, len(term)))


def _frequency(term: str, words: bool) -> tuple[str, list[Any]]:
    """SQL for the term's occurrences in the searched text ``l.lt``, and its parameters.

    FTS5 counts overlapping phrase instances. Occurrences of a term that has no
    border cannot overlap, so removing them and measuring the loss counts them, which
    is several times faster than the regex that counts overlapping ones. Most rows
    hold few of the terms: a ``strpos`` first skips the counting for the others. A
    whole word is searched as ``' term '``, whose occurrences in :func:`spaced` words
    never overlap.
    """
    if words:
        needle, arg = "?", f" {term} "
    else:
        needle, arg = "lower(?)", term
    if not words and (has_border(term.lower()) or has_border(term.casefold())):
        count, args = "regexp_count(l.lt, lower(?))", [occurrence_regex(term)]
    else:
        lost = f"char_length(l.lt) - char_length(replace(l.lt, {needle}, ''))"
        count = f"({lost}) / char_length({needle})"
        args = [arg, arg]
    return f"CASE WHEN strpos(l.lt, {needle}) > 0 THEN {count} ELSE 0 END", [arg, *args]


def bm25_query(
    corpus: Corpus, sessions: Sequence[str], terms: Sequence[str], kinds: Sequence[str], limit: int
) -> tuple[str, list[Any]]:
    """One statement: the rows of these sessions containing any term, best rank first.

    The statistics are those of the sessions searched (a project's, when a step draws
    on its project), so a session outside them never moves the ranking.
    """
    c, n = corpus, len(terms)
    # one session: an equality, which the GIN index's leading column serves directly
    one = len(sessions) == 1
    in_sessions = "= ?" if one else "= ANY(?::text[])"
    scope: Any = sessions[0] if one else list(sessions)
    params: list[Any] = [c.index, scope]
    freqs = []
    for i, term in enumerate(terms):
        sql, args = _frequency(term, c.words)
        freqs.append(f"({sql})::float8 AS f{i}")
        params += args
    params += [scope, *(like_pattern(f" {t} " if c.words else t) for t in terms)]
    hits = ", ".join(f"count(*) FILTER (WHERE m.f{i} > 0) AS h{i}" for i in range(n))
    idf = ", ".join(
        f"ln(((s.docs - h.h{i})::float8 + 0.5) / (h.h{i}::float8 + 0.5)) AS v{i}" for i in range(n)
    )
    score = " + ".join(
        f"(CASE WHEN v.v{i} > 0 THEN v.v{i} ELSE ? END)"
        f" * ((m.f{i} * ?) / (m.f{i} + ? * (? + ? * m.dl / s.avgdl)))"
        for i in range(n)
    )
    for _ in range(n):
        params += [MIN_IDF, K1 + 1.0, K1, 1 - B, B]
    kind_sql = f" WHERE m.kind IN ({','.join('?' * len(kinds))})" if kinds else ""
    patterns = ", ".join(["?" if c.words else "lower(?)"] * n)
    params += [*kinds, limit]
    sql = f"""
        WITH s AS (
            SELECT coalesce(sum(docs), 0) AS docs,
                   coalesce(sum(tokens), 0)::float8 / greatest(coalesce(sum(docs), 0), 1)::float8
                   AS avgdl
            FROM fts_stats WHERE tbl = ? AND session_id {in_sessions}
        ), m AS MATERIALIZED (
            SELECT x.session_id AS sid, x.{c.key} AS k, {c.kind} AS kind,
                   ({c.length})::float8 AS dl, {", ".join(freqs)}
            FROM {c.index} x {c.join} CROSS JOIN LATERAL (SELECT {c.searched} AS lt) l
            WHERE x.session_id {in_sessions} AND {c.searched} LIKE ANY (ARRAY[{patterns}])
        ), h AS (SELECT {hits} FROM m),
        v AS (SELECT {idf} FROM s, h),
        r AS (
            SELECT m.sid, m.k, -({score}) AS rank FROM m, s, v{kind_sql}
            ORDER BY rank, {", ".join(c.order)} LIMIT ?
        )
        SELECT x.*, r.rank FROM r JOIN {c.table} x ON x.{c.key} = r.k AND x.session_id = r.sid
        ORDER BY r.rank, {", ".join("r." + o for o in c.order)}
    """
    return sql, params
