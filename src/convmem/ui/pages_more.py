"""Pages for search, skills and rules, validation runs, and status (with ``doctor``).

Search is :func:`convmem.search.search` (the call behind ``convmem search``),
shown with each item's score breakdown. Status is :func:`convmem.diagnostics.status`.

``doctor`` findings come from :func:`convmem.doctor.diagnose`, for the folder the
inspector runs in. The inspector runs doctor only when asked, since its live check
fires a hook call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from convmem.errors import ConvmemError
from convmem.ui.app import PAGE_SIZE

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.ui.app import Inspector

SEARCH_LIMIT = 25


def doctor_findings(settings: Settings, live: bool) -> list[dict[str, str]]:
    """``convmem doctor`` for the folder the inspector runs in (and ``$DSH_HOME``)."""
    from convmem.doctor import diagnose

    dsh_home = os.environ.get("DSH_HOME")
    findings = diagnose(
        settings,
        project=Path.cwd(),
        dsh_home=Path(dsh_home).resolve() if dsh_home else None,
        live=live,
    )
    return [
        {"level": f.level, "message": f"{f.host}: {f.what}", "fix": f.fix or ""} for f in findings
    ]


def register(ui: Inspector) -> None:
    store = ui.store

    @ui.route("/search")
    async def search(request: Request) -> Response:
        from convmem.search import search as run_search

        query = request.query_params.get("q", "")[:2000]
        session_id = request.query_params.get("s") or None
        summary = ui.session_param(request) if session_id else None
        data: dict[str, Any] = {"items": [], "evidence": []}
        if query.strip():
            data = run_search(store, ui.settings, query, session_id, SEARCH_LIMIT)
        return ui.render(
            request,
            "search.html",
            session=summary,
            query=query,
            items=data["items"],
            evidence=data["evidence"],
        )

    @ui.route("/skills")
    async def skills(request: Request) -> Response:
        from convmem.skills import SkillManager

        manager = SkillManager(store, ui.settings)
        rules = manager.rules()
        by_skill: dict[str, list[Any]] = {}
        for rule in rules:
            by_skill.setdefault(rule.skill_name, []).append(rule)
        return ui.render(
            request,
            "skills.html",
            skills=manager.list_skills(),
            by_skill=by_skill,
            chosen=request.query_params.get("rule", ""),
        )

    @ui.route("/validation")
    async def validation(request: Request) -> Response:
        summary = ui.session_param(request)
        before = ui.int_param(request, "before")
        rows = store.validation_log_page(summary["session_id"], before=before, limit=PAGE_SIZE + 1)
        more = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        return ui.render(
            request,
            "validation.html",
            session=summary,
            rows=rows,
            paged=before is not None,
            next_before=rows[-1]["id"] if more else None,
            enabled=bool(ui.settings["validation.enabled"]),
        )

    @ui.route("/status")
    async def status(request: Request) -> Response:
        from convmem.diagnostics import status as build_status

        check = request.query_params.get("check") == "1"
        run_doctor = request.query_params.get("doctor") in ("1", "live")
        report = build_status(store, ui.settings, None, check)
        findings: list[dict[str, str]] | None = None
        doctor_error = ""
        if run_doctor:
            try:
                findings = doctor_findings(
                    ui.settings, request.query_params.get("doctor") == "live"
                )
            except ConvmemError as exc:
                doctor_error = str(exc)
        return ui.render(
            request,
            "status.html",
            report=report,
            checked=check,
            findings=findings,
            doctor_error=doctor_error,
        )
