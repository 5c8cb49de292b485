"""Deterministic, model-free retrieval of memory items and raw evidence.

A query (the step's task text) becomes :class:`QuerySignals`: content terms,
exact terms, numbers, paths and quoted phrases. Memory items come from full-text
matches (the word index holds word stems and Chinese two-character windows; a LIKE
scan serves what no index holds) plus the session's standing user constraints and
decisions, scored by the formula below. Raw
evidence comes from the selected items' source events, exact matches of numbers,
paths and quotes, and a BM25 ranking of the events themselves in which a hit
also lifts the turns around it (the one that answers it most).

    score = KIND_WEIGHT[kind] + min(|fts|, 10) / 10 + EXACT_BOOST * min(exact_hits, 3) / 3
    score *= EVIDENCE_WEIGHT[evidence_type]
    score *= SUPERSESSION_FACTOR   (when the item has been superseded)
    score *= OTHER_SESSION_FACTOR * AGE_FACTOR(days)   (an item of an earlier session)
    score += RECENCY_BOOST         (when derived within RECENCY_WINDOW of the newest event)

A step draws on a :class:`~convmem.memory.models.Scope`: its own session, or every
session of its project (:mod:`convmem.projects`, which defines the two cross-session
factors). Items and events of the project's other sessions are found the same way as
the session's own; their active constraints, decisions, preferences and facts are
standing memory too. The same clause restated in several sessions counts once.

Every miss below ``retrieval.min_score`` is returned with its reason. Text that a
program generated is never returned as evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from convmem.capture import is_convmem_block, is_generated, is_user_evidence
from convmem.core.constants import (
    EVIDENCE_WEIGHT,
    KIND_WEIGHT,
    PERSON_MESSAGE,
    RECENCY_WINDOW,
    USER_SOURCE_KINDS,
)
from convmem.core.text import (
    cjk_runs,
    dedupe_key,
    latin_words,
)
from convmem.memory.models import MemoryItem, Scope, StoredEvent
from convmem.projects import (
    OTHER_SESSION_FACTOR,
    age_factor,
    item_day,
    reference_time,
    resolve_scope,
    said_time,
    standing_from_others,
)
from convmem.query import (
    QuerySignals,
    content_terms,
    index_words,
    query_signals,
    selective,
    stem,
    word_form,
    word_terms,
)

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore

SUPERSESSION_FACTOR = 0.4
FTS_CAP = 10.0
#: Shares of a hit's score passed to the quotable events after it (the next one is
#: usually its answer) and before it (the one before usually asked what it answers),
#: one, two and three sequence numbers away: the talk around a matching turn is mostly
#: about the same thing.
#: Tuned on LoCoMo's first five conversations, checked on the other five (a hit
#: reaching one turn each side: R@10 67.7, R@25 77.5 there; three: 70.7 and 80.2).
REPLY_PROPAGATION = (0.8, 0.6, 0.4)
CONTEXT_PROPAGATION = (0.5, 0.4, 0.3)
#: Hits that lift the turns beside them, and the best of them, which reach further.
NEIGHBOUR_HITS = 100
WIDE_HITS = 10
EVENT_CANDIDATES = 200
ITEM_CANDIDATES = 100
EXACT_EVIDENCE_BONUS = 0.5
MIN_EXACT_CHARS = 3
#: Recent events searched for terms below trigram size, and the weight of each hit.
SHORT_TERM_WINDOW = 1000
SHORT_TERM_WEIGHT = 0.5
#: Terms a ranked full-text search uses at most (see query.selective), and short terms
#: a substring scan looks for at most: a long message must not cost a hundred searches.
#: FTS5's bm25 counts each term's documents over its whole doclist, so every term costs
#: what it matches: on the 1e5-event session of real text the ranked query of a long
#: prompt takes 7.6 ms with 12 terms and 5.3 ms with 8, for the same evidence and items
#: in its blocks (100 prompts); LoCoMo's R@k is the same with 8 as with 12 on both
#: halves of its conversations (their questions seldom hold more).
RANK_TERMS = 8
SHORT_TERMS = 12
#: The project's most recent other sessions whose recent events the short-term scan reads.
SHORT_TERM_SESSIONS = 4
SOURCE_BONUS = 0.1
STANDING_SOURCE_BONUS = 0.05
STANDING_KINDS = ("constraint", "decision")
#: An event's place in a scope: (its session's position in the scope, its seq).
Key = tuple[int, int]


#: A turn that only thanks, laughs, hums or greets. Lifted beside a hit it would spend
#: the budget on nothing, so it is not lifted (a "yes", "ok", "sounds good", "no worries"
#: or 嗯 is: after a question or a proposal it is the answer).
_CHATTER = re.compile(
    r"^(?:[\W_]*(?:thanks?(?: you)?|thx|ty|cheers|hm+|um+|uh+|lol|lmao|ha(?:ha)+|he(?:he)+"
    r"|wow|hi|hello|hey|bye|谢谢|多谢|哈哈+|呵呵))+[\W_]*$",
    re.IGNORECASE,
)
#: A capitalised word after the first of a question: a name ("is Nara still …").
_NAME = re.compile(r"(?<=[^\s.?!])\s+([A-Z][a-z]{2,})\b")


def _cjk(term: str) -> bool:
    return any("\u3400" <= c <= "\u9fff" for c in term)


def _lifts(far: int) -> list[tuple[int, float]]:
    """(offset, share) of each event a hit reaching ``far`` events away lifts."""
    after = [(d, REPLY_PROPAGATION[d - 1]) for d in range(1, far + 1)]
    return after + [(-d, CONTEXT_PROPAGATION[d - 1]) for d in range(1, far + 1)]


def _scan_short_terms(needles: tuple[str, ...], ranked: bool) -> bool:
    """Whether terms below trigram size are searched as substrings: CJK ones (Chinese
    words are mostly two characters) always; Latin ones (``ui``, ``go``, but also
    ``us``, which is inside ``status``) only when the ranked search found nothing."""
    return bool(needles) and (not ranked or any(not t.isascii() for t in needles))


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
        self.settings = settings
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

    def scope(self, session_id: str, project: str | None = None) -> Scope:
        """The sessions a step of ``session_id`` draws on (``memory.scope``)."""
        return resolve_scope(self.store, self.settings, session_id, project)

    def terms(self, sig: QuerySignals, events: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The terms of a ranked search of events (or items), and the terms below any
        index's reach, left to a bounded substring scan.

        The word indexes hold words and CJK pairs: when one serves the search (items
        always; events when only the person's messages are quoted), the query's words
        and pairs are ranked there over the whole scope, and only its Latin terms of
        one or two letters (or a lone CJK character, when nothing else is asked) are
        left over. Otherwise CJK trigrams go to the substring index and the pairs to
        the scan of recent events.
        """
        return _search_terms(sig, not events or self.evidence_types == (PERSON_MESSAGE,))

    def retrieve(
        self,
        session_id: str,
        query: str | QuerySignals,
        limit: int | None = None,
        scope: Scope | None = None,
    ) -> Retrieval:
        sig = query if isinstance(query, QuerySignals) else self.signals(query)
        scope = scope or self.scope(session_id)
        limit = min(limit or self.limit, 100)
        statuses = ("active", "disputed", "superseded")
        fts: dict[str, float] = {}
        candidates: dict[str, MemoryItem] = {}
        terms, short = self.terms(sig, events=False)
        if terms:
            for item, rank in self.store.search_items(scope, terms, ITEM_CANDIDATES, statuses):
                candidates[item.id] = item
                fts[item.id] = abs(rank)
        if _scan_short_terms(short, bool(candidates)):
            for item in self.store.like_items(scope, short, ITEM_CANDIDATES, statuses):
                candidates.setdefault(item.id, item)
                fts.setdefault(item.id, 0.0)
                fts[item.id] += 1.0
        for item in self._standing(scope, candidates):
            candidates[item.id] = item
        newest = self.store.checkpoint(session_id).last_event_seq
        earlier = [i for i in candidates.values() if i.session_id != session_id]
        now = reference_time(self.store, scope, earlier) if earlier else None
        scored = [
            self.score(item, sig, fts.get(item.id, 0.0), newest, scope, now)
            for item in candidates.values()
        ]
        scored.sort(key=lambda s: (-s.score, s.item.session_id != session_id, *_order(s.item)))
        selected: list[ScoredItem] = []
        omitted: list[ScoredItem] = []
        restated: dict[str, str] = {}
        for s in scored:
            if s.item.status == "superseded":
                s.reason = f"superseded by {s.item.superseded_by}"
                omitted.append(s)
            elif s.item.content_hash in restated:
                s.reason = f"the same clause as {restated[s.item.content_hash]}"
                omitted.append(s)
            elif s.score < self.min_score:
                s.reason = f"score {s.score:.2f} is below retrieval.min_score {self.min_score:g}"
                omitted.append(s)
            elif len(selected) >= limit:
                s.reason = f"over retrieval.limit {limit}"
                omitted.append(s)
            else:
                selected.append(s)
                restated[s.item.content_hash] = s.item.id
        return Retrieval(sig, selected, omitted)

    def _standing(self, scope: Scope, found: dict[str, MemoryItem]) -> list[MemoryItem]:
        """Standing items not matched by the query: the session's newest constraints and
        decisions, and the newest settled items of the project's other sessions."""
        if not self.standing_limit:
            return []
        recent = self.store.items(
            scope.session_id,
            ("active", "disputed"),
            STANDING_KINDS,
            newest=self.standing_limit * 4,
        )
        own = [i for i in recent if i.evidence_type == "user_explicit"]
        # the newest first, until the limit is reached: a correction stands however
        # short ("改成 5 天" is what holds now); so do the two newest short choices
        # ("polars" after "pandas or polars?"), not a crowd of them
        out: list[MemoryItem] = []
        short = 0
        for i in reversed(own):
            substantial = _substantial(i.content)
            newest_short = i.kind == "decision" and not substantial and short < 2
            short += newest_short
            if i.id not in found and (i.supersedes or newest_short or substantial):
                out.append(i)
                if len(out) == self.standing_limit:
                    break
        out.reverse()
        if scope.wide:
            others = standing_from_others(self.store, scope, self.standing_limit * 2)
            out += [i for i in others if i.id not in found and _substantial(i.content)][
                : self.standing_limit
            ]
        return out

    def score(
        self,
        item: MemoryItem,
        sig: QuerySignals,
        fts: float,
        newest: int,
        scope: Scope | None = None,
        now: Any = None,
    ) -> ScoredItem:
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
        if scope is not None and item.session_id != scope.session_id:
            parts["other_session"] = OTHER_SESSION_FACTOR
            said = said_time(item)
            days = (now - said).total_seconds() / 86400 if now and said else 0.0
            parts["age_days"] = max(days, 0.0)
            parts["age"] = age_factor(days)
            score *= OTHER_SESSION_FACTOR * parts["age"]
        elif item.derived_from_seq is not None and newest - item.derived_from_seq <= RECENCY_WINDOW:
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
        terms = [t for t in sig.terms if not _cjk(t)]
        cjk = [t for t in content_terms(sig.short_terms) if _cjk(t)]
        words = {stem(w) for w in latin_words(text)}
        missing = [t for t in terms if t not in words and t not in text]
        # what the word index matched the hit on, read only when the stems fall short
        held = set(index_words(text)) if missing else set()
        have = len(terms) - len(missing) + sum(1 for t in missing if word_form(t) in held)
        have_cjk = sum(1 for t in cjk if t in text)
        total = len(terms) + len(cjk)
        if not total:
            return False
        # a name the question asks about weighs as much as two words: "is Nara still in
        # the plan?" is answered by "scratch Nara too" ("is the shuttle still running?"
        # is not by "the kids were running around")
        names = {stem(w.casefold()) for w in _NAME.findall(sig.text)}
        named = sum(1 for t in terms if t in names and t not in missing)
        matched = have + have_cjk + named
        return matched * 2 >= total and (matched >= 2 or total <= 2)

    def prefetch_evidence(self, sig: QuerySignals, scope: Scope) -> None:
        """Start the ranked search :meth:`rank_events` will run for ``sig`` (a long
        session's, on a second connection while the items are retrieved)."""
        terms, _ = self.terms(sig, events=True)
        self.store.prefetch_events(scope, terms, EVENT_CANDIDATES, self.evidence_types)

    def rank_events(
        self, session_id: str, sig: QuerySignals, limit: int, scope: Scope | None = None
    ) -> list[tuple[StoredEvent, float]]:
        """Quotable events ranked by BM25 over the query terms; a hit lifts its neighbours.

        Events of the whole scope compete; a hit lifts neighbours in its own session.
        """
        scope = scope or self.scope(session_id)
        order = {sid: n for n, sid in enumerate(scope.sessions)}
        types = self.evidence_types
        scores: dict[Key, float] = {}
        events: dict[Key, StoredEvent] = {}

        def key(event: StoredEvent) -> Key:
            return (order.get(event.session_id, len(order)), event.seq)

        terms, short = self.terms(sig, events=True)
        for event, rank in self.store.search_events(scope, terms, EVENT_CANDIDATES, types):
            if self.quotable(event):
                scores[key(event)] = abs(rank)
                events[key(event)] = event
        # terms no index serves: a bounded scan of recent events, the session's and a
        # few of the project's most recent other sessions'
        if _scan_short_terms(short, bool(scores)):
            windows = [(session_id, SHORT_TERM_WINDOW)] + [
                (sid, SHORT_TERM_WINDOW // 4) for sid in scope.others[:SHORT_TERM_SESSIONS]
            ]
            for sid, window in windows:
                for event, count in self.store.recent_events_with(sid, short, types, window):
                    if self.quotable(event):
                        k = key(event)
                        scores[k] = scores.get(k, 0.0) + SHORT_TERM_WEIGHT * count
                        events[k] = event
        if not scores:
            return []
        # the prompt being answered, when it is stored already (the session's newest
        # event, holding the query), matches itself best: it neither sets the scale the
        # other hits are measured on nor lifts the turns around it, so a host that stores
        # the prompt first gets the ranking of one that does not
        newest = self.store.checkpoint(session_id).last_event_seq
        prompt: Key | None = (0, newest)
        if prompt not in scores or dedupe_key(events[prompt].text) != dedupe_key(sig.text):
            prompt = None  # (dedupe_key: the same text, case and spaces aside)
        top = max((s for k, s in scores.items() if k != prompt), default=0.0) or 1.0
        base = {k: s / top for k, s in scores.items()}
        norm = dict(base)
        # a hit lifts the turns around it (see REPLY_PROPAGATION)
        hits = sorted(base, key=lambda k: (-base[k], k))[:NEIGHBOUR_HITS]
        wide, adjacent = _lifts(len(REPLY_PROPAGATION)), _lifts(1)
        lifts = {
            k: [] if k == prompt else wide if n < WIDE_HITS else adjacent
            for n, k in enumerate(hits)
        }
        near: dict[Key, StoredEvent] = {}
        for n, sid in enumerate(scope.sessions):
            wanted = {seq + d for (i, seq) in hits if i == n for d, _ in lifts[(i, seq)]}
            if wanted:
                # only quotable types: a tool result beside a hit can be large
                found = self.store.events_by_seq(sid, wanted, self.evidence_types)
                near.update(((n, e.seq), e) for e in found)
        for k in hits:
            for offset, share in lifts[k]:
                neighbour = near.get((k[0], k[1] + offset))
                if (
                    neighbour is None
                    or not self.quotable(neighbour)
                    or _CHATTER.match(neighbour.text)
                ):
                    continue
                lifted = share * base[k]
                nk = key(neighbour)
                if lifted > norm.get(nk, 0.0):
                    norm[nk] = lifted
                    events[nk] = neighbour
        for k in norm:
            if k[0] == 0 and newest - k[1] <= RECENCY_WINDOW:
                norm[k] += self.recency_boost * 0.1
        ranked = sorted(norm.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return [(events[k], score) for k, score in ranked]

    def retrieve_evidence(
        self,
        session_id: str,
        sig: QuerySignals,
        items: Sequence[ScoredItem],
        limit: int,
        scope: Scope | None = None,
    ) -> list[EvidenceHit]:
        """Evidence events, best first: ranked matches, exact matches, item sources.

        A ranked match scores 0..1 (BM25 relative to the best hit); an exact match of
        a number, path or quote adds EXACT_EVIDENCE_BONUS; being the source of a
        selected item that the ranking did not find adds SOURCE_BONUS if the item
        matched the query and STANDING_SOURCE_BONUS otherwise (its item line already
        cites it). A ranked match gets nothing more for being a source: the item is a
        clause of it, so its match is the same words counted twice. Events a
        program generated are never returned; events of types that are not quotable
        are returned marked, so that the assembler can say why they were left out.
        Events of the project's other sessions come from the same three ways.
        """
        scope = scope or self.scope(session_id)
        order = {sid: n for n, sid in enumerate(scope.sessions)}
        hits: dict[Key, EvidenceHit] = {}

        def add(event: StoredEvent, score: float, reason: str) -> None:
            if is_generated(event.source_kind, event.text):
                return
            k = (order.get(event.session_id, len(order)), event.seq)
            hit = hits.get(k)
            if hit is None:
                hits[k] = EvidenceHit(event, self.full_text(event), score, [reason])
            else:
                hit.score += score
                if reason not in hit.reasons:
                    hit.reasons.append(reason)

        for event, score in self.rank_events(session_id, sig, max(limit, 50), scope):
            add(event, score, "ranked match")
        for term in (*sig.quotes, *sig.paths, *sig.numbers)[:12]:
            if len(term) < MIN_EXACT_CHARS:
                continue  # "5" matches everything; only distinctive terms count as exact
            for event in self.store.events_containing(scope, term, 5):
                add(event, EXACT_EVIDENCE_BONUS, f"exact match {term!r}")
        sources: dict[str, dict[int, list[ScoredItem]]] = {}
        for s in items:
            for seq in s.item.source_seqs:
                sources.setdefault(s.item.session_id, {}).setdefault(seq, []).append(s)
        for sid in sorted(sources, key=lambda x: order.get(x, len(order))):
            for event in self.store.events_by_seq(sid, sources[sid]):
                owners = sources[sid][event.seq]
                bonus = SOURCE_BONUS if any(o.matched for o in owners) else STANDING_SOURCE_BONUS
                known = hits.get((order.get(event.session_id, len(order)), event.seq))
                if known is not None and "ranked match" in known.reasons:
                    bonus = 0.0  # its words already ranked it: the item's match is the same
                add(event, bonus, "source of " + ", ".join(o.item.id for o in owners))
        ranked = sorted(hits.items(), key=lambda kv: (-kv[1].score, kv[0]))
        return [hit for _, hit in ranked[:limit]]

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
        terms, _ = self.terms(sig, events=False)
        if terms:
            for found, rank in self.store.search_items(
                item.session_id, terms, 400, ("active", "disputed", "superseded", "retracted")
            ):
                if found.id == item_id:
                    fts = abs(rank)
        scored = self.score(item, sig, fts, self.store.checkpoint(item.session_id).last_event_seq)
        chain = [
            {
                "id": x.id,
                "session_id": x.session_id,
                "day": item_day(x),
                "status": x.status,
                "content": x.content,
            }
            for x in self.history(item)
        ]
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
            "project": self.store.session_project(item.session_id),
            "history": chain,
            "score": scored.as_dict() | {"query": sig.text},
        }

    def history(self, item: MemoryItem, limit: int = 50) -> list[MemoryItem]:
        """The item's supersession chain, oldest first, across the sessions it spans:
        what it replaced, it, and what replaced it."""
        chain = [item]
        seen = {item.id}
        back = item
        while back.supersedes and len(chain) < limit:
            older = [x for x in self.store.items_by_id(back.supersedes) if x.id not in seen]
            if not older:
                break
            back = older[0]
            seen.add(back.id)
            chain.insert(0, back)
        ahead = item
        while ahead.superseded_by and ahead.superseded_by not in seen and len(chain) < limit:
            newer = self.store.item(ahead.superseded_by)
            if newer is None:
                break
            ahead = newer
            seen.add(ahead.id)
            chain.append(ahead)
        return chain


@lru_cache(maxsize=8)
def _search_terms(sig: QuerySignals, served: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:meth:`Retriever.terms`, ``served`` when a word index serves the search. A step
    asks three times (items, the prefetch, events), and reading a long message's
    words as the index holds them is most of the cost: the answers are kept."""
    if served and word_terms(sig.words) is not None:
        short = (
            tuple(t for t in sig.short_terms if not cjk_runs(t)) if sig.words else sig.short_terms
        )
        return selective(sig.words, RANK_TERMS), content_terms(short)[:SHORT_TERMS]
    return selective(sig.terms, RANK_TERMS), content_terms(sig.short_terms)[:SHORT_TERMS]


def _order(item: MemoryItem) -> tuple[int, str]:
    """Among equal scores: the newer item first, then by id."""
    return (-(item.derived_from_seq or 0), item.id)


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
