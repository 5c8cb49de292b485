"""The resident hook process: convmem imported once, one forked child per hook call.

Claude Code starts ``convmem hook claude-code`` as a new process on every prompt and
tool call, and importing convmem (regexes, dataclasses, sqlite3) costs several times
the answer itself. So the first call of a data folder starts this process for it
(:func:`convmem.adapters.hook_client.spawn`), and the calls after it are handed over
(:func:`convmem.adapters.hook_client.ask`, which also documents the wire format).

The server is the standard library's: a :class:`socketserver.UnixStreamServer` with
:class:`socketserver.ForkingMixIn`, so each call runs in a forked child with convmem
already loaded. The daemon:

* holds an exclusive lock on ``<home>/hook.lock`` (a second daemon exits at once) and
  writes its pid to ``<home>/hook.pid``;
* warms up on a throwaway store, then listens on ``<home>/hook.sock``: an AF_UNIX
  socket, mode 0600 in a folder only its user can write to. It never opens a network
  port;
* in each child takes on the call's environment, working folder and umask and runs
  :func:`convmem.adapters.hook_entry.run_claude_code`: the same code, answer and error
  log as in-process, fresh settings and a fresh store connection per call; calls that
  overlap run side by side, as separate hook processes would, and a crash or a hang
  stays in its child;
* keeps one connection to the folder's SQLite store open in a small keeper process,
  so that a call closing its connection is not the last one and does not checkpoint
  the WAL (with its fsyncs) every time;
* exits after ``CONVMEM_HOOK_DAEMON_IDLE`` seconds (600) without a call, when its
  socket file is removed or replaced, when convmem's source files change under it, or
  on SIGTERM. Errors go to ``convmem.log``; with ``CONVMEM_HOOK_DAEMON_DEBUG=1`` what
  it does goes to ``hook-daemon.log``.

Each payload is handled once at most: a child sends ``A`` before it handles a call and
drops the call if that byte cannot be sent; ``D`` declines (another convmem install, a
bad request, too many calls at once, changed sources).

``<home>`` is the folder ``config.toml`` is read from (``--home``, ``CONVMEM_HOME``,
else the platform default): finding it needs no settings, and each child resolves the
settings as in-process handling does.
"""

from __future__ import annotations

import os
import socket
import socketserver
import sys
from types import FrameType

from convmem.adapters.hook_client import (
    ACCEPTED,
    ANSWER_TIMEOUT,
    DEBUG_LOG_NAME,
    DECLINED,
    FIELDS,
    LOCK_NAME,
    MAGIC,
    PID_NAME,
    SOCKET_NAME,
    VERDICT_TIMEOUT,
    identity,
)
from convmem.adapters.hook_entry import (
    HOSTS,
    MAX_PAYLOAD_BYTES,
    _log_error,
    _parse_args,
    _UsageError,
    run_claude_code,
)

__all__ = [
    "DEBUG_LOG_NAME",
    "FIELDS",
    "MAGIC",
    "PID_NAME",
    "TICK",
    "VERDICT_TIMEOUT",
    "Daemon",
    "main",
]

#: Seconds without a call before the daemon exits.
ENV_IDLE = "CONVMEM_HOOK_DAEMON_IDLE"
#: ``1``: the daemon writes what it does to ``<home>/hook-daemon.log`` (tests, diagnosis).
ENV_DEBUG = "CONVMEM_HOOK_DAEMON_DEBUG"
DEFAULT_IDLE_SECONDS = 600.0
READ_TIMEOUT = 10.0  # the daemon waiting for a request the client sends at once
MAX_CHILDREN = 64
TICK = 1.0


