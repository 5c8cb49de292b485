"""Deterministic extraction of memory items, corrections and task state.

Runs incrementally from ``checkpoints.last_extract_seq``. Only the person's own
words (:func:`convmem.capture.is_user_evidence`) become ``user_explicit`` items of
any kind; an assistant message can yield at most ``proposal`` items with
``assistant_proposal`` evidence. Tool output, other plugins' messages and
convmem's own block are never read here.

Each sentence is classified by cue words (``memory/cues.py``). A sentence that
corrects an earlier one creates a new item and supersedes the old one; a
conflicting restatement without a correction cue marks both ``disputed``. A
message whose extraction fails is queued in ``pending_extraction`` and retried;
the event itself is never touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convmem.capture import is_generated, is_user_evidence, user_words
from convmem.core.text import (
    clip,
    dedupe_key,
    has_cjk,
    latin_words,
    numbers,
    paths,
    stable_id,
)
from convmem.errors import StoreBusyError
from convmem.memory import cues
from convmem.memory.models import MemoryItem, StoredEvent

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore

EXTRACTOR = "rules-v1"
ACTOR = "extractor"
MAX_ITEM_CHARS = 400
MAX_ATTEMPTS = 5
#: Earlier items a new sentence is compared with: the newest ones, and topic matches.
RELATED_WINDOW = 40
RELATED_MATCHES = 40
#: The event types extraction reads; the cursor moves over the others.
READ_TYPES = ("user/message", "assistant/message")
#: Events extracted per write transaction.
GROUP = 64
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[\u3400-\u9fff])|(?<=[。！？；])|\n+")


@dataclass
class Candidate:
    """A sentence classified as a memory item, before it is stored."""

    kind: str
    content: str
    topic: tuple[str, ...]
    numbers: list[dict[str, Any]]
    conditions: list[str]
    scope: list[str]
    correction: bool = False
    index: int = 0


@dataclass
class ExtractionReport:
    events: int = 0
    created: int = 0
    superseded: int = 0
    disputed: int = 0
    failed: int = 0
    items: list[str] = field(default_factory=list)


def split_sentences(text: str) -> list[str]:
    """Sentences of a message, English and Chinese; code blocks are skipped."""
    text = re.sub(r"```.*?(```|\Z)", " ", text, flags=re.DOTALL)
    parts = [p.strip(" \t-*•>#") for p in _SENTENCE_END.split(text)]
    return [p for p in parts if p and len(p) >= 2]


def topic_words(sentence: str) -> tuple[str, ...]:
    """Content words that say what a sentence is about (for linking corrections)."""
    words: list[str] = []
    for w in latin_words(sentence):
        if w in cues.STOPWORDS or w.isdigit() or len(w) < 3:
            continue
        stem = w[:-1] if w.endswith("s") and len(w) > 4 else w
        words.append(stem)
    if has_cjk(sentence):
        stripped = re.sub(r"[\d\s,，。.!！?？;；:：、]+", " ", sentence)
        for cue in ("必须", "不要", "不能", "改成", "改为", "我们", "决定", "是否", "而是", "不是"):
            stripped = stripped.replace(cue, " ")
        for run in re.findall(r"[\u4e00-\u9fff]{2,}", stripped):
            words.extend(run[i : i + 2] for i in range(len(run) - 1))
    seen: dict[str, None] = {}
    for w in words:
        seen.setdefault(w, None)
    return tuple(seen)


def number_conditions(sentence: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Numbers with their unit and the conditions in scope in the same sentence."""
    found = numbers(sentence)
    spans = [(n.start, n.end) for n in found]
    conditions: list[str] = []
    for m in cues.CONDITION.finditer(sentence):
        phrase = m.group().strip()
        # a condition is not the number itself ("under 200 ms" is the value)
        if any(s <= m.start() and m.end() <= e for s, e in spans):
            continue
        if phrase.lower().startswith(("under ", "over ", "within ")) and any(
            m.start() <= s < m.end() for s, _ in spans
        ):
            continue
        if phrase not in conditions:
            conditions.append(phrase)
    out = []
    for n in found:
        before = sentence[max(0, n.start - 14) : n.start]
        if cues.REJECTED_NUMBER.search(before):
            continue  # "2000, not 3000": 3000 is the value being replaced
        if n.unit is None and re.search(r"\b[A-Z][A-Za-z]+\s*v?$", before):
            continue  # "PostgreSQL 16": a version, not a quantity
        cond_here = [c for c in conditions if c not in n.raw and n.raw not in c]
        out.append({**n.as_dict(), "conditions": cond_here})
    return out, conditions


