"""The budgeted, ordered, explainable memory message.

One block per step, built from the latest committed state in a fixed order —
task state, resident skill core, relevant rules, memory items, raw evidence,
notices — until the token budget is spent. Every candidate is costed; whatever
does not fit, or is left out for another reason, is recorded with that reason.
Items whose sources the model can still see are left out, so the block does not
repeat the visible conversation; after a compaction they come back.

The assembler returns text and provenance only (:class:`AssemblyResult`); hosts
turn it into a message. The same state and settings give byte-identical text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from convmem.capture import is_convmem_block
from convmem.core.constants import BLOCK_MARKER
from convmem.core.text import (
    clip,
    collapse_spaces,
    estimate_tokens,
    normalize_text,
    said_part,
    sha256_hex,
)
from convmem.delivery import Budget as _Budget
from convmem.delivery import (
    EarlierBlocks,
    compaction_boundary,
    effective_budget,
    outside_ranges,
    person_locale,
    utf16_units,
)
from convmem.errors import StoreError
from convmem.memory.models import MemoryItem, Scope, StoredEvent
from convmem.privacy import scrub, strip_ansi
from convmem.projects import (
    ALREADY_SHOWN,
    Shown,
    item_day,
    short_session,
    shown_before,
)
from convmem.query import is_task
from convmem.retrieval import EvidenceHit, Retriever, ScoredItem, insufficient
from convmem.wording import (
    HEADINGS,
    METRIC_UNITS,
    PREAMBLE,
    PREAMBLE_COMPACT,
    PREAMBLE_UPDATE,
    WORDS,
)

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore
    from convmem.query import QuerySignals

SECTION_ORDER = ("task", "rules-core", "rules", "memory", "evidence", "notice")

#: The most of the budget each kind of context line may take when there is a query, so
#: that a small budget still has room for the evidence it needs: task state, memory
#: items the query matched, and standing items it did not match. Without a query (a
#: session's start block) there is no evidence to make room for, and no share applies.
SHARES = {"task": 0.1, "matched": 0.15, "standing": 0.1}

#: Below this budget the header shrinks to its essentials, leaving room for content.
COMPACT_HEADER_BELOW = 600


#: Every character a reader may take for the end of a line (str.splitlines' set), after
#: CR LF, which ends one line. Replaced in this order, one after another, they give what
#: one left-to-right pass would (5x faster than a regex over a long quote).
_LINE_BREAKS = ("\r\n", "\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
#: Characters that would let a field forge a label: brackets and the separator.
_LABEL_FORGERY = str.maketrans({"[": "(", "]": ")", "·": "-"})


def one_line(text: str) -> str:
    """``text`` on one line: each line break (U+2028 and its kin too) becomes " ⏎ ", so
    no quoted text can start a line of its own in the block."""
    for line_break in _LINE_BREAKS:
        if line_break in text:
            text = text.replace(line_break, " ⏎ ")
    return text


def label_text(text: str, limit: int = 120) -> str:
    """A field (a session id, a skill name, a path, a time) fit for a ``[…]`` label:
    one line, no brackets or label separators, no control characters, at most
    ``limit`` characters. It can never close its label or open another."""
    text = "".join(" " if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in text)
    return clip(collapse_spaces(text.translate(_LABEL_FORGERY)), limit)


#: What is left of an event beside its replaced clauses that is still worth quoting.
_WORD = re.compile(r"[^\W\d_]+")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")


def says_more(text: str, stale: Sequence[tuple[str, str, str]]) -> bool:
    """Whether an event says more than its replaced or withdrawn clauses: a number or a
    few words besides them ("预算是人均50-100元" beside a dinner time that moved), which
    extraction may have missed. Such an event is quoted, its old clauses marked."""
    rest = text
    for clause, _, _ in stale:
        rest = rest.replace(clause, " ")
    if any(ch.isdigit() for ch in rest):
        return True
    return len(_WORD.findall(_CJK_CHAR.sub(" ", rest))) >= 6 or len(_CJK_CHAR.findall(rest)) >= 8


def day_heading(event: StoredEvent) -> str:
    """The heading of an evidence line's day (none for an event without a time)."""
    return _day_heading(event.time[:10]) if event.time else ""


@lru_cache(maxsize=1024)  # a block's hundred candidate lines share a few days
def _day_heading(day: str) -> str:
    return f"### {label_text(day)}"


