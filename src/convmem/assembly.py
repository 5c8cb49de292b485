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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from convmem.core.constants import BLOCK_MARKER, COMPACTION_EVENT_TYPES
from convmem.core.text import clip, collapse_spaces, estimate_tokens, normalize_text, sha256_hex
from convmem.memory.models import MemoryItem, Scope, StoredEvent
from convmem.privacy import scrub
from convmem.projects import (
    ALREADY_SHOWN,
    Shown,
    item_day,
    short_session,
    shown_before,
)
from convmem.retrieval import EvidenceHit, Retriever, ScoredItem, insufficient
from convmem.wording import HEADINGS, METRIC_UNITS, PREAMBLE, PREAMBLE_COMPACT, WORDS

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore

SECTION_ORDER = ("task", "rules-core", "rules", "memory", "evidence", "notice")

#: The most of the budget each kind of context line may take when there is a query, so
#: that a small budget still has room for the evidence it needs: task state, memory
#: items the query matched, and standing items it did not match. Without a query (a
#: session's start block) there is no evidence to make room for, and no share applies.
SHARES = {"task": 0.1, "matched": 0.15, "standing": 0.1}

#: Below this budget the header shrinks to its essentials, leaving room for content.
COMPACT_HEADER_BELOW = 600


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


class _Budget:
    """Adds lines while they fit; records every omission."""

    def __init__(self, total: int, meter: Callable[[str], int]) -> None:
        self.total, self.meter, self.used = total, meter, 0
        self.sections: dict[str, list[str]] = {}
        self.section_tokens: dict[str, int] = {}
        self.omitted: list[dict[str, Any]] = []
        self.notice_ids: list[str] = []

    def cost(self, text: str) -> int:
        return self.meter(text + "\n")

    def add(self, section: str, heading: str, line: str, ident: str) -> bool:
        need = self.cost(line)
        if section not in self.sections:
            need += self.cost(heading)
        if self.used + need > self.total:
            self.omitted.append(
                {
                    "id": ident,
                    "section": section,
                    "tokens": need,
                    "reason": f"needs {need} tokens, {self.total - self.used} left in the budget",
                }
            )
            return False
        if section not in self.sections:
            self.sections[section] = [heading]
        self.sections[section].append(line)
        if section == "notice":
            self.notice_ids.append(ident)
        self.used += need
        self.section_tokens[section] = self.section_tokens.get(section, 0) + need
        return True

    def omit(self, ident: str, section: str, reason: str) -> None:
        self.omitted.append({"id": ident, "section": section, "reason": reason})


