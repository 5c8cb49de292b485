"""The inspector: a local web page to see and steer what the agent remembers.

``convmem ui`` serves it from one process (:mod:`convmem.ui.server`); the pages
(:mod:`convmem.ui.pages_sessions`, :mod:`~convmem.ui.pages_memory`,
:mod:`~convmem.ui.pages_blocks`, :mod:`~convmem.ui.pages_more`) are thin views over
the same library calls as the command line; :mod:`convmem.ui.security` decides who
may use it and what a page may do in the browser. Nothing here writes SQL, and
every piece of stored text reaches the browser escaped.

The web libraries come with the optional ``ui`` extra (``pip install 'convmem[ui]'``);
importing this package alone needs none of them.
"""

from __future__ import annotations

#: The packages the ``ui`` extra installs, as (import name, distribution name).
REQUIRED = (
    ("starlette", "starlette"),
    ("jinja2", "Jinja2"),
    ("uvicorn", "uvicorn"),
    ("python_multipart", "python-multipart"),
)


def missing_packages() -> list[str]:
    """Distribution names of the ``ui`` extra's packages that are not installed."""
    from importlib.util import find_spec

    return [dist for module, dist in REQUIRED if find_spec(module) is None]
