"""The resident hook process: convmem imported once, one forked child per hook call.

Claude Code starts ``convmem hook claude-code`` as a new process on every prompt and
tool call, and importing convmem (regexes, dataclasses, sqlite3) costs several times
the answer itself. So the first call of a data folder starts this process for it (in
effect ``python -m convmem.adapters.hook_daemon --home DIR``), and the calls after it
are handed over to it by :func:`run_client`, which imports only ``os``, ``sys`` and
``_socket``: this module's top level stays that light. The daemon:

* holds an exclusive lock on ``<home>/hook.lock`` (a second daemon exits at once) and
  writes its pid to ``<home>/hook.pid``;
* warms up on a throwaway store, then listens on ``<home>/hook.sock``: an AF_UNIX
  socket, mode 0600 in a folder only its user can write to. It never opens a network
  port;
* forks a child per connection. The child takes on the call's environment, working
  folder and umask and runs :func:`convmem.adapters.hook_entry.run_claude_code`: the
  same code, answer and error log as in-process, fresh settings and a fresh store
  connection per call, and calls that overlap run side by side, as separate hook
  processes would. A crash or a hang stays in its child;
* keeps one connection to the folder's SQLite store open in a small keeper process,
  so that a call closing its connection is not the last one and does not checkpoint
  the WAL (with its fsyncs) every time. SQLite's usual autocheckpoint still bounds
  the WAL, and the keeper closing last tidies it up;
* exits after ``CONVMEM_HOOK_DAEMON_IDLE`` seconds (600) without a call, when its
  socket file is removed or replaced, when convmem's source files change under it, or
  on SIGTERM. Errors go to ``convmem.log``; with ``CONVMEM_HOOK_DAEMON_DEBUG=1`` what
  it does goes to ``hook-daemon.log``.

Each payload is handled once at most. A child sends ``A`` before it handles a call and
drops the call if that byte cannot be sent; ``D`` declines (another convmem install,
a bad request). The client handles a call itself only when the daemon provably did
not take it: no socket, refused, ``D``, or the connection closed before ``A``. After
``A``, a late or broken answer prints nothing (fail open). A late verdict is settled
on Linux by shutting the client's read side, after which an ``A`` fails in the child;
elsewhere it fails open.

``<home>`` is the folder ``config.toml`` is read from (``--home``, ``CONVMEM_HOME``,
else the platform default): finding it needs no settings, and each child resolves
the settings as in-process handling does.

Wire format: the request is :data:`MAGIC` then :data:`FIELDS`, each as
``b"<length>\\n"`` and that many bytes. The answer is one verdict byte; after ``A``,
``b"<exit> <stdout bytes> <stderr bytes>\\n"`` and both texts in UTF-8.
"""

from __future__ import annotations

import os
import sys

from convmem.adapters.hook_entry import (
    ENV_DAEMON,
    HOSTS,
    MAX_PAYLOAD_BYTES,
    _log_error,
    _parse_args,
    _UsageError,
    run_claude_code,
)

# Everything else is imported where it is used: the client half runs on every call.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    import socket
    from types import FrameType

# Files in the folder ``config.toml`` is read from.
SOCKET_NAME = "hook.sock"
LOCK_NAME = "hook.lock"
PID_NAME = "hook.pid"
DEBUG_LOG_NAME = "hook-daemon.log"
#: Seconds without a call before the daemon exits.
ENV_IDLE = "CONVMEM_HOOK_DAEMON_IDLE"
#: ``1``: the daemon writes what it does to ``<home>/hook-daemon.log`` (tests, diagnosis).
ENV_DEBUG = "CONVMEM_HOOK_DAEMON_DEBUG"
DEFAULT_IDLE_SECONDS = 600.0

MAGIC = b"convmem-hook 1\n"
FIELDS = ("identity", "host", "options", "cwd", "umask", "env", "encoding", "errors", "payload")
ACCEPTED, DECLINED = b"A", b"D"

