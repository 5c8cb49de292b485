"""Deterministic, model-free retrieval of memory items and raw evidence.

A query (the step's task text) becomes :class:`QuerySignals`: content terms,
exact terms, numbers, paths and quoted phrases. Memory items come from trigram
FTS matches (a LIKE scan serves terms too short for trigrams) plus the session's
standing user constraints and decisions, scored by the formula below. Raw
evidence comes from the selected items' source events, exact matches of numbers,
paths and quotes, and a BM25 ranking of the events themselves in which a hit
also lifts the turn that answers it.

    score = KIND_WEIGHT[kind] + min(|fts|, 10) / 10 + EXACT_BOOST * min(exact_hits, 3) / 3
    score *= EVIDENCE_WEIGHT[evidence_type]
    score *= SUPERSESSION_FACTOR   (when the item has been superseded)
    score += RECENCY_BOOST         (when derived within RECENCY_WINDOW of the newest event)

Every miss below ``retrieval.min_score`` is returned with its reason. Text that a
program generated is never returned as evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convmem.capture import is_convmem_block, is_generated, is_user_evidence
from convmem.core.constants import (
    EVIDENCE_WEIGHT,
    KIND_WEIGHT,
    RECENCY_WINDOW,
    USER_SOURCE_KINDS,
)
from convmem.core.stopwords import QUERY_STOPWORDS
from convmem.core.text import (
    cjk_runs,
    latin_words,
    normalize_text,
    numbers,
    paths,
    quoted_phrases,
    tokens,
)
from convmem.memory.models import MemoryItem, StoredEvent

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore

SUPERSESSION_FACTOR = 0.4
FTS_CAP = 10.0
#: Share of a hit's score passed to the turn right after it (usually its answer) and
#: to the turn right before it (usually what it answers).
REPLY_PROPAGATION = 0.8
CONTEXT_PROPAGATION = 0.5
NEIGHBOUR_HITS = 100
EVENT_CANDIDATES = 200
ITEM_CANDIDATES = 100
EXACT_EVIDENCE_BONUS = 0.5
MIN_EXACT_CHARS = 3
#: Recent events searched for terms below trigram size, and the weight of each hit.
SHORT_TERM_WINDOW = 1000
SHORT_TERM_WEIGHT = 0.5
SOURCE_BONUS = 0.3
STANDING_SOURCE_BONUS = 0.05
STANDING_KINDS = ("constraint", "decision")
_SUFFIXES = (
    "ingly",
    "edly",
    "ations",
    "ation",
    "ments",
    "ment",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "ed",
    "es",
    "s",
    "ly",
)
_IDENT = re.compile(r"\b[A-Za-z_][\w.-]*[_.-][\w.-]+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z]{2,}\w*\b")


def stem(word: str) -> str:
    """Strip one common English suffix, keeping at least four letters (a prefix stem)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class QuerySignals:
    """What a query asks about, in the forms the rankers use."""

    text: str
    tokens: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    short_terms: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.terms or self.short_terms or self.exact)


def query_signals(text: str, max_tokens: int = 160) -> QuerySignals:
    """Tokens, ranking terms and exact terms of a query; safe for any input text."""
    text = normalize_text(text[:20_000])
    toks = tokens(text, max_tokens)
    terms: dict[str, None] = {}
    short: dict[str, None] = {}
    for word in latin_words(text):
        if word in QUERY_STOPWORDS or word.isdigit():
            continue
        s = stem(word)
        (terms if len(s) >= 3 else short).setdefault(s, None)
    for run in cjk_runs(text):
        # every 3-character window is a trigram the index can serve; Chinese words are
        # mostly two characters, so bigrams go to the (bounded) substring scan too
        for i in range(len(run) - 2):
            terms.setdefault(run[i : i + 3], None)
        for i in range(max(1, len(run) - 1)):
            short.setdefault(run[i : i + 2], None)
    nums = tuple(dict.fromkeys(n.raw for n in numbers(text)))
    found_paths = tuple(paths(text))
    quotes = tuple(quoted_phrases(text))
    idents = tuple(dict.fromkeys(m.group() for m in _IDENT.finditer(text)))
    exact = tuple(dict.fromkeys([*quotes, *found_paths, *nums, *idents]))
    return QuerySignals(
        text=text,
        tokens=tuple(toks),
        terms=tuple(list(terms)[:max_tokens]),
        short_terms=tuple(list(short)[:max_tokens]),
        exact=exact,
        numbers=nums,
        paths=found_paths,
        quotes=quotes,
    )


