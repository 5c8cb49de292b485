"""Pages for search, skills and rules, validation runs, and status (with ``doctor``).

Search is :func:`convmem.retrieval.search` (the call behind ``convmem search``),
shown with each item's score breakdown. Status is :func:`convmem.diagnostics.status`.

``doctor`` findings come from :mod:`convmem.doctor` when that module is installed
(it arrives with the host-integration work); until then the page shows status only.
The inspector runs doctor only when asked, since its live check fires a hook call.
:func:`doctor_findings` is the one place that knows doctor's interface.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Mapping
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from convmem.errors import ConvmemError
from convmem.ui.app import PAGE_SIZE, UserError

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore
    from convmem.ui.app import Inspector

SEARCH_LIMIT = 25


def doctor_available() -> bool:
    return find_spec("convmem.doctor") is not None


def _finding(value: Any) -> dict[str, str]:
    """One finding as ``{level, message, fix}`` from whatever shape doctor returns."""
    if hasattr(value, "as_dict"):
        value = value.as_dict()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if not isinstance(value, Mapping):
        return {"level": "", "message": str(value), "fix": ""}
    level = value.get("level") or value.get("status") or ""
    if not level and "ok" in value:
        level = "ok" if value["ok"] else "problem"
    message = value.get("message") or value.get("finding") or value.get("text") or ""
    where = value.get("host") or value.get("where") or ""
    return {
        "level": str(level),
        "message": f"{where}: {message}" if where else str(message),
        "fix": str(value.get("fix") or ""),
    }


def doctor_findings(settings: Settings, store: MemoryStore, live: bool) -> list[dict[str, str]]:
    """Run :mod:`convmem.doctor` (its ``findings`` or ``run`` function) and return its
    findings as ``{level, message, fix}``; passes ``settings``, ``store`` and ``live``
    to the parameters the function has."""
    module = importlib.import_module("convmem.doctor")
    func = getattr(module, "findings", None) or getattr(module, "run", None)
    if not callable(func):
        raise ConvmemError("convmem.doctor has neither findings() nor run() to call")
    offered = {"settings": settings, "store": store, "live": live}
    params = inspect.signature(func).parameters
    result = func(**{k: v for k, v in offered.items() if k in params})
    if isinstance(result, Mapping):
        result = result.get("findings", [])
    return [_finding(f) for f in result or []]


def register(ui: Inspector) -> None:
    store = ui.store

    @ui.route("/search")
    async def search(request: Request) -> Response:
        from convmem.retrieval import search as run_search

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
            if not doctor_available():
                raise UserError("This convmem has no doctor yet; status is all there is.", 404)
            try:
                findings = doctor_findings(
                    ui.settings, store, request.query_params.get("doctor") == "live"
                )
            except ConvmemError as exc:
                doctor_error = str(exc)
        return ui.render(
            request,
            "status.html",
            report=report,
            checked=check,
            doctor=doctor_available(),
            findings=findings,
            doctor_error=doctor_error,
        )
