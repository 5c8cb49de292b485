"""``convmem search``: the memory items and raw evidence that match a query.

Search answers a different question from the block. The block carries what a step
should keep in mind, so the assembler adds the session's standing constraints and
decisions even when the step's text does not name them, and lifts the turn that
answers a hit. Search lists only what matches what was typed:

* an item or event matches when it holds one of the query's content words (by its
  stem, as the word index holds it, or as the start of a longer word: ``postgres``
  finds "PostgreSQL", ``migrat`` "migration"; or a Chinese character run of the query), one of its
  exact terms (a path, a quoted phrase, an identifier), or one of its numbers;
* a number matches by value, so ``3000`` finds "3000 tokens" and "3,000 tokens"
  but not "30000"; with a unit (``3000 tokens``) the unit must agree too;
* items keep the ranking's score; evidence keeps its BM25 rank, plus a bonus for an
  exact number, path or phrase. Nothing that does not match is listed, whatever its
  score.

The data behind ``convmem search --json``, the MCP ``search`` tool, ``/memory search``
in DSH and the inspector's search page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convmem.core.text import NumberMention, cjk_runs, latin_words, numbers
from convmem.memory.models import Scope
from convmem.query import QuerySignals, index_words, stem, word_form
from convmem.retrieval import EXACT_EVIDENCE_BONUS, Retriever, ScoredItem

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.models import StoredEvent
    from convmem.memory.store import MemoryStore

#: Items and events looked at per session before matching and cutting to ``limit``.
POOL = 100
#: Exact terms of a query looked up verbatim (numbers, paths, quotes, identifiers).
MAX_EXACT_TERMS = 12
#: Query words also looked for as the start of longer words: at least this long ...
PREFIX_CHARS = 4
#: ... and at most this many of them.
MAX_PREFIXES = 6
STATUSES = ("active", "disputed")


@dataclass(frozen=True)
class _Query:
    """A query in the forms matching needs."""

    signals: QuerySignals
    words: frozenset[str]  # Latin content stems, of any length
    forms: frozenset[str]  # the same as the word index holds them
    cjk: tuple[str, ...]  # Chinese character windows of the query
    exact: tuple[str, ...]  # paths, quotes and identifiers (numbers are matched by value)
    numbers: tuple[NumberMention, ...]
    prefixes: tuple[str, ...]  # content words long enough to find longer ones they start

    @classmethod
    def of(cls, retriever: Retriever, text: str) -> _Query:
        sig = retriever.signals(text)
        found = numbers(sig.text)
        raw = {n.raw for n in found}
        words = {t for t in (*sig.terms, *sig.short_terms) if t.isascii()}
        cjk = tuple(t for t in (*sig.terms, *sig.short_terms) if not t.isascii())
        # a lone Chinese character is a query too
        cjk += tuple(run for run in cjk_runs(sig.text) if len(run) == 1)
        exact = tuple(e for e in sig.exact if e not in raw)
        if not (words or cjk or exact or found) and sig.text.strip():
            # nothing to rank by (an emoji, a symbol): look the text up as it was typed
            exact = (sig.text.strip(),)
        forms = frozenset(word_form(w) for w in words)
        prefixes = sorted(w for w in words if len(w) >= PREFIX_CHARS and not w.isdigit())
        return cls(
            sig, frozenset(words), forms, cjk, exact, tuple(found), tuple(prefixes[:MAX_PREFIXES])
        )

    @property
    def empty(self) -> bool:
        return not (self.words or self.cjk or self.exact or self.numbers)

    def matches(self, text: str) -> bool:
        """Does ``text`` hold a content word, an exact term or a number of the query?"""
        low = text.casefold()
        if any(e.casefold() in low for e in self.exact):
            return True
        if any(t in text for t in self.cjk):
            return True
        if self.words and any(stem(w) in self.words for w in latin_words(low)):
            return True
        if self.forms and not self.forms.isdisjoint(index_words(low)):
            return True
        if self.prefixes and any(w.startswith(self.prefixes) for w in latin_words(low)):
            return True
        return bool(self.numbers) and self.number_hit(text)

    def number_hit(self, text: str) -> bool:
        """Does ``text`` state one of the query's numbers (same value; same unit if given)?"""
        for mention in numbers(text):
            for wanted in self.numbers:
                if mention.value == wanted.value and (
                    wanted.unit is None or _same_unit(mention.unit, wanted.unit)
                ):
                    return True
        return False