CONNECT_TIMEOUT = 1.0
VERDICT_TIMEOUT = 3.0  # the daemon's child answers in milliseconds
ANSWER_TIMEOUT = 600.0  # the host's own hook timeout is the real bound
READ_TIMEOUT = 10.0  # the daemon waiting for a request the client sends at once
MAX_SOCKET_PATH = 100  # sockaddr_un holds 104-108 bytes; longer paths connect relatively
MAX_CHILDREN = 64
TICK = 1.0
SERVED, NOT_SERVED = 0, 3  # a child's exit status


# --- the client: ``convmem hook claude-code`` ---------------------------------------------


def run_client(args: list[str], home: str | None, config: str | None) -> int:
    """``convmem hook HOST [OPTIONS]``: hand the call to the data folder's daemon; handle
    it here if the daemon did not take it, and start one for next time."""
    from convmem.core.paths import home_dir

    stdin = sys.stdin
    try:
        if hasattr(stdin, "buffer"):
            data = stdin.buffer.read(MAX_PAYLOAD_BYTES)
            encoding, errors = stdin.encoding, stdin.errors or "strict"
        else:  # a text stream without bytes under it (a caller's io.StringIO)
            data = stdin.read(MAX_PAYLOAD_BYTES).encode("utf-8", "surrogatepass")
            encoding, errors = "utf-8", "surrogatepass"
    except Exception:
        return run_claude_code(home, config)  # it reads and fails the same way, and logs
    base = home_dir(home)
    try:
        code = _ask(base, args[0], args[1:], data, encoding, errors)
    except BaseException as exc:  # maybe taken: print nothing rather than handle it twice
        if not isinstance(exc, KeyboardInterrupt):
            _log_error(exc, None, None, base)
        return 0
    if code is not None:
        return code
    import io

    text = io.TextIOWrapper(io.BytesIO(data), encoding=encoding, errors=errors, newline="\n")
    code = run_claude_code(home, config, stdin=text)
    _spawn(base)
    return code


def _ask(
    base: str, host: str, options: list[str], data: bytes, encoding: str, errors: str
) -> int | None:
    """The exit code when the daemon took the call (its answer printed); None when not."""
    try:
        import _socket
    except ImportError:
        return None
    if not hasattr(_socket, "AF_UNIX") or not hasattr(os, "environb"):
        return None
    path = os.path.join(base, SOCKET_NAME)
    try:
        st = os.lstat(path)
        cwd = os.getcwd()
    except OSError:
        return None
    if st.st_mode & 0o170000 != 0o140000 or st.st_uid != os.getuid():
        return None  # not a socket, or not ours: never send a payload there
    try:
        request = _request(host, options, cwd, encoding, errors, data)
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except Exception:
        return None
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            if len(os.fsencode(path)) < MAX_SOCKET_PATH:
                sock.connect(path)
            else:
                os.chdir(base)
                try:
                    sock.connect(SOCKET_NAME)
                finally:
                    os.chdir(cwd)
            sock.sendall(request)
        except OSError:
            return None  # refused, or the request never arrived whole: nothing was taken
        sock.settimeout(VERDICT_TIMEOUT)
        try:
            verdict = sock.recv(1)
        except TimeoutError:
            return _late_verdict(sock)
        except OSError:
            return None  # reset before a verdict
        if verdict != ACCEPTED:
            return None  # declined, or closed before taking it
        sock.settimeout(ANSWER_TIMEOUT)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except OSError:
            return 0  # taken, answer lost: print nothing rather than handle it twice
    finally:
        sock.close()
    return _print_answer(b"".join(chunks), base)


def _request(
    host: str, options: list[str], cwd: str, encoding: str, errors: str, data: bytes
) -> bytes:
    mask = os.umask(0o077)
    os.umask(mask)
    env = b"\0".join(key + b"=" + value for key, value in os.environb.items())
    fields = (
        _identity(),
        host.encode(),
        b"\0".join(os.fsencode(o) for o in options),
        os.fsencode(cwd),
        b"%d" % mask,
        env,
        encoding.encode(),
        errors.encode(),
        data,
    )
    return MAGIC + b"".join(b"%d\n" % len(f) + f for f in fields)