def in_time_order(
    lines: list[str] | None, said_when: Mapping[str, tuple[str, str, str, int]]
) -> None:
    """Put a section's evidence lines in the order they were said, each day's lines
    under one heading (undated ones first, under none).

    The budget took them best first; the model reads them as the conversation they
    came from, a question next to its answer, and the day is written once, not on
    every line. ``said_when`` holds each line's (heading, time, session, seq).
    """
    if not lines:
        return
    out, last = lines[:1], ""
    for line in sorted(lines[1:], key=said_when.__getitem__):
        day = said_when[line][0]
        if day and day != last:
            out.append(day)
        last = day
        out.append(line)
    lines[:] = out


@dataclass
class AssemblyResult:
    """The block and everything needed to explain it afterwards."""

    session_id: str
    text: str
    injected: bool
    budget: int
    used_tokens: int
    token_source: str
    query: str = ""
    turn: int | None = None
    step: int | None = None
    trigger: str = "pre-step"
    sections: list[dict[str, Any]] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    omitted: list[dict[str, Any]] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: The store failed while the block was built (damaged, locked): nothing is logged.
    store_failed: bool = field(default=False, compare=False)

    @property
    def content_hash(self) -> str | None:
        return sha256_hex(self.text) if self.text else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "injected": self.injected,
            "text": self.text,
            "budget": self.budget,
            "used_tokens": self.used_tokens,
            "token_source": self.token_source,
            "query": self.query,
            "turn": self.turn,
            "step": self.step,
            "trigger": self.trigger,
            "sections": self.sections,
            "items": self.items,
            "omitted": self.omitted,
            "reasons": self.reasons,
            "errors": self.errors,
            "content_hash": self.content_hash,
        }


