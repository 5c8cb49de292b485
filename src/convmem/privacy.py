"""Keep private data out of the database.

Three steps run in capture, before anything reaches disk, and on the query an
assembly logs:

* **Terminal colour codes** are removed (:func:`strip_ansi`): ``grep --color``
  puts them inside and around tokens, where they would hide a secret from the rules.
* **Private spans** are dropped (:func:`drop_private`, setting
  ``capture.drop_private``). The rule, as docs/privacy.md states it:

  - an opening tag is ``<private>`` in any case, with spaces or attributes inside
    the brackets (``<private >``, ``< private class="x">``), in ASCII or full-width
    brackets and letters (``＜private＞``, as Chinese input methods type it);
    ``<private/>`` opens a span too (convmem errs towards dropping);
  - a closing tag is ``</private>`` with the same freedoms;
  - spans nest: a span ends at the closing tag that matches its opening tag, so
    ``<private>a <private>b</private> c</private>`` drops all of ``a b c``;
  - a span that is never closed runs to the end of the message;
  - a closing tag with no opening tag before it closes a span that began in an
    earlier message (a span split across two events): everything before it is
    dropped.

  Each dropped span becomes :data:`PRIVATE_MARKER`.
* **Secrets** are replaced by ``[redacted:<rule>]`` (:mod:`convmem.redaction`,
  setting ``capture.redact_secrets``).

Every step is linear in the length of the text, and :func:`scrub` scans at most
``limit`` characters (plus a margin, so that a secret cut by the limit is still
seen whole): the caller stores no more than that anyway.
"""

from __future__ import annotations

import re

PRIVATE_MARKER = "[private: not stored]"
#: Characters scanned past ``limit``, so that a secret or tag cut by it is seen whole.
MARGIN = 8192

#: The escape sequences programs print: CSI with the final bytes of colours, erasing
#: and cursor moves, OSC (titles, hyperlinks), and two-character escapes. Anything
#: wider could swallow the first letter of the text after it ("ESC[p" + "assword=")
#: and so hide a secret's name; a stray ESC is removed by normalization instead.
_ANSI = re.compile(
    r"\x1b(?:\[[0-9;:?<=>]{0,64}[A-HJKSTfhlmnsu]"
    r"|\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)|[78=>DEHM])"
)


def _letters(word: str) -> str:
    """A pattern for ``word`` in ASCII or full-width letters, any case."""
    out = []
    for ch in word:
        lower, upper = ch.lower(), ch.upper()
        wide = chr(ord(lower) + 0xFEE0) + chr(ord(upper) + 0xFEE0)
        out.append(f"[{lower}{upper}{wide}]")
    return "".join(out)


_LT = "[<\uff1c\ufe64\u3008]"
_GT = "[>\uff1e\ufe65\u3009]"
_SLASH = "[/\uff0f]"
_SPACE = "[ \t\u3000]{0,8}"
_ATTRIBUTES = "(?:[ \t\u3000/][^<>\uff1c\uff1e\n]{0,200})?"
_TAG = re.compile(
    rf"(?P<close>{_LT}{_SPACE}{_SLASH}{_SPACE}{_letters('private')}{_SPACE}{_GT})"
    rf"|(?P<open>{_LT}{_SPACE}{_letters('private')}{_ATTRIBUTES}{_GT})"
)
_TAG_HINT = re.compile(rf"{_letters('private')}")


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences."""
    if "\x1b" not in text:
        return text
    return _ANSI.sub("", text)


def drop_private(text: str) -> str:
    """``text`` with every private span replaced by :data:`PRIVATE_MARKER`."""
    if _TAG_HINT.search(text) is None:
        return text
    parts: list[str] = []
    kept_from = 0  # start of the text not yet decided
    depth = 0
    for match in _TAG.finditer(text):
        if match.group("open") is not None:
            if depth == 0:
                parts.append(text[kept_from : match.start()])
            depth += 1
            continue
        if depth == 0:
            # a span opened in an earlier message ends here: all before it was private
            parts = [PRIVATE_MARKER]
            kept_from = match.end()
            continue
        depth -= 1
        if depth == 0:
            parts.append(PRIVATE_MARKER)
            kept_from = match.end()
    if depth > 0:
        parts.append(PRIVATE_MARKER)  # never closed: private to the end
        return "".join(parts)
    parts.append(text[kept_from:])
    return "".join(parts)


def redact_secrets(text: str) -> str:
    from convmem.redaction import redact

    return redact(text)


def scrub(
    text: str, *, private: bool = True, secrets: bool = True, limit: int | None = None
) -> str:
    """Apply the enabled protections to ``text`` (cut to ``limit`` + a margin first)."""
    if limit is not None and len(text) > limit + MARGIN:
        text = text[: limit + MARGIN]
    text = strip_ansi(text)
    if private:
        text = drop_private(text)
    if secrets:
        text = redact_secrets(text)
    return text
