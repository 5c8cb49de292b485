"""Store methods for assembly logs, validation logs and host read cursors."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convmem.core.db import MemoryDatabase

_ASSEMBLY_JSON = ("sections", "items", "omitted", "reasons", "errors")
_VALIDATION_JSON = ("violations", "errors")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _decode(row: Any, names: tuple[str, ...]) -> dict[str, Any]:
    out = dict(row)
    for name in names:
        out[name] = json.loads(out.pop(f"{name}_json"))
    return out


class LogStoreMixin:
    db: MemoryDatabase
    now: Callable[[], str]

    # --- assembly logs -------------------------------------------------------------------

    def insert_assembly_log(self, log: dict[str, Any], retention: int) -> int:
        """Record one assembly attempt and keep at most ``retention`` rows per session."""
        cur = self.db.execute(
            "INSERT INTO assembly_logs (session_id, at, trigger, turn, step, query, budget,"
            " used_tokens, token_source, content_hash, injected, message_seq, text,"
            " sections_json, items_json, omitted_json, reasons_json, errors_json)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                log["session_id"],
                self.now(),
                log.get("trigger", "pre-step"),
                log.get("turn"),
                log.get("step"),
                log.get("query", ""),
                log["budget"],
                log["used_tokens"],
                log.get("token_source", "estimate"),
                log.get("content_hash"),
                int(bool(log.get("injected"))),
                log.get("message_seq"),
                log.get("text", ""),
                *(_dumps(log.get(name, [])) for name in _ASSEMBLY_JSON),
            ),
        )
        new_id = int(cur.lastrowid or 0)
        self.db.execute(
            "DELETE FROM assembly_logs WHERE session_id = ? AND id <= ("
            " SELECT id FROM assembly_logs WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
            (log["session_id"], log["session_id"], retention),
        )
        return new_id

    def latest_assembly_log(
        self, session_id: str | None = None, sessions: Sequence[str] | None = None
    ) -> dict[str, Any] | None:
        """The newest assembly log row: of one session, of any of ``sessions``, or of all."""
        if sessions is not None:
            if not sessions:
                return None
            marks = ",".join("?" * len(sessions))
            row = self.db.one(
                f"SELECT * FROM assembly_logs WHERE session_id IN ({marks})"
                " ORDER BY id DESC LIMIT 1",
                list(sessions),
            )
        elif session_id is None:
            row = self.db.one("SELECT * FROM assembly_logs ORDER BY id DESC LIMIT 1")
        else:
            row = self.db.one(
                "SELECT * FROM assembly_logs WHERE session_id = ? ORDER BY id DESC LIMIT 1",
                (session_id,),
            )
        return None if row is None else _decode(row, _ASSEMBLY_JSON)

    def assembly_log(self, log_id: int) -> dict[str, Any] | None:
        row = self.db.one("SELECT * FROM assembly_logs WHERE id = ?", (log_id,))
        return None if row is None else _decode(row, _ASSEMBLY_JSON)

    def undelivered_blocks(self, session_id: str, limit: int = 20) -> list[tuple[int, str]]:
        """``(id, text)`` of the newest injected blocks whose host message is not known yet."""
        rows = self.db.query(
            "SELECT id, text FROM assembly_logs WHERE session_id = ? AND injected = 1"
            " AND message_seq IS NULL ORDER BY id DESC LIMIT ?",
            (session_id, limit),
        )
        return [(int(r["id"]), str(r["text"])) for r in rows]

    def set_message_seq(self, log_id: int, seq: int) -> None:
        """Record the seq under which the host stored an assembly's block."""
        self.db.execute(
            "UPDATE assembly_logs SET message_seq = ? WHERE id = ? AND message_seq IS NULL",
            (seq, log_id),
        )

    # --- validation logs ------------------------------------------------------------------

    def insert_validation_log(self, log: dict[str, Any]) -> int:
        cur = self.db.execute(
            "INSERT INTO validation_logs (session_id, event_seq, at, target, ok, checked, skipped,"
            " deterministic, blocked, repair_reminder, violations_json, errors_json)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                log["session_id"],
                log.get("event_seq"),
                self.now(),
                log.get("target", "assistant/message"),
                int(bool(log["ok"])),
                int(log.get("checked", 0)),
                int(log.get("skipped", 0)),
                int(bool(log.get("deterministic", True))),
                int(bool(log.get("blocked", False))),
                log.get("repair_reminder"),
                _dumps(log.get("violations", [])),
                _dumps(log.get("errors", [])),
            ),
        )
        return int(cur.lastrowid or 0)

    def latest_validation_log(self, session_id: str | None = None) -> dict[str, Any] | None:
        if session_id is None:
            row = self.db.one("SELECT * FROM validation_logs ORDER BY id DESC LIMIT 1")
        else:
            row = self.db.one(
                "SELECT * FROM validation_logs WHERE session_id = ? ORDER BY id DESC LIMIT 1",
                (session_id,),
            )
        return None if row is None else _decode(row, _VALIDATION_JSON)

    def validation_logs(self, session_id: str) -> list[dict[str, Any]]:
        rows = self.db.query(
            "SELECT * FROM validation_logs WHERE session_id = ? ORDER BY id", (session_id,)
        )
        return [_decode(r, _VALIDATION_JSON) for r in rows]

    def count_repair_reminders(self, session_id: str) -> int:
        return int(
            self.db.scalar(
                "SELECT count(*) FROM validation_logs WHERE session_id = ?"
                " AND repair_reminder IS NOT NULL",
                (session_id,),
            )
        )

    # --- host cursors ----------------------------------------------------------------------

    def host_cursor(self, session_id: str, source: str) -> tuple[int, dict[str, Any]]:
        row = self.db.one(
            "SELECT position, state_json FROM host_cursors WHERE session_id = ? AND source = ?",
            (session_id, source),
        )
        if row is None:
            return 0, {}
        return int(row["position"]), json.loads(row["state_json"])

    def set_host_cursor(
        self, session_id: str, source: str, position: int, state: dict[str, Any]
    ) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO host_cursors (session_id, source, position, state_json,"
            " updated_at) VALUES (?, ?, ?, ?, ?)",
            (session_id, source, position, _dumps(state), self.now()),
        )
