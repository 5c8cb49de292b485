"""Pages for memory items: the filtered list, one item, and steering it.

An item's page shows what ``convmem inspect`` shows (lifecycle, quoted sources,
linked items, the score for a query typed there) through the same library call.
Steering (retract, forget, promote, resolve, reactivate) asks first: the button
opens a confirmation form, and only its POST, carrying the form value derived
from the token (:func:`convmem.ui.security.csrf_value`), changes anything. The
change goes through :mod:`convmem.memory.lifecycle` with actor ``ui``, so it is in
the item's lifecycle like any other, and the next block sees it.

"Forget" is :func:`convmem.memory.lifecycle.forget`: a retraction whose reason says
so, which also reaches the same clause restated in the project's other sessions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from convmem.core.constants import EVIDENCE_TYPES, MEMORY_KINDS, STATUSES
from convmem.errors import ConvmemError
from convmem.memory import lifecycle
from convmem.retrieval import Retriever
from convmem.ui.app import PAGE_SIZE, UserError, url

if TYPE_CHECKING:
    from convmem.memory.models import MemoryItem
    from convmem.ui.app import Inspector

ACTOR = "ui"
PROMOTE_KINDS = ("decision", "constraint", "fact", "preference")


@dataclass(frozen=True)
class Action:
    name: str
    label: str
    explains: str
    statuses: tuple[str, ...]


ACTIONS = {
    a.name: a
    for a in (
        Action(
            "retract",
            "Retract",
            "The item leaves every later block. It stays in the audit trail and can be"
            " reactivated.",
            ("active", "disputed", "superseded"),
        ),
        Action(
            "forget",
            "Forget",
            "The agent should no longer remember this: it is retracted with your reason (and"
            " so is the same clause in the project's other sessions), and stays in the audit"
            " trail.",
            ("active", "disputed", "superseded"),
        ),
        Action(
            "promote",
            "Promote",
            "Accept it as the person's own statement, of the kind you choose. Blocks then"
            " quote it without the proposal warning.",
            ("active", "disputed"),
        ),
        Action(
            "resolve",
            "Resolve",
            "Settle the dispute by keeping this item; the items it was disputed with are"
            " superseded by it.",
            ("disputed",),
        ),
        Action(
            "reactivate",
            "Reactivate",
            "Bring the item back into retrieval as active.",
            ("retracted", "superseded"),
        ),
    )
}


def actions_for(item: MemoryItem) -> list[Action]:
    """The steering actions that apply to an item in its current state."""
    out = [a for a in ACTIONS.values() if item.status in a.statuses]
    if item.evidence_type == "user_explicit" and item.kind != "proposal":
        out = [a for a in out if a.name != "promote"]
    return out


#: What the item page says after each action.
DONE = {
    "retract": "Retracted.",
    "forget": "Forgotten: retracted with your reason.",
    "promote": "Promoted.",
    "resolve": "Resolved: the items it was disputed with are superseded.",
    "reactivate": "Reactivated.",
}


def perform(ui: Inspector, item: MemoryItem, action: str, reason: str, kind: str) -> None:
    """Carry out one steering action, with actor ``ui``."""
    store = ui.store
    if action == "retract":
        lifecycle.retract(store, item.id, actor=ACTOR, reason=reason)
    elif action == "forget":
        lifecycle.forget(store, item.id, actor=ACTOR, reason=reason)
    elif action == "promote":
        lifecycle.promote(store, item.id, actor=ACTOR, kind=kind)
    elif action == "resolve":
        lifecycle.resolve(store, item.id, actor=ACTOR)
    else:
        lifecycle.reactivate(store, item.id, actor=ACTOR)


def register(ui: Inspector) -> None:
    store = ui.store

    def need_item(item_id: str) -> MemoryItem:
        if not item_id:
            raise UserError("Which item? The address needs “id=” with an item id.")
        item = store.item(item_id)
        if item is None:
            raise UserError(f"There is no memory item {item_id[:80]!r}.", 404)
        return item

    @ui.route("/memory")
    async def memory(request: Request) -> Response:
        summary = ui.session_param(request)
        sid = summary["session_id"]
        kinds = ui.choice_params(request, "kind", MEMORY_KINDS)
        statuses = ui.choice_params(request, "status", STATUSES)
        evidence = ui.choice_params(request, "evidence", EVIDENCE_TYPES)
        before_seq = ui.int_param(request, "before_seq")
        before_id = request.query_params.get("before_id")
        # an item without a source event is paged past with before_seq left empty
        before = (before_seq, before_id) if before_id else None
        rows = store.item_page(
            sid,
            statuses=statuses,
            kinds=kinds,
            evidence_types=evidence,
            before=before,
            limit=PAGE_SIZE + 1,
        )
        more = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        counts = store.item_counts(sid)
        by_kind = {k: sum(r["n"] for r in counts if r["kind"] == k) for k in MEMORY_KINDS}
        by_status = {s: sum(r["n"] for r in counts if r["status"] == s) for s in STATUSES}
        filters = {"s": sid, "kind": kinds, "status": statuses, "evidence": evidence}
        last = rows[-1] if rows else None
        return ui.render(
            request,
            "memory.html",
            session=summary,
            rows=rows,
            kinds=kinds,
            statuses=statuses,
            evidence=evidence,
            all_kinds=MEMORY_KINDS,
            all_statuses=STATUSES,
            all_evidence=EVIDENCE_TYPES,
            by_kind=by_kind,
            by_status=by_status,
            paged=before is not None,
            first_page=url("/memory", **filters),
            next_page=(
                url(
                    "/memory",
                    **filters,
                    before_seq=last.derived_from_seq,
                    before_id=last.id,
                )
                if more and last is not None
                else None
            ),
        )

    @ui.route("/item")
    async def item_page(request: Request) -> Response:
        item = need_item(request.query_params.get("id", ""))
        # scored only for a query asked for: ranking against every item costs what a
        # pre-step does, so the page itself stays a few lookups
        query = request.query_params.get("q", "")[:20_000]
        data = Retriever(store, ui.settings).inspect_item(item.id, query)
        assert data is not None
        disputed_with = sorted(
            {
                str(row["detail"]["with"])
                for row in data["lifecycle"]
                if row["event"] == "disputed" and row["detail"].get("with")
            }
        )
        return ui.render(
            request,
            "item.html",
            session=store.session_summary(item.session_id),
            item=item,
            data=data,
            query=query,
            latest=ui.runtime.latest_user_text(item.session_id) or "",
            disputed_with=store.items_by_id(disputed_with),
            actions=actions_for(item),
            done=DONE.get(request.query_params.get("done", ""), ""),
        )

    @ui.route("/item/act")
    async def confirm(request: Request) -> Response:
        item = need_item(request.query_params.get("id", ""))
        action = request.query_params.get("action", "")
        if action not in ACTIONS:
            raise UserError(f"“action” must be one of {', '.join(ACTIONS)}.")
        return ui.render(
            request,
            "confirm.html",
            session=store.session_summary(item.session_id),
            item=item,
            action=ACTIONS[action],
            applies=ACTIONS[action] in actions_for(item),
            kinds=PROMOTE_KINDS,
            error="",
        )

    @ui.route("/item/act", methods=("POST",))
    async def act(request: Request) -> Response:
        form = await ui.checked_form(request)
        item = need_item(form.get("id", ""))
        action = form.get("action", "")
        if action not in ACTIONS:
            raise UserError(f"“action” must be one of {', '.join(ACTIONS)}.")
        kind = form.get("kind", "decision")
        if action == "promote" and kind not in PROMOTE_KINDS:
            raise UserError(f"“kind” must be one of {', '.join(PROMOTE_KINDS)}.")
        reason = " ".join(form.get("reason", "").split())[:500]
        try:
            perform(ui, item, action, reason, kind)
        except ConvmemError as exc:
            return ui.render(
                request,
                "confirm.html",
                status=409,
                session=store.session_summary(item.session_id),
                item=item,
                action=ACTIONS[action],
                applies=True,
                kinds=PROMOTE_KINDS,
                error=str(exc),
            )
        return RedirectResponse(url("/item", id=item.id, done=action), status_code=303)
