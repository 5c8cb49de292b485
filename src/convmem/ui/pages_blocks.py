"""Pages for logged blocks: a session's list, one block as the model saw it, and a
side-by-side comparison of two blocks of a session.

Every assembly attempt is logged (``assembly_logs``) with its text, its per-section
token counts, what it included and what it left out with the reason; these pages
read those rows and nothing else, so they show what happened then, not what would
happen now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from convmem.ui.app import PAGE_SIZE, UserError
from convmem.ui.blockview import budget_bars, compare, split_sections

if TYPE_CHECKING:
    from convmem.ui.app import Inspector


def register(ui: Inspector) -> None:
    store = ui.store

    def need_log(request: Request, name: str) -> dict[str, Any]:
        log_id = ui.int_param(request, name)
        if log_id is None:
            raise UserError(f"Which block? The address needs “{name}=” with a block number.")
        log = store.assembly_log(log_id)
        if log is None:
            raise UserError(
                f"There is no block #{log_id} (old ones are dropped after"
                " diagnostics.assembly_log_retention).",
                404,
            )
        return log

    @ui.route("/blocks")
    async def blocks(request: Request) -> Response:
        summary = ui.session_param(request)
        before = ui.int_param(request, "before")
        rows = store.assembly_log_page(summary["session_id"], before=before, limit=PAGE_SIZE + 1)
        more = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        return ui.render(
            request,
            "blocks.html",
            session=summary,
            rows=rows,
            bars={r["id"]: budget_bars(r) for r in rows},
            paged=before is not None,
            next_before=rows[-1]["id"] if more else None,
        )

    @ui.route("/block")
    async def block(request: Request) -> Response:
        log = need_log(request, "id")
        sid = log["session_id"]
        older = store.assembly_log_page(sid, before=log["id"], limit=1)
        return ui.render(
            request,
            "block.html",
            session=store.session_summary(sid),
            log=log,
            bars=budget_bars(log),
            parts=split_sections(log["text"]),
            previous=older[0]["id"] if older else None,
        )

    @ui.route("/compare")
    async def compare_page(request: Request) -> Response:
        a, b = need_log(request, "a"), need_log(request, "b")
        if a["session_id"] != b["session_id"]:
            raise UserError("Blocks are compared within one session; these two are from two.")
        return ui.render(
            request,
            "compare.html",
            session=store.session_summary(a["session_id"]),
            a=a,
            b=b,
            bars_a=budget_bars(a),
            bars_b=budget_bars(b),
            diff=compare(a, b),
        )
