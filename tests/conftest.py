"""Shared fixtures: isolated data dirs, a real-subprocess CLI runner, event writers."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_report_header() -> str:
    return f"sqlite {sqlite3.sqlite_version}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data dir, set through CONVMEM_HOME for in-process and child calls."""
    path = tmp_path / "home"
    monkeypatch.setenv("CONVMEM_HOME", str(path))
    monkeypatch.delenv("CONVMEM_STORE", raising=False)
    return path


class CliResult:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self) -> Any:
        return json.loads(self.out)

    def __repr__(self) -> str:
        return f"<exit {self.code}\nstdout: {self.out[-2000:]}\nstderr: {self.err[-2000:]}>"


Cli = Callable[..., CliResult]


@pytest.fixture
def cli(home: Path) -> Cli:
    """Run ``convmem ARGS`` as a real subprocess against the fixture's data dir."""

    def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> CliResult:
        full_env = {**os.environ, "CONVMEM_HOME": str(home), **(env or {})}
        proc = subprocess.run(
            [sys.executable, "-m", "convmem", *args],
            input=input,
            capture_output=True,
            text=True,
            env=full_env,
            timeout=300,
        )
        result = CliResult(proc)
        assert "Traceback" not in result.err, result
        return result

    return run


def write_events(path: Path, events: Iterable[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), "utf-8")
    return path


def ev(seq: int, type_: str, text: str, session: str = "s1", **extra: Any) -> dict[str, Any]:
    return {"session_id": session, "seq": seq, "type": type_, "text": text, **extra}
