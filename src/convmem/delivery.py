"""What reaches the host: its size limit, what earlier blocks still show, the language.

The assembler decides *what* memory matters for a step; this module holds the three
facts about *delivery* that it needs from outside:

* **The host's limit.** Claude Code hands a hook's ``additionalContext`` to the model
  whole only up to 10,000 UTF-16 code units; above that the model sees a 2,000-unit
  preview and a file path. :data:`CLAUDE_CODE_CONTEXT_CAP` keeps a margin below it,
  and the assembler's budget treats it as a second limit beside the token budget, so
  a cut follows the same order and is explained the same way.
* **Pile-up.** A block a host inserted stays in the model's context until a
  compaction (Claude Code keeps the ``additionalContext`` in the transcript; DSH
  keeps the memory message in its session log). Every line of such a block that is
  still in context counts as visible: a later block leaves it out and carries only
  what is new or changed. :func:`earlier_block_lines` reads those lines back from the
  captured events, which is where the host itself keeps them.
* **Language.** ``assembly.locale = auto`` follows the person: Chinese headers and
  notices when their own recent messages are mostly Chinese, English otherwise.

Nothing here changes what is stored; it only reads events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convmem.core.constants import BLOCK_MARKER, COMPACTION_EVENT_TYPES
from convmem.core.text import ascii_classes, collapse_spaces, count_cjk

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.models import StoredEvent
    from convmem.memory.store import MemoryStore

#: Claude Code 2.1.328 delivers a hook's ``additionalContext`` whole up to this many
#: UTF-16 code units (JavaScript string length), per hook output.
CLAUDE_CODE_CONTEXT_LIMIT = 10_000
#: What convmem allows itself: the limit less a 10% margin, in UTF-16 code units.
CLAUDE_CODE_CONTEXT_CAP = 9_000

#: The person's own messages read to choose the language under ``locale = auto``.
LOCALE_SAMPLE = 8
#: UTF-16 units the first block in a context may always have, whatever the share.
FIRST_BLOCK_FLOOR = 2_000
#: Source kinds under which hosts log convmem's own blocks (DSH; Claude Code).
OWN_SOURCE_KINDS = frozenset({"convmem", "hook-context"})
#: Newest generated events scanned for earlier blocks still in context.
MAX_EARLIER_BLOCKS = 200


#: The omission reason of a line an earlier block still in context holds.
ALREADY_SHOWN = "already in an earlier memory block the model still sees"


def utf16_units(text: str) -> int:
    """Length as JavaScript counts it: characters outside the BMP count twice."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_IDS = re.compile(r"\bmem_\w+")
_REFS = re.compile(r"\[ev [^\]]*\]|\(seq:[^)]*\)")


def line_key(line: str) -> str:
    """The form two lines are compared in: spacing (hosts may re-space what they
    store), item ids and event references do not count, so an item stated again, or
    stored again under the host's own seq, is the same line."""
    line = collapse_spaces(line)
    if "mem_" in line:  # the patterns need these literals: most lines skip both
        line = _IDS.sub("mem", line)
    if "[ev " in line or "(seq:" in line:
        line = _REFS.sub("[ev]", line)
    return line


def block_lines(text: str) -> list[str]:
    """The content lines of a block (``- …``), not its header or section headings."""
    return [line_key(line) for line in text.splitlines() if line.lstrip().startswith("- ")]


def is_block(text: str) -> bool:
    """A convmem block (it opens with :data:`BLOCK_MARKER`)."""
    return text.lstrip().startswith(BLOCK_MARKER)


def compaction_boundary(store: MemoryStore, session_id: str) -> int | None:
    """The start of the latest compaction that produced a summary (None: never compacted).

    A host may retry and fail right after a good compaction; a failed attempt (no
    summary) hides nothing, so it does not move the boundary.
    """
    summaries = store.events(session_id, types=["compaction/summary"], newest_first=True, limit=1)
    if not summaries:
        starts = store.events(
            session_id, types=list(COMPACTION_EVENT_TYPES), newest_first=True, limit=1
        )
        return starts[0].seq if starts else None
    summary = summaries[0].seq
    start = store.events(
        session_id, until=summary, types=["compaction/start"], newest_first=True, limit=1
    )
    return start[0].seq if start else summary