def _identity() -> bytes:
    """This convmem: its version, its files and its environment (``python`` and
    ``python3`` of one virtualenv are the same; two virtualenvs are not)."""
    package = sys.modules["convmem"]
    parts = (getattr(package, "__version__", ""), package.__file__, sys.prefix)
    return b"\0".join(os.fsencode(str(part)) for part in parts)


def _late_verdict(sock: _socket.socket) -> int | None:
    """No verdict in time: on Linux, shutting our read side decides it for good."""
    if sys.platform != "linux":
        return 0  # unknowable: fail open
    import _socket

    try:
        # After this a child's ``A`` fails with EPIPE (it then drops the call); an ``A``
        # sent before it is still queued here. Both happen under the same socket lock.
        sock.shutdown(_socket.SHUT_RD)
        sock.setblocking(False)
        verdict = sock.recv(1)
    except OSError:
        return None
    return 0 if verdict == ACCEPTED else None


def _print_answer(answer: bytes, base: str) -> int:
    head, _, rest = answer.partition(b"\n")
    try:
        code, n_out, n_err = (int(part) for part in head.split())
    except ValueError:
        return 0  # taken but garbled: print nothing
    if len(rest) != n_out + n_err:
        return 0
    for stream, raw in ((sys.stdout, rest[:n_out]), (sys.stderr, rest[n_out:])):
        if raw:
            try:
                stream.write(raw.decode("utf-8", "surrogatepass"))
                stream.flush()
            except (OSError, UnicodeError) as exc:  # the host stopped listening
                _log_error(exc, None, None, base)
    return code


def _spawn(base: str) -> None:
    """Start a daemon for ``base`` in the background, unless one holds the lock."""
    if os.environ.get(ENV_DAEMON) == "0" or not hasattr(os, "fork") or not sys.executable:
        return
    try:
        st = os.stat(base)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return  # a shared folder: the daemon would refuse it (see Daemon.run)
    except FileNotFoundError:
        pass  # the daemon creates it, private
    except OSError:
        return
    try:
        if _lock_held(base):
            return
        import subprocess

        # The daemon imports the convmem this process runs: -P keeps the current folder
        # off sys.path, and the folder convmem came from goes on it if it is not there.
        root = os.path.dirname(
            os.path.dirname(os.path.abspath(sys.modules["convmem"].__file__ or ""))
        )
        boot = (
            "import sys; root = sys.argv.pop(); root in sys.path or sys.path.insert(0, root);"
            " from convmem.adapters.hook_daemon import main; sys.exit(main())"
        )
        subprocess.Popen(
            [sys.executable, "-P", "-c", boot, "--home", os.path.abspath(base), root],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=os.sep,
            start_new_session=True,
        )
    except Exception:
        pass  # no daemon: every call is handled in-process, as without one


