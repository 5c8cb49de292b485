"""Where the data folder is when nothing else says: the one copy of that rule.

It imports only ``os`` and ``sys``: the Claude Code hook resolves the folder on every
prompt to find the resident hook process (:mod:`convmem.adapters.hook_daemon`), and
importing :mod:`convmem.config` for it would cost more than the whole answer. The
checks that a data folder can be trusted, and the writers of private files (logs,
exports), live here too, so that every entry point applies the same rule.
"""

from __future__ import annotations

import os
import sys

#: The environment variable naming the data folder.
ENV_HOME = "CONVMEM_HOME"


def platform_data_dir() -> str:
    """The platform's usual place for an application's data."""
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, "convmem")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", "convmem")
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    return os.path.join(base, "convmem")


def home_dir(home: str | None = None) -> str:
    """The folder that holds ``config.toml``: ``home`` (``--home``), else ``CONVMEM_HOME``,
    else :func:`platform_data_dir`. The data folder itself can be moved by ``data_dir``
    in that file; see :func:`convmem.config.load_settings`.
    """
    return home or os.environ.get(ENV_HOME) or platform_data_dir()


#: ``convmem.log`` is rotated to ``convmem.log.1`` when it grows past this size.
LOG_MAX_BYTES = 1_000_000
#: Files in the data folder convmem writes; none may be a symbolic link.
OWN_FILES = (
    "memory.sqlite",
    "memory.sqlite-wal",
    "memory.sqlite-shm",
    "memory.sqlite-journal",
    "convmem.log",
    "convmem.log.1",
    "config.toml",
    "hook.sock",
    "hook.lock",
    "hook.pid",
    "hook-daemon.log",
)


class UntrustedFolderError(OSError):
    """The data folder (or a file in it) could be controlled by someone else."""


def check_data_dir(folder: str | os.PathLike[str]) -> None:
    """Refuse a data folder another user could tamper with (raises UntrustedFolderError).

    A folder that does not exist yet is fine: convmem creates it 0700. One that
    exists must belong to this user and not be writable by group or others (else a
    planted database or a symbolic link in place of ``convmem.log`` would receive
    what convmem writes), and none of convmem's files in it may be a link. This is
    the rule the resident hook process applies to its own folder, for every entry
    point. Platforms without owners (Windows) are not checked.
    """
    if not hasattr(os, "getuid"):
        return
    path = os.fspath(folder)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UntrustedFolderError(f"cannot use the data folder {path}: {exc.strerror}") from None
    import stat

    if not stat.S_ISDIR(st.st_mode):
        raise UntrustedFolderError(f"the data folder {path} is not a folder")
    if st.st_uid != os.getuid():
        raise UntrustedFolderError(
            f"the data folder {path} belongs to another user; use a folder of your own"
            " (--home or CONVMEM_HOME)"
        )
    if st.st_mode & 0o022:
        raise UntrustedFolderError(
            f"the data folder {path} is writable by other users; run chmod 700 {path}"
        )
    for name in OWN_FILES:
        try:
            if stat.S_ISLNK(os.lstat(os.path.join(path, name)).st_mode):
                raise UntrustedFolderError(
                    f"{os.path.join(path, name)} is a symbolic link; convmem does not follow"
                    " links in its data folder: remove it"
                )
        except FileNotFoundError:
            continue


def _open_private(path: str, flags: int) -> int:
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags | nofollow, 0o600)


def append_private(path: str | os.PathLike[str], text: str) -> None:
    """Append to a log file created 0600 (a traceback can quote what the user wrote).

    The log never follows a symbolic link, and is rotated (one old copy kept) when it
    passes :data:`LOG_MAX_BYTES`.
    """
    name = os.fspath(path)
    folder = os.path.dirname(name)
    if folder:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        check_data_dir(folder)
    try:
        if os.lstat(name).st_size > LOG_MAX_BYTES:
            os.replace(name, name + ".1")
    except FileNotFoundError:
        pass
    fd = _open_private(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(text)


def write_private(path: str | os.PathLike[str], text: str) -> None:
    """Write a whole file created 0600 (an export holds a whole session).

    An existing file keeps its owner but loses any group or other permission.
    """
    name = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(name))
    if not os.path.isdir(folder):
        from convmem.errors import ConvmemError

        raise ConvmemError(f"cannot write {name}: the folder {folder} does not exist")
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as exc:
        from convmem.errors import ConvmemError

        raise ConvmemError(f"cannot write {name}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if hasattr(os, "fchmod") and os.path.isfile(name):
                os.fchmod(fh.fileno(), 0o600)
            fh.write(text)
    except OSError as exc:  # a full disk, a quota, a device that takes nothing
        from convmem.errors import ConvmemError

        raise ConvmemError(f"cannot write {name}: {exc.strerror}; nothing else changed") from None
