"""``convmem mcp``: a real server subprocess, driven by the MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, Cli, require_module

require_module("mcp")

import anyio  # noqa: E402  (the SDK depends on it)
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

TOOLS = {"search", "inspect", "status", "explain"}


@pytest.fixture
def filled(cli: Cli, home: Path) -> Path:
    """A data dir holding the English fixture session and one logged assembly."""
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    assert cli("assemble", "--session", "en1", "--query", "latency budget").code == 0
    return home


def server_env(home: Path) -> dict[str, str]:
    return {**os.environ, "CONVMEM_HOME": str(home)}


def result_text(result: Any) -> str:
    [block] = result.content
    assert block.type == "text"
    return str(block.text)


def is_error(result: Any) -> bool:
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def test_tools_over_stdio_match_the_cli(cli: Cli, filled: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "convmem", "mcp"], env=server_env(filled)
    )
    answers: dict[str, Any] = {}

    async def session() -> None:
        with anyio.fail_after(120):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as client,
            ):
                init = await client.initialize()
                answers["server"] = init.server_info.name
                listed = await client.list_tools()
                answers["tools"] = {t.name: t for t in listed.tools}
                found = await client.call_tool("search", {"query": "latency", "limit": 5})
                answers["search"] = json.loads(result_text(found))
                item_id = answers["search"]["items"][0]["id"]
                answers["item_id"] = item_id
                inspected = await client.call_tool("inspect", {"item_id": item_id})
                answers["inspect"] = json.loads(result_text(inspected))
                answers["status"] = json.loads(
                    result_text(await client.call_tool("status", {"session": "en1"}))
                )
                answers["explain"] = json.loads(result_text(await client.call_tool("explain", {})))
                answers["cli"] = {
                    "search": cli("search", "latency", "--limit", "5", "--json").json(),
                    "inspect": cli("inspect", item_id, "--json").json(),
                    "status": cli("status", "--session", "en1", "--json").json(),
                    "explain": cli("explain", "--json").json(),
                }
                # another process writes while the server holds the store open
                assert cli("ingest", str(FIXTURES / "zh_basic.jsonl")).code == 0
                after = await client.call_tool("status", {})
                answers["status_after"] = json.loads(result_text(after))
                answers["missing"] = await client.call_tool("inspect", {"item_id": "mem_nope"})
                answers["bad_limit"] = await client.call_tool("search", {"query": "x", "limit": 0})

    anyio.run(session)

    assert answers["server"] == "convmem"
    tools = answers["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description
        assert tool.annotations is not None
        assert getattr(tool.annotations, "read_only_hint", None) or getattr(
            tool.annotations, "readOnlyHint", None
        )
    assert tools["search"].input_schema["required"] == ["query"]
    assert "required" not in tools["status"].input_schema

    assert answers["search"] == answers["cli"]["search"]
    assert answers["search"]["items"][0]["content"].startswith("The p95 latency")
    assert answers["inspect"] == answers["cli"]["inspect"]
    assert answers["inspect"]["sources"][0]["seq"] == 5
    assert answers["status"] == answers["cli"]["status"]
    assert answers["status"]["sessions"][0]["events"] == 22
    assert answers["explain"] == answers["cli"]["explain"]
    assert answers["explain"]["session_id"] == "en1"
    sessions = [s["session_id"] for s in answers["status_after"]["sessions"]]
    assert len(sessions) == 2 and "en1" in sessions

    assert is_error(answers["missing"])
    assert "no memory item 'mem_nope'" in result_text(answers["missing"])
    assert is_error(answers["bad_limit"])
    assert "limit must be between 1 and 100" in result_text(answers["bad_limit"])


def test_explain_before_any_assembly_and_an_unknown_session_are_tool_errors(
    cli: Cli, home: Path
) -> None:
    assert cli("ingest", str(FIXTURES / "en_basic.jsonl")).code == 0
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "convmem", "mcp"], env=server_env(home)
    )

    async def session() -> Any:
        with anyio.fail_after(120):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                unknown = [
                    await client.call_tool(tool, {"session": "nope", **args})
                    for tool, args in [("search", {"query": "budget"}), ("status", {})]
                ]
                return await client.call_tool("explain", {"session": "en1"}), unknown

    result, unknown = anyio.run(session)
    assert is_error(result)
    assert "no memory block has been assembled yet for session 'en1'" in result_text(result)
    # a session nobody recorded is an error, as on the command line
    for answer in unknown:
        assert is_error(answer) and "no session 'nope'" in result_text(answer)


class RawServer:
    """The server as a plain child process, to see every byte it writes to stdout."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "convmem", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(home),
        )
        self.watchdog = threading.Timer(120, self.proc.kill)
        self.watchdog.start()
        self.lines: list[str] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, id_: int, method: str, params: dict[str, Any] | None = None) -> Any:
        self.send({"id": id_, "method": method, **({"params": params} if params else {})})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline().decode("utf-8")
            assert line, "the server closed stdout"
            self.lines.append(line)
            message = json.loads(line)
            if message.get("id") == id_:
                return message

    def close(self) -> tuple[bytes, bytes, int]:
        out, err = self.proc.communicate(timeout=60)
        self.watchdog.cancel()
        return out, err, self.proc.returncode


def test_stdout_carries_nothing_but_the_protocol(filled: Path) -> None:
    server = RawServer(filled)
    init = server.request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    )
    assert init["result"]["serverInfo"]["name"] == "convmem"
    server.send({"method": "notifications/initialized"})
    listed = server.request(2, "tools/list")
    assert {t["name"] for t in listed["result"]["tools"]} == TOOLS
    called = server.request(
        3, "tools/call", {"name": "search", "arguments": {"query": "SQLite index"}}
    )
    payload = json.loads(called["result"]["content"][0]["text"])
    assert any("SQLite" in i["content"] for i in payload["items"])
    failed = server.request(4, "tools/call", {"name": "inspect", "arguments": {"item_id": "x"}})
    assert failed["result"]["isError"] is True
    rest, err, code = server.close()  # closing stdin ends the session
    assert code == 0
    lines = server.lines + rest.decode("utf-8").splitlines(keepends=True)
    assert lines
    for line in lines:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0" and ("id" in message or "method" in message)
    # the server did log (the failed call), and the log went to stderr
    assert "no memory item 'x'" in err.decode("utf-8")
    assert "Traceback" not in err.decode("utf-8")


def test_without_the_sdk_one_sentence(cli: Cli, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker" / "mcp"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('mcp is not installed here')\n")
    result = cli("mcp", env={"PYTHONPATH": str(blocker.parent)})
    assert result.code == 1
    assert result.out == ""
    assert result.err.strip() == (
        "Error: convmem mcp needs the MCP SDK, which is not installed here; "
        "install it with: pip install 'convmem[mcp]'"
    )
