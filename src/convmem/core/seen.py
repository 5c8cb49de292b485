"""When each host event last reached convmem: one empty file per event, its mtime the time.

The hook runs on every prompt, so marking costs one ``utime`` (or one create) and
imports only ``os``. ``convmem doctor`` and ``convmem status`` read the times back to
tell an install that works from one whose events stopped arriving.
"""

from __future__ import annotations

import os

#: The folder, inside the data folder, that holds the marks.
SEEN_DIR = "hooks-seen"


def mark_seen(data_dir: str | os.PathLike[str], host: str, event: str) -> None:
    """Note that ``event`` of ``host`` reached convmem now; never raises."""
    if not event.replace("-", "").replace("_", "").isalnum():
        return  # a name from a payload: never a path
    path = os.path.join(os.fspath(data_dir), SEEN_DIR, f"{host}.{event}")
    try:
        os.utime(path)
    except FileNotFoundError:
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError:
            pass
    except OSError:
        pass


def last_seen(data_dir: str | os.PathLike[str], host: str) -> dict[str, float]:
    """``{event: epoch seconds}`` of every event of ``host`` that reached convmem."""
    folder = os.path.join(os.fspath(data_dir), SEEN_DIR)
    out: dict[str, float] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        prefix, dot, event = name.partition(".")
        if dot and prefix == host:
            try:
                out[event] = os.stat(os.path.join(folder, name)).st_mtime
            except OSError:
                continue
    return out