def classify(sentence: str, from_user: bool) -> Candidate | None:
    """The memory kind of one sentence, or None if it is not worth remembering."""
    text = sentence.strip()
    if len(text) < 4:
        return None
    nums, conditions = number_conditions(text)
    scope = paths(text)
    topic = topic_words(text)
    if not from_user:
        if cues.PROPOSAL.search(text):
            return Candidate("proposal", clip(text, MAX_ITEM_CHARS), topic, nums, conditions, scope)
        return None
    correction = bool(cues.CORRECTION.search(text))
    if cues.OPEN_QUESTION.search(text) and text.rstrip().endswith(("?", "？")):
        kind = "open_question"
    elif cues.DECISION.search(text):
        kind = "decision"
    elif cues.CONSTRAINT.search(text):
        kind = "constraint"
    elif cues.PREFERENCE.search(text):
        kind = "preference"
    elif cues.LIMIT.search(text):
        kind = "constraint"
    elif (nums and (any(n["unit"] for n in nums) or correction)) or scope:
        kind = "fact"
    else:
        return None
    if kind == "open_question":
        correction = False
    if not (topic or nums or scope):
        return None
    return Candidate(kind, clip(text, MAX_ITEM_CHARS), topic, nums, conditions, scope, correction)


class Extractor:
    """Brings one session's derived memory up to date with its events."""

    def __init__(self, store: MemoryStore, settings: Settings | None = None) -> None:
        self.store = store
        self.settings = settings

    def run(self, session_id: str) -> ExtractionReport:
        """Retry what is pending, then extract forward from the cursor.

        The cursor says "every message up to here was read". Other processes may
        commit events below or between the ones this run reads, so each event is
        checked, inside the write transaction, to be still the next one after the
        cursor; if an earlier one arrived meanwhile, the batch is read again from the
        cursor. A lock held past the bound (:class:`StoreBusyError`) is raised as it
        is: the message did not fail, so it is neither queued nor skipped.
        """
        report = ExtractionReport()
        for pending in self.store.pending(session_id, MAX_ATTEMPTS):
            events = self.store.events_by_seq(session_id, [pending["seq"]])
            self._process(session_id, events, report, retry=True)
        while True:
            cursor = self.store.checkpoint(session_id).last_extract_seq
            batch = self.store.events(session_id, after=cursor, types=READ_TYPES, limit=500)
            if not batch:
                break
            self._process(session_id, batch, report, retry=False)
        cp = self.store.checkpoint(session_id)
        if cp.last_event_seq > cp.last_extract_seq:
            # past trailing events extraction does not read (tool output, compactions)
            with self.store.transaction():
                cursor = self.store.checkpoint(session_id).last_extract_seq
                if self.store.first_event_seq(session_id, cursor, READ_TYPES) is None:
                    newest = self.store.checkpoint(session_id).last_event_seq
                    self.store.advance_checkpoint(session_id, "last_extract_seq", newest)
        return report

    def _process(
        self, session_id: str, events: Iterable[StoredEvent], report: ExtractionReport, retry: bool
    ) -> None:
        # The items of an event and the cursor past it commit together, so a process
        # killed mid-run never extracts an event twice. Events go in groups, one write
        # transaction each: a writer that waits for the lock gets it between groups,
        # not only after thousands of one-event transactions.
        todo = list(events)
        for start in range(0, len(todo), GROUP):
            with self.store.transaction():
                for event in todo[start : start + GROUP]:
                    # another process may have extracted it, or committed an earlier
                    # event, since this batch was read: inside the write transaction
                    # the answer is final
                    state = self._already_done(session_id, event.seq, retry)
                    if state == "stale":
                        return
                    if state == "next":
                        self._extract_one(event, report, retry)

    def _extract_one(self, event: StoredEvent, report: ExtractionReport, retry: bool) -> None:
        session_id = event.session_id
        report.events += 1
        try:
            with self.store.transaction():  # a savepoint: a failure undoes this event only
                self.extract_event(event, report)
        except StoreBusyError:
            raise  # the lock, not the message: the next run takes it up in order
        except Exception as exc:  # one bad message must not stop the others
            report.failed += 1
            self.store.add_pending(session_id, event.seq, f"{type(exc).__name__}: {exc}")
        else:
            if retry:
                self.store.clear_pending(session_id, event.seq)
        if not retry:
            self.store.advance_checkpoint(session_id, "last_extract_seq", event.seq)

    def _already_done(self, session_id: str, seq: int, retry: bool) -> str:
        """``done`` (nothing to do), ``next`` (extract it now) or ``stale`` (an earlier
        event arrived after the batch was read: read again from the cursor)."""
        # reading the cursor first also takes the session's lock on PostgreSQL, before
        # any row is written: a lock taken later could be taken in another order
        cursor = self.store.checkpoint(session_id).last_extract_seq
        if retry:
            queued = any(p["seq"] == seq for p in self.store.pending(session_id, MAX_ATTEMPTS))
            return "next" if queued else "done"
        if cursor >= seq:
            return "done"
        first = self.store.first_event_seq(session_id, cursor, READ_TYPES)
        return "stale" if first is not None and first < seq else "next"

    # --- one event ---------------------------------------------------------------------------

    def extract_event(self, event: StoredEvent, report: ExtractionReport) -> None:
        if event.type == "user/message":
            if not is_user_evidence(event.type, event.source_kind, event.text, event.role):
                return
            from_user = True
        elif event.type == "assistant/message" and not is_generated(event.source_kind, event.text):
            from_user = False
        else:
            return
        sentences = split_sentences(user_words(event.text) if from_user else event.text)
        for index, sentence in enumerate(sentences):
            cand = classify(sentence, from_user)
            if cand is None:
                continue
            cand.index = index
            self._store_candidate(event, cand, from_user, report)
        if from_user:
            self._patch_task_state(event, sentences)

    def _store_candidate(
        self, event: StoredEvent, cand: Candidate, from_user: bool, report: ExtractionReport
    ) -> None:
        session_id = event.session_id
        content_hash = dedupe_key(f"{cand.kind}\n{cand.content}")
        ref = f"seq:{event.seq}"
        same = self.store.items_with_hash(session_id, content_hash)
        if any(ref in i.source_refs for i in same):
            return  # this sentence of this event was extracted before (a replay)
        existing = next((i for i in same if i.status == "active"), None)
        if existing is not None:
            if ref not in existing.source_refs:
                refs = sorted({*existing.source_refs, ref}, key=_ref_key)
                self.store.update_item(existing.id, source_refs_json=_json(refs))
            return
        targets = self._related(session_id, cand, event.seq) if from_user else []
        if cand.correction and targets and cand.kind in ("fact", "preference"):
            cand.kind = targets[0].kind  # "make it 2000" restates the corrected item's kind
        item_id = stable_id("mem", session_id, event.seq, cand.index, cand.kind)
        if self.store.item(item_id) is not None:
            return  # already extracted (replay)
        item = MemoryItem(
            id=item_id,
            session_id=session_id,
            kind=cand.kind,
            content=cand.content,
            evidence_type="user_explicit" if from_user else "assistant_proposal",
            topic=" ".join(cand.topic),
            conditions=tuple(cand.conditions),
            scope=tuple(cand.scope),
            numbers=tuple(cand.numbers),
            source_refs=(ref,),
            supersedes=tuple(t.id for t in targets if cand.correction),
            content_hash=content_hash,
            extractor=EXTRACTOR,
            derived_from_seq=event.seq,
        )
        if not self.store.insert_item(item):
            return
        report.created += 1
        report.items.append(item_id)
        self.store.record_memory_event(
            item_id, session_id, "created", ACTOR, {"seq": event.seq, "kind": cand.kind}
        )
        for old in targets:
            if cand.correction:
                self.store.update_item(old.id, status="superseded", superseded_by=item_id)
                self.store.record_memory_event(
                    old.id,
                    session_id,
                    "superseded",
                    ACTOR,
                    {"by": item_id, "seq": event.seq},
                )
                report.superseded += 1
            else:
                for disputed in (old.id, item_id):
                    self.store.update_item(disputed, status="disputed")
                    self.store.record_memory_event(
                        disputed,
                        session_id,
                        "disputed",
                        ACTOR,
                        {"with": item_id if disputed == old.id else old.id, "seq": event.seq},
                    )
                report.disputed += 1

    def _related(self, session_id: str, cand: Candidate, seq: int) -> list[MemoryItem]:
        """Earlier user items this sentence corrects (or conflicts with)."""
        if cand.kind in ("open_question", "proposal"):
            return []
        # bounded: the newest items, plus older ones that share a topic word, so a
        # long session does not make every sentence compare against all its memory
        statuses = ("active", "disputed")
        pool = {i.id: i for i in self.store.items(session_id, statuses, newest=RELATED_WINDOW)}
        words = [w for w in cand.topic if len(w) >= 3]
        if words:
            for item, _ in self.store.search_items(session_id, words, RELATED_MATCHES, statuses):
                pool.setdefault(item.id, item)
        earlier = sorted(
            (
                i
                for i in pool.values()
                if i.evidence_type == "user_explicit"
                and (i.derived_from_seq or 0) < seq
                and i.kind not in ("open_question", "proposal")
            ),
            key=lambda i: (i.derived_from_seq or 0, i.id),
        )
        if not earlier:
            return []
        units = {n["unit"] for n in cand.numbers if n.get("unit")}
        values = {n["value"] for n in cand.numbers}
        best: list[tuple[float, int, MemoryItem]] = []
        for item in earlier:
            overlap = len(set(cand.topic) & set(item.topic.split()))
            item_units = {n["unit"] for n in item.numbers if n.get("unit")}
            item_values = {n["value"] for n in item.numbers}
            same_unit = bool(units & item_units)
            if cand.correction:
                score = overlap + (2 if same_unit else 0)
                if values and item_values and not (values - item_values):
                    continue  # restates the same value: not a correction of this item
                if score >= 2 or (same_unit and overlap >= 1):
                    best.append((score, item.derived_from_seq or 0, item))
            elif (
                same_unit
                and overlap >= 2
                and values
                and item_values
                and values.isdisjoint(item_values)
            ):
                best.append((overlap + 2, item.derived_from_seq or 0, item))
        if not best and cand.correction and units:
            # "actually, make it 2000 tokens": the latest item with that unit
            same = [i for i in earlier if units & {n["unit"] for n in i.numbers if n.get("unit")}]
            if same:
                return [same[-1]]
        if not best:
            return []
        best.sort(key=lambda t: (-t[0], -t[1], t[2].id))
        return [best[0][2]]

    def _patch_task_state(self, event: StoredEvent, sentences: list[str]) -> None:
        state = self.store.task_state(event.session_id)
        if state.updated_by_seq is not None and state.updated_by_seq >= event.seq:
            return  # this event (or a later one) was applied already: a replay
        changed = False

        def add(bucket: list[str], text: str) -> None:
            nonlocal changed
            text = clip(text, 240)
            if text not in bucket:
                bucket.append(text)
                del bucket[:-5]
                changed = True

        for sentence in sentences:
            goal = cues.GOAL.search(sentence)
            if goal:
                new_goal = clip(sentence.strip(), 240)
                if state.goal and state.goal != new_goal:
                    add(state.superseded, state.goal)
                if state.goal != new_goal:
                    state.goal = new_goal
                    changed = True
            if cues.PROGRESS.search(sentence):
                add(state.progress, sentence)
            if cues.BLOCKER.search(sentence):
                add(state.blockers, sentence)
            if cues.OPEN_ITEM.search(sentence):
                add(state.open_items, sentence)
        if changed:
            state.updated_by_seq = event.seq
            self.store.save_task_state(state)


def _ref_key(ref: str) -> tuple[int, str]:
    tail = ref.split(":", 1)[-1]
    return (int(tail), ref) if tail.isdigit() else (1 << 62, ref)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
