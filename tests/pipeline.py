"""Helpers for pipeline tests: a runtime over a real SQLite file, fed from fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import FIXTURES
from convmem.config import load_settings
from convmem.ingest import ingest_file
from convmem.memory.store import MemoryStore
from convmem.runtime import MemoryRuntime

FIXED_CLOCK = "2026-01-01T00:00:00Z"


def runtime(tmp_path: Path, fixture: str | None = None, **settings: Any) -> MemoryRuntime:
    """A runtime on a fresh database file with a fixed clock, optionally fed a fixture."""
    cfg = load_settings(env={}).with_values(**settings)
    rt = MemoryRuntime(MemoryStore.open(str(tmp_path / "m.sqlite"), lambda: FIXED_CLOCK), cfg)
    if fixture:
        report = ingest_file(FIXTURES / fixture, rt.on_events)
        assert not report.problems, report.problems
    return rt
