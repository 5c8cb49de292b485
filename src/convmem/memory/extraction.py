"""Deterministic extraction of memory items, corrections and task state.

Runs incrementally from ``checkpoints.last_extract_seq``. Only the person's own
words (:func:`convmem.capture.is_user_evidence`) become ``user_explicit`` items of
any kind; an assistant message can yield at most ``proposal`` items with
``assistant_proposal`` evidence. Tool output, other plugins' messages and
convmem's own block are never read here, and material the person pasted into a
message (logs, code, traces, tables) is never read as something they said.

Each message is cut into clauses and each clause judged by what it does
(:mod:`convmem.memory.candidates`); a kept clause becomes one item holding the
clause as said. A clause that corrects an earlier item supersedes that item only;
a conflicting statement without a correction cue marks both ``disputed``; a
retraction ("forget the parking thing") retracts the item it names
(:mod:`convmem.memory.links`). A message whose extraction fails is queued in
``pending_extraction`` and retried; the event itself is never touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from convmem.capture import is_generated, is_user_evidence, user_words
from convmem.core.constants import EXTRACTED_TYPES
from convmem.core.cue_match import CueText
from convmem.core.text import clip, dedupe_key, stable_id, with_note
from convmem.errors import StoreBusyError
from convmem.memory import act_cues, cues, links, picks, subjects
from convmem.memory.candidates import Candidate, candidates
from convmem.memory.models import MemoryItem, StoredEvent

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore

EXTRACTOR = "acts-v1"
ACTOR = "extractor"
MAX_ATTEMPTS = 5
#: Events extracted per write transaction.
GROUP = 64


@dataclass
class ExtractionReport:
    events: int = 0
    created: int = 0
    superseded: int = 0
    disputed: int = 0
    retracted: int = 0
    failed: int = 0
    items: list[str] = field(default_factory=list)


_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
#: A clock time value ("09:30").
_CLOCK = re.compile(r"\d{2}:\d{2}$")
#: The year and month of a date value ("2024-05-01", "05-01"), up to the day.
_MONTH_OF = re.compile(r"(?:\d{4}-)?\d{2}-(?=\d{2}$)")


def _bare_value(cand: Candidate) -> bool:
    """A clause that is a value and a verb of change at most ("改成1800吧", "换成 9100")."""
    if not cand.numbers:
        return False
    rest = cand.content
    for n in cand.numbers:
        rest = rest.replace(str(n["raw"]), " ")
    return not _LATIN_WORD.search(rest) and len(_CJK_CHAR.findall(rest)) <= 4


def _count_changed(cand: Candidate, replaced: MemoryItem) -> None:
    """A count changed by so many ("再加两个人" after "五六个人") holds the new count, as a
    number and as a note after the person's words ("再加两个人 ⟦= 7-8人⟧"); the count
    it changes must be the replaced item's one value in that unit."""
    sign = subjects.relative_sign(cand.content)
    by = [n for n in cand.numbers if isinstance(n.get("value"), (int, float))]
    if len(by) != 1:
        return
    old = [n for n in replaced.numbers if n.get("unit") == by[0].get("unit")]
    if len(old) != 1 or not isinstance(old[0].get("value"), (int, float)):
        return
    step = float(by[0]["value"])
    low = float(old[0]["value"]) + sign * step
    high = old[0].get("high")
    high = float(high) + sign * step if isinstance(high, (int, float)) else None
    if low <= 0:
        return
    whole = {k: int(v) if isinstance(v, float) and v.is_integer() else v
             for k, v in (("value", low), ("high", high)) if v is not None}  # fmt: skip
    cand.numbers = [{**by[0], **whole}]
    word = str(by[0].get("raw", "")).split()[-1] if by[0].get("raw", "").isascii() else ""
    said = f"{low:g}" + (f"-{high:g}" if high is not None else "")
    cand.content = with_note(cand.content, f"{said} {word}" if word else f"{said}{by[0]['unit']}")


