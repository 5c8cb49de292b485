"""Status data: counts, cursors, budget, latest logs, schema and compatibility.

Everything here returns plain data; the CLI decides how to print it. Problems are
reported as values, not raised, so that ``status`` works on a damaged store too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convmem.core.constants import COMPACTION_EVENT_TYPES, EXTRACTED_TYPES
from convmem.core.db import sqlite_info
from convmem.core.schema import SCHEMA_VERSION
from convmem.core.store_url import mask_url
from convmem.errors import StoreError

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore


def compatibility_report(
    store: MemoryStore, settings: Settings, session_id: str | None
) -> dict[str, Any]:
    """What compaction behaviour to expect, what was seen, what cannot be seen."""
    policy = str(settings["compatibility.compaction_policy"])
    counts = store.event_type_counts(session_id)
    seen = {etype: counts.get(etype, 0) for etype in COMPACTION_EVENT_TYPES}
    compactions = seen.get("compaction/start", 0) + seen.get("compaction/summary", 0)
    if policy == "auto":
        detected = "compaction-basic" if compactions else "no compaction seen yet"
    else:
        detected = policy
    notes = []
    if policy in ("auto", "compaction-basic"):
        notes.append("a block at every step with input; after a compaction what it hid comes back")
    if policy == "billion-context":
        notes.append("ordinary pre-step assembly is suppressed; a block once after each compaction")
    if policy == "none":
        notes.append("nothing counts as visible, so blocks may repeat it; the block says so")
    if not settings["compatibility.reinject_after_compaction"]:
        notes.append("reinject_after_compaction is off: what a compaction hid is not brought back")
    return {
        "policy": policy,
        "detected": detected,
        "compaction_events": seen,
        "reinject_after_compaction": bool(settings["compatibility.reinject_after_compaction"]),
        "not_observable": [
            "the host's compaction thresholds and summariser configuration",
            "messages the host keeps visible after a compaction (inferred from events)",
        ],
        "notes": notes,
    }


def latest_validation(store: MemoryStore, session_id: str | None) -> dict[str, Any] | None:
    """The latest validation run, as ``status`` and ``explain`` show it (None: none yet)."""
    validation = store.latest_validation_log(session_id)
    if validation is None:
        return None
    keys = ("id", "session_id", "event_seq", "ok", "checked", "skipped", "blocked")
    return {k: validation[k] for k in keys} | {
        "deterministic": validation["deterministic"],
        "violations": len(validation["violations"]),
        "repair_reminder": validation["repair_reminder"] is not None,
        "messages": [f"[{v['check']}] {v['message']}" for v in validation["violations"]],
        "errors": list(validation["errors"]),
    }


def validation_line(lv: dict[str, Any] | None) -> str:
    """One line for the latest validation run, as ``status`` and ``explain`` print it."""
    if not lv:
        return "latest validation: none"
    verdict = "ok" if lv["ok"] else f"{lv['violations']} violation(s)"
    if lv.get("errors"):
        verdict += f", {len(lv['errors'])} check error(s)"
    tail = ", blocked" if lv["blocked"] else ""
    if lv.get("repair_reminder"):
        tail += ", repair reminder issued"
    return f"latest validation: #{lv['id']} seq {lv['event_seq']}, {verdict}{tail}"


def status(
    store: MemoryStore, settings: Settings, session_id: str | None = None, check: bool = False
) -> dict[str, Any]:
    """The data behind ``convmem status``.

    With ``check``, a store too damaged to count still gets its integrity report,
    beside the ``error`` that stopped the counting: that is when the check matters.
    """
    try:
        report = _overview(store, settings, session_id)
    except StoreError as exc:
        if not check:
            raise
        location = _location(store, settings)
        report = {"store": {"backend": store.backend, "location": location}, "error": str(exc)}
    if check:
        problems = store.integrity_check()
        report["integrity"] = {"ok": not problems, "problems": problems}
    from pathlib import Path

    from convmem.doctor import quiet_hosts

    report["host_warnings"] = quiet_hosts(settings, Path.cwd())
    return report


def _location(store: MemoryStore, settings: Settings) -> str:
    # a PostgreSQL store's path is its URL with any password masked
    if store.backend == "postgresql":
        return str(store.db.path)
    return mask_url(str(settings["store"] or settings.db_path))


def _overview(store: MemoryStore, settings: Settings, session_id: str | None) -> dict[str, Any]:
    info = sqlite_info() if store.backend == "sqlite" else {}
    report: dict[str, Any] = {
        "store": {
            "backend": store.backend,
            "location": _location(store, settings),
            "schema_version": store.schema_version(),
            "schema_expected": SCHEMA_VERSION,
            **info,
        },
        "counts": store.table_counts(session_id),
        "pending_extractions": store.count_pending(session_id),
        "budget": {
            "tokens": settings.budget,
            "soft": settings["assembly.soft_budget_tokens"],
            "min": settings["assembly.min_budget_tokens"],
        },
        "sessions": [],
    }
    sessions = store.sessions()
    if session_id is not None:
        sessions = [s for s in sessions if s["session_id"] == session_id]
    for s in sessions:
        cp = store.checkpoint(s["session_id"])
        report["sessions"].append(
            {
                "session_id": s["session_id"],
                "events": s["events"],
                "not_extracted": store.count_events(
                    s["session_id"], after=cp.last_extract_seq, types=EXTRACTED_TYPES
                ),
                "checkpoints": {
                    "last_event_seq": cp.last_event_seq,
                    "last_extract_seq": cp.last_extract_seq,
                    "last_assembly_seq": cp.last_assembly_seq,
                    "last_validate_seq": cp.last_validate_seq,
                },
            }
        )
    report["not_extracted"] = sum(s["not_extracted"] for s in report["sessions"])
    by_project: dict[str, list[str]] = {}
    for s in sessions:
        if s.get("project"):
            by_project.setdefault(str(s["project"]), []).append(str(s["session_id"]))
    report["projects"] = [
        {"project": project, "sessions": store.project_sessions(project)}
        for project in sorted(by_project)
    ]
    latest = store.latest_assembly_log(session_id)
    report["latest_assembly"] = (
        None
        if latest is None
        else {
            k: latest[k]
            for k in (
                "id",
                "session_id",
                "trigger",
                "budget",
                "used_tokens",
                "token_source",
                "injected",
            )
        }
        | {"errors": latest["errors"]}
    )
    report["latest_validation"] = latest_validation(store, session_id)
    report["compatibility"] = compatibility_report(store, settings, session_id)
    return report