@dataclass(frozen=True)
class EarlierBlocks:
    """What convmem blocks still in the model's context say: their lines and items."""

    lines: frozenset[str]
    item_ids: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str]) -> EarlierBlocks | None:
        """From block texts (others are ignored); None when there is no block."""
        blocks = [t for t in texts if t and is_block(t)]
        if not blocks:
            return None
        # blocks repeat lines (each one after a compaction restates the memory): each
        # distinct line is read once
        raw = {line for block in blocks for line in block.splitlines()}
        lines = frozenset(line_key(line) for line in raw if line.lstrip().startswith("- "))
        ids = frozenset(
            m.group(1) for line in raw if "[mem " in line for m in _ITEM_ID.finditer(line)
        )
        return cls(lines, ids)


_ITEM_ID = re.compile(r"\[mem ([\w-]+)")


def outside_ranges(ranges: Sequence[tuple[int, int]]) -> Callable[[Sequence[int]], bool]:
    """A visibility predicate: no seq falls in a hidden ``(start, end)`` range."""

    def visible(seqs: Sequence[int]) -> bool:
        return bool(seqs) and not any(a <= s <= b for s in seqs for a, b in ranges)

    return visible


def earlier_blocks(
    store: MemoryStore,
    session_id: str,
    shadowed: Sequence[tuple[int, int]] | None = None,
) -> EarlierBlocks | None:
    """The convmem blocks the host still sends the model.

    Those captured after the latest compaction, or, when the host names the ranges
    its compactions hid (``shadowed``), every one outside them. None when there is
    none, so a caller can tell "no earlier block" from "an earlier block with no lines".
    """
    after = compaction_boundary(store, session_id) if shadowed is None else None
    heads = store.event_heads(
        session_id,
        "user/message",
        after=-1 if after is None else after,
        limit=MAX_EARLIER_BLOCKS,
        chars=_HEAD_CHARS,
    )
    shown = outside_ranges(shadowed or ())
    # only blocks are read whole (a cut head that is white space and then the start of
    # the marker may still be one)
    seqs = [
        seq
        for seq, head, n in heads
        if shown((seq,))
        and (is_block(head) or (n > len(head) and BLOCK_MARKER.startswith(head.lstrip())))
    ]
    return EarlierBlocks.of(event.text for event in store.events_by_seq(session_id, seqs))


_HEAD_CHARS = 256


def hidden_prefix(
    store: MemoryStore, session_id: str, ranges: Sequence[tuple[int, int]]
) -> int | None:
    """The highest seq up to which every event of the session lies in a hidden range
    (None: the first is shown). A host that compacts hides the oldest part of the
    conversation, so what it still shows is read from there on, not from the start."""
    first = store.first_seq(session_id)
    if first is None:
        return None
    covered = first - 1
    for start, end in sorted(ranges):
        if start > covered + 1:
            break
        covered = max(covered, end)
    return covered if covered >= first else None


