"""The hook's side of the resident hook process: hand a call over, or say it was not taken.

``convmem hook claude-code`` runs on every prompt and tool call. When the data folder's
resident process (:mod:`convmem.adapters.hook_daemon`) listens, the call is sent to it
and its answer printed, and this process imports only ``os``, ``sys`` and ``_socket``.
:func:`ask` returns None whenever the daemon provably did not take the call (no socket,
refused, declined with ``D``, closed before ``A``): the caller then handles it itself
and :func:`spawn` starts a daemon for next time. After ``A`` the daemon owns the call:
a late or broken answer prints nothing (fail open), never a second handling. A verdict
that is late is settled on Linux by shutting our read side, after which the daemon's
``A`` fails and it drops the call; elsewhere it fails open.

Wire format: the request is :data:`MAGIC` then :data:`FIELDS`, each as
``b"<length>\\n"`` and that many bytes. The answer is one verdict byte; after ``A``,
``b"<exit> <stdout bytes> <stderr bytes>\\n"`` and both texts in UTF-8.

Nothing here imports the rest of convmem (no import circle with the hook or the daemon):
what to do when the daemon does not take a call is the caller's.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # ``typing`` imports ``re``: too much for every hook call
if TYPE_CHECKING:
    import _socket
    from collections.abc import Callable

# Files in the folder ``config.toml`` is read from.
SOCKET_NAME = "hook.sock"
LOCK_NAME = "hook.lock"
PID_NAME = "hook.pid"
DEBUG_LOG_NAME = "hook-daemon.log"

MAGIC = b"convmem-hook 1\n"
FIELDS = ("identity", "host", "options", "cwd", "umask", "env", "encoding", "errors", "payload")
ACCEPTED, DECLINED = b"A", b"D"

CONNECT_TIMEOUT = 1.0
VERDICT_TIMEOUT = 3.0  # the daemon's child answers in milliseconds
ANSWER_TIMEOUT = 600.0  # the host's own hook timeout is the real bound
MAX_SOCKET_PATH = 100  # sockaddr_un holds 104-108 bytes; longer paths connect relatively
#: ``0`` turns the resident hook process off (same name the hook reads).
ENV_DAEMON = "CONVMEM_HOOK_DAEMON"


def read_stdin(limit: int) -> tuple[bytes, str, str]:
    """The payload as bytes, with the encoding and error policy to decode it."""
    stdin = sys.stdin
    if hasattr(stdin, "buffer"):
        return stdin.buffer.read(limit), stdin.encoding, stdin.errors or "strict"
    # a text stream without bytes under it (a caller's io.StringIO)
    return stdin.read(limit).encode("utf-8", "surrogatepass"), "utf-8", "surrogatepass"


def identity() -> bytes:
    """This convmem: its version, its files and its environment (``python`` and
    ``python3`` of one virtualenv are the same; two virtualenvs are not)."""
    package = sys.modules["convmem"]
    parts = (getattr(package, "__version__", ""), package.__file__, sys.prefix)
    return b"\0".join(os.fsencode(str(part)) for part in parts)


def ask(
    base: str,
    host: str,
    options: list[str],
    data: bytes,
    encoding: str,
    errors: str,
    log: Callable[[BaseException], None],
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
    return _print_answer(b"".join(chunks), log)


def _request(
    host: str, options: list[str], cwd: str, encoding: str, errors: str, data: bytes
) -> bytes:
    mask = os.umask(0o077)
    os.umask(mask)
    env = b"\0".join(key + b"=" + value for key, value in os.environb.items())
    fields = (
        identity(),
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


def _print_answer(answer: bytes, log: Callable[[BaseException], None]) -> int:
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
                log(exc)
    return code


def spawn(base: str) -> None:
    """Start a daemon for ``base`` in the background, unless one holds the lock."""
    if os.environ.get(ENV_DAEMON) == "0" or not hasattr(os, "fork") or not sys.executable:
        return
    try:
        st = os.stat(base)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return  # a shared folder: the daemon would refuse it
    except FileNotFoundError:
        pass  # the daemon creates it, private
    except OSError:
        return
    try:
        if lock_held(base):
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


def lock_held(base: str) -> bool:
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