@dataclass
class ScoredItem:
    item: MemoryItem
    score: float
    breakdown: dict[str, float]
    matched: bool
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.item.id,
            "score": round(self.score, 4),
            "breakdown": {k: round(v, 4) for k, v in self.breakdown.items()},
            "matched": self.matched,
            "reason": self.reason,
        }


@dataclass
class EvidenceHit:
    event: StoredEvent
    text: str
    score: float
    reasons: list[str] = field(default_factory=list)


@dataclass
class Retrieval:
    signals: QuerySignals
    items: list[ScoredItem]
    omitted: list[ScoredItem]


class Retriever:
    """Ranks one session's memory items and events for a query."""

    def __init__(self, store: MemoryStore, settings: Settings) -> None:
        self.store = store
        self.min_score = float(settings["retrieval.min_score"])
        self.limit = int(settings["retrieval.limit"])
        self.exact_boost = float(settings["retrieval.exact_match_boost"])
        self.recency_boost = float(settings["retrieval.recency_boost"])
        self.max_tokens = int(settings["retrieval.max_query_tokens"])
        self.standing_limit = int(settings["retrieval.standing_limit"])
        types = tuple(settings["assembly.evidence_types"])
        self.evidence_types: tuple[str, ...] = () if "*" in types else types

    def signals(self, query: str) -> QuerySignals:
        return query_signals(query, self.max_tokens)

    # --- memory items ----------------------------------------------------------------------

    def retrieve(
        self, session_id: str, query: str | QuerySignals, limit: int | None = None
    ) -> Retrieval:
        sig = query if isinstance(query, QuerySignals) else self.signals(query)
        limit = min(limit or self.limit, 100)
        statuses = ("active", "disputed", "superseded")
        fts: dict[str, float] = {}
        candidates: dict[str, MemoryItem] = {}
        if sig.terms:
            for item, rank in self.store.search_items(
                session_id, sig.terms, ITEM_CANDIDATES, statuses
            ):
                candidates[item.id] = item
                fts[item.id] = abs(rank)
        if sig.short_terms:
            for item in self.store.like_items(
                session_id, sig.short_terms, ITEM_CANDIDATES, statuses
            ):
                candidates.setdefault(item.id, item)
                fts.setdefault(item.id, 0.0)
                fts[item.id] += 1.0
        # the newest standing constraints and decisions, even when the query does not name them
        recent = (
            self.store.items(
                session_id, ("active", "disputed"), STANDING_KINDS, newest=self.standing_limit * 4
            )
            if self.standing_limit
            else []
        )
        standing = [
            i
            for i in recent
            if i.evidence_type == "user_explicit"
            and i.id not in candidates
            and _substantial(i.content)  # "Keep it up!" is no standing rule
        ]
        for item in standing[-self.standing_limit :] if self.standing_limit else []:
            candidates[item.id] = item
        newest = self.store.checkpoint(session_id).last_event_seq
        scored = [
            self.score(item, sig, fts.get(item.id, 0.0), newest) for item in candidates.values()
        ]
        scored.sort(key=lambda s: (-s.score, -(s.item.derived_from_seq or 0), s.item.id))
        selected: list[ScoredItem] = []
        omitted: list[ScoredItem] = []
        for s in scored:
            if s.item.status == "superseded":
                s.reason = f"superseded by {s.item.superseded_by}"
                omitted.append(s)
            elif s.score < self.min_score:
                s.reason = f"score {s.score:.2f} is below retrieval.min_score {self.min_score:g}"
                omitted.append(s)
            elif len(selected) >= limit:
                s.reason = f"over retrieval.limit {limit}"
                omitted.append(s)
            else:
                selected.append(s)
        return Retrieval(sig, selected, omitted)

    def score(self, item: MemoryItem, sig: QuerySignals, fts: float, newest: int) -> ScoredItem:
        lowered = item.content.casefold()
        exact_hits = sum(1 for term in sig.exact if term.casefold() in lowered)
        parts = {
            "kind": KIND_WEIGHT.get(item.kind, 0.5),
            "fts": min(fts, FTS_CAP) / FTS_CAP,
            "exact": self.exact_boost * min(exact_hits, 3) / 3,
        }
        base = sum(parts.values())
        parts["evidence_weight"] = EVIDENCE_WEIGHT.get(item.evidence_type, 0.4)
        score = base * parts["evidence_weight"]
        if item.status == "superseded" or item.superseded_by:
            parts["supersession"] = SUPERSESSION_FACTOR
            score *= SUPERSESSION_FACTOR
        if item.derived_from_seq is not None and newest - item.derived_from_seq <= RECENCY_WINDOW:
            parts["recency"] = self.recency_boost
            score += self.recency_boost
        return ScoredItem(item, score, parts, matched=fts > 0 or exact_hits > 0)

    # --- raw evidence -------------------------------------------------------------------------

    def quotable(self, event: StoredEvent) -> bool:
        """May this event be quoted verbatim? Never generated text; a user message only
        when the person typed it (an unknown source kind is not the person)."""
        if is_generated(event.source_kind, event.text):
            return False
        if event.type == "user/message" and not is_user_evidence(
            event.type, event.source_kind, event.text, event.role
        ):
            return False
        return not self.evidence_types or event.type in self.evidence_types

    def unquotable_reason(self, event: StoredEvent) -> str:
        """Why :meth:`quotable` refuses an event: its source when that is what rules it
        out (generated text, a user message the person did not type), else its type."""
        if is_convmem_block(event.text):
            return "convmem's own block is never quoted as evidence"
        if is_generated(event.source_kind, event.text):
            return f"source {event.source_kind} is generated text, never quoted as evidence"
        if event.type == "user/message" and event.source_kind not in USER_SOURCE_KINDS:
            return f"source {event.source_kind} is not the person's own input"
        return f"event type {event.type} is not inline-quotable (assembly.evidence_types)"

    def supports(self, sig: QuerySignals, hit: EvidenceHit) -> bool:
        """Does this hit bear on the query, rather than merely share a common word?

        Being the source of a standing item is no support. A ranked or exact match
        supports the query when it holds an exact term of it (a number, path, quote or
        identifier) or at least half of its content terms (two at least when the query
        has more than two).
        """
        if not any(r == "ranked match" or r.startswith("exact match") for r in hit.reasons):
            return False
        if any(r.startswith("exact match") for r in hit.reasons):
            return True
        text = hit.text.casefold()
        terms = [t for t in sig.terms if not any("\u3400" <= c <= "\u9fff" for c in t)]
        cjk = [t for t in sig.short_terms if any("\u3400" <= c <= "\u9fff" for c in t)]
        words = {stem(w) for w in latin_words(text)}
        have = sum(1 for t in terms if t in words or t in text)
        have_cjk = sum(1 for t in cjk if t in text)
        total = len(terms) + len(cjk)
        if not total:
            return False
        matched = have + have_cjk
        return matched * 2 >= total and (matched >= 2 or total <= 2)

    def rank_events(
        self, session_id: str, sig: QuerySignals, limit: int
    ) -> list[tuple[StoredEvent, float]]:
        """Quotable events ranked by BM25 over the query terms; a hit lifts its neighbours."""
        types = self.evidence_types
        scores: dict[int, float] = {}
        events: dict[int, StoredEvent] = {}
        for event, rank in self.store.search_events(session_id, sig.terms, EVENT_CANDIDATES, types):
            if self.quotable(event):
                scores[event.seq] = abs(rank)
                events[event.seq] = event
        # terms too short for the trigram index (Chinese words are mostly two
        # characters): one bounded scan of recent events
        if sig.short_terms and (not scores or any(not t.isascii() for t in sig.short_terms)):
            for event, count in self.store.recent_events_with(
                session_id, sig.short_terms[:12], types, SHORT_TERM_WINDOW
            ):
                if self.quotable(event):
                    scores[event.seq] = scores.get(event.seq, 0.0) + SHORT_TERM_WEIGHT * count
                    events[event.seq] = event
        if not scores:
            return []
        top = max(scores.values()) or 1.0
        base = {seq: s / top for seq, s in scores.items()}
        norm = dict(base)
        # a hit lifts the turns beside it: the one after often answers it, the one
        # before often asked the question it answers
        hits = sorted(base, key=lambda q: (-base[q], q))[:NEIGHBOUR_HITS]
        near = {
            e.seq: e
            for e in self.store.events_by_seq(session_id, {h + d for h in hits for d in (-1, 1)})
        }
        for seq in hits:
            for offset, share in ((1, REPLY_PROPAGATION), (-1, CONTEXT_PROPAGATION)):
                neighbour = near.get(seq + offset)
                if neighbour is None or not self.quotable(neighbour):
                    continue
                lifted = share * base[seq]
                if lifted > norm.get(neighbour.seq, 0.0):
                    norm[neighbour.seq] = lifted
                    events[neighbour.seq] = neighbour
        newest = self.store.checkpoint(session_id).last_event_seq
        for seq in norm:
            if newest - seq <= RECENCY_WINDOW:
                norm[seq] += self.recency_boost * 0.1
        ranked = sorted(norm.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return [(events[seq], score) for seq, score in ranked]

    def retrieve_evidence(
        self, session_id: str, sig: QuerySignals, items: Sequence[ScoredItem], limit: int
    ) -> list[EvidenceHit]:
        """Evidence events, best first: ranked matches, exact matches, item sources.

        A ranked match scores 0..1 (BM25 relative to the best hit); an exact match of
        a number, path or quote adds EXACT_EVIDENCE_BONUS; being the source of a
        selected item adds SOURCE_BONUS if the item matched the query and
        STANDING_SOURCE_BONUS otherwise (its item line already cites it). Events a
        program generated are never returned; events of types that are not quotable
        are returned marked, so that the assembler can say why they were left out.
        """
        hits: dict[int, EvidenceHit] = {}

        def add(event: StoredEvent, score: float, reason: str) -> None:
            if is_generated(event.source_kind, event.text):
                return
            hit = hits.get(event.seq)
            if hit is None:
                hits[event.seq] = EvidenceHit(event, self.full_text(event), score, [reason])
            else:
                hit.score += score
                if reason not in hit.reasons:
                    hit.reasons.append(reason)

        for event, score in self.rank_events(session_id, sig, max(limit, 50)):
            add(event, score, "ranked match")
        for term in (*sig.quotes, *sig.paths, *sig.numbers)[:12]:
            if len(term) < MIN_EXACT_CHARS:
                continue  # "5" matches everything; only distinctive terms count as exact
            for event in self.store.events_containing(session_id, term, 5):
                add(event, EXACT_EVIDENCE_BONUS, f"exact match {term!r}")
        sources: dict[int, list[ScoredItem]] = {}
        for s in items:
            for seq in s.item.source_seqs:
                sources.setdefault(seq, []).append(s)
        for event in self.store.events_by_seq(session_id, sources):
            owners = sources[event.seq]
            bonus = SOURCE_BONUS if any(o.matched for o in owners) else STANDING_SOURCE_BONUS
            add(event, bonus, "source of " + ", ".join(o.item.id for o in owners))
        ranked = sorted(hits.values(), key=lambda h: (-h.score, h.event.seq))
        return ranked[:limit]

    def full_text(self, event: StoredEvent) -> str:
        if event.store == "archive" and event.truncated:
            archived = self.store.archive_text(event.session_id, event.seq)
            if archived is not None:
                return archived
        return event.text

    def expand(self, session_id: str, seqs: Sequence[int], radius: int = 1) -> list[StoredEvent]:
        """The events within ``radius`` sequence numbers of each seq, in order."""
        wanted = {s + d for s in seqs for d in range(-radius, radius + 1)}
        return self.store.events_by_seq(session_id, wanted)

    # --- explanation ---------------------------------------------------------------------------

    def inspect_item(self, item_id: str, query: str | None = None) -> dict[str, Any] | None:
        """An item with its lifecycle, quoted sources, links and score breakdown."""
        item = self.store.item(item_id)
        if item is None:
            return None
        sig = self.signals(query or "")
        fts = 0.0
        if sig.terms:
            for found, rank in self.store.search_items(
                item.session_id, sig.terms, 400, ("active", "disputed", "superseded", "retracted")
            ):
                if found.id == item_id:
                    fts = abs(rank)
        scored = self.score(item, sig, fts, self.store.checkpoint(item.session_id).last_event_seq)
        sources = [
            {"seq": e.seq, "type": e.type, "source_kind": e.source_kind, "text": self.full_text(e)}
            for e in self.store.events_by_seq(item.session_id, item.source_seqs)
        ]
        linked = [i for i in (item.superseded_by, *item.supersedes) if i]
        return {
            "item": item.as_dict(),
            "lifecycle": self.store.memory_events(item_id),
            "sources": sources,
            "linked": [x.as_dict() for x in self.store.items_by_id(linked)],
            "score": scored.as_dict() | {"query": sig.text},
        }


def _substantial(content: str) -> bool:
    """Enough words (or characters of Chinese) to stand as a rule on its own."""
    return len(latin_words(content)) >= 3 or sum(len(run) for run in cjk_runs(content)) >= 4


def insufficient(query: str, locale: str = "zh") -> str:
    """The explicit statement that memory holds no committed evidence for a query."""
    q = query.strip().replace("\n", " ")[:120]
    if locale == "en":
        return (
            f"No committed evidence in this session's memory supports: {q!r}. "
            "Do not infer or invent earlier history; say the evidence is insufficient."
        )
    return f"会话记忆中没有与“{q}”相关的已提交证据。不要推断或编造历史；请回答“证据不足”。"