def share_allowance(
    store: MemoryStore,
    session_id: str,
    share: float,
    shadowed: Sequence[tuple[int, int]] | None = None,
) -> int | None:
    """How many characters a new block may have so that convmem's blocks stay within
    ``share`` of the conversation the host still shows (None: no limit).

    What the host shows is every event after the latest compaction, or outside the
    ranges its compactions hid; convmem's own blocks among them count as convmem's.
    A host that names the hidden ranges (DSH) shows a compaction's summary as a
    message of its own, so the summary event itself is not counted twice.
    The new block's own size counts on both sides: ``(ours + new) / (shown + new)``.
    The first block in a context may have :data:`FIRST_BLOCK_FLOOR` units in any case.
    """
    if not 0 < share < 1:
        return None
    if shadowed is None:
        after = compaction_boundary(store, session_id)
    else:
        after = hidden_prefix(store, session_id, shadowed)
    shown = outside_ranges(shadowed or ())
    ours = others = 0
    for seq, type_, kind, chars in store.event_sizes(session_id, -1 if after is None else after):
        if not shown((seq,)) or (shadowed is not None and type_ in COMPACTION_EVENT_TYPES):
            continue
        if kind in OWN_SOURCE_KINDS:
            ours += chars
        else:
            others += chars
    allowed = max(0, int((share * (ours + others) - ours) / (1 - share)))
    # the first block after a compaction brings back what it removed, even into a short
    # context (the host's summary may not even be captured yet)
    return allowed if ours else max(allowed, FIRST_BLOCK_FLOOR)


def person_locale(store: MemoryStore, session_id: str, setting: str) -> str:
    """``zh`` or ``en``: the setting when forced, else the language of the person's words.

    A message counts as Chinese when its CJK characters outweigh its Latin letters
    (one CJK character carries about as much as a short word); the block is in
    Chinese when most of the person's :data:`LOCALE_SAMPLE` newest messages are.
    """
    if setting in ("zh", "en"):
        return setting
    from convmem.capture import is_user_evidence

    chinese = total = 0
    for event in _newest_messages(store, session_id):
        if not is_user_evidence(event.type, event.source_kind, event.text):
            continue
        cjk = count_cjk(event.text)
        latin = ascii_classes(event.text)[0]
        if cjk == 0 and latin == 0:
            continue
        total += 1
        chinese += cjk * 3 > latin
        if total >= LOCALE_SAMPLE:
            break
    return "zh" if total and chinese * 2 > total else "en"


#: The newest user messages :func:`person_locale` reads at most, and in its first page:
#: the sample is mostly full after as many messages as it holds, and every step reads it.
LOCALE_READ = 50
LOCALE_PAGE = 12


def _newest_messages(store: MemoryStore, session_id: str) -> Iterator[StoredEvent]:
    """The session's newest :data:`LOCALE_READ` user messages, newest first, read a page
    at a time."""
    until = None
    for limit in (LOCALE_PAGE, LOCALE_READ - LOCALE_PAGE):
        page = store.events(
            session_id, until=until, types=["user/message"], newest_first=True, limit=limit
        )
        yield from page
        if len(page) < limit:
            return
        until = page[-1].seq - 1


def effective_budget(settings: Settings, asked: int | None) -> tuple[int, str | None]:
    """The token budget of one block, and why it differs from the one asked for.

    A budget asked for (``--budget``, a host's ``budget=``) never goes below
    ``assembly.min_budget_tokens``, as the settings promise; the configured one is
    ``max(min, soft)`` already.
    """
    floor = int(settings["assembly.min_budget_tokens"])
    if asked is None:
        return settings.budget, None
    if int(asked) >= floor:
        return int(asked), None
    return floor, f"budget {int(asked)} raised to assembly.min_budget_tokens {floor}"