class _Server(socketserver.ForkingMixIn, socketserver.UnixStreamServer):
    """Forks a child per connection; the :class:`Daemon` decides what the child does."""

    request_queue_size = 64
    max_children = MAX_CHILDREN + 1  # ours declines first (verify_request)
    timeout = TICK  # handle_request() returns after this long without a call
    block_on_close = False  # a hung child must not keep the daemon from leaving

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        super().__init__(SOCKET_NAME, socketserver.BaseRequestHandler, bind_and_activate=False)

    def verify_request(  # type: ignore[override]
        self, request: socket.socket, client_address: object
    ) -> bool:
        return self.daemon.accept(request, len(self.active_children or ()))

    def finish_request(  # type: ignore[override]
        self, request: socket.socket, client_address: object
    ) -> None:
        self.daemon.child(request)  # in the forked child

    def handle_error(self, request: object, client_address: object) -> None:
        self.daemon.log_error(sys.exc_info()[1] or RuntimeError("unknown error"))


class Daemon:
    """One data folder's resident hook process (see the module docstring)."""

    def __init__(self, home: str, idle: float = DEFAULT_IDLE_SECONDS, debug: bool = False):
        self.home = os.path.abspath(home)
        self.socket_path = os.path.join(self.home, SOCKET_NAME)
        self.idle = idle
        self.debug = debug
        self.pid = os.getpid()
        self.lock_fd = -1
        self.server: _Server | None = None
        self.socket_id: tuple[int, int] | None = None
        self.sources: dict[str, int] = {}
        self.keeper_fd = -1
        self.last_call = 0.0
        self.stopping: str | None = None

    # --- lifetime ------------------------------------------------------------------------

    def run(self) -> int:
        """Serve until there is a reason to stop; 1 when the folder is not private."""
        import fcntl
        import time

        try:
            os.makedirs(self.home, mode=0o700, exist_ok=True)
            st = os.stat(self.home)
        except OSError as exc:
            self.log_error(exc)
            return 1
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            self._note(f"refused: {self.home} is not a private folder of this user")
            return 1
        self.lock_fd = os.open(
            os.path.join(self.home, LOCK_NAME), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
        )
        for attempt in range(5):  # a client probing the lock holds it for microseconds
            try:
                fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if attempt == 4:
                    self._note("another daemon holds the lock")
                    os.close(self.lock_fd)
                    return 0
                time.sleep(0.02)
        reason = "error"
        try:
            self._write_pid()
            self._install_signals()
            self._warm_up()
            reason = "signal"
            if not self.stopping:
                self._listen()
                self._start_keeper()
                reason = self._serve()
        except Exception as exc:
            self.log_error(exc)
        finally:
            self._shut_down(reason)
        return 0

    def _write_pid(self) -> None:
        fd = os.open(
            os.path.join(self.home, PID_NAME),
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
            0o600,
        )
        try:
            os.write(fd, b"%d\n" % self.pid)
        finally:
            os.close(fd)
        self._note("start")

    def _install_signals(self) -> None:
        import signal

        def stop(signum: int, frame: FrameType | None) -> None:
            self.stopping = "signal"

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)

    def _warm_up(self) -> None:
        """Import and exercise the hook's code on a throwaway store, then freeze it all."""
        import contextlib
        import gc
        import time

        from convmem.adapters.hook_warmup import exercise_hooks

        began = time.monotonic()
        try:
            exercise_hooks()
        except Exception as exc:  # the children import what is missing: slower, as correct
            self.log_error(exc)
        gc.collect()
        gc.freeze()  # the children's collections skip (and so do not copy) these objects
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if (name == "convmem" or name.startswith("convmem.")) and path:
                with contextlib.suppress(OSError):
                    self.sources[path] = os.stat(path).st_mtime_ns
        self._note(f"warm in {time.monotonic() - began:.3f}s, {len(self.sources)} sources")

    def _listen(self) -> None:
        import contextlib
        import time

        with contextlib.suppress(FileNotFoundError):  # stale, and we hold the lock
            os.unlink(self.socket_path)
        os.chdir(self.home)  # bind by name: long paths do not fit in sockaddr_un
        server = _Server(self)
        mask = os.umask(0o177)
        try:
            server.server_bind()
        finally:
            os.umask(mask)
        os.chmod(self.socket_path, 0o600)
        st = os.lstat(self.socket_path)
        self.socket_id = (st.st_dev, st.st_ino)
        server.server_activate()
        self.server = server
        self.last_call = time.monotonic()
        self._note("listening")

    def _serve(self) -> str:
        assert self.server is not None
        while not self.stopping:
            self.server.handle_request()  # one call, or TICK seconds without one
            self.server.collect_children()  # reap the children that answered
            self.stopping = self.stopping or self._reason_to_stop()
        return self.stopping

    def _reason_to_stop(self) -> str | None:
        import time

        try:
            st = os.lstat(self.socket_path)
            if (st.st_dev, st.st_ino) != self.socket_id:
                return "socket replaced"
        except FileNotFoundError:
            return "socket removed"
        if self._sources_changed():
            return "source changed"
        busy = self.server is not None and self.server.active_children
        if not busy and time.monotonic() - self.last_call >= self.idle:
            return "idle"
        return None

    def _sources_changed(self) -> bool:
        for path, mtime in self.sources.items():
            try:
                if os.stat(path).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return False

    def _shut_down(self, reason: str) -> None:
        """Unlink first, so a client either finds no socket or is refused: never a wait."""
        import contextlib

        with contextlib.suppress(OSError):
            st = os.lstat(self.socket_path)
            if (st.st_dev, st.st_ino) == self.socket_id:
                os.unlink(self.socket_path)
        if self.server is not None:
            self.server.server_close()  # also waits for the children still answering
        pid_path = os.path.join(self.home, PID_NAME)
        with contextlib.suppress(OSError), open(pid_path, "rb") as fh:
            if fh.read().strip() == b"%d" % self.pid:
                os.unlink(pid_path)
        if self.keeper_fd >= 0:
            os.close(self.keeper_fd)  # the keeper reads EOF and closes the store last
        self._note(f"exit: {reason}")
        os.close(self.lock_fd)

    # --- calls ---------------------------------------------------------------------------

    def accept(self, conn: socket.socket, children: int) -> bool:
        """In the daemon, before forking: take the connection, or decline it."""
        import time

        if self._sources_changed():
            _send_quietly(conn, DECLINED)
            self.stopping = "source changed"
            return False
        if children >= MAX_CHILDREN:
            _send_quietly(conn, DECLINED)
            return False
        self.last_call = time.monotonic()
        return True

    def child(self, conn: socket.socket) -> None:
        """In the forked child: serve the one call (the lock and socket stay with the
        daemon). ForkingMixIn closes the connection and exits the child after this."""
        import signal

        os.close(self.lock_fd)
        if self.server is not None:
            self.server.socket.close()
        if self.keeper_fd >= 0:
            os.close(self.keeper_fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        try:
            served = serve_call(conn)
            if served:
                self._note(f"served {served} in child {os.getpid()}")
        except BaseException as exc:
            self.log_error(exc)

    def _start_keeper(self) -> None:
        """Fork the process that keeps the store open; it ends when this one does."""
        import signal

        read_fd, self.keeper_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError as exc:
            self.log_error(exc)
            os.close(read_fd)
            return
        if pid == 0:
            try:
                os.close(self.lock_fd)
                if self.server is not None:
                    self.server.socket.close()
                os.close(self.keeper_fd)
                signal.signal(signal.SIGTERM, _raise_stop)  # close the store, then go
                from convmem.adapters.hook_warmup import keep_store_open

                keep_store_open(self.home, read_fd, TICK)
            except _Stop:
                pass
            except BaseException as exc:  # a bad config or store: the calls report it
                self._note(f"keeper: {type(exc).__name__}: {exc}")
            finally:
                os._exit(0)
        os.close(read_fd)

    # --- reporting -----------------------------------------------------------------------

    def _note(self, what: str) -> None:
        if self.debug:
            _append(os.path.join(self.home, DEBUG_LOG_NAME), f"daemon {self.pid}: {what}\n")

    def log_error(self, exc: BaseException) -> None:
        self._note(f"error: {type(exc).__name__}: {exc}")
        _log_error(exc, None, None, self.home)


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def serve_call(conn: socket.socket) -> str | None:
    """Read one call, take it (``A``), run it as the client's own process would, answer.

    Returns the host when the call was taken, None when it was declined or dropped.
    """
    import io
    import time

    conn.setblocking(True)
    conn.settimeout(READ_TIMEOUT)
    if not _peer_is_us(conn):
        return None
    fields = _read_request(conn)
    if fields is None:
        return None  # cut short: the client learns that nothing was taken
    try:
        host = fields["host"].decode()
        if fields["identity"] != identity() or host not in HOSTS:
            raise ValueError("another convmem")
        opts = _parse_args([os.fsdecode(o) for o in fields["options"].split(b"\0") if o])
        os.chdir(fields["cwd"])
        mask = int(fields["umask"])
    except (ValueError, OSError, _UsageError):
        _send_quietly(conn, DECLINED)
        return None
    os.umask(mask)
    os.environ.clear()
    for pair in fields["env"].split(b"\0"):
        key, eq, value = pair.partition(b"=")
        if key and eq:
            os.environb[key] = value
    time.tzset()
    stdin = io.TextIOWrapper(
        io.BytesIO(fields["payload"]),
        encoding=fields["encoding"].decode(),
        errors=fields["errors"].decode(),
        newline="\n",
    )
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        conn.sendall(ACCEPTED)
    except OSError:
        return None  # the client gave up waiting and may handle it itself: drop it
    sys.stderr = stderr
    try:
        code = run_claude_code(opts["home"], opts["config"], stdin=stdin, stdout=stdout)
    finally:
        sys.stderr = sys.__stderr__
    out = stdout.getvalue().encode("utf-8", "surrogatepass")
    err = stderr.getvalue().encode("utf-8", "surrogatepass")
    conn.settimeout(ANSWER_TIMEOUT)
    _send_quietly(conn, b"%d %d %d\n" % (code, len(out), len(err)) + out + err)
    return host


def _peer_is_us(conn: socket.socket) -> bool:
    import struct

    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the socket's 0600 mode in a private folder is the whole check
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return bool(uid == os.getuid())


def _read_request(conn: socket.socket) -> dict[str, bytes] | None:
    reader = conn.makefile("rb")
    try:
        if reader.read(len(MAGIC)) != MAGIC:
            _send_quietly(conn, DECLINED)
            return None
        fields: dict[str, bytes] = {}
        for name in FIELDS:
            line = reader.readline(24)
            size = int(line) if line.endswith(b"\n") and line[:-1].isdigit() else -1
            if not 0 <= size <= 2 * MAX_PAYLOAD_BYTES:
                return None
            value = reader.read(size)
            if len(value) != size:
                return None
            fields[name] = value
        return fields
    except OSError:
        return None
    finally:
        reader.close()


def _send_quietly(conn: socket.socket, data: bytes) -> None:
    import contextlib

    with contextlib.suppress(OSError):
        conn.sendall(data)


def _append(path: str, text: str) -> None:
    import contextlib
    import time

    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, f"{stamp} {text}".encode())
        finally:
            os.close(fd)


def main(argv: list[str] | None = None) -> int:
    """``python -m convmem.adapters.hook_daemon [--home DIR]``: serve DIR until idle."""
    import argparse

    from convmem.core.paths import home_dir

    parser = argparse.ArgumentParser(
        prog="python -m convmem.adapters.hook_daemon",
        description="The resident convmem hook process (the hook starts it itself).",
    )
    parser.add_argument("--home", help="the data folder (default: as the hook finds it)")
    args = parser.parse_args(argv)
    try:
        idle = float(os.environ.get(ENV_IDLE) or DEFAULT_IDLE_SECONDS)
    except ValueError:
        idle = DEFAULT_IDLE_SECONDS
    debug = os.environ.get(ENV_DEBUG) == "1"
    return Daemon(home_dir(args.home), idle=idle, debug=debug).run()


if __name__ == "__main__":
    sys.exit(main())
