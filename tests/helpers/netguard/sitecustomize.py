"""Loaded by every Python process started with this folder on PYTHONPATH (no-network test).

Creating an IPv4 or IPv6 socket, resolving a name, or listening on anything but a
Unix socket raises ``PermissionError``; every socket call (allowed or not) is
appended to the file named by ``CONVMEM_NET_LOG`` as one JSON line with the
process's command line and the call's stack. Both the ``socket`` module and the
``_socket`` C module it wraps are guarded, since a client may use ``_socket``
directly to start faster.
"""

from __future__ import annotations

import _socket
import json
import os
import socket
import sys
import traceback

_LOG = os.environ.get("CONVMEM_NET_LOG")
_NETWORK = {_socket.AF_INET, _socket.AF_INET6}


def _record(call: str, family: object, allowed: bool) -> None:
    if not _LOG:
        return
    entry = {
        "pid": os.getpid(),
        "argv": sys.argv,
        "call": call,
        "family": int(family) if isinstance(family, int) else str(family),
        "allowed": allowed,
        "stack": traceback.format_stack(limit=12)[:-2],
    }
    with open(_LOG, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def _refuse(call: str, family: object) -> None:
    _record(call, family, False)
    raise PermissionError(f"network access is disabled in this test ({call})")


_REAL = _socket.socket


def _init(
    self: object, family: int = -1, type: int = -1, proto: int = -1, fileno: object = None
) -> None:
    fam = _socket.AF_INET if family == -1 and fileno is None else family
    if fileno is None and fam in _NETWORK:
        _refuse("socket", fam)
    _REAL.__init__(self, family, type, proto, fileno)  # type: ignore[misc]
    _record("socket", self.family, True)  # type: ignore[attr-defined]


def _listen(self: object, *args: object) -> None:
    if self.family != _socket.AF_UNIX:  # type: ignore[attr-defined]
        _refuse("listen", self.family)  # type: ignore[attr-defined]
    _record("listen", self.family, True)  # type: ignore[attr-defined]
    _REAL.listen(self, *args)  # type: ignore[arg-type]


def _connect(self: object, address: object) -> None:
    if self.family in _NETWORK:  # type: ignore[attr-defined]
        _refuse("connect", self.family)  # type: ignore[attr-defined]
    _REAL.connect(self, address)  # type: ignore[arg-type]


class _Guarded(_REAL):  # type: ignore[misc, valid-type]
    """``_socket.socket`` as used directly; ``socket.socket.__init__`` calls it too."""

    __init__ = _init
    listen = _listen
    connect = _connect


_socket.socket = _Guarded  # type: ignore[misc]
_socket.SocketType = _Guarded  # type: ignore[misc]
socket.socket.listen = _listen  # type: ignore[method-assign]
socket.socket.connect = _connect  # type: ignore[method-assign]


def _no_lookup(name: str) -> object:
    def refuse(*args: object, **kwargs: object) -> object:
        _refuse(name, "dns")
        return None

    return refuse


for _name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo"):
    setattr(socket, _name, _no_lookup(_name))
    setattr(_socket, _name, _no_lookup(_name))
socket.create_connection = lambda *a, **k: _refuse("create_connection", "tcp")  # type: ignore[assignment]