class Assembler:
    """Builds the memory block for one session and step."""

    def __init__(self, store: MemoryStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.locale_setting = str(settings["assembly.locale"])
        self._use_locale("zh" if self.locale_setting == "zh" else "en")
        self.retriever = Retriever(store, settings)
        self._scope = Scope("")
        #: block lines of other sessions' evidence, and the exact ids they stand for
        self._line_ids: dict[str, str] = {}
        self._said_items: list[MemoryItem] = []
        #: tokens spent per share of the budget (see SHARES)
        self._spent: dict[str, int] = {}
        self._shared = True

    def _use_locale(self, locale: str) -> None:
        self.locale = locale
        self.words = WORDS[locale]
        self.headings = HEADINGS[locale]

    def assemble(
        self,
        session_id: str,
        query: str,
        *,
        visible: Sequence[str] | None = None,
        turn: int | None = None,
        step: int | None = None,
        budget: int | None = None,
        token_meter: Callable[[str], int] | None = None,
        trigger: str = "pre-step",
        max_units: int | None = None,
        earlier: EarlierBlocks | None = None,
        shadowed: Sequence[tuple[int, int]] | None = None,
        share_units: int | None = None,
        project: str | None = None,
    ) -> AssemblyResult:
        """Build the block for one step of ``session_id``.

        ``max_units`` caps its length in UTF-16 units (a host's limit, see
        :mod:`convmem.delivery`), ``share_units`` too (convmem's share of the context;
        a correction of what an earlier block shows may exceed it); ``earlier`` holds
        the lines of convmem blocks still in the model's context (None: there is none),
        which this block does not repeat.
        ``shadowed`` are the seq ranges a host's compactions hid (DSH says exactly which);
        every other event counts as visible. ``project`` names the project of a session
        the store does not know yet (what a new session of it would be given); a known
        session's own project counts.
        """
        # the query is the host's text (a prompt): it is logged, so it is scrubbed as
        # captured text is (normalized first, so that a control character cannot hide
        # a secret or a tag) and cut to what an event may hold
        query = normalize_text(
            scrub(
                normalize_text(strip_ansi(query)),
                private=bool(self.settings["capture.drop_private"]),
                secrets=bool(self.settings["capture.redact_secrets"]),
                limit=int(self.settings["capture.max_text_chars"]),
            )
        )[: int(self.settings["capture.max_text_chars"])]
        total, raised = effective_budget(self.settings, budget)
        meter = token_meter or estimate_tokens
        result = AssemblyResult(
            session_id,
            "",
            False,
            total,
            0,
            "exact" if token_meter else "estimate",
            query=query,
            turn=turn,
            step=step,
            trigger=trigger,
        )
        if raised:
            result.reasons.append(raised)
        try:
            self._scope = self.retriever.scope(session_id, project)
            # the ranked evidence query starts first: a long session's runs on the side
            # while everything before the evidence is read here
            signals = self.retriever.signals(query)
            self.retriever.prefetch_evidence(signals, self._scope)
            self._use_locale(person_locale(self.store, session_id, self.locale_setting))
            self._line_ids = {}
            self._said_items = []
            self._spent = {}
            self._shared = True
            self._build(
                result,
                session_id,
                query,
                signals,
                visible,
                total,
                meter,
                (max_units, share_units),
                earlier,
                shadowed,
            )
        except Exception as exc:  # assembly failures are reported, never raised to a host
            result.text, result.injected, result.used_tokens = "", False, 0
            result.errors.append(f"{type(exc).__name__}: {exc}")
            result.store_failed = isinstance(exc, StoreError)
        return result

    # --- building -----------------------------------------------------------------------------

    def _build(
        self,
        result: AssemblyResult,
        session_id: str,
        query: str,
        signals: QuerySignals,
        visible: Sequence[str] | None,
        total: int,
        meter: Callable[[str], int],
        caps: tuple[int | None, int | None] = (None, None),
        earlier: EarlierBlocks | None = None,
        shadowed: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        if earlier is not None:
            preamble = PREAMBLE_UPDATE[self.locale]
        else:
            preamble = (PREAMBLE_COMPACT if total < COMPACT_HEADER_BELOW else PREAMBLE)[self.locale]
        header = f"{BLOCK_MARKER} session {label_text(session_id)}\n{preamble}"
        b = _Budget(total, meter, caps[0], earlier, caps[1])
        header_cost = b.cost(header)
        if header_cost > total:
            result.reasons.append(f"budget {total} is smaller than the header ({header_cost})")
            return
        b.used = header_cost
        b.units = utf16_units(header)
        scope = self._scope
        if (
            self.store.checkpoint(session_id).last_event_seq < 0
            and not self.store.has_skills()
            and not scope.wide
        ):
            result.reasons.append("nothing to inject (assembly.skip_when_empty): empty session")
            return
        policy = str(self.settings["compatibility.compaction_policy"])
        # nothing compacted yet: the host still shows the whole conversation, so the
        # task state and a bare "no evidence" say nothing the model cannot see
        if shadowed is not None and visible is None and policy != "none":
            is_visible = outside_ranges(shadowed)
            b.shows_all = not shadowed
        else:
            is_visible = self._visibility(session_id, visible, policy)
            b.shows_all = (
                visible is None
                and policy != "none"
                and self._compaction_boundary(session_id) is None
            )
        self._shared = not signals.empty
        if b.shows_all:
            b.omit("task", "task", "the host still shows the whole conversation")
        else:
            self._task_section(b, session_id)
        self._rules_sections(b, query)
        retrieval = self.retriever.retrieve(session_id, signals, scope=scope)
        shown: list[ScoredItem] = []
        said: dict[str, str] = {}  # item texts the model sees: quoting them again adds nothing
        shown_earlier = shown_before(self.store, session_id, visible) if scope.wide else Shown()
        for s in retrieval.items:
            own = s.item.session_id == session_id
            # a correction of what an earlier block showed goes out, visible or not
            changed = b.replaces_shown(s.item.id, s.item.supersedes) or bool(
                shown_earlier.items.intersection(s.item.supersedes)
            )
            if own and is_visible(s.item.source_seqs) and not changed:
                b.omit(s.item.id, "memory", "all its sources are visible in the current step")
                continue
            if not own and s.item.id in shown_earlier.items:
                b.omit(s.item.id, "memory", ALREADY_SHOWN)
                said[collapse_spaces(s.item.content)] = s.item.id
                self._said_items.append(s.item)
                continue
            b.answer_first(s.item.id, s.matched)
            line = self._item_line(s.item, None if own else self._origin(s.item))
            share = "matched" if s.matched else "standing"
            if self._within(b, share, "memory", self.headings["memory"], line, s.item.id):
                shown.append(s)
        for s in retrieval.omitted:
            b.omit(s.item.id, "memory", s.reason or "omitted")
        max_ev = int(self.settings["assembly.max_evidence"])
        hits = self.retriever.retrieve_evidence(session_id, retrieval.signals, shown, max_ev, scope)
        quoted = 0
        # replaced or withdrawn values must never read as current through their source
        superseded: list[MemoryItem] = []
        for sid in dict.fromkeys(h.event.session_id for h in hits):
            seqs = [h.event.seq for h in hits if h.event.session_id == sid]
            superseded += self.store.items(sid, ("superseded", "retracted"), from_seqs=seqs)
        replaced = self._superseded_only_sources(superseded)
        stale = self._superseded_sentences(superseded)
        said |= {collapse_spaces(s.item.content): s.item.id for s in shown}
        # an event can only read the same as an item it is a source of
        said_in = {(i.session_id, q) for i in self._said_items for q in i.source_seqs}
        said_in |= {(s.item.session_id, q) for s in shown for q in s.item.source_seqs}
        said_when: dict[str, tuple[str, str, str, int]] = {}
        marked: set[str] = set()  # replaced items whose clause a quoted line marks
        for hit in hits:
            own = hit.event.session_id == session_id
            where = (hit.event.session_id, hit.event.seq)
            ident = f"seq:{hit.event.seq}" if own else f"{hit.event.session_id}/seq:{hit.event.seq}"
            same = said.get(collapse_spaces(hit.text)) if where in said_in else None
            if same is not None:
                b.omit(ident, "evidence", f"same text as {same}")
            elif where in replaced and not says_more(hit.text, stale.get(where, [])):
                b.omit(
                    ident,
                    "evidence",
                    f"states only superseded or retracted values ({replaced[where]})",
                )
            elif not self.retriever.quotable(hit.event):
                b.omit(ident, "evidence", self.retriever.unquotable_reason(hit.event))
            elif own and is_visible((hit.event.seq,)):
                b.omit(ident, "evidence", "visible in the current step")
            elif not own and (short_session(where[0]), where[1]) in shown_earlier.events:
                b.omit(ident, "evidence", ALREADY_SHOWN)
            elif quoted >= max_ev:
                b.omit(ident, "evidence", f"over assembly.max_evidence {max_ev}")
            elif b.add(
                "evidence",
                self.headings["evidence"],
                line := self._evidence_line(hit, stale.get(where, []), None if own else hit.event),
                ident,
                day := day_heading(hit.event),
            ):
                quoted += 1
                said_when[line] = (day, hit.event.time or "", hit.event.session_id, hit.event.seq)
                marked.update(i for _, i, status in stale.get(where, []) if status == "superseded")
                if not own:
                    self._line_ids[line] = f"ev {ident}"
        in_time_order(b.sections.get("evidence"), said_when)
        # standing items and their sources are context, not evidence for this query
        found = any(s.matched for s in retrieval.items) or any(
            self.retriever.quotable(h.event) and self.retriever.supports(retrieval.signals, h)
            for h in hits
        )
        self._notice_section(b, session_id, shown, retrieval, policy, found, query, marked)

        result.reasons += b.delivery_reasons()
        content = [s for s in SECTION_ORDER if s in b.sections and s != "notice"]
        if not content and self.settings["assembly.skip_when_empty"] and not self._notice_only(b):
            result.reasons.append("nothing to inject (assembly.skip_when_empty)")
            result.omitted = b.omitted
            return
        parts = [header] + ["\n".join(b.sections[s]) for s in SECTION_ORDER if s in b.sections]
        result.text = "\n".join(parts)
        result.injected = True
        result.used_tokens = b.used
        result.sections = [
            {"name": s, "tokens": b.section_tokens[s], "lines": len(b.sections[s]) - 1}
            for s in SECTION_ORDER
            if s in b.sections
        ]
        result.items = [line_id for line_id in self._ids(b)]
        result.omitted = b.omitted

    def _superseded_only_sources(
        self, superseded: Sequence[MemoryItem]
    ) -> dict[tuple[str, int], str]:
        """Events (session, seq) whose every item was superseded or retracted: quoting
        them would revive old values."""
        dead: dict[tuple[str, int], str] = {}
        for item in superseded:
            for seq in item.source_seqs:
                dead.setdefault((item.session_id, seq), item.id)
        alive: set[tuple[str, int]] = set()
        for sid in dict.fromkeys(key[0] for key in dead):
            seqs = [seq for s, seq in dead if s == sid]
            for sources in self.store.item_sources(sid, ("active", "disputed"), seqs):
                alive.update((sid, seq) for seq in sources)
        return {key: ident for key, ident in dead.items() if key not in alive}

    def _notice_only(self, b: _Budget) -> bool:
        """Notices worth a block on their own: a repair reminder, or missing evidence
        when something was compacted away."""
        ids = b.notice_ids
        return "notice:repair" in ids or ("notice:insufficient" in ids and not b.shows_all)

    def _ids(self, b: _Budget) -> list[str]:
        """The labels of the lines the block carries (``mem …``, ``ev seq:…``, rules).

        A notice names a superseded item only to say it was replaced: that item is
        not included (explain lists it as omitted), so notices name no item here.
        """
        out = []
        for section in SECTION_ORDER:
            for line in b.sections.get(section, [])[1:]:
                if line.startswith("- ["):
                    tag = line[3 : line.index("]")] if "]" in line else ""
                    label = tag.split(" · ")[0]
                    if not (section == "notice" and label.startswith("mem ")):
                        out.append(self._line_ids.get(line, label))
        return out

    def _visibility(
        self, session_id: str, visible: Sequence[str] | None, policy: str
    ) -> Callable[[Sequence[int]], bool]:
        """A predicate: are all these source events still visible to the model?"""
        if visible is not None:
            # An event is visible when a visible message is that event, or when one of
            # convmem's own blocks (re-injected earlier) quotes it. Any other message
            # that merely quotes it (a compaction summary, which may quote it out of
            # context or wrongly) does not show the event itself.
            texts = {collapse_spaces(v) for v in visible if v}
            blocks = [t for t in texts if is_convmem_block(t)]
            cache: dict[int, bool] = {}

            def in_messages(seqs: Sequence[int]) -> bool:
                if not seqs or not texts:
                    return False
                for ev in self.store.events_by_seq(session_id, [s for s in seqs if s not in cache]):
                    body = collapse_spaces(ev.text)
                    cache[ev.seq] = bool(body) and (body in texts or any(body in t for t in blocks))
                return all(cache.get(s, False) for s in seqs)

            return in_messages
        if policy == "none":
            return lambda seqs: False
        boundary = self._compaction_boundary(session_id)
        if boundary is None:
            return lambda seqs: bool(seqs)  # nothing compacted yet: the host still shows it all
        return lambda seqs: bool(seqs) and all(s > boundary for s in seqs)

    def _compaction_boundary(self, session_id: str) -> int | None:
        """The start of the latest compaction that produced a summary (see delivery)."""
        return compaction_boundary(self.store, session_id)

    # --- sections -------------------------------------------------------------------------------

    def _task_section(self, b: _Budget, session_id: str) -> None:
        state = self.store.task_state(session_id)
        if state.is_empty():
            return
        w, heading = self.words, self.headings["task"]
        if state.goal:
            line = f"- {w['goal']}: {one_line(state.goal)}"
            self._within(b, "task", "task", heading, line, "task:goal")
        for key, values in (
            ("progress", state.progress),
            ("blockers", state.blockers),
            ("open", state.open_items),
        ):
            for n, value in enumerate(values):
                line = f"- {w[key]}: {one_line(value)}"
                self._within(b, "task", "task", heading, line, f"task:{key}:{n}")

    def _within(
        self, b: _Budget, share: str, section: str, heading: str, line: str, ident: str
    ) -> bool:
        """Add a line unless lines of its kind have spent their share of the budget. The
        first line of each kind (the goal, the best matched item, the top standing item)
        is not held back by its share: a small budget still shows it when it fits."""
        if not self._shared:
            return b.add(section, heading, line, ident)
        cap = int(b.total * SHARES[share])
        need = b.cost(line) + (0 if section in b.sections else b.cost(heading))
        spent = self._spent.get(share, 0)
        # a correction of what an earlier block shows goes out whatever the share
        if spent and spent + need > cap and ident not in b.corrections:
            b.omit(
                ident,
                section,
                f"{share} lines may take {SHARES[share]:.0%} of the budget ({cap} tokens),"
                " so that evidence fits",
            )
            return False
        before = b.used
        if not b.add(section, heading, line, ident):
            return False
        if b.used > before:  # a line an earlier block still shows costs nothing here
            self._spent[share] = spent + (b.used - before)
        return True

    def _rules_sections(self, b: _Budget, query: str) -> None:
        if not self.store.has_skills():
            return
        from convmem.skills import SkillManager

        skills = SkillManager(self.store, self.settings)
        for n, (name, line) in enumerate(skills.resident_core()):
            text = f"- [skill {label_text(name)}] {one_line(line)}"
            b.add("rules-core", self.headings["rules-core"], text, f"core:{name}:{n}")
        limit = int(self.settings["skills.max_rules"])
        for rule in skills.select_rules(query, limit):
            text = f"- [{label_text(rule.label, 300)}] {one_line(rule.render())}"
            b.add("rules", self.headings["rules"], text, rule.id)

    def _origin(self, item: MemoryItem) -> str:
        """``2026-11-30 · earlier session 3c1f9a52``: an item of another session."""
        day = item_day(item)
        who = f"{self.words['earlier']} {short_session(item.session_id)}"
        return f"{day} · {who}" if day else who

    def _item_line(self, item: MemoryItem, elsewhere: str | None = None) -> str:
        w = self.words
        label = f"mem {item.id} · {item.kind} · {w.get(item.evidence_type, item.evidence_type)}"
        if item.status == "disputed":
            label += f" · {w['disputed']}"
        if elsewhere is not None:
            label += f" · {elsewhere}"
        line = f"- [{label}] {one_line(item.content)}"
        notes = []
        if item.conditions:
            notes.append(f"{w['conditions']}: {', '.join(item.conditions)}")
        if item.scope:
            notes.append(f"{w['scope']}: {', '.join(item.scope)}")
        for n in item.numbers:
            if n.get("type") in ("version", "date", "time"):
                continue  # not a measurement: nothing to qualify
            if not n.get("conditions") and (not n.get("unit") or n.get("unit") in METRIC_UNITS):
                notes.append(w["number_warning"].format(raw=n["raw"]))
        if item.evidence_type == "assistant_proposal":
            notes.append(w["proposal_warning"])
        refs = " ".join(f"[ev {r}]" for r in item.source_refs)
        if notes:
            line += f" ({'; '.join(notes)})"
        return f"{line} {refs}".rstrip()

    def _superseded_sentences(
        self, superseded: Sequence[MemoryItem]
    ) -> dict[tuple[str, int], list[tuple[str, str, str]]]:
        """Per source event, the (clause, item id, status) of values replaced or withdrawn."""
        out: dict[tuple[str, int], list[tuple[str, str, str]]] = {}
        for item in superseded:
            for seq in item.source_seqs:
                out.setdefault((item.session_id, seq), []).append(
                    (said_part(item.content), item.id, item.status)
                )
        return out

    def _evidence_line(
        self,
        hit: EvidenceHit,
        stale: Sequence[tuple[str, str, str]] = (),
        elsewhere: StoredEvent | None = None,
    ) -> str:
        ev = hit.event
        limit = int(self.settings["assembly.max_evidence_chars"])
        when = ""  # the day is the heading the line sits under (day_heading)
        if elsewhere is not None:
            when = f" · {self.words['earlier']} {short_session(elsewhere.session_id)}"
        who = "" if ev.type == "user/message" else f" · {ev.type}"
        body = hit.text
        for clause, item_id, status in stale:
            # quote faithfully, but never let a replaced or withdrawn value read as current
            word = self.words["stale" if status == "superseded" else "withdrawn"]
            body = body.replace(clause, f"⟦{word} {item_id}⟧")
        if len(body) > limit:
            body = self._pasted_left_out(body)
        # one_line only lengthens, so the first limit + 1 characters decide the clip
        text = clip(one_line(body[: limit + 1]), limit)
        return f"- [ev seq:{ev.seq}{who}{when}] {text}"

    def _pasted_left_out(self, body: str) -> str:
        """A long message with what it pasted (a log, a trace, code) marked as left out:
        the person's own words after a paste fit in the quote ("…traceback… The redis
        call should time out after 200ms." kept only the traceback's start)."""
        from convmem.memory.segment import (
            may_hold_program_output,
            printed_by_a_program,
            prose_lines,
        )

        if not may_hold_program_output(body):
            return body  # nothing a program printed: nothing to leave out
        prose = prose_lines(body)
        if not prose:
            return body
        out, pos, left_out = [], 0, False
        for start, end in [*((p.start, p.end) for p in prose), (len(body), len(body))]:
            gap = body[pos:start]
            lines = [line for line in gap.splitlines() if line.strip()]
            if lines and printed_by_a_program(lines):
                out.append(f"⟦{self.words['pasted'].format(n=len(lines))}⟧")
                left_out = True
            else:
                out.append(gap.strip("\n"))  # a table or a list of the person's own stays
            out.append(body[start:end])
            pos = end
        return "\n".join(part for part in out if part) if left_out else body

    def _notice_section(
        self,
        b: _Budget,
        session_id: str,
        shown: list[ScoredItem],
        retrieval: Any,
        policy: str,
        found: bool,
        query: str,
        marked: set[str],
    ) -> None:
        w, heading = self.words, self.headings["notice"]
        shown_ids = {s.item.id for s in shown}
        # what a shown correction replaced, and what a quoted line marks as replaced:
        # each says what holds now (its content too, when no line of the block shows it)
        old_ids = sorted({old for s in shown for old in s.item.supersedes} | marked)
        for old in self.store.items_by_id(old_ids):
            end = self._chain_end(old) if old.id in marked else None
            if end is None and old.superseded_by not in shown_ids:
                continue
            new = end.id if end is not None else str(old.superseded_by)
            refs = ", ".join(old.source_refs)
            withdrawn = end is not None and end.status == "retracted"
            wording = w["then_withdrawn" if withdrawn else "superseded"]
            text = wording.format(old=clip(old.content, 160), refs=refs, new=new)
            if end is not None and not withdrawn and new not in shown_ids:
                text += f" “{clip(end.content, 160)}”"
            line = f"- [mem {old.id}] {one_line(text)}"
            b.add("notice", heading, line, f"notice:{old.id}")
        disputed = self.store.count_items(self._scope, "disputed")
        if disputed:
            newest = [
                i
                for sid in self._scope.sessions
                for i in reversed(self.store.items(sid, ("disputed",), newest=6))
            ][:6]
            ids = ", ".join(i.id for i in reversed(newest))
            line = w["dispute_count"].format(n=disputed, ids=ids)
            b.add("notice", heading, f"- {line}", "notice:disputed")
        if self.settings["validation.enabled"]:
            from convmem.validation import Validator

            reminder = Validator(self.store, self.settings).repair_reminder(session_id)
            if reminder:
                b.add("notice", heading, f"- [repair] {one_line(reminder)}", "notice:repair")
        if policy == "none":
            b.add("notice", heading, f"- {w['policy_none']}", "notice:policy")
        asked = retrieval.signals.terms or retrieval.signals.short_terms
        if not found and asked and not is_task(query):
            b.add("notice", heading, f"- {insufficient(query, self.locale)}", "notice:insufficient")

    def _chain_end(self, item: MemoryItem) -> MemoryItem | None:
        """The end of a superseded item's chain of replacements: the item in force now,
        or the one withdrawn since (None when the chain breaks)."""
        chain = self.store.replacement_chain(item.id)
        seen = {item.id}
        status, after = item.status, item.superseded_by
        end = item.id
        while status == "superseded" and after:
            if after not in chain or after in seen:
                return None
            seen.add(after)
            end = after
            status, after = chain[after]
        if status not in ("active", "disputed", "retracted"):
            return None
        return item if end == item.id else self.store.item(end)

    # --- logging ------------------------------------------------------------------------------

    def log(self, result: AssemblyResult, message_seq: int | None = None) -> int | None:
        """Persist one attempt in ``assembly_logs`` (with retention) and move the cursor;
        not one the store failed (None): a damaged store is not written to."""
        if result.store_failed:
            return None
        retention = int(self.settings["diagnostics.assembly_log_retention"])
        with self.store.transaction():
            log_id = self.store.insert_assembly_log(
                result.as_dict() | {"message_seq": message_seq}, retention
            )
            newest = self.store.checkpoint(result.session_id).last_event_seq
            if result.injected and newest >= 0:
                self.store.advance_checkpoint(result.session_id, "last_assembly_seq", newest)
        return log_id
