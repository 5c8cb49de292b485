"""Docs that come from code must match the code; the public API is pinned."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_generated_docs_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_public_api() -> None:
    import convmem

    assert convmem.__all__ == [
        "ConvmemError",
        "Event",
        "MemoryRuntime",
        "MemoryStore",
        "Settings",
        "__version__",
        "load_settings",
        "open_store",
    ]
    for name in convmem.__all__:
        assert getattr(convmem, name) is not None


def test_import_is_cheap() -> None:
    code = "import sys, convmem; print(sorted(m for m in sys.modules if m.startswith('convmem')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.strip() == "['convmem']"


def test_the_cli_reference_shows_the_short_help_option() -> None:
    text = (REPO / "docs" / "cli.md").read_text("utf-8")
    assert "-h, --help" in text
    assert "\n  --help" not in text  # every command takes -h, as the group's settings say
