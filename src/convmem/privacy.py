"""Keep private data out of the database.

Text inside ``<private>…</private>`` is dropped before storage, and well-known secret
formats are replaced by a labelled marker such as ``[redacted:aws-access-key]``.
Both happen in capture, before anything reaches disk; both can be turned off in the
settings (``capture.drop_private``, ``capture.redact_secrets``).
"""

from __future__ import annotations

import re

PRIVATE_MARKER = "[private: not stored]"

_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)

#: (label, pattern) in the order they are applied; the broadest come last.
_SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"  # PGP's end in " BLOCK"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    (
        "aws-secret-key",
        # also as a quoted JSON key: "aws_secret_access_key": "…"
        re.compile(r"(?i)(aws_secret_access_key['\"]?\s*[=:]\s*)['\"]?[A-Za-z0-9/+=]{40}['\"]?"),
    ),
    ("api-key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer-token", re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{16,}=*")),
)


def drop_private(text: str) -> str:
    if "<" not in text:
        return text
    return _PRIVATE.sub(PRIVATE_MARKER, text)


def redact_secrets(text: str) -> str:
    for label, pattern in _SECRETS:
        marker = f"[redacted:{label}]"
        text = pattern.sub(rf"\g<1>{marker}" if pattern.groups else marker, text)
    return text


def scrub(text: str, *, private: bool = True, secrets: bool = True) -> str:
    """Apply the enabled protections to ``text``."""
    if private:
        text = drop_private(text)
    if secrets:
        text = redact_secrets(text)
    return text
