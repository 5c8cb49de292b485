"""``convmem mcp``: the stdio MCP server (needs the ``convmem[mcp]`` extra)."""

from __future__ import annotations

from typing import Any

import click


@click.command("mcp")
@click.pass_obj
def mcp_cmd(obj: Any) -> None:
    """Serve search, inspect, status and explain to an MCP client over stdio.

    Start it from the client's settings (command `convmem`, argument `mcp`); it
    answers on stdout until the client disconnects and logs to stderr. The tools
    only read memory. Needs the MCP SDK: pip install 'convmem[mcp]'.
    """
    from convmem.adapters.mcp import serve

    serve(obj.settings)


def register(group: click.Group) -> None:
    group.add_command(mcp_cmd)
