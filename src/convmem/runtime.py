"""``MemoryRuntime``: the host-neutral object every adapter drives.

One runtime owns one store and one set of settings. Hosts call:

* :meth:`on_event` / :meth:`on_events` after the host commits events
  (capture, then incremental extraction, then validation of assistant output);
* :meth:`pre_step` before a model step (retrieve and assemble; returns the
  message text to insert, or ``None``, and logs the attempt);
* :meth:`pre_execute` before a tool runs (preconditions: allow or deny).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from convmem.capture import Capture, CaptureResult, Event
from convmem.config import Settings, load_settings
from convmem.memory.store import MemoryStore, utc_now


def open_store(settings: Settings, clock: Any = utc_now) -> MemoryStore:
    """Open the configured store (the SQLite file in the data dir by default)."""
    url = str(settings["store"] or "")
    if url.startswith(("postgresql://", "postgres://")):
        from convmem.memory.pg_store import PgMemoryStore

        return PgMemoryStore.open(url, clock)
    if url.startswith("sqlite:///"):
        return MemoryStore.open(url[len("sqlite:///") :], clock)
    if url and url != ":memory:":
        return MemoryStore.open(url, clock)
    if url == ":memory:":
        return MemoryStore.open(":memory:", clock)
    return MemoryStore.open(str(settings.db_path), clock)


class MemoryRuntime:
    """Capture, extraction, retrieval, assembly and validation behind four calls."""

    def __init__(self, store: MemoryStore, settings: Settings | None = None) -> None:
        self.settings = settings or load_settings()
        self.store = store
        self.capture = Capture(store, self.settings)

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

    # --- events ------------------------------------------------------------------------

    def on_event(self, event: Event) -> CaptureResult:
        return self.on_events([event])

    def on_events(self, events: Iterable[Event]) -> CaptureResult:
        """Capture a batch; then bring derived memory up to date for touched sessions."""
        batch = list(events)
        result = self.capture.capture_many(batch)
        if result.inserted:
            for session_id in sorted({e.session_id for e in batch}):
                self.after_capture(session_id)
        return result

    def after_capture(self, session_id: str) -> None:
        """Hook for derived state (extraction, validation); extended by later layers."""
