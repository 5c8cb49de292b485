"""Pages for projects, sessions, a session's timeline and one event.

The timeline pages through a session by sequence number (``before`` / ``after`` /
``at``), newest page first, over the events' primary key: a page of a session of a
hundred thousand events costs what a page of a short one does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from convmem.retrieval import Retriever
from convmem.ui.app import PAGE_SIZE, UserError
from convmem.ui.display import TIMELINE_FILTERS

if TYPE_CHECKING:
    from convmem.memory.models import MemoryItem, StoredEvent
    from convmem.ui.app import Inspector

#: Timeline rows shown before the event a link points at.
LEAD_IN = 5
#: Characters of an event shown on the timeline (the event's page shows all of it).
TIMELINE_CHARS = 1500


def _derived(ui: Inspector, session_id: str, seqs: list[int]) -> dict[int, list[MemoryItem]]:
    """Items derived from these events (any status), by event."""
    out: dict[int, list[MemoryItem]] = {}
    if seqs:
        for item in ui.store.items(session_id, (), from_seqs=seqs):
            if item.derived_from_seq is not None:
                out.setdefault(item.derived_from_seq, []).append(item)
    return out


def register(ui: Inspector) -> None:
    store = ui.store

    @ui.route("/")
    async def sessions(request: Request) -> Response:
        project = request.query_params.get("project")
        before_at = request.query_params.get("before_at")
        before_id = request.query_params.get("before_id")
        before = (before_at, before_id) if before_at and before_id is not None else None
        rows = store.session_page(project=project, before=before, limit=PAGE_SIZE + 1)
        more = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        return ui.render(
            request,
            "sessions.html",
            projects=store.projects(),
            project=project,
            rows=rows,
            paged=before is not None,
            next_page=(rows[-1]["updated_at"], rows[-1]["session_id"]) if more else None,
        )

    @ui.route("/session")
    async def session(request: Request) -> Response:
        summary = ui.session_param(request)
        sid = summary["session_id"]
        types = store.event_type_counts(sid)
        summary["events"] = sum(types.values())
        counts = store.item_counts(sid)
        by_status: dict[str, int] = {}
        for row in counts:
            by_status[row["status"]] = by_status.get(row["status"], 0) + row["n"]
        return ui.render(
            request,
            "session.html",
            session=summary,
            types=types,
            by_status=by_status,
            items_total=sum(by_status.values()),
            checkpoint=store.checkpoint(sid),
            changes=store.memory_events_page(sid, limit=12),
            blocks=store.assembly_log_page(sid, limit=5),
            task=store.task_state(sid),
        )

    @ui.route("/timeline")
    async def timeline(request: Request) -> Response:
        summary = ui.session_param(request)
        sid = summary["session_id"]
        show = request.query_params.get("show") or "all"
        if show not in TIMELINE_FILTERS:
            raise UserError(f"“show” must be one of {', '.join(TIMELINE_FILTERS)}.")
        before = ui.int_param(request, "before")
        after = ui.int_param(request, "after")
        at = ui.int_param(request, "at")
        if at is not None:
            after = at - LEAD_IN - 1
        page = _timeline_page(ui, sid, show, before, after)
        seqs = [e.seq for e in page["events"]]
        return ui.render(
            request,
            "timeline.html",
            session=summary,
            show=show,
            filters=list(TIMELINE_FILTERS),
            at=at,
            derived=_derived(ui, sid, seqs),
            limit=TIMELINE_CHARS,
            **page,
        )

    @ui.route("/event")
    async def event(request: Request) -> Response:
        summary = ui.session_param(request)
        sid = summary["session_id"]
        seq = ui.int_param(request, "seq")
        if seq is None:
            raise UserError("Which event? The address needs “seq=”.")
        found = store.events_by_seq(sid, [seq])
        if not found:
            raise UserError(f"Session {sid[:80]!r} has no event {seq}.", 404)
        ev = found[0]
        older = store.events(sid, until=seq - 1, newest_first=True, limit=1)
        newer = store.events(sid, after=seq, limit=1)
        return ui.render(
            request,
            "event.html",
            session=summary,
            ev=ev,
            text=Retriever(store, ui.settings).full_text(ev),
            derived=_derived(ui, sid, [seq]).get(seq, []),
            older=older[0].seq if older else None,
            newer=newer[0].seq if newer else None,
        )


def _timeline_page(
    ui: Inspector, sid: str, show: str, before: int | None, after: int | None
) -> dict[str, Any]:
    """One page of events in seq order, and whether there are older and newer ones."""
    store = ui.store
    types = TIMELINE_FILTERS[show]
    events: list[StoredEvent]
    if show == "corrections":
        seqs = store.correction_seqs(sid, before=before, limit=PAGE_SIZE + 1)
        has_older = len(seqs) > PAGE_SIZE
        events = store.events_by_seq(sid, seqs[:PAGE_SIZE])
        has_newer = before is not None
    elif after is not None:
        events = store.timeline_events(sid, types=types, after=after, limit=PAGE_SIZE + 1)
        has_newer = len(events) > PAGE_SIZE
        events = events[:PAGE_SIZE]
        has_older = bool(events) and bool(
            store.timeline_events(sid, types=types, before=events[0].seq, limit=1)
        )
    else:
        newest = store.timeline_events(sid, types=types, before=before, limit=PAGE_SIZE + 1)
        has_older = len(newest) > PAGE_SIZE
        events = newest[-PAGE_SIZE:]
        has_newer = (
            before is not None
            and bool(events)
            and bool(store.timeline_events(sid, types=types, after=events[-1].seq, limit=1))
        )
    return {
        "events": events,
        "older": events[0].seq if events and has_older else None,
        "newer": events[-1].seq if events and has_newer else None,
    }
