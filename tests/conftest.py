"""Shared fixtures: isolated data dirs, a real-subprocess CLI runner, event writers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

import pg_server
from convmem.memory.store import MemoryStore, utc_now

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# hook daemons that tests start (directly or through a real host) leave soon after
os.environ.setdefault("CONVMEM_HOOK_DAEMON_IDLE", "5")

# A run started in the background by a shell without job control ("cmd &" in a script)
# begins with Ctrl-C ignored, and Python then leaves it ignored, in this process and in
# every child it starts: the Ctrl-C tests would wait for an interrupt that never comes.
# They test what a person at a terminal gets, so the suite has Python's own handler.
signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_report_header() -> list[str]:
    if os.environ.get(pg_server.ENV_URL):
        pg = "postgresql: the server at CONVMEM_TEST_PG_URL"
    else:
        found = pg_server.find_bin_dir()
        pg = (
            f"postgresql: {found} (a throwaway server starts on first use)"
            if found
            else "postgresql: NO SERVER BINARIES FOUND - every [postgresql] test will be SKIPPED"
        )
    return [f"sqlite {sqlite3.sqlite_version}", pg]


# --- tools the suite needs ---------------------------------------------------------------

#: ``.ci/run`` sets this: there a missing host, tool or server fails the run.
IN_CI = os.environ.get("CONVMEM_CI") == "1"


def unavailable(reason: str) -> NoReturn:
    """Skip a test whose host or tool is missing; in CI, fail it: a green run must not
    hide tests that never ran."""
    if IN_CI:
        pytest.fail(f"{reason} (CONVMEM_CI=1: a missing host or tool fails the run)")
    pytest.skip(reason)


def require_module(name: str) -> Any:
    """Import a module the tests need (a dev dependency), or :func:`unavailable`."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        unavailable(f"the Python package {name!r} is not installed: pip install -e '.[dev]'")


# --- storage backends --------------------------------------------------------------------

#: Test modules whose tests run once per storage backend, as ``test[sqlite]`` and
#: ``test[postgresql]``. A test that is about SQLite itself is marked ``sqlite_only``.
#: In ``test_validation`` only the tests that use its ``store`` fixture do (the others
#: check text and never touch storage).
BACKEND_MODULES = frozenset(
    {
        "test_assembly",
        "test_capture",
        "test_cli_data",
        "test_cli_errors",
        "test_cli_memory",
        "test_concurrent_writers",
        "test_extraction",
        "test_integration",
        "test_redaction",
        "test_retrieval",
        "test_skills",
        "test_store_search",
        "test_word_index",
        "test_validation",
        "test_store_views",
        "test_projects",
        "test_cli_projects",
        "test_catch_up",
        "inspector.test_http",
        "inspector.test_browser",
    }
)
_BACKENDS: list[pg_server.SqliteBackend] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only: run only on the SQLite backend")
    # the platform's data folder (a store or a log opened without --home) is a scratch
    # one: no test writes to the real ~/.local/share/convmem of whoever runs it
    os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="convmem-tests-data-")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module = metafunc.module.__name__
    if (
        "backend" in metafunc.fixturenames
        and module in BACKEND_MODULES
        and (module != "test_validation" or "store" in metafunc.fixturenames)
        and not metafunc.definition.get_closest_marker("sqlite_only")
    ):
        metafunc.parametrize("backend", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture(scope="session")
def pg_pool() -> Iterator[pg_server.SchemaPool]:
    """One PostgreSQL server for the whole run, started on first use."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        server = None
    else:
        server = pg_server.start_server()
    if server is None:
        reason = (
            "PostgreSQL server binaries (initdb, pg_ctl) were not found on PATH,"
            " in /usr/lib/postgresql/*/bin or /usr/local/bin, or psycopg is missing:"
            " apt-get install -y postgresql postgresql-contrib"
        )
        # CI installs the server (.ci/run sets CONVMEM_CI): there a skip would hide a gap
        if os.environ.get("CONVMEM_REQUIRE_PG") == "1":
            pytest.fail(reason)
        unavailable(reason)
    pool = pg_server.SchemaPool(server)
    try:
        yield pool
    finally:
        pool.close()
        server.stop()


@pytest.fixture(autouse=True)
def backend(request: pytest.FixtureRequest) -> Iterator[pg_server.SqliteBackend]:
    """The storage backend under test (SQLite unless parametrized); closes its stores."""
    if getattr(request, "param", "sqlite") == "postgresql":
        chosen: pg_server.SqliteBackend = pg_server.PgBackend(request.getfixturevalue("pg_pool"))
    else:
        chosen = pg_server.SqliteBackend()
    _BACKENDS.append(chosen)
    try:
        yield chosen
    finally:
        _BACKENDS.remove(chosen)
        chosen.close()


def new_store(path: str | Path = ":memory:", clock: Callable[[], str] = utc_now) -> MemoryStore:
    """A fresh store on the backend under test: ``path`` for SQLite, a new schema for PG."""
    return _BACKENDS[-1].store(str(path), clock)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: pg_server.SqliteBackend) -> Path:
    """A fresh data dir, set through CONVMEM_HOME for in-process and child calls.

    On PostgreSQL, CONVMEM_STORE names a fresh schema, so commands use that instead.
    """
    path = tmp_path / "home"
    monkeypatch.setenv("CONVMEM_HOME", str(path))
    url = backend.url()
    if url:
        monkeypatch.setenv("CONVMEM_STORE", url)
    else:
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