def completed(numbers: list[dict[str, Any]], old: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A correction's numbers with what the value it replaces says of them.

    "make it 3" after "at least 4 dinners" counts dinners, "move the call to 10" after
    "9:30 am" is 10:00, and "出发改成2号" after "5月1号出发" is May 2: a lone bare number
    near the one value of the old item that has a type and unit takes them (8080 is no
    duration after "500 ms"), a bare hour against the old item's one clock time is read
    as a time (see :func:`_on_the_clock`), and a day without its month takes the old
    date's month (and year) when that day exists in it. A bare number beside a value
    of its own labels something ("job 2 under 1009 ms") and is left alone. What the
    person wrote (``raw``) stays as it was.
    """
    typed = [n for n in old if n.get("type") not in (None, "number", "date", "time")]
    dates = [n for n in old if n.get("type") == "date" and isinstance(n.get("value"), str)]
    times = [n for n in old if n.get("type") == "time" and _CLOCK.match(str(n.get("value")))]
    out = []
    for n in numbers:
        if len(numbers) == 1 and n.get("type") == "number" and n.get("unit") is None:
            if len(typed) == 1 and links.near([n], typed):
                n = {**n, "type": typed[0]["type"], "unit": typed[0].get("unit")}
            elif len(times) == 1 and not typed:
                n = _on_the_clock(n, str(times[0]["value"]))
        day = n.get("value")
        if n.get("type") == "date" and isinstance(day, str) and day.startswith("---"):
            month = _MONTH_OF.match(str(dates[0]["value"])) if len(dates) == 1 else None
            if month is not None and _a_day_of(month.group(), day[3:]):
                n = {**n, "value": month.group() + day[3:]}
        out.append(n)
    return out


def _a_day_of(month: str, day: str) -> bool:
    """Whether ``day`` ("30") exists in ``month`` ("02-", "2024-02-"); a month without
    its year may be February of a leap year."""
    import calendar

    parts = month.rstrip("-").split("-")
    year = int(parts[0]) if len(parts) == 2 else 2000
    return day.isdigit() and 1 <= int(day) <= calendar.monthrange(year, int(parts[-1]))[1]


def _on_the_clock(n: dict[str, Any], before: str) -> dict[str, Any]:
    """A bare hour (1-12) put in place of a clock time. One to six is in the afternoon
    (people seldom move a call to 4 am) unless the time it replaces is in the small
    hours or late in the evening (one to three after nine pm); seven to eleven is the
    reading nearer that time; twelve is noon ("dinner's at 3" after "4pm" is 15:00,
    "her nap is at 1" after "12:30" is 13:00, "move the call to 10" after "9:30 am" is
    10:00)."""
    value = n.get("value")
    if not isinstance(value, int) or not 1 <= value <= 12 or str(n.get("raw")) != str(value):
        return n
    was = int(before[:2]) * 60 + int(before[3:5])
    if value == 12:
        hour = 12
    elif value <= 6:
        # the small hours: from 3:30 am, or just past a late evening ("11:30 pm" to 1)
        hour = value if was < 7 * 60 or (was >= 21 * 60 and value <= 3) else value + 12
    else:
        hour = min((value, value + 12), key=lambda h: (abs(h * 60 - was), h))
    return {**n, "type": "time", "value": f"{hour:02d}:00"}


#: A clause that names what to use: "use Memcached rather than Redis", "go with pnpm".
_NAMES_A_CHOICE = re.compile(
    r"^(?:(?:ok|okay|so|then|just|no|nah)[\s,]+)*(?:let'?s\s+)?(?:use|go with|switch to|stick with"
    r"|stay with)\s+\w",
    re.I,
)


def _restated_kind(kind: str, content: str, replaced: str) -> str:
    """The kind of a correction beside the kind of the item it replaces: "make it 2000"
    restates a limit or a choice, "use Memcached rather than Redis" changes a choice;
    "standup moved to 10", told after "the standup is at 9:30", is a fact like it (an
    instruction, "move the standup to 10", keeps its kind)."""
    if kind in ("fact", "preference") and replaced in ("constraint", "decision"):
        return replaced
    if kind == "constraint" and replaced == "decision" and _NAMES_A_CHOICE.match(content):
        return "decision"  # "actually, use Memcached rather than Redis": the choice changed
    if kind in ("constraint", "decision") and replaced == "fact":
        return "fact" if act_cues.CHANGE_TOLD.match(content) else kind
    return kind


#: How much of the assistant's message before a correction it may answer (see
#: ``links``: "make it 90s" after "a 45s server timeout will cut the export off").
_REPLY_TAIL = 600


class Extractor:
    """Brings one session's derived memory up to date with its events."""

    def __init__(self, store: MemoryStore, settings: Settings | None = None) -> None:
        self.store = store
        self.settings = settings
        #: the project's other sessions, whose items a correction may supersede
        self.others: tuple[str, ...] = ()
        #: the session's newest items in force, as links reads them for every clause;
        #: read once and kept while nothing is written (only inside a write transaction)
        self._newest: tuple[str, list[MemoryItem]] | None = None

    def run(self, session_id: str, limit: int | None = None) -> ExtractionReport:
        """Retry what is pending, then extract forward from the cursor; with ``limit``,
        at most that many messages this call (the next call goes on from the cursor).

        The cursor says "every message up to here was read". Other processes may
        commit events below or between the ones this run reads, so each event is
        checked, inside the write transaction, to be still the next one after the
        cursor; if an earlier one arrived meanwhile, the batch is read again from the
        cursor. A lock held past the bound (:class:`StoreBusyError`) is raised as it
        is: the message did not fail, so it is neither queued nor skipped.
        """
        report = ExtractionReport()
        if self.settings is not None:
            from convmem.projects import resolve_scope

            self.others = resolve_scope(self.store, self.settings, session_id).others
        for pending in self.store.pending(session_id, MAX_ATTEMPTS):
            events = self.store.events_by_seq(session_id, [pending["seq"]])
            self._process(session_id, events, report, retry=True)
        caught_up = False
        while True:
            size = 500 if limit is None else min(500, limit - report.events)
            if size <= 0:
                break
            cursor = self.store.checkpoint(session_id).last_extract_seq
            batch = self.store.events(session_id, after=cursor, types=EXTRACTED_TYPES, limit=size)
            if not batch:
                caught_up = True
                break
            self._process(session_id, batch, report, retry=False)
        cp = self.store.checkpoint(session_id)
        if caught_up and cp.last_event_seq > cp.last_extract_seq:
            # past trailing events extraction does not read (tool output, compactions)
            with self.store.transaction():
                cursor = self.store.checkpoint(session_id).last_extract_seq
                if self.store.first_event_seq(session_id, cursor, EXTRACTED_TYPES) is None:
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
            self._newest = None  # another process may have written since the last group
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
            self._newest = None  # its writes were undone
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
        first = self.store.first_event_seq(session_id, cursor, EXTRACTED_TYPES)
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
        made: list[MemoryItem] = []
        replied_to = self._assistant_before(event) if from_user else ""
        asked = picks.offered_in(replied_to)
        said = event.text
        if event.truncated and event.store == "archive":
            # what the person says after a long paste is past the stored copy's cap: its
            # end is read too, as long as the stored copy (reading is not linear in every
            # shape of text, and the archive keeps up to 200,000 characters)
            whole = self.store.archive_text(event.session_id, event.seq) or said
            said = whole if len(whole) <= 2 * len(said) else f"{said}\n{whole[-len(said) :]}"
        text = user_words(said) if from_user else said
        for cand in candidates(text, from_user, bool(asked), offered=asked):
            cand.extra["message"] = text  # (what the message said before the clause)
            if replied_to:
                cand.extra["replied_to"] = replied_to[-_REPLY_TAIL:]
            item = self._store_candidate(event, cand, from_user, report, made)
            if item is not None:
                made.append(item)
        if from_user:
            from convmem.memory.segment import sentences

            self._patch_task_state(event, [s.text for s in sentences(text)])

    def _assistant_before(self, event: StoredEvent) -> str:
        """The assistant's message just before this one, if the person's last word was not
        in between (empty otherwise)."""
        before = self.store.events(
            event.session_id,
            after=max(-1, event.seq - 6),
            until=event.seq - 1,
            types=["assistant/message", "user/message"],
            newest_first=True,
            limit=1,
        )
        if not before or before[0].type != "assistant/message":
            return ""
        return before[0].text

    def _store_candidate(
        self,
        event: StoredEvent,
        cand: Candidate,
        from_user: bool,
        report: ExtractionReport,
        made: list[MemoryItem],
    ) -> MemoryItem | None:
        session_id = event.session_id
        ref = f"seq:{event.seq}"
        link = None
        if from_user:
            link = links.relate(
                self.store,
                session_id,
                cand,
                event.seq,
                made,
                self.others,
                self._newest_items(session_id),
            )
        if cand.retraction:
            if link is not None and link.relation == "retracts":
                self._retract(link.target, event.seq, report)
            return None
        replaced = link.target if link is not None and link.relation == "supersedes" else None
        if cand.kind is None:
            if replaced is None:
                return None  # "make it 250 ms" with nothing to correct says nothing
            cand.kind = replaced.kind
        if replaced is not None and not cand.topic:
            # "make it 60s" is about what it puts right: a later correction of the
            # request timeout must find it by that subject; a bare new value for a limit
            # ("改成1800吧" after "每天最多吃1500大卡") is the limit, not a choice (unlike
            # "let's book the Hilton at $180 a night" after a budget)
            cand.topic = replaced.topic
            # so is a value moved there with a verb of change (the clause names no subject)
            changed = cand.reading is not None and cand.reading.change
            if (
                cand.kind == "decision"
                and replaced.kind == "constraint"
                and (_bare_value(cand) or changed)
            ):
                cand.kind = "constraint"
        if link is not None and link.relation in ("supersedes", "disputes"):
            cand.numbers = completed(cand.numbers, link.target.numbers)
        if replaced is not None and subjects.relative_sign(cand.content):
            _count_changed(cand, replaced)
        content_hash = dedupe_key(f"{cand.kind}\n{cand.content}")
        same = self.store.items_with_hash(session_id, content_hash)
        if any(ref in i.source_refs for i in same):
            return None  # this clause of this event was extracted before (a replay)
        existing = next((i for i in same if i.status == "active"), None)
        if existing is not None:
            if ref not in existing.source_refs:
                refs = sorted({*existing.source_refs, ref}, key=_ref_key)
                self.store.update_item(existing.id, source_refs_json=_json(refs))
                self._remember(replace(existing, source_refs=tuple(refs)))
            return None
        if replaced is not None:
            cand.kind = _restated_kind(cand.kind, cand.content, replaced.kind)
        item_id = stable_id("mem", session_id, event.seq, cand.index, cand.kind)
        if self.store.item(item_id) is not None:
            return None  # already extracted (replay)
        item = MemoryItem(
            id=item_id,
            session_id=session_id,
            kind=cand.kind,
            content=cand.content,
            evidence_type="user_explicit" if from_user else "assistant_proposal",
            topic=cand.topic,
            conditions=tuple(cand.conditions),
            scope=tuple(cand.scope),
            numbers=tuple(cand.numbers),
            source_refs=(ref,),
            supersedes=(replaced.id,) if replaced is not None else (),
            content_hash=content_hash,
            extractor=EXTRACTOR,
            derived_from_seq=event.seq,
        )
        if not self.store.insert_item(item):
            return None
        self._remember(item)
        report.created += 1
        report.items.append(item_id)
        self.store.record_memory_event(
            item_id,
            session_id,
            "created",
            ACTOR,
            {"seq": event.seq, "kind": cand.kind, "why": cand.act.reason},
        )
        if link is None:
            return item
        old = link.target
        self._newest = None  # an item changed status: read them again
        if link.relation == "supersedes":
            self.store.update_item(old.id, status="superseded", superseded_by=item_id)
            self.store.record_memory_event(
                old.id, session_id, "superseded", ACTOR,
                {"by": item_id, "seq": event.seq, "why": link.why},
            )  # fmt: skip
            report.superseded += 1
        elif link.relation == "disputes":
            for disputed, other in ((old.id, item_id), (item_id, old.id)):
                self.store.update_item(disputed, status="disputed")
                self.store.record_memory_event(
                    disputed, session_id, "disputed", ACTOR,
                    {"with": other, "seq": event.seq, "why": link.why},
                )  # fmt: skip
            report.disputed += 1
            item = self.store.item(item_id) or item
        return item

    def _remember(self, item: MemoryItem) -> None:
        """Keep the newest items as the store now holds them: ``item`` was written."""
        if self._newest is None or self._newest[0] != item.session_id:
            return
        kept = [i for i in self._newest[1] if i.id != item.id] + [item]
        # as the store orders them: derivation seq (NULL first), then id
        kept.sort(key=lambda i: (-1 if i.derived_from_seq is None else i.derived_from_seq, i.id))
        self._newest = (item.session_id, kept[-links.NEWEST :])

    def _newest_items(self, session_id: str) -> list[MemoryItem] | None:
        """The session's newest items in force, kept between clauses; None (links reads
        them itself) where other writers can commit between two clauses: PostgreSQL
        runs other sessions' extractors and lifecycle commands beside this transaction,
        SQLite's write transaction keeps every other writer out."""
        if self.store.backend != "sqlite":
            return None
        if self._newest is None or self._newest[0] != session_id:
            self._newest = (
                session_id,
                self.store.items(session_id, links.STATUSES, newest=links.NEWEST),
            )
        return self._newest[1]

    def _retract(self, old: MemoryItem, seq: int, report: ExtractionReport) -> None:
        self._newest = None
        self.store.update_item(old.id, status="retracted")
        self.store.record_memory_event(
            old.id, old.session_id, "retracted", ACTOR,
            {"from": old.status, "seq": seq, "reason": "the person withdrew it"},
        )  # fmt: skip
        report.retracted += 1

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
            said = CueText(sentence)
            if said.search(cues.GOAL):
                new_goal = clip(sentence.strip(), 240)
                if state.goal and state.goal != new_goal:
                    add(state.superseded, state.goal)
                if state.goal != new_goal:
                    state.goal = new_goal
                    changed = True
            if said.search(cues.PROGRESS):
                add(state.progress, sentence)
            if said.search(cues.BLOCKER):
                add(state.blockers, sentence)
            if said.search(cues.OPEN_ITEM):
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
