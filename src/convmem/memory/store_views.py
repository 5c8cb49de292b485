"""Store methods for browsing: paged lists of sessions, items and logs.

The inspector (``convmem ui``) shows a session of a hundred thousand events one page
at a time, so every list here is a keyset page over an index: a page costs what it
shows, never what the session holds. A page is asked for with the key of the last
row of the previous one (``before``), newest first, and ``limit`` rows come back.
Counts are per session, over the session's range of an index.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from convmem.memory.models import MemoryItem, StoredEvent

if TYPE_CHECKING:
    from convmem.core.db import MemoryDatabase

_ASSEMBLY_LIST = (
    "id, session_id, at, trigger, turn, step, query, budget, used_tokens, token_source,"
    " injected, message_seq, sections_json, items_json, omitted_json, reasons_json, errors_json"
)
_ASSEMBLY_JSON = ("sections", "items", "omitted", "reasons", "errors")
_VALIDATION_JSON = ("violations", "errors")


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def _decode(row: Any, names: tuple[str, ...]) -> dict[str, Any]:
    out = dict(row)
    for name in names:
        out[name] = json.loads(out.pop(f"{name}_json"))
    return out


class ViewStoreMixin:
    db: MemoryDatabase
    now: Callable[[], str]

    # --- projects and sessions ---------------------------------------------------------

    def projects(self) -> list[dict[str, Any]]:
        """Each project with its number of sessions and latest activity ('' = none given)."""
        rows = self.db.query(
            "SELECT coalesce(project, '') AS project, count(*) AS sessions,"
            " max(updated_at) AS updated_at FROM sessions GROUP BY coalesce(project, '')"
            " ORDER BY max(updated_at) DESC, coalesce(project, '')"
        )
        return [dict(r) for r in rows]

    def session_page(
        self,
        *,
        project: str | None = None,
        before: tuple[str, str] | None = None,
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """Sessions, most recently active first, each with its event and item counts.

        ``project`` keeps one project's sessions ('' for those without one);
        ``before`` is the ``(updated_at, session_id)`` of the previous page's last row.
        """
        sql = (
            "SELECT s.session_id, s.project, s.cwd, s.origin, s.host_version, s.created_at,"
            " s.updated_at,"
            " (SELECT count(*) FROM events e WHERE e.session_id = s.session_id) AS events,"
            " (SELECT count(*) FROM memory_items m WHERE m.session_id = s.session_id) AS items,"
            " (SELECT max(seq) FROM events e WHERE e.session_id = s.session_id) AS last_seq"
            " FROM sessions s WHERE 1 = 1"
        )
        params: list[Any] = []
        if project is not None:
            sql += " AND coalesce(s.project, '') = ?"
            params.append(project)
        if before is not None:
            sql += " AND (s.updated_at < ? OR (s.updated_at = ? AND s.session_id < ?))"
            params += [before[0], before[0], before[1]]
        sql += " ORDER BY s.updated_at DESC, s.session_id DESC LIMIT ?"
        params.append(limit)
        return [dict(r) for r in self.db.query(sql, params)]

    def session_summary(self, session_id: str) -> dict[str, Any] | None:
        """One session's row with its first and last event, or None if it is unknown.

        Two index lookups; how many events the session holds is a pass over them
        (``event_type_counts``), left to the pages that show it."""
        row = self.db.one("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
        first = self.db.one(
            "SELECT seq, time, ingested_at FROM events WHERE session_id = ? ORDER BY seq LIMIT 1",
            (session_id,),
        )
        if row is None and first is None:
            return None
        last = self.db.one(
            "SELECT seq, time, ingested_at FROM events WHERE session_id = ?"
            " ORDER BY seq DESC LIMIT 1",
            (session_id,),
        )
        out: dict[str, Any] = dict(row) if row is not None else {"session_id": session_id}
        out["first_event"] = None if first is None else dict(first)
        out["last_event"] = None if last is None else dict(last)
        return out

    # --- events --------------------------------------------------------------------------

    def timeline_events(
        self,
        session_id: str,
        *,
        types: Sequence[str] = (),
        before: int | None = None,
        after: int | None = None,
        limit: int = 50,
    ) -> list[StoredEvent]:
        """A page of events of these types (all when empty), in seq order.

        With ``after``: the oldest ``limit`` events past it; otherwise the newest ones
        below ``before`` (or the newest of all). Each type is read from the
        ``(session_id, type, seq)`` index on its own and the pages merged, so a rare
        type costs as little as a common one (one query over several types would
        either sort every match or walk the whole session looking for them).
        """
        newest_first = after is None
        wanted: list[str | None] = [*dict.fromkeys(types)] or [None]
        rows: list[StoredEvent] = []
        for event_type in wanted:
            sql = "SELECT * FROM events WHERE session_id = ?"
            params: list[Any] = [session_id]
            if event_type is not None:
                sql += " AND type = ?"
                params.append(event_type)
            if after is not None:
                sql += " AND seq > ?"
                params.append(after)
            elif before is not None:
                sql += " AND seq < ?"
                params.append(before)
            sql += " ORDER BY seq DESC LIMIT ?" if newest_first else " ORDER BY seq LIMIT ?"
            params.append(limit)
            rows += StoredEvent.from_rows(self.db.query(sql, params))
        rows.sort(key=lambda e: e.seq, reverse=newest_first)
        page = rows[:limit]
        return page[::-1] if newest_first else page

    # --- memory items ------------------------------------------------------------------

    def item_page(
        self,
        session_id: str,
        *,
        statuses: Sequence[str] = (),
        kinds: Sequence[str] = (),
        evidence_types: Sequence[str] = (),
        before: tuple[int | None, str] | None = None,
        limit: int = 50,
    ) -> list[MemoryItem]:
        """Items newest first (by source event, then id), filtered; empty filters keep all.

        ``before`` is the ``(derived_from_seq, id)`` of the previous page's last row.
        Items without a source event come last, by id.
        """
        sql = "SELECT * FROM memory_items WHERE session_id = ?"
        params: list[Any] = [session_id]
        for column, values in (
            ("status", statuses),
            ("kind", kinds),
            ("evidence_type", evidence_types),
        ):
            if values:
                sql += f" AND {column} IN ({_marks(values)})"
                params += list(values)
        if before is not None and before[0] is None:
            sql += " AND derived_from_seq IS NULL AND id < ?"
            params.append(before[1])
        elif before is not None:
            sql += (
                " AND (derived_from_seq < ? OR (derived_from_seq = ? AND id < ?)"
                " OR derived_from_seq IS NULL)"
            )
            params += [before[0], before[0], before[1]]
        # the index on (session_id, derived_from_seq) gives this order; only ties sort
        sql += " ORDER BY derived_from_seq DESC NULLS LAST, id DESC LIMIT ?"
        params.append(limit)
        return MemoryItem.from_rows(self.db.query(sql, params))

    def item_counts(self, session_id: str) -> list[dict[str, Any]]:
        """How many items of each (kind, status) the session has."""
        rows = self.db.query(
            "SELECT kind, status, count(*) AS n FROM memory_items WHERE session_id = ?"
            " GROUP BY kind, status ORDER BY kind, status",
            (session_id,),
        )
        return [{"kind": r["kind"], "status": r["status"], "n": int(r["n"])} for r in rows]

    def correction_seqs(
        self, session_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[int]:
        """Events that corrected an earlier item (their item supersedes one), newest first."""
        rows = self._newest_first(
            "SELECT DISTINCT derived_from_seq FROM memory_items WHERE session_id = ?"
            " AND supersedes_json <> '[]' AND derived_from_seq IS NOT NULL",
            session_id,
            "derived_from_seq",
            before,
            limit,
        )
        return [int(r["derived_from_seq"]) for r in rows]

    def memory_events_page(
        self, session_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """The session's lifecycle rows (every item), newest first."""
        rows = self._newest_first(
            "SELECT id, memory_id, session_id, event, at, actor, detail_json FROM memory_events"
            " WHERE session_id = ?",
            session_id,
            "id",
            before,
            limit,
        )
        return [_decode(r, ("detail",)) for r in rows]

    # --- logs ----------------------------------------------------------------------------

    def assembly_log_page(
        self, session_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """Assembly attempts newest first, without their text (see ``assembly_log``)."""
        sql = f"SELECT {_ASSEMBLY_LIST} FROM assembly_logs WHERE session_id = ?"
        rows = self._newest_first(sql, session_id, "id", before, limit)
        return [_decode(r, _ASSEMBLY_JSON) for r in rows]

    def validation_log_page(
        self, session_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """Validation runs newest first."""
        sql = "SELECT * FROM validation_logs WHERE session_id = ?"
        rows = self._newest_first(sql, session_id, "id", before, limit)
        return [_decode(r, _VALIDATION_JSON) for r in rows]

    def _newest_first(
        self, sql: str, session_id: str, key: str, before: int | None, limit: int
    ) -> list[Any]:
        """One page of ``sql``'s rows (filtered by session), newest ``key`` first,
        strictly below ``before`` when given (keyset paging)."""
        params: list[Any] = [session_id]
        if before is not None:
            sql += f" AND {key} < ?"
            params.append(before)
        return list(self.db.query(f"{sql} ORDER BY {key} DESC LIMIT ?", [*params, limit]))