def _lock_held(base: str) -> bool:
    import fcntl

    try:
        fd = os.open(os.path.join(base, LOCK_NAME), os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


# --- the daemon ----------------------------------------------------------------------------


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


class Daemon:
    """One data folder's resident hook process (see the module docstring)."""

    def __init__(self, home: str, idle: float = DEFAULT_IDLE_SECONDS, debug: bool = False):
        self.home = os.path.abspath(home)
        self.socket_path = os.path.join(self.home, SOCKET_NAME)
        self.idle = idle
        self.debug = debug
        self.pid = os.getpid()
        self.lock_fd = -1
        self.listener: socket.socket | None = None
        self.socket_id: tuple[int, int] | None = None
        self.sources: dict[str, int] = {}
        self.children: set[int] = set()
        self.keeper_fd = -1
        self.last_call = 0.0
        self.stopping = False
        self.in_select = False

    # --- lifetime ------------------------------------------------------------------------

    def run(self) -> int:
        """Serve until there is a reason to stop; 1 when the folder is not private."""
        import fcntl
        import time

        try:
            os.makedirs(self.home, mode=0o700, exist_ok=True)
            st = os.stat(self.home)
        except OSError as exc:
            self._log_error(exc)
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
            self._log_error(exc)
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
            self.stopping = True
            if self.in_select:
                raise _Stop

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)

    def _warm_up(self) -> None:
        """Import and exercise the hook's code on a throwaway store, then freeze it all."""
        import contextlib
        import gc
        import time

        began = time.monotonic()
        try:
            _exercise_hooks()
        except Exception as exc:  # the children import what is missing: slower, as correct
            self._log_error(exc)
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
        import socket
        import time

        with contextlib.suppress(FileNotFoundError):  # stale, and we hold the lock
            os.unlink(self.socket_path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mask = os.umask(0o177)
        try:
            os.chdir(self.home)  # bind by name: long paths do not fit in sockaddr_un
            listener.bind(SOCKET_NAME)
        finally:
            os.umask(mask)
        os.chmod(self.socket_path, 0o600)
        st = os.lstat(self.socket_path)
        self.socket_id = (st.st_dev, st.st_ino)
        listener.listen(64)
        listener.setblocking(False)
        self.listener = listener
        self.last_call = time.monotonic()
        self._note("listening")

    def _serve(self) -> str:
        import select
        import time

        assert self.listener is not None
        while not self.stopping:
            self._reap()
            waited = time.monotonic() - self.last_call
            self.in_select = True
            try:
                timeout = max(0.0, min(TICK, self.idle - waited))
                ready, _, _ = select.select([self.listener], [], [], timeout)
            except _Stop:
                break
            finally:
                self.in_select = False
            if not ready:
                reason = self._reason_to_stop()
                if reason:
                    return reason
                continue
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                continue
            if self._sources_changed():
                _send_quietly(conn, DECLINED)
                conn.close()
                return "source changed"
            self._fork(conn)
        return "signal"

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
        # idle counts from the last call served: calls declined (another convmem
        # install sharing the folder) do not keep this daemon alive
        if not self.children and time.monotonic() - self.last_call >= self.idle:
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
        if self.listener is not None:
            self.listener.close()
        pid_path = os.path.join(self.home, PID_NAME)
        with contextlib.suppress(OSError), open(pid_path, "rb") as fh:
            if fh.read().strip() == b"%d" % self.pid:
                os.unlink(pid_path)
        if self.keeper_fd >= 0:
            os.close(self.keeper_fd)  # the keeper reads EOF and closes the store last
        self._note(f"exit: {reason}")
        os.close(self.lock_fd)

    # --- children ----------------------------------------------------------------------

    def _fork(self, conn: socket.socket) -> None:
        if len(self.children) >= MAX_CHILDREN:
            _send_quietly(conn, DECLINED)
            conn.close()
            return
        try:
            pid = os.fork()
        except OSError as exc:
            self._log_error(exc)
            conn.close()  # closed before a verdict: the client handles the call itself
            return
        if pid == 0:
            status = NOT_SERVED
            try:
                status = self._child(conn)
            finally:
                os._exit(status)
        self.children.add(pid)
        conn.close()

    def _in_child(self) -> None:
        """The lock, the socket and the signal handlers stay with the daemon."""
        import signal

        os.close(self.lock_fd)
        if self.listener is not None:
            self.listener.close()
        if self.keeper_fd >= 0:
            os.close(self.keeper_fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)

    def _child(self, conn: socket.socket) -> int:
        try:
            self._in_child()
            served = serve_call(conn)
            if served:
                self._note(f"served {served} in child {os.getpid()}")
                return SERVED
        except BaseException as exc:
            self._log_error(exc)
        finally:
            conn.close()
        return NOT_SERVED

    def _reap(self) -> None:
        import time

        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.children:
                self.children.discard(pid)
                if os.waitstatus_to_exitcode(status) == SERVED:
                    self.last_call = time.monotonic()

    def _start_keeper(self) -> None:
        """Fork the process that keeps the store open; it ends when this one does."""
        import signal

        read_fd, self.keeper_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError as exc:
            self._log_error(exc)
            os.close(read_fd)
            return
        if pid == 0:
            try:
                self._in_child()
                signal.signal(signal.SIGTERM, _raise_stop)  # close the store, then go
                _keep_store_open(self.home, read_fd)
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

    def _log_error(self, exc: BaseException) -> None:
        self._note(f"error: {type(exc).__name__}: {exc}")
        _log_error(exc, None, None, self.home)


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
        if fields["identity"] != _identity() or host not in HOSTS:
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
    import socket
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


def _keep_store_open(home: str, parent_fd: int) -> None:
    """Hold a connection to the folder's SQLite store until ``parent_fd`` reads EOF.

    The store is the one a call without ``--config`` uses; a file that is replaced is
    followed, one that does not exist yet is waited for (never created here).
    """
    import select
    import sqlite3
    from pathlib import Path

    from convmem.config import load_settings
    from convmem.core.paths import home_dir

    settings = load_settings(None, None if home == os.path.abspath(home_dir()) else home)
    url = str(settings["store"] or "")
    if url and not url.startswith("sqlite:///"):
        return  # a server database: nothing to keep
    path = Path(url[len("sqlite:///") :] if url else settings.db_path).absolute()
    held: tuple[sqlite3.Connection, int] | None = None
    try:
        while not select.select([parent_fd], [], [], TICK)[0]:
            try:
                inode = path.stat().st_ino
            except OSError:
                continue
            if held is not None and held[1] == inode:
                continue
            if held is not None:
                held[0].close()
            conn = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            held = (conn, inode)
    finally:
        if held is not None:
            held[0].close()


def _exercise_hooks() -> None:
    """One short session through every hook on a throwaway store (no user data).

    What it imports, compiles and caches is inherited by every child.
    """
    import importlib
    import io
    import json
    import tempfile

    saved = dict(os.environ)
    for name in ("CONVMEM_STORE", "CONVMEM_HOME", "CLAUDE_PROJECT_DIR"):
        os.environ.pop(name, None)
    try:
        with tempfile.TemporaryDirectory(prefix="convmem-hook-warmup-") as tmp:
            config = os.path.join(tmp, "config.toml")
            with open(config, "w", encoding="utf-8") as fh:
                fh.write(
                    "[validation]\nenabled = true\n"
                    'preconditions = [{must_exist = "src/**", tools = ["Write", "Edit"]}]\n'
                )
            transcript = os.path.join(tmp, "warm-up.jsonl")
            prompt = "The token budget must stay under 3000 tokens; we decided on SQLite."
            reply = [
                {"type": "text", "text": "Noted: under 3000 tokens, SQLite."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
            ]
            result = [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]
            lines = [
                {"type": "user", "promptId": "p1", "message": {"content": prompt}},
                {"type": "assistant", "message": {"content": reply}},
                {"type": "user", "message": {"content": result}},
            ]
            write = {"file_path": os.path.join(tmp, "src", "new.py"), "content": "x = 1\n"}
            calls: list[tuple[str, dict[str, object], int]] = [
                ("SessionStart", {"source": "startup"}, 0),
                ("UserPromptSubmit", {"prompt": prompt, "prompt_id": "p1"}, 0),
                ("PreToolUse", {"tool_name": "Write", "tool_input": write}, 1),
                ("PostToolUse", {"tool_name": "Bash"}, 3),
                ("Stop", {}, 3),
                ("PreCompact", {}, 3),
                ("SessionStart", {"source": "compact"}, 3),
                ("UserPromptSubmit", {"prompt": "What was the budget?"}, 3),
                ("SessionEnd", {}, 3),
            ]
            for event, extra, upto in calls:
                with open(transcript, "w", encoding="utf-8") as fh:
                    fh.writelines(json.dumps(line) + "\n" for line in lines[:upto])
                payload = {"session_id": "warm-up", "transcript_path": transcript, "cwd": tmp}
                stdin = io.StringIO(json.dumps({**payload, "hook_event_name": event, **extra}))
                run_claude_code(tmp, config, stdin=stdin, stdout=io.StringIO())
    finally:
        os.environ.clear()
        os.environ.update(saved)
    for name in ("convmem.validation", "convmem.memory.extraction", "convmem.assembly"):
        importlib.import_module(name)


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
