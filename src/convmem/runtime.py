"""``MemoryRuntime``: the host-neutral object every adapter drives.

One runtime owns one store and one set of settings. Hosts call:

* :meth:`session_start` when a session starts, resumes or was just compacted (with its
  ``project``, when it has one), and :meth:`start_block` for what earlier sessions of
  the project settled;
* :meth:`on_event` / :meth:`on_events` after the host commits events
  (capture, then incremental extraction, then validation of assistant output);
* :meth:`pre_step` before a model step (retrieve and assemble; returns the
  message text to insert, or ``None``, and logs the attempt);
* :meth:`pre_execute` before a tool runs (preconditions: allow or deny).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from convmem.capture import Capture, CaptureResult, Event, is_user_evidence
from convmem.config import Settings, load_settings
from convmem.memory.store import MemoryStore, utc_now


@dataclass(frozen=True)
class ToolDecision:
    """The answer to :meth:`MemoryRuntime.pre_execute`."""

    allowed: bool
    reason: str | None = None


def open_store(settings: Settings, clock: Callable[[], str] = utc_now) -> MemoryStore:
    """Open the configured store (the SQLite file in the data dir by default)."""
    url = str(settings["store"] or "")
    if url.startswith(("postgresql://", "postgres://")):
        from convmem.memory.pg_store import PgMemoryStore

        store: MemoryStore = PgMemoryStore.open(url, clock)
        return store
    if url.startswith("sqlite:///"):
        url = url[len("sqlite:///") :]
    return MemoryStore.open(url or str(settings.db_path), clock)


class MemoryRuntime:
    """Capture, extraction, retrieval, assembly and validation behind a few calls."""

    def __init__(self, store: MemoryStore, settings: Settings | None = None) -> None:
        self.settings = settings or load_settings()
        self.store = store
        self.capture = Capture(store, self.settings)
        #: Skip extraction and validation after capture (they catch up next time).
        self.defer_derived = False
        #: Messages extracted at most per capture (None: all): a host that must answer
        #: fast bounds its work, and :meth:`catch_up` or the next capture goes on.
        self.extract_limit: int | None = None

    @classmethod
    def open(cls, settings: Settings | None = None) -> MemoryRuntime:
        settings = settings or load_settings()
        return cls(open_store(settings), settings)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- session and events ------------------------------------------------------------

    def session_start(self, session_id: str, source: str = "startup", **meta: Any) -> None:
        """Record the session (cwd, project, origin, host_version) and re-arm.

        ``source`` says why (startup, resume, compact); metadata not given is kept.
        ``project`` files the session under a project: call this before its events
        arrive, so that extraction links them to what the project's other sessions
        settled (see :mod:`convmem.projects`).
        """
        with self.store.transaction():
            self.store.touch_session(session_id, **meta)

    def join_project(self, session_id: str, project: str | None) -> str | None:
        """File the session under ``project`` unless it has a project already; returns the
        session's project. A host calls it when it learns where the session works."""
        current = self.store.session_project(session_id)
        if current or not project:
            return current
        with self.store.transaction():
            self.store.touch_session(session_id, project=project)
        return project

    def start_block(self, session_id: str, **options: Any) -> str | None:
        """The project's standing memory for a session whose context starts empty (a new,
        cleared or resumed session): what its earlier sessions settled, once.

        None when the session has no project, ``memory.scope`` is ``session``, nothing
        stands, or a block still in the session's context already shows it. Options are
        :meth:`assemble`'s (a host's ``budget``, ``token_meter``, ...).
        """
        from convmem.projects import remember_start_block, resolve_scope

        if not resolve_scope(self.store, self.settings, session_id).wide:
            return None
        options.setdefault("trigger", "session-start")
        result = self.assemble(session_id, None, query="", **options)
        if not result.injected:
            return None
        remember_start_block(self.store, session_id, result.items)
        return str(result.text)

    def on_event(self, event: Event) -> CaptureResult:
        return self.on_events([event])

    def on_events(self, events: Iterable[Event]) -> CaptureResult:
        """Capture a batch; then bring derived memory up to date for touched sessions."""
        batch = list(events)
        result = self.capture.capture_many(batch)
        for session_id in sorted({e.session_id for e in batch}):
            self.after_capture(session_id)
        return result

    def project_sink(self, project: str) -> Callable[[Iterable[Event]], CaptureResult]:
        """:meth:`on_events` for sessions of ``project``: each session is filed under it
        before its first events are captured (a session with a project keeps it)."""

        def sink(events: Iterable[Event]) -> CaptureResult:
            batch = list(events)
            for session_id in dict.fromkeys(e.session_id for e in batch):
                self.join_project(session_id, project)
            return self.on_events(batch)

        return sink

    def after_capture(self, session_id: str) -> None:
        """Extraction from the cursor, then validation of new assistant output.

        With :attr:`defer_derived` set (a hook that must answer fast), both wait for
        the next capture; their cursors make the catch-up exact.
        """
        if self.defer_derived:
            return
        from convmem.memory.extraction import Extractor

        Extractor(self.store, self.settings).run(session_id, self.extract_limit)
        if self.settings["validation.enabled"]:
            from convmem.validation import Validator

            Validator(self.store, self.settings).validate_new(session_id)
        else:
            # the cursor still moves, so turning validation on later checks new output
            # rather than the whole history
            newest = self.store.checkpoint(session_id).last_event_seq
            with self.store.transaction():
                self.store.advance_checkpoint(session_id, "last_validate_seq", newest)

    def catch_up(self, session_id: str, max_events: int = 64) -> int:
        """Extract at most ``max_events`` messages from the extraction cursor; returns how
        many messages still wait (0: caught up).

        Any host path can call it, a resident process between requests for instance, so
        that a long backlog (a session captured for the first time) is extracted in
        bounded steps instead of holding up one request. Each message's items and the
        cursor past it commit together, so steps may stop anywhere.
        """
        from convmem.memory.extraction import Extractor

        Extractor(self.store, self.settings).run(session_id, max_events)
        return self.backlog(session_id)

    def backlog(self, session_id: str) -> int:
        """Messages captured but not extracted yet (an index count)."""
        cursor = self.store.checkpoint(session_id).last_extract_seq
        return self.store.count_events(
            session_id, after=cursor, types=("user/message", "assistant/message")
        )

    def next_seq(self, session_id: str) -> int:
        """The sequence number after the last captured event of the session."""
        return self.store.checkpoint(session_id).last_event_seq + 1

    def latest_user_text(self, session_id: str) -> str | None:
        """The newest text the person typed; generated messages never count."""
        for event in self.store.events(
            session_id, types=["user/message"], newest_first=True, limit=50
        ):
            if is_user_evidence(event.type, event.source_kind, event.text) and event.text:
                return event.text
        return None

    # --- steps ---------------------------------------------------------------------------

    def pre_step(
        self,
        session_id: str,
        messages: Sequence[str] | None = None,
        turn: int | None = None,
        step: int | None = None,
        query: str | None = None,
        *,
        trigger: str = "pre-step",
        token_meter: Callable[[str], int] | None = None,
        budget: int | None = None,
    ) -> str | None:
        """Assemble the memory message for this step, log it, return its text or None.

        ``messages`` are the texts the model can already see in this step; ``None``
        lets the runtime infer them (every event since the last compaction).
        ``query`` defaults to the latest real user text.
        """
        result = self.assemble(
            session_id,
            messages,
            turn,
            step,
            query,
            trigger=trigger,
            token_meter=token_meter,
            budget=budget,
        )
        return result.text if result.injected else None

    def assemble(
        self,
        session_id: str,
        messages: Sequence[str] | None = None,
        turn: int | None = None,
        step: int | None = None,
        query: str | None = None,
        *,
        trigger: str = "pre-step",
        token_meter: Callable[[str], int] | None = None,
        budget: int | None = None,
        log: bool = True,
        project: str | None = None,
    ) -> Any:
        """Like :meth:`pre_step` but returns the whole :class:`AssemblyResult`.

        ``project`` assembles for a session the store does not know yet as a new
        session of that project (what it would be given when it starts).
        """
        from convmem.assembly import Assembler

        if query is None:
            query = self.latest_user_text(session_id) or ""
        assembler = Assembler(self.store, self.settings)
        result = assembler.assemble(
            session_id,
            query,
            visible=messages,
            turn=turn,
            step=step,
            token_meter=token_meter,
            budget=budget,
            trigger=trigger,
            project=project,
        )
        if log:
            assembler.log(result)
        return result

    def pre_execute(
        self, session_id: str, tool_name: str, tool_input: dict[str, Any]
    ) -> ToolDecision:
        """Run the configured preconditions for a tool call."""
        if not self.settings["validation.preconditions"]:
            return ToolDecision(True)
        from convmem.validation import Validator

        decision = Validator(self.store, self.settings).check_preconditions(
            session_id, tool_name, tool_input
        )
        return ToolDecision(decision.allowed, decision.reason)