class Budget:
    """Adds lines while they fit; records every omission.

    Up to three limits apply: the token budget; when the host has one, a hard cap on
    the block's length in UTF-16 units (``cap``); and convmem's share of the context
    (``share``, see :func:`share_allowance`), which a correction of something an
    earlier block still shows may exceed (the block above would otherwise stay
    wrong), and so may the best item the query matched (the answer asked for). Lines
    an earlier block still in the model's context already holds count as shown, cost
    nothing and are recorded as omitted with that reason.

    A line may belong to a ``group``: a sub-heading (an evidence line's day) that the
    block prints once above all the lines of that group; its cost is charged with the
    first line of the group that fits.
    """

    def __init__(
        self,
        total: int,
        meter: Callable[[str], int],
        cap: int | None = None,
        earlier: EarlierBlocks | None = None,
        share: int | None = None,
        share_label: str = "convmem's share of the context",
    ) -> None:
        self.total, self.meter, self.used = total, meter, 0
        self.cap, self.share, self.share_label, self.units = cap, share, share_label, 0
        self.seen = earlier.lines if earlier else frozenset()
        self.shown_ids = earlier.item_ids if earlier else frozenset()
        #: Items that correct what an earlier block shows, and their notices.
        self.corrections: set[str] = set()
        self.answered = False
        #: Nothing compacted yet: the host still shows the whole conversation.
        self.shows_all = False
        self.cut: dict[str, int] = {}
        self.sections: dict[str, list[str]] = {}
        self.section_tokens: dict[str, int] = {}
        self.groups: dict[str, set[str]] = {}
        self.omitted: list[dict[str, Any]] = []
        self.notice_ids: list[str] = []
        #: Each text's cost, metered once: a line is priced against its share and then
        #: added, and a day's heading is priced with every line of that day that fails.
        self._costs: dict[str, int] = {}

    def cost(self, text: str) -> int:
        known = self._costs.get(text)
        if known is None:
            known = self._costs[text] = self.meter(text + "\n")
        return known

    def _over(self, ident: str, units: int) -> tuple[str, int] | None:
        """The limit in UTF-16 units this line would break, and that limit."""
        if self.cap is not None and self.units + units > self.cap:
            return "the host's limit", self.cap
        exempt = ident in self.corrections
        if self.share is not None and not exempt and self.units + units > self.share:
            return self.share_label, self.share
        return None

    def add(self, section: str, heading: str, line: str, ident: str, group: str = "") -> bool:
        if self.seen and line_key(line) in self.seen:
            self.omit(ident, section, ALREADY_SHOWN)
            return True
        new = [heading] if section not in self.sections else []
        groups = self.groups.setdefault(section, set())
        if group and group not in groups:
            new.append(group)
        need = self.cost(line) + sum(self.cost(text) for text in new)
        units = utf16_units(line) + 1 + sum(utf16_units(text) + 1 for text in new)
        over = self._over(ident, units)
        if over is not None:
            label, limit = over
            self.cut[label] = self.cut.get(label, 0) + 1
            self.omitted.append(
                {
                    "id": ident,
                    "section": section,
                    "tokens": need,
                    "reason": f"{label}: needs {units} UTF-16 units, "
                    f"{limit - self.units} left of {limit}",
                }
            )
            return False
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
        if group:
            groups.add(group)
        self.sections[section].append(line)
        if section == "notice":
            self.notice_ids.append(ident)
        self.used += need
        self.units += units
        self.section_tokens[section] = self.section_tokens.get(section, 0) + need
        return True

    def replaces_shown(self, item_id: str, supersedes: Iterable[str]) -> bool:
        """Does an item replace one an earlier block still shows? Then it is news, and
        it and the notice of what it replaced go out whatever the share."""
        old = [o for o in supersedes if o in self.shown_ids]
        if old:
            self.corrections.add(item_id)
            self.corrections.update(f"notice:{o}" for o in old)
        return bool(old)

    def answer_first(self, item_id: str, matched: bool) -> None:
        """The best item the query matched answers it: it goes out whatever the share."""
        if matched and not self.answered:
            self.answered = True
            self.corrections.add(item_id)

    def omit(self, ident: str, section: str, reason: str) -> None:
        self.omitted.append({"id": ident, "section": section, "reason": reason})

    def delivery_reasons(self) -> list[str]:
        """Say when a limit other than the budget cut lines, and what was not repeated."""
        reasons = []
        for label, count in sorted(self.cut.items()):
            limit = self.cap if label == "the host's limit" else self.share
            reasons.append(
                f"{label} of {limit} UTF-16 units (not the token budget) left out {count} line(s)"
            )
        repeated = sum(1 for o in self.omitted if o["reason"] == ALREADY_SHOWN)
        if repeated:
            reasons.append(
                f"{repeated} line(s) left out: an earlier memory block the model still sees "
                "holds them"
            )
        return reasons
