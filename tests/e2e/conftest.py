"""End-to-end tests drive real host programs; they are marked ``e2e``."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "e2e: runs a real host program against tests/e2e/fake_model.py (slow; installs the"
        " host into the e2e cache if needed, skips loudly if it cannot)",
    )
