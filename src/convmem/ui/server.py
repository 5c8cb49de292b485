"""Run the inspector: one process, one socket, one random token.

The socket is bound before anything is printed, so the address printed is the one
that answers (port 0 asks the system for a free port). uvicorn serves the guarded
application on that socket until interrupted.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING

from convmem.errors import ConvmemError

if TYPE_CHECKING:
    from convmem.runtime import MemoryRuntime

LOOPBACK = "127.0.0.1"
_WILDCARDS = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def display_host(host: str) -> str:
    """How the host appears in an address (IPv6 in brackets; a wildcard as loopback)."""
    if host in ("0.0.0.0", ""):
        return LOOPBACK
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def allowed_hosts(host: str, port: int) -> set[str] | None:
    """Host headers the server answers to; None (any) when it listens everywhere."""
    if host in _WILDCARDS:
        return None
    names = {f"{display_host(host)}:{port}"}
    if is_loopback(host):
        names |= {f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"}
    return names


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or a one-sentence error."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConvmemError(f"cannot listen on {host!r}: {exc.strerror}") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted connections inherit it: a response's head and body leave at once
        # instead of the body waiting ~40 ms for the client's delayed ACK (Nagle)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConvmemError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def serve(
    runtime: MemoryRuntime,
    *,
    host: str = LOOPBACK,
    port: int = 0,
    open_browser: bool = False,
    echo: Callable[[str], None] = print,
    warn: Callable[[str], None] = print,
) -> None:
    """Serve the inspector for ``runtime`` until interrupted."""
    import uvicorn

    from convmem.ui.app import create_app

    sock = bind(host, port)
    port = int(sock.getsockname()[1])
    token = secrets.token_urlsafe(24)
    app = create_app(runtime, token, allowed_hosts(host, port), port)
    address = f"http://{display_host(host)}:{port}/?token={token}"
    if not is_loopback(host):
        warn(
            f"warning: the inspector listens on {host}, not only on this machine: anyone who"
            " can reach that address and has the token can read and change this memory"
        )
    echo(f"convmem inspector: {address}")
    echo("(the token in the address is the key; press Ctrl+C to stop)")
    if open_browser:
        webbrowser.open(address)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        proxy_headers=False,
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
