"""Projects: which sessions share memory, and how a host names its project.

A session may belong to a project. Claude Code and DSH name it by the folder the
agent works in, taken up to the root of its git work tree when there is one (two
sessions started in ``repo/`` and ``repo/src`` are one project); the runtime API and
the command line take an explicit ``project`` string. Sessions without a project
keep today's behaviour: each remembers only itself.

With ``memory.scope = project`` (the default), a step of a session that has a
project draws on every session of that project (:class:`~convmem.memory.models.Scope`);
with ``memory.scope = session``, only on its own. A scope never holds a session of
another project, and a session without a project is a scope of one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from convmem.memory.models import MemoryItem, Scope

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore

#: Folders climbed at most while looking for a git work tree's root.
MAX_DEPTH = 64

#: Score factor of an item from another session of the project: what was settled in an
#: earlier session holds, but the current session's own words come first.
OTHER_SESSION_FACTOR = 0.9
#: Age factor of an item from another session: ``AGE_FLOOR + (1 - AGE_FLOOR) *
#: 0.5 ** (days / AGE_HALF_LIFE_DAYS)``, where ``days`` is how long before the current
#: session's newest event it was said. It orders old against new; the floor keeps an
#: old constraint that nobody corrected eligible (kind weight × factors stays ≥ 0.5).
AGE_HALF_LIFE_DAYS = 30.0
AGE_FLOOR = 0.7
#: Kinds an earlier session contributes without matching the query (standing memory).
STANDING_KINDS = ("constraint", "decision", "preference", "fact")
#: A session id up to this long is shown whole in a block's label; a longer one (a
#: host's UUID) by its first :data:`SHORT_SESSION` characters.
WHOLE_SESSION = 16
SHORT_SESSION = 8
#: Newest user messages of a session read for the convmem blocks it still shows.
EARLIER_BLOCKS = 50
#: The host cursor under which a start block's lines are noted (see remember_start_block).
START_CURSOR = "convmem/start-block"
#: Why an item of another session is left out of a block.
ALREADY_SHOWN = "already in an earlier memory block the model still sees"
_SHOWN_ID = re.compile(r"\[mem ([\w-]+)")
#: How a block labels a line from another session, by locale (then the short session id).
EARLIER_LABEL = {"en": "earlier session", "zh": "此前会话"}
_SHOWN_EVENT = re.compile(
    r"\[ev seq:(\d+) [^\]]*· (?:" + "|".join(EARLIER_LABEL.values()) + r") (\S+)\]"
)


def project_root(cwd: str | os.PathLike[str] | None) -> str | None:
    """The project a host working in ``cwd`` belongs to: the root of the git work tree
    holding ``cwd`` (a folder with a ``.git`` folder or file), else ``cwd`` itself.

    The path is absolute and normalized; None when no folder is given. The folder need
    not exist (a transcript read elsewhere names folders of another machine).
    """
    if cwd is None or not str(cwd).strip():
        return None
    path = os.path.normpath(os.path.abspath(os.path.expanduser(str(cwd))))
    probe = path
    for _ in range(MAX_DEPTH):
        try:
            if os.path.exists(os.path.join(probe, ".git")):
                return probe
        except (OSError, ValueError):  # an unreadable folder or a path with NUL
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    return path


def resolve_scope(
    store: MemoryStore, settings: Settings, session_id: str, project: str | None = None
) -> Scope:
    """The sessions a step of ``session_id`` may draw on.

    ``project`` names the project for a session the store does not know yet (a fresh
    session about to start); otherwise the session's stored project counts.
    """
    if str(settings["memory.scope"]) != "project":
        return Scope(session_id)
    project = store.session_project(session_id) or project
    if not project:
        return Scope(session_id)
    return Scope(session_id, tuple(store.project_sessions(project)), project)


# --- memory from other sessions -----------------------------------------------------------


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 time as an aware datetime (naive means UTC); None if it is not one."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def said_time(item: MemoryItem) -> datetime | None:
    """When the item was said: its source event's host time, else when it was stored."""
    return parse_time(item.said_at) or parse_time(item.created_at)


def item_day(item: MemoryItem) -> str:
    """The day an item was said, ``YYYY-MM-DD`` (empty when nothing tells)."""
    when = said_time(item)
    return when.astimezone(UTC).strftime("%Y-%m-%d") if when else ""


def age_factor(days: float) -> float:
    """The documented age factor (see :data:`AGE_HALF_LIFE_DAYS`)."""
    decay: float = 0.5 ** (max(days, 0.0) / AGE_HALF_LIFE_DAYS)
    return AGE_FLOOR + (1.0 - AGE_FLOOR) * decay


