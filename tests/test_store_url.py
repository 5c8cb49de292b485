"""Storage URLs: a PostgreSQL password is never shown, a wrong URL is one sentence.

Issue 13, item 3: ``status`` (text and JSON), ``config``, the MCP ``status`` tool and
the DSH ``/memory status`` command all show where the store is; none may show the
password, in the user part of the URL or as ``?password=``. And from the "Also"
list: a misspelt or foreign scheme, or PostgreSQL without its driver, is one
sentence naming the fix, never a SQLite file named after the URL or "internal error".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import pg_server
from conftest import FIXTURES
from convmem.core.store_url import backend_of, mask_url
from convmem.errors import ConfigError

PASSWORD = "S3cret-Pw0rd-77"


def _run(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "convmem", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _mcp_status(env: dict[str, str]) -> str:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "convmem", "mcp"], env=env)
    out: list[str] = []

    async def session() -> None:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                result = await client.call_tool("status", {})
                out.extend(str(getattr(b, "text", "")) for b in result.content)

    anyio.run(session)
    return "\n".join(out)


def _dsh_status(env: dict[str, str]) -> str:
    requests = [
        {"id": 1, "op": "session_start", "session_id": "en1"},
        {"id": 2, "op": "command", "session_id": "en1", "args": "status"},
    ]
    proc = _run(env, "serve", "dsh", stdin="".join(json.dumps(r) + "\n" for r in requests))
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert replies[-1]["ok"], replies
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("form", ["user-part", "query"])
def test_the_postgresql_password_is_never_shown(
    pg_pool: pg_server.SchemaPool, tmp_path: Path, form: str
) -> None:
    schema = pg_pool.checkout()
    try:
        url = pg_pool.url(schema)  # the test server trusts local connections: any password works
        if form == "user-part":
            secret = url.replace("postgresql://convmem@", f"postgresql://convmem:{PASSWORD}@", 1)
        else:
            secret = url + f"&password={PASSWORD}"
        assert PASSWORD in secret
        env = {
            **os.environ,
            "CONVMEM_HOME": str(tmp_path / "home"),
            "CONVMEM_STORE": secret,
            "CONVMEM_HOOK_DAEMON": "0",
        }
        env.pop("DSH_HOME", None)
        assert _run(env, "ingest", str(FIXTURES / "en_basic.jsonl")).returncode == 0
        shown: dict[str, str] = {}
        for args in (
            ["status"],
            ["status", "--json"],
            ["status", "--check", "--json"],
            ["config"],
            ["config", "--json"],
        ):
            proc = _run(env, *args)
            assert proc.returncode == 0, proc.stderr
            shown[" ".join(args)] = proc.stdout + proc.stderr
        shown["mcp status"] = _mcp_status(env)
        shown["dsh /memory status"] = _dsh_status(env)
        leaks = [name for name, text in shown.items() if PASSWORD in text]
        assert leaks == []
        location = json.loads(_run(env, "status", "--json").stdout)["store"]["location"]
        assert "***" in location and "convmem" in location
        assert "***" in shown["dsh /memory status"] and "***" in shown["mcp status"]
        assert "***" in shown["config"]
    finally:
        pg_pool.release(schema)


@pytest.mark.parametrize(
    "url",
    [
        "postgressql://u:pw@host/db",
        "mysql://root:pw@localhost/app",
        "sqlite://relative.db",
        "redis://cache:6379",
    ],
)
def test_an_unknown_store_scheme_is_one_sentence(tmp_path: Path, url: str) -> None:
    env = {**os.environ, "CONVMEM_HOME": str(tmp_path / "home")}
    env.pop("CONVMEM_STORE", None)
    proc = _run(env, "--store", url, "status")
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "unknown scheme" in line and "postgresql://" in line
    assert "pw@" not in line  # the password is masked here too
    assert list(tmp_path.rglob("*")) == []  # no SQLite file named after the URL, no folder


def test_postgresql_without_its_driver_is_one_sentence(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    (shadow / "psycopg").mkdir(parents=True)
    # a package that fails to import, as when psycopg is not installed
    (shadow / "psycopg" / "__init__.py").write_text(
        "raise ImportError('No module named psycopg')\n"
    )
    env = {
        **os.environ,
        "CONVMEM_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(shadow) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    proc = _run(env, "--store", "postgresql://u@localhost/db", "status")
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "internal error" not in line and "pip install 'convmem[postgres]'" in line


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://u:p%40ss@h:5/db?sslmode=require",
            "postgresql://u:***@h:5/db?sslmode=require",
        ),
        ("postgres://u:a@b@h/db", "postgres://u:***@h/db"),
        ("postgresql://h/db?user=u&password=pw", "postgresql://h/db?user=u&password=***"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("host=h dbname=d password='x y' user=u", "host=h dbname=d password=*** user=u"),
        ("/var/lib/convmem/memory.sqlite", "/var/lib/convmem/memory.sqlite"),
        ("postgresql://u:pw@h:notaport/db", "postgresql://u:***@h:notaport/db"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_backend_of() -> None:
    assert backend_of("") == "sqlite" and backend_of("C:\\data\\m.sqlite") == "sqlite"
    assert backend_of("sqlite:///tmp/m.sqlite") == "sqlite"
    assert backend_of("POSTGRES://h/db") == "postgresql"
    with pytest.raises(ConfigError):
        backend_of("postgresq://h/db")