class Assembler:
    """Builds the memory block for one session and step."""

    def __init__(self, store: MemoryStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.locale = str(settings["assembly.locale"])
        self.words = WORDS[self.locale]
        self.headings = HEADINGS[self.locale]
        self.retriever = Retriever(store, settings)
        self._scope = Scope("")
        #: block lines of other sessions' evidence, and the exact ids they stand for
        self._line_ids: dict[str, str] = {}
        self._said_items: list[MemoryItem] = []
        #: tokens spent per share of the budget (see SHARES)
        self._spent: dict[str, int] = {}
        self._shared = True

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
        project: str | None = None,
    ) -> AssemblyResult:
        """Build the block for one step of ``session_id``.

        ``project`` names the project of a session the store does not know yet (what a
        new session of it would be given); a known session's own project counts.
        """
        # the query is the host's text (a prompt): it is logged, so it is scrubbed too
        query = normalize_text(
            scrub(
                query,
                private=bool(self.settings["capture.drop_private"]),
                secrets=bool(self.settings["capture.redact_secrets"]),
            )
        )
        total = int(budget) if budget is not None else self.settings.budget
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
        try:
            self._scope = self.retriever.scope(session_id, project)
            self._line_ids = {}
            self._said_items = []
            self._spent = {}
            self._shared = True
            self._build(result, session_id, query, visible, total, meter)
        except Exception as exc:  # assembly failures are reported, never raised to a host
            result.text, result.injected, result.used_tokens = "", False, 0
            result.errors.append(f"{type(exc).__name__}: {exc}")
        return result

    # --- building -----------------------------------------------------------------------------

    def _build(
        self,
        result: AssemblyResult,
        session_id: str,
        query: str,
        visible: Sequence[str] | None,
        total: int,
        meter: Callable[[str], int],
    ) -> None:
        preamble = (PREAMBLE_COMPACT if total < COMPACT_HEADER_BELOW else PREAMBLE)[self.locale]
        header = f"{BLOCK_MARKER} session {session_id}\n{preamble}"
        b = _Budget(total, meter)
        header_cost = b.cost(header)
        if header_cost > total:
            result.reasons.append(f"budget {total} is smaller than the header ({header_cost})")
            return
        b.used = header_cost
        scope = self._scope
        if (
            self.store.checkpoint(session_id).last_event_seq < 0
            and not self.store.has_skills()
            and not scope.wide
        ):
            result.reasons.append("nothing to inject (assembly.skip_when_empty): empty session")
            return
        policy = str(self.settings["compatibility.compaction_policy"])
        is_visible = self._visibility(session_id, visible, policy)

        signals = self.retriever.signals(query)
        self._shared = not signals.empty
        self._task_section(b, session_id)
        self._rules_sections(b, query)
        retrieval = self.retriever.retrieve(session_id, signals, scope=scope)
        shown: list[ScoredItem] = []
        said: dict[str, str] = {}  # item texts the model sees: quoting them again adds nothing
        earlier = shown_before(self.store, session_id, visible) if scope.wide else Shown()
        for s in retrieval.items:
            own = s.item.session_id == session_id
            # a correction of what an earlier block showed goes out, visible or not
            corrects = bool(earlier.items.intersection(s.item.supersedes))
            if own and is_visible(s.item.source_seqs) and not corrects:
                b.omit(s.item.id, "memory", "all its sources are visible in the current step")
                continue
            if not own and s.item.id in earlier.items:
                b.omit(s.item.id, "memory", ALREADY_SHOWN)
                said[collapse_spaces(s.item.content)] = s.item.id
                self._said_items.append(s.item)
                continue
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
        for hit in hits:
            own = hit.event.session_id == session_id
            where = (hit.event.session_id, hit.event.seq)
            ident = f"seq:{hit.event.seq}" if own else f"{hit.event.session_id}/seq:{hit.event.seq}"
            same = said.get(collapse_spaces(hit.text)) if where in said_in else None
            if same is not None:
                b.omit(ident, "evidence", f"same text as {same}")
            elif where in replaced:
                b.omit(
                    ident,
                    "evidence",
                    f"states only superseded or retracted values ({replaced[where]})",
                )
            elif not self.retriever.quotable(hit.event):
                b.omit(
                    ident,
                    "evidence",
                    f"event type {hit.event.type} is not inline-quotable (assembly.evidence_types)",
                )
            elif own and is_visible((hit.event.seq,)):
                b.omit(ident, "evidence", "visible in the current step")
            elif not own and (short_session(where[0]), where[1]) in earlier.events:
                b.omit(ident, "evidence", ALREADY_SHOWN)
            elif quoted >= max_ev:
                b.omit(ident, "evidence", f"over assembly.max_evidence {max_ev}")
            elif b.add(
                "evidence",
                self.headings["evidence"],
                line := self._evidence_line(hit, stale.get(where, []), None if own else hit.event),
                ident,
            ):
                quoted += 1
                if not own:
                    self._line_ids[line] = f"ev {ident}"
        # standing items and their sources are context, not evidence for this query
        found = any(s.matched for s in retrieval.items) or any(
            self.retriever.quotable(h.event) and self.retriever.supports(retrieval.signals, h)
            for h in hits
        )
        self._notice_section(b, session_id, shown, retrieval, policy, found, query)

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
            for item in self.store.items(sid, ("active", "disputed"), from_seqs=seqs):
                alive.update((sid, seq) for seq in item.source_seqs)
        return {key: ident for key, ident in dead.items() if key not in alive}

    def _notice_only(self, b: _Budget) -> bool:
        """Notices worth a block on their own: a repair reminder or missing evidence."""
        return any(ident in ("notice:repair", "notice:insufficient") for ident in b.notice_ids)

    def _ids(self, b: _Budget) -> list[str]:
        out = []
        for section in SECTION_ORDER:
            for line in b.sections.get(section, [])[1:]:
                if line.startswith("- ["):
                    tag = line[3 : line.index("]")] if "]" in line else ""
                    out.append(self._line_ids.get(line, tag.split(" · ")[0]))
        return out

    def _visibility(
        self, session_id: str, visible: Sequence[str] | None, policy: str
    ) -> Callable[[Sequence[int]], bool]:
        """A predicate: are all these source events still visible to the model?"""
        if visible is not None:
            texts = [collapse_spaces(v) for v in visible if v]
            cache: dict[int, bool] = {}

            def in_messages(seqs: Sequence[int]) -> bool:
                if not seqs or not texts:
                    return False
                for ev in self.store.events_by_seq(session_id, [s for s in seqs if s not in cache]):
                    body = collapse_spaces(ev.text)
                    cache[ev.seq] = bool(body) and any(body in t for t in texts)
                return all(cache.get(s, False) for s in seqs)

            return in_messages
        if policy == "none":
            return lambda seqs: False
        boundary = self._compaction_boundary(session_id)
        if boundary is None:
            return lambda seqs: bool(seqs)  # nothing compacted yet: the host still shows it all
        return lambda seqs: bool(seqs) and all(s > boundary for s in seqs)

    def _compaction_boundary(self, session_id: str) -> int | None:
        """The start of the latest compaction that produced a summary.

        A host may retry and fail right after a good compaction; a failed attempt
        (no summary) hides nothing, so it must not move the boundary.
        """
        summaries = self.store.events(
            session_id, types=["compaction/summary"], newest_first=True, limit=1
        )
        if not summaries:
            starts = self.store.events(
                session_id, types=list(COMPACTION_EVENT_TYPES), newest_first=True, limit=1
            )
            return starts[0].seq if starts else None
        summary = summaries[0].seq
        start = self.store.events(
            session_id, until=summary, types=["compaction/start"], newest_first=True, limit=1
        )
        return start[0].seq if start else summary

    # --- sections -------------------------------------------------------------------------------

    def _task_section(self, b: _Budget, session_id: str) -> None:
        state = self.store.task_state(session_id)
        if state.is_empty():
            return
        w, heading = self.words, self.headings["task"]
        if state.goal:
            self._within(b, "task", "task", heading, f"- {w['goal']}: {state.goal}", "task:goal")
        for key, values in (
            ("progress", state.progress),
            ("blockers", state.blockers),
            ("open", state.open_items),
        ):
            for n, value in enumerate(values):
                line = f"- {w[key]}: {value}"
                self._within(b, "task", "task", heading, line, f"task:{key}:{n}")

    def _within(
        self, b: _Budget, share: str, section: str, heading: str, line: str, ident: str
    ) -> bool:
        """Add a line unless lines of its kind have spent their share of the budget."""
        if not self._shared:
            return b.add(section, heading, line, ident)
        cap = int(b.total * SHARES[share])
        need = b.cost(line) + (0 if section in b.sections else b.cost(heading))
        spent = self._spent.get(share, 0)
        if spent + need > cap:
            b.omit(
                ident,
                section,
                f"{share} lines may take {SHARES[share]:.0%} of the budget ({cap} tokens),"
                " so that evidence fits",
            )
            return False
        if not b.add(section, heading, line, ident):
            return False
        self._spent[share] = spent + need
        return True

    def _rules_sections(self, b: _Budget, query: str) -> None:
        if not self.store.has_skills():
            return
        from convmem.skills import SkillManager

        skills = SkillManager(self.store, self.settings)
        for n, (name, line) in enumerate(skills.resident_core()):
            b.add(
                "rules-core", self.headings["rules-core"], f"- [{name}] {line}", f"core:{name}:{n}"
            )
        limit = int(self.settings["skills.max_rules"])
        for rule in skills.select_rules(query, limit):
            b.add("rules", self.headings["rules"], f"- [{rule.label}] {rule.render()}", rule.id)

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
        line = f"- [{label}] {item.content}"
        notes = []
        if item.conditions:
            notes.append(f"{w['conditions']}: {', '.join(item.conditions)}")
        if item.scope:
            notes.append(f"{w['scope']}: {', '.join(item.scope)}")
        for n in item.numbers:
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
                    (item.content, item.id, item.status)
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
        when = f" · {ev.time[:10]}" if ev.time else ""
        if elsewhere is not None:
            when += f" · {self.words['earlier']} {short_session(elsewhere.session_id)}"
        who = "" if ev.type == "user/message" else f" · {ev.type}"
        body = hit.text
        for clause, item_id, status in stale:
            # quote faithfully, but never let a replaced or withdrawn value read as current
            word = self.words["stale" if status == "superseded" else "withdrawn"]
            body = body.replace(clause, f"⟦{word} {item_id}⟧")
        text = clip(body.replace("\n", " ⏎ "), limit)
        return f"- [ev seq:{ev.seq}{who}{when}] {text}"

    def _notice_section(
        self,
        b: _Budget,
        session_id: str,
        shown: list[ScoredItem],
        retrieval: Any,
        policy: str,
        found: bool,
        query: str,
    ) -> None:
        w, heading = self.words, self.headings["notice"]
        shown_ids = {s.item.id for s in shown}
        old_ids = sorted({old for s in shown for old in s.item.supersedes})
        for old in self.store.items_by_id(old_ids):
            if old.superseded_by in shown_ids:
                refs = ", ".join(old.source_refs)
                text = w["superseded"].format(
                    old=clip(old.content, 160), refs=refs, new=old.superseded_by
                )
                b.add("notice", heading, f"- [mem {old.id}] {text}", f"notice:{old.id}")
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
                b.add("notice", heading, f"- [repair] {reminder}", "notice:repair")
        if policy == "none":
            b.add("notice", heading, f"- {w['policy_none']}", "notice:policy")
        if not found and (retrieval.signals.terms or retrieval.signals.short_terms):
            b.add("notice", heading, f"- {insufficient(query, self.locale)}", "notice:insufficient")

    # --- logging ------------------------------------------------------------------------------

    def log(self, result: AssemblyResult, message_seq: int | None = None) -> int:
        """Persist one attempt in ``assembly_logs`` (with retention) and move the cursor."""
        retention = int(self.settings["diagnostics.assembly_log_retention"])
        with self.store.transaction():
            log_id = self.store.insert_assembly_log(
                result.as_dict() | {"message_seq": message_seq}, retention
            )
            newest = self.store.checkpoint(result.session_id).last_event_seq
            if result.injected and newest >= 0:
                self.store.advance_checkpoint(result.session_id, "last_assembly_seq", newest)
        return log_id