def _same_unit(a: str | None, b: str | None) -> bool:
    def norm(u: str | None) -> str:
        u = (u or "").casefold()
        return u[:-1] if u.endswith("s") and len(u) > 2 else u

    return norm(a) == norm(b)


def _items(retriever: Retriever, sid: str, q: _Query) -> list[ScoredItem]:
    """Items of one session that match the query, scored by the ranking formula."""
    store = retriever.store
    ranked = retriever.retrieve(sid, q.signals, POOL, Scope(sid))
    found = {s.item.id: s for s in ranked.items}
    seen = {s.item.content_hash for s in ranked.items}
    for s in ranked.omitted:
        # a low score keeps an item out of a block, not out of what matches a search
        if s.item.status in STATUSES and s.item.content_hash not in seen:
            found.setdefault(s.item.id, s)
            seen.add(s.item.content_hash)
    newest = store.checkpoint(sid).last_event_seq
    needles = [*q.exact, *(n.raw for n in q.numbers)][:MAX_EXACT_TERMS] + list(q.prefixes)
    for needle in needles:
        for item in store.like_items(sid, [needle], POOL, STATUSES):
            if item.id not in found and item.content_hash not in seen:
                found[item.id] = retriever.score(item, q.signals, 0.0, newest)
                seen.add(item.content_hash)
    return [s for s in found.values() if q.matches(s.item.content)]


def _evidence(
    retriever: Retriever, sid: str, q: _Query, limit: int
) -> list[tuple[StoredEvent, float]]:
    """Quotable events of one session that match the query, best first."""
    store = retriever.store
    scores: dict[int, float] = {}
    events: dict[int, StoredEvent] = {}
    for event, score in retriever.rank_events(sid, q.signals, POOL, Scope(sid)):
        scores[event.seq], events[event.seq] = score, event
    types = retriever.evidence_types
    needles = [*q.exact, *(n.raw for n in q.numbers)][:MAX_EXACT_TERMS] + list(q.prefixes)
    for needle in needles:
        for event in store.events_containing(sid, needle, POOL, types):
            if retriever.quotable(event):
                events.setdefault(event.seq, event)
                scores[event.seq] = scores.get(event.seq, 0.0) + EXACT_EVIDENCE_BONUS
    hits = [(events[seq], s) for seq, s in scores.items() if q.matches(events[seq].text)]
    hits.sort(key=lambda h: (-h[1], h[0].seq))
    return hits[:limit]


def search(
    store: MemoryStore,
    settings: Settings,
    query: str,
    session: str | None = None,
    limit: int = 10,
    project: str | None = None,
) -> dict[str, Any]:
    """Items and raw evidence matching ``query`` in one session, one project's sessions
    or all of them, best first; each row names its session."""
    retriever = Retriever(store, settings)
    q = _Query.of(retriever, query)
    sessions: Sequence[str]
    if session:
        sessions = [session]
    elif project is not None:
        sessions = store.project_sessions(project)
    else:
        sessions = [s["session_id"] for s in store.sessions()]
    items: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    if q.empty:
        return {"query": query, "items": [], "evidence": []}
    for sid in sessions:
        items += [
            {
                "session_id": sid,
                **s.as_dict(),
                "kind": s.item.kind,
                "status": s.item.status,
                "content": s.item.content,
            }
            for s in _items(retriever, sid, q)
        ]
        evidence += [
            {
                "session_id": sid,
                "seq": event.seq,
                "type": event.type,
                "score": round(score, 4),
                "text": event.text,
            }
            for event, score in _evidence(retriever, sid, q, limit)
        ]
    items.sort(key=lambda r: (-r["score"], r["session_id"], r["id"]))
    evidence.sort(key=lambda r: (-r["score"], r["session_id"], r["seq"]))
    return {"query": query, "items": items[:limit], "evidence": evidence[:limit]}
