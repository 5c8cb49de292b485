"""End-to-end tests drive real host programs; they are marked ``e2e``. The hosts are
session fixtures: installed into the e2e cache once, and a missing host fails the run
in CI (:func:`conftest.unavailable`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import unavailable  # tests/conftest.py

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hosts import DshInstall, ensure_claude_code, ensure_dsh


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "e2e: runs a real host program against tests/e2e/fake_model.py (slow; installs the"
        " host into the e2e cache if needed, skips loudly if it cannot)",
    )


@pytest.fixture(scope="session")
def claude() -> Path:
    """The Claude Code binary (installed into the e2e cache if needed)."""
    binary, why = ensure_claude_code()
    if binary is None:
        unavailable(f"Claude Code unavailable, e2e NOT RUN: {why}")
    return binary


@pytest.fixture(scope="session")
def dsh() -> DshInstall:
    """The dsh install (deepseek-harness-sdk in the e2e cache)."""
    install, why = ensure_dsh()
    if install is None:
        unavailable(f"DSH (deepseek-harness-sdk) unavailable, e2e NOT RUN: {why}")
    return install
