"""Storage URLs: which backend a ``store`` value names, and how to show it safely.

A store is a SQLite file (a plain path, or ``sqlite:///path``) or a PostgreSQL
database (``postgresql://`` or ``postgres://``). Anything else that looks like a
URL (``mysql://``, a typo such as ``postgressql://``) is refused with one sentence,
rather than becoming a SQLite file named after it.

A PostgreSQL URL may carry a password, in the user part or as ``?password=``;
:func:`mask_url` hides it, and every place that prints, logs or returns a store
location (``status``, ``config``, the MCP and DSH status, error messages) goes
through it.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from convmem.errors import ConfigError

POSTGRES_SCHEMES = ("postgresql", "postgres")
SQLITE_PREFIX = "sqlite:///"
#: ``scheme://`` at the start of a value (a Windows drive ``C:\\`` is not one).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: libpq's key=value form: ``host=db password=secret``.
_KEYWORD_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
MASK = "***"


def backend_of(value: str) -> str:
    """``sqlite`` or ``postgresql`` for a store value; :class:`ConfigError` otherwise."""
    match = _SCHEME.match(value)
    if match is None:
        return "sqlite"
    scheme = match.group(1).lower()
    if scheme in POSTGRES_SCHEMES:
        return "postgresql"
    if value.startswith(SQLITE_PREFIX):
        return "sqlite"
    raise ConfigError(
        f"the store {mask_url(value)!r} has an unknown scheme {scheme!r}; use a SQLite file"
        " path, sqlite:///PATH or postgresql://USER@HOST/DB"
    )


def sqlite_path(value: str) -> str:
    """The file of a SQLite store value."""
    return value[len(SQLITE_PREFIX) :] if value.startswith(SQLITE_PREFIX) else value


def mask_url(url: str) -> str:
    """The value with any password replaced by ``***`` (other parts unchanged)."""
    if url.startswith(SQLITE_PREFIX):
        return url  # a file path holds no password, and rebuilding it would drop a slash
    if _SCHEME.match(url) is None:
        return _KEYWORD_PASSWORD.sub(rf"\g<1>{MASK}", url)
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # an unparsable netloc (a bad port): hide the whole user part
        head, sep, tail = url.partition("://")
        netloc, slash, rest = tail.partition("/")
        if "@" in netloc:
            netloc = MASK + "@" + netloc.rsplit("@", 1)[1]
        return head + sep + netloc + slash + rest
    netloc = parts.netloc
    if password is not None:
        user, _, host = netloc.rpartition("@")
        name = user.split(":", 1)[0]
        netloc = f"{name}:{MASK}@{host}"
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(key.lower() == "password" for key, _ in query):
        query = [(k, MASK if k.lower() == "password" else v) for k, v in query]
        return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="/*")))
    return urlunsplit(parts._replace(netloc=netloc))
