"""Where the data folder is when nothing else says: the one copy of that rule.

It imports only ``os`` and ``sys``: the Claude Code hook resolves the folder on every
prompt to find the resident hook process (:mod:`convmem.adapters.hook_daemon`), and
importing :mod:`convmem.config` for it would cost more than the whole answer.
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


def append_private(path: str | os.PathLike[str], text: str) -> None:
    """Append to a log file created 0600 (a traceback can quote what the user wrote)."""
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(text)
