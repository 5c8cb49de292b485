"""No listening port, no telemetry, no network call anywhere.

Every command, the hosts' entry points and the runtime run in child processes whose
``socket`` and ``_socket`` modules refuse IPv4/IPv6 sockets, name lookups and any
listening socket that is not a Unix socket (``helpers/netguard/sitecustomize.py``),
and log every socket call. The guard is proven to bite first. A static check then
reads every module of the package: network modules are imported only where a
documented adapter needs them (PostgreSQL when the store is a ``postgresql://``
URL; MCP over stdio; the hook daemon's Unix socket; the inspector's loopback port,
opened only by ``convmem ui``), and the DSH plugin file uses
only ``node:child_process``, ``node:crypto``, ``node:fs`` and ``node:path``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import FIXTURES, REPO, require_module

GUARD = Path(__file__).resolve().parent / "helpers" / "netguard"
OFFLINE = Path(__file__).resolve().parent / "helpers" / "offline.py"
SRC = REPO / "src" / "convmem"

#: Modules that can reach a network, and the only files allowed to import them.
NETWORK_MODULES = {
    "socket",
    "_socket",
    "ssl",
    "http",
    "urllib.request",
    "urllib3",
    "requests",
    "httpx",
    "aiohttp",
    "websockets",
    "websocket",
    "smtplib",
    "ftplib",
    "poplib",
    "imaplib",
    "telnetlib",
    "xmlrpc",
    "socketserver",
    "asyncio",
    "anyio",
    "grpc",
    "paramiko",
    "psycopg",
    "psycopg2",
    "mcp",
    "select",
    "selectors",
    "multiprocessing.connection",
    "uvicorn",
}
ALLOWED = {
    # AF_UNIX socket in the data dir, mode 0600 (checked at run time below)
    "adapters/hook_daemon.py": {"socket", "socketserver"},
    "adapters/hook_client.py": {"_socket"},
    # the keeper process waits on a pipe from the daemon
    "adapters/hook_warmup.py": {"select"},
    # the PostgreSQL store, used only when the store setting is a postgresql:// URL
    "memory/pg_db.py": {"psycopg"},
    # MCP over stdio
    "adapters/mcp.py": {"mcp"},
    # the inspector, only when `convmem ui` runs: a TCP socket on 127.0.0.1 (another
    # address only with --host), every request needing the printed token
    "ui/server.py": {"socket", "uvicorn"},
}


def _env(home: Path, log: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "CONVMEM_HOME": str(home), "CONVMEM_NET_LOG": str(log), **extra}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GUARD), env.get("PYTHONPATH")]))
    env.pop("CONVMEM_STORE", None)
    env["CONVMEM_HOOK_DAEMON_IDLE"] = "2"
    return env


def _log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _assert_offline(log: Path, home: Path) -> None:
    for entry in _log(log):
        where = "".join(entry["stack"])[-1500:]
        assert entry["allowed"], f"{entry['call']} in {entry['argv']}:\n{where}"
        assert entry["family"] == 1, f"non-Unix socket in {entry['argv']}:\n{where}"  # AF_UNIX
    for sock in home.rglob("*.sock"):
        assert sock.stat().st_mode & 0o077 == 0, sock


def test_the_guard_refuses_a_connection(tmp_path: Path) -> None:
    log = tmp_path / "net.log"
    code = (
        "import socket\ntry:\n socket.create_connection(('127.0.0.1', 9))\n"
        "except PermissionError:\n print('refused')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=_env(tmp_path, log), capture_output=True, text=True
    )
    assert proc.stdout.strip() == "refused"
    assert [e["allowed"] for e in _log(log)] == [False]


def test_every_command_and_entry_point_runs_offline(tmp_path: Path) -> None:
    home, work, log = tmp_path / "home", tmp_path / "work", tmp_path / "net.log"
    work.mkdir()
    env = _env(home, log)
    proc = subprocess.run(
        [sys.executable, str(OFFLINE), str(home), str(FIXTURES), str(work)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    assert len(results) >= 40
    for result in results:
        assert result["error"] is None, result
        assert result["code"] == 0 or result["call"][0] in ("resolve", "promote"), result

    def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "convmem", *args],
            input=stdin,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "Traceback" not in done.stderr, done.stderr
        return done

    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).returncode == 0
    assert cli("status").returncode == 0
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "hooked",
        "prompt": "What is the latency budget?",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(work),
    }
    for _ in range(3):  # the first call may start the resident hook process; later use it
        assert cli("hook", "claude-code", stdin=json.dumps(payload)).returncode == 0
        time.sleep(0.3)
    requests = [
        {"id": 1, "op": "hello"},
        {"id": 2, "op": "pre_step", "session_id": "en1", "query": "latency budget"},
    ]
    served = cli("serve", "dsh", stdin="".join(json.dumps(r) + "\n" for r in requests))
    assert served.returncode == 0 and all(json.loads(x)["ok"] for x in served.stdout.splitlines())
    _mcp_session(env)
    _stop_hook_daemon(home)
    _assert_offline(log, home)
    listens = [e for e in _log(log) if e["call"] == "listen"]
    assert all(e["family"] == 1 for e in listens)  # the hook daemon's Unix socket, if started


def _mcp_session(env: dict[str, str]) -> None:
    require_module("mcp")
    messages = [
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"method": "notifications/initialized"},
        {"id": 2, "method": "tools/list"},
        {
            "id": 3,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "latency"}},
        },
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "convmem", "mcp"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    for message in messages:
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        proc.stdin.flush()
        if "id" in message:
            while True:
                reply = json.loads(proc.stdout.readline())
                if reply.get("id") == message["id"]:
                    answers.append(reply)
                    break
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in err, err[-2000:]
    assert all("result" in a for a in answers), answers


def _stop_hook_daemon(home: Path) -> None:
    """The resident hook process exits when idle (2 s here); make sure it did."""
    pid_file = home / "hook.pid"
    deadline = time.monotonic() + 10
    while pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    if pid_file.exists():
        pid = int(pid_file.read_text().split()[0])
        os.kill(pid, signal.SIGTERM)


# --- static ----------------------------------------------------------------------------


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", ""))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        ):
            arg = node.args[0]
            text = (
                arg.value
                if isinstance(arg, ast.Constant)
                else "".join(
                    str(v.value) if isinstance(v, ast.Constant) else "{}" for v in arg.values
                )
            )
            found.add(str(text))
    return found


def _network(name: str) -> str | None:
    for module in NETWORK_MODULES:
        if name == module or name.startswith(module + ".") or (name.startswith("{}") and False):
            return module
    return None


def test_no_network_module_outside_the_documented_adapters() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for name in sorted(_imports(path)):
            module = _network(name)
            if module and module not in ALLOWED.get(rel, set()):
                offenders.append(f"{rel} imports {name}")
    assert offenders == []


def test_the_dsh_plugin_uses_no_network_api() -> None:
    text = (SRC / "adapters" / "dsh_plugin.mjs").read_text("utf-8")
    imports = set(re.findall(r"""from\s+['"]([^'"]+)['"]""", text))
    imports |= set(re.findall(r"""(?:import|require)\(\s*['"]([^'"]+)['"]""", text))
    assert imports <= {"node:child_process", "node:crypto", "node:fs", "node:path"}, imports
    for api in (
        "fetch(",
        "WebSocket",
        "XMLHttpRequest",
        "node:net",
        "node:http",
        "node:dgram",
        "node:tls",
    ):
        assert api not in text, api


def test_the_hook_daemon_listens_on_a_unix_socket_only() -> None:
    server = (SRC / "adapters" / "hook_daemon.py").read_text("utf-8")
    client = (SRC / "adapters" / "hook_client.py").read_text("utf-8")
    assert set(re.findall(r"AF_[A-Z0-9]+", server + client)) == {"AF_UNIX"}
    servers = set(re.findall(r"socketserver\.(\w+Server)", server))
    assert servers == {"UnixStreamServer"}, servers