def reference_time(
    store: MemoryStore, scope: Scope, items: Iterable[MemoryItem]
) -> datetime | None:
    """ "Now" for ages, from the stored state only (so a block does not change with the
    clock): the current session's newest event time, or the newest item's time."""
    times = [t for t in (said_time(i) for i in items) if t is not None]
    newest = store.events(scope.session_id, newest_first=True, limit=1)
    if newest:
        when = parse_time(newest[0].time)
        if when is not None:
            times.append(when)
    return max(times) if times else None


def standing_from_others(
    store: MemoryStore, scope: Scope, limit: int, keep: Sequence[str] = STANDING_KINDS
) -> list[MemoryItem]:
    """The newest active user items of ``keep`` kinds from the project's other sessions,
    newest session first, at most ``limit`` (the caller drops unsubstantial ones)."""
    found: list[MemoryItem] = []
    for session_id in scope.others:
        if len(found) >= limit:
            break
        for item in reversed(store.items(session_id, ("active", "disputed"), keep, newest=limit)):
            if item.evidence_type == "user_explicit":
                found.append(item)
    return found


def short_session(session_id: str) -> str:
    """A session id as a block labels it: whole, or a long one by its first characters
    after a word prefix that every session of a host shares (DSH's ``session-``)."""
    if len(session_id) <= WHOLE_SESSION:
        return session_id
    head, sep, rest = session_id.partition("-")
    if sep and head.isalpha() and len(rest) >= SHORT_SESSION:
        return f"{head}-{rest[:SHORT_SESSION]}"
    return session_id[:SHORT_SESSION]


@dataclass(frozen=True)
class Shown:
    """What convmem blocks still in a session's context show of other sessions: item
    ids, and events as ``(short session id, seq)``."""

    items: frozenset[str] = frozenset()
    events: frozenset[tuple[str, int]] = frozenset()


def remember_start_block(store: MemoryStore, session_id: str, shown: Sequence[str]) -> None:
    """Note what a start block showed (``result.items``) until the host logs it.

    A host may write the block it received into its log only with the first prompt
    (Claude Code does), after that prompt's own block was assembled; until then this
    note stands in for it. A compaction after it removes it from the context.
    """
    items = sorted(i[4:] for i in shown if i.startswith("mem "))
    events = sorted(i[3:] for i in shown if i.startswith("ev ") and "/seq:" in i)
    after = store.checkpoint(session_id).last_event_seq + 1
    with store.transaction():
        store.set_host_cursor(session_id, START_CURSOR, after, {"items": items, "events": events})


def _noted_start(store: MemoryStore, session_id: str, after: int) -> Shown:
    """What the start block noted by :func:`remember_start_block` shows, if still shown."""
    position, state = store.host_cursor(session_id, START_CURSOR)
    if not state or after >= position:
        return Shown()  # none, or a compaction came after it
    events = set()
    for key in state.get("events", ()):
        sid, _, seq = str(key).rpartition("/seq:")
        if seq.isdigit():
            events.add((short_session(sid), int(seq)))
    return Shown(frozenset(map(str, state.get("items", ()))), frozenset(events))


def shown_before(store: MemoryStore, session_id: str, visible: Sequence[str] | None) -> Shown:
    """What a convmem block still in the model's context shows of other sessions.

    ``visible`` is what the host says the model sees; without it, the blocks captured
    in the session since its latest compaction (hosts log what convmem injected). What
    was shown once is not shown again until a compaction removes that block.
    """
    from convmem.capture import is_convmem_block

    if visible is not None:
        texts = [t for t in visible if t and is_convmem_block(t)]
    else:
        compactions = store.events(
            session_id, types=["compaction/start"], newest_first=True, limit=1
        )
        after = compactions[0].seq if compactions else -1
        texts = [
            e.text
            for e in store.events(
                session_id,
                after=after,
                types=["user/message"],
                newest_first=True,
                limit=EARLIER_BLOCKS,
            )
            if is_convmem_block(e.text)
        ]
    items = frozenset(m.group(1) for text in texts for m in _SHOWN_ID.finditer(text))
    events = frozenset(
        (m.group(2), int(m.group(1))) for text in texts for m in _SHOWN_EVENT.finditer(text)
    )
    if visible is None:
        noted = _noted_start(store, session_id, after)
        items, events = items | noted.items, events | noted.events
    return Shown(items, events)
