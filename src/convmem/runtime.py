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
from convmem.errors import StoreError
from convmem.memory.store import MemoryStore, utc_now

#: ``host_cursors.source`` holding the id of the last validation run a host acted on.
REPAIR_CURSOR = "convmem/repair"


class _Undo(Exception):
    """Rolls back a transaction on purpose (see :meth:`MemoryRuntime._as_if_said`)."""


@dataclass(frozen=True)
class ToolDecision:
    """The answer to :meth:`MemoryRuntime.pre_execute`."""

    allowed: bool
    reason: str | None = None


def open_store(settings: Settings, clock: Callable[[], str] = utc_now) -> MemoryStore:
    """Open the configured store (the SQLite file in the data dir by default)."""
    from convmem.core.paths import UntrustedFolderError, check_data_dir
    from convmem.core.store_url import backend_of, sqlite_path

    try:  # the logs go there whatever the store, and the SQLite file by default
        check_data_dir(settings.data_dir)
    except UntrustedFolderError as exc:
        raise StoreError(str(exc)) from None
    url = str(settings["store"] or "")
    if backend_of(url) == "postgresql":
        from convmem.memory.pg_store import PgMemoryStore

        store: MemoryStore = PgMemoryStore.open(
            url,
            clock,
            connect_timeout=int(settings["postgresql.connect_timeout_seconds"]),
            statement_timeout=float(settings["postgresql.statement_timeout_seconds"]),
        )
        return store
    return MemoryStore.open(sqlite_path(url) or str(settings.db_path), clock)


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
        self.link_delivered(batch)
        for session_id in sorted({e.session_id for e in batch}):
            self.after_capture(session_id)
        return result

    def link_delivered(self, events: Sequence[Event]) -> None:
        """Fill ``message_seq`` of the assembly logs whose blocks came back from the host.

        A host stores the block it inserted (DSH as a ``convmem`` message, Claude Code
        as a hook-context attachment line) and hands it back like any event; the log
        whose text it carries, newest first and not linked yet, is the one it delivered.
        """
        from convmem.capture import is_convmem_block
        from convmem.core.text import collapse_spaces, normalize_text

        for event in events:
            text = event.text if isinstance(event.text, str) else ""
            if event.type != "user/message" or not is_convmem_block(text):
                continue
            said = collapse_spaces(normalize_text(text))
            with self.store.transaction():
                for log_id, block in self.store.undelivered_blocks(event.session_id):
                    shown = collapse_spaces(normalize_text(block))
                    if shown and (shown == said or shown in said):
                        self.store.set_message_seq(log_id, event.seq)
                        break

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

    def extract_recent(self, session_id: str, max_events: int = 64) -> bool:
        """Extract what arrived since the cursor now, if that is a small piece of work.

        A hook that answers a prompt defers derived work (:attr:`defer_derived`), but a
        correction typed in the prompt must be applied before that prompt's block. The
        usual backlog is the prompt and the reply before it; a longer one (a session
        captured for the first time) waits for the next capture rather than hold up
        the host. Returns True when extraction ran.
        """
        from convmem.memory.extraction import Extractor

        cursor = self.store.checkpoint(session_id).last_extract_seq
        backlog = self.store.events(
            session_id,
            after=cursor,
            types=["user/message", "assistant/message"],
            limit=max_events + 1,
        )
        if len(backlog) > max_events:
            return False
        Extractor(self.store, self.settings).run(session_id)
        return True

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
            if is_user_evidence(event.type, event.source_kind, event.text, event.role) and (
                event.text
            ):
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
        max_units: int | None = None,
        shadowed: Sequence[tuple[int, int]] | None = None,
        pending: Event | None = None,
    ) -> str | None:
        """Assemble the memory message for this step, log it, return its text or None.

        ``messages`` are the texts the model can already see in this step; ``None``
        lets the runtime infer them (every event since the last compaction).
        ``query`` defaults to the latest real user text. ``max_units`` is the host's
        limit on the message's length in UTF-16 units, if it has one. What an earlier
        convmem block in those messages already says is not said again. ``shadowed``
        are the seq ranges the host's compactions hid, when it says (DSH does): then
        every other event, and every convmem block among them, counts as visible.
        ``pending`` is the step's own user message when the host has not committed it
        yet (DSH commits it after the pre-step): for this block it counts as said, so
        a correction in it is applied, but nothing of it is stored; the host delivers
        it later under its own seq (``pending.seq`` should be that seq's best guess).
        """
        from convmem.delivery import share_allowance

        skip = self.compaction_skip(session_id, trigger)
        if skip is not None:
            self._log_skip(session_id, skip, turn, step, trigger)
            return None
        if not self.settings["compatibility.reinject_after_compaction"]:
            # what a compaction hid counts as still visible: nothing is brought back
            messages, shadowed = None, []
        share = float(self.settings["assembly.max_context_share"])
        allowed = share_allowance(self.store, session_id, share, shadowed)

        def build(log: bool) -> Any:
            return self.assemble(
                session_id,
                messages,
                turn,
                step,
                query,
                trigger=trigger,
                token_meter=token_meter,
                budget=budget,
                max_units=max_units,
                repeat=False,
                shadowed=shadowed,
                share_units=allowed,
                log=log,
            )

        if pending is not None and not self._already_said(session_id, pending.text):
            from convmem.assembly import Assembler

            result = self._as_if_said(pending, lambda: build(False))
            Assembler(self.store, self.settings).log(result)
        else:
            result = build(True)
        return result.text if result.injected else None

    def compaction_skip(self, session_id: str, trigger: str) -> str | None:
        """Why the compaction settings leave this step without a block (None: they do not).

        ``reinject_after_compaction = false``: a block asked for because of a compaction
        (``trigger="compaction"``) is not sent, and ordinary blocks treat what a
        compaction hid as still visible. ``compaction_policy = billion-context``: the
        context is so large that nothing leaves it but through a compaction, which a
        gating compressor decides; ordinary per-step assembly is suppressed and a block
        goes out only once after each compaction.
        """
        from convmem.delivery import compaction_boundary

        if trigger == "compaction" and not self.settings["compatibility.reinject_after_compaction"]:
            return "compatibility.reinject_after_compaction is off: nothing is re-injected"
        if self.settings["compatibility.compaction_policy"] != "billion-context":
            return None
        boundary = compaction_boundary(self.store, session_id)
        if boundary is not None and boundary > self.store.checkpoint(session_id).last_assembly_seq:
            return None
        return (
            "compatibility.compaction_policy billion-context: ordinary pre-step assembly is"
            " suppressed; a block goes out once after each compaction"
        )

    def _log_skip(
        self, session_id: str, reason: str, turn: int | None, step: int | None, trigger: str
    ) -> None:
        from convmem.assembly import Assembler, AssemblyResult

        budget = self.settings.budget
        result = AssemblyResult(session_id, "", False, budget, 0, "estimate", "", turn, step)
        result.trigger, result.reasons = trigger, [reason]
        Assembler(self.store, self.settings).log(result)

    def _already_said(self, session_id: str, text: str) -> bool:
        from convmem.core.text import collapse_spaces, normalize_text

        wanted = collapse_spaces(normalize_text(text))
        newest = self.store.events(session_id, types=["user/message"], newest_first=True, limit=5)
        return any(collapse_spaces(e.text) == wanted for e in newest)

    def _as_if_said(self, event: Event, build: Callable[[], Any]) -> Any:
        """Build with ``event`` captured and extracted, then undo both."""
        from convmem.memory.extraction import Extractor

        built: list[Any] = []
        try:
            with self.store.transaction():
                self.capture.capture_many([event])
                Extractor(self.store, self.settings).run(event.session_id)
                built.append(build())
                raise _Undo
        except _Undo:
            pass
        result = built[0]
        # its seq is a guess: cite it as what it is
        result.text = result.text.replace(f"[ev seq:{event.seq}]", "[ev this prompt]")
        result.reasons.append("this step's prompt counted as said before the host stored it")
        return result

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
        max_units: int | None = None,
        repeat: bool = True,
        shadowed: Sequence[tuple[int, int]] | None = None,
        share_units: int | None = None,
        project: str | None = None,
    ) -> Any:
        """Like :meth:`pre_step` but returns the whole :class:`AssemblyResult`.

        With ``repeat`` (the default here, as for ``convmem assemble``) the block is
        whole even when an earlier one is still visible; :meth:`pre_step` turns it off.
        ``project`` assembles for a session the store does not know yet as a new
        session of that project (what it would be given when it starts).
        """
        from convmem.assembly import Assembler

        if query is None:
            query = self.latest_user_text(session_id) or ""
        earlier = None if repeat else self.earlier_blocks(session_id, messages, shadowed)
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
            max_units=max_units,
            earlier=earlier,
            shadowed=shadowed,
            share_units=share_units,
            project=project,
        )
        if log:
            assembler.log(result)
        return result

    def earlier_blocks(
        self,
        session_id: str,
        messages: Sequence[str] | None,
        shadowed: Sequence[tuple[int, int]] | None = None,
    ) -> Any:
        """What convmem blocks the model still sees say (None: there is none).

        From ``messages`` when the host says what is visible, else from the blocks
        captured since the last compaction (hosts keep them in their logs).
        """
        from convmem.delivery import EarlierBlocks, earlier_blocks

        if messages is None:
            return earlier_blocks(self.store, session_id, shadowed)
        return EarlierBlocks.of(messages)

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

    # --- repairs -----------------------------------------------------------------------

    def repair_block(self, session_id: str) -> str | None:
        """The repair reminder to hold the host's turn open with, once per failed reply.

        Validation blocks only a deterministic failure of a check configured to block,
        while ``validation.max_repair_attempts`` remain (see :mod:`convmem.validation`);
        a host that can keep the model working on its reply (Claude Code's Stop hook,
        DSH's turn-stopping hook) asks here after capturing the reply. The answer is the
        reminder to give the model, or None; each blocked run is answered once.
        """
        if not self.settings["validation.enabled"]:
            return None
        log = self.store.latest_validation_log(session_id)
        if log is None or not log["blocked"] or not log["repair_reminder"]:
            return None
        with self.store.transaction():
            acted, _ = self.store.host_cursor(session_id, REPAIR_CURSOR)
            if int(log["id"]) <= acted:
                return None
            self.store.set_host_cursor(
                session_id, REPAIR_CURSOR, int(log["id"]), {"event_seq": log["event_seq"]}
            )
        return str(log["repair_reminder"])

    # --- reports (the CLI, MCP and the hosts' own commands answer with these) ----------

    def search(
        self,
        query: str,
        session_id: str | None = None,
        limit: int = 10,
        project: str | None = None,
    ) -> dict[str, Any]:
        """Items and raw user evidence that match ``query`` in a session, a project or
        the whole store (see :mod:`convmem.search`)."""
        from convmem.search import search

        return search(self.store, self.settings, query, session_id, limit, project)

    def inspect(self, item_id: str, query: str | None = None) -> dict[str, Any] | None:
        """An item with its lifecycle, sources, links and score (None: no such item).

        ``query`` defaults to the latest text the person typed in the item's session.
        """
        from convmem.retrieval import Retriever

        item = self.store.item(item_id)
        if item is None:
            return None
        if query is None:
            query = self.latest_user_text(item.session_id) or ""
        return Retriever(self.store, self.settings).inspect_item(item_id, query)

    def explain(
        self, session_id: str | None = None, sessions: Sequence[str] | None = None
    ) -> dict[str, Any] | None:
        """The latest logged assembly (of one session, of any of ``sessions``, or of all)
        with the latest validation run of its session."""
        from convmem.diagnostics import latest_validation

        log = self.store.latest_assembly_log(session_id, sessions)
        if log is None:
            return None
        return dict(log) | {"latest_validation": latest_validation(self.store, log["session_id"])}
