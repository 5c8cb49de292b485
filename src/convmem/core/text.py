"""Text utilities: normalization, hashing, stable ids, tokens, numbers, paths, quotes.

Everything here is pure and deterministic; the same input always gives the same
output, which is what lets assembled blocks be byte-identical across runs.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import string
import unicodedata
from dataclasses import dataclass
from typing import Any

from convmem.core.constants import (
    CJK_CHARS_PER_TOKEN,
    DIGITS_PER_TOKEN,
    LETTERS_PER_TOKEN,
    MAX_QUERY_TOKENS,
    OTHER_CHARS_PER_TOKEN,
    PUNCT_PER_TOKEN,
    SPACES_PER_TOKEN,
)

# --- hashing and ids ------------------------------------------------------------------


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and fixed separators: the form every hash is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def session_part(session_id: str) -> str:
    """A short, id-safe piece of a session id (letters and digits, at most 8)."""
    part = re.sub(r"[^A-Za-z0-9]", "", session_id)[:8]
    return part or "s"


def stable_id(prefix: str, session_id: str, *parts: Any) -> str:
    """``<prefix>_<session-part>_<hash16>``, the same for the same inputs."""
    digest = sha256_hex(canonical_json([session_id, *parts]))[:16]
    return f"{prefix}_{session_part(session_id)}_{digest}"


# --- normalization --------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_MANY_BLANK_LINES = re.compile(r"\n{3,}")


def fix_surrogates(text: str) -> str:
    """Replace lone surrogates (invalid in UTF-8) with U+FFFD, keep valid pairs."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def normalize_text(text: str) -> str:
    """Canonical stored form: NFC, no control characters, LF newlines, trimmed lines."""
    text = fix_surrogates(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    text = unicodedata.normalize("NFC", text)
    text = _TRAILING_SPACE.sub("\n", text)
    text = _MANY_BLANK_LINES.sub("\n\n", text)
    return text.strip()


def collapse_spaces(text: str) -> str:
    """Runs of white space as one space, none at the ends (``str.split``'s white space
    is the regex ``\\s``'s, character for character, and splitting is 4x faster)."""
    return " ".join(text.split())


def dedupe_key(text: str) -> str:
    """Hash of a case- and whitespace-insensitive form, used to dedupe memory items."""
    return sha256_hex(collapse_spaces(text).casefold())


# --- CJK and token estimates ----------------------------------------------------------

_CJK_CLASS = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # compatibility ideographs
    "\U00020000-\U0002ffff"
)
_CJK = re.compile(f"[{_CJK_CLASS}]")
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")


#: What convmem adds to an item's words, marked so that it never reads as said: the
#: option a pick by place names ("2 ⟦= keyset pagination⟧").
_NOTE = re.compile(r"(?:\s*⟦=[^⟧]*⟧)+$")


def with_note(said: str, note: str) -> str:
    """``said`` with convmem's ``note`` after it (see :func:`said_part`)."""
    return f"{said} ⟦= {note}⟧"


def said_part(content: str) -> str:
    """An item's content without the note convmem added to it: the person's words."""
    return _NOTE.sub("", content)


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def count_cjk(text: str) -> int:
    # counted by runs: a string per run, not one per character (40% faster on Chinese)
    return 0 if text.isascii() else len("".join(_CJK_RUN.findall(text)))


def _ascii_class_table() -> bytes:
    table = bytearray(b"o" * 256)  # any other byte: part of a non-ASCII character
    for chars, cls in (
        (string.ascii_letters, b"a"),
        (string.digits, b"d"),
        (" \t\r\n", b"s"),
        (string.punctuation, b"p"),
    ):
        for ch in chars:
            table[ord(ch)] = cls[0]
    return bytes(table)


#: Each byte of UTF-8 text as the class of its ASCII character for
#: :func:`estimate_tokens`: letter, digit, space or punctuation (bytes of other
#: characters are all 0x80 or above, so they never count as one of these).
_ASCII_CLASS = _ascii_class_table()


def ascii_classes(text: str) -> tuple[int, int, int, int]:
    """How many ASCII letters, digits, spaces (space, tab, CR, LF) and punctuation
    characters the text holds: one bytes.translate of its UTF-8, then four counts."""
    classes = text.encode("utf-8", "surrogatepass").translate(_ASCII_CLASS)
    return classes.count(b"a"), classes.count(b"d"), classes.count(b"s"), classes.count(b"p")


def estimate_tokens(text: str) -> int:
    """An estimate of a text's tokens by character class, no tokenizer needed.

    ``ceil(cjk / 1.5 + letters / 4.3 + digits / 1 + punctuation / 1.8 + spaces / 14
    + other / 1.1)`` (ASCII letters, digits, punctuation and spacing; ``other`` is any
    other character: accented letters, full-width punctuation, emoji). Tokenizers
    split digits and symbols much finer than words, which a flat characters-per-token
    rate misses by 30-45% on logs and ids; ``bench/token_meter.py`` measures the error
    against real tokenizers (docs/benchmarks.md).
    """
    cjk = count_cjk(text)
    letters, digits, spaces, punct = ascii_classes(text)
    other = len(text) - cjk - letters - digits - spaces - punct
    return math.ceil(
        cjk / CJK_CHARS_PER_TOKEN
        + letters / LETTERS_PER_TOKEN
        + digits / DIGITS_PER_TOKEN
        + punct / PUNCT_PER_TOKEN
        + spaces / SPACES_PER_TOKEN
        + other / OTHER_CHARS_PER_TOKEN
    )


# --- tokens -----------------------------------------------------------------------------

_LATIN_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
#: The same words in ASCII text, where a word character is one of these (3x faster).
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z0-9]+)?")


def latin_words(text: str) -> list[str]:
    """Lower-cased non-CJK words of two or more characters, in order, with repeats."""
    if text.isascii():
        words = _ASCII_WORD.findall(text.lower())
    else:
        words = [
            w.casefold().replace("’", "'") for w in _LATIN_WORD.findall(_CJK_RUN.sub(" ", text))
        ]
    return [w for w in words if len(w) >= 2]


def cjk_runs(text: str) -> list[str]:
    """Maximal runs of CJK characters, in order."""
    return _CJK_RUN.findall(text)


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping CJK bigrams; a lone CJK character stands for itself."""
    out: list[str] = []
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def tokens(text: str, limit: int = MAX_QUERY_TOKENS, words: list[str] | None = None) -> list[str]:
    """Distinct Latin words (length ≥ 2) and CJK bigrams, in first-seen order
    (``words``: the text's :func:`latin_words`, when the caller has them already)."""
    seen: dict[str, None] = {}
    for tok in [*(latin_words(text) if words is None else words), *cjk_bigrams(text)]:
        if tok not in seen:
            seen[tok] = None
            if len(seen) >= limit:
                break
    return list(seen)


# --- numbers ------------------------------------------------------------------------------

_UNITS = (
    "milliseconds|millisecond|ms|seconds|second|secs|sec|minutes|minute|mins|min|hours|hour|hrs"
    "|days|day|weeks|week|months|month|years|year|tokens|token|rps|qps|tps|req/s|requests/s"
    "|requests|kib|mib|gib|kb|mb|gb|tb|bytes|byte|percent|%|lines|line|items|item|connections"
    "|connection|users|user|times|retries|retry|chars|characters|words|cores|threads|workers"
    "|replicas|pods|nodes|rows|usd|eur|dollars|h|s"
    "|毫秒|秒钟|秒|分钟|小时|天|周|个月|个|次|条|行|字|元|人|倍|核|年|月|日|台|万|千"
)
_NUMBER = re.compile(
    r"(?P<cur>[$€£¥])?(?<![\w.])(?P<num>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
    r"(?:\s?(?P<mult>[kK](?![A-Za-z])|万|千|亿))?"
    rf"(?:\s?(?P<unit>(?:{_UNITS}))(?![A-Za-z]))?(?!-[A-Za-z])",
    re.IGNORECASE,
)
_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_SMALL = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_CN_NUMBER = re.compile(
    r"(?P<num>[零〇一二两三四五六七八九十百千万亿]{2,}|[十百千])"
    r"(?P<unit>毫秒|秒|分钟|小时|天|周|个月|个|次|条|行|字|元|人|倍|核|台|年)?"
)
_MULTIPLIERS = {"k": 1_000, "万": 10_000, "千": 1_000, "亿": 100_000_000}


@dataclass(frozen=True)
class NumberMention:
    """A number as written, with its unit and position in the text."""

    raw: str
    value: float
    unit: str | None
    start: int
    end: int

    def as_dict(self) -> dict[str, Any]:
        value: float | int = int(self.value) if self.value.is_integer() else self.value
        return {"raw": self.raw, "value": value, "unit": self.unit}


def _parse_cn_number(s: str) -> int | None:
    total, section, current = 0, 0, 0
    for ch in s:
        if ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
        elif ch in _CN_SMALL:
            section += (current or 1) * _CN_SMALL[ch]
            current = 0
        elif ch in _CN_BIG:
            total += (section + current) * _CN_BIG[ch]
            section, current = 0, 0
        else:
            return None
    return total + section + current


def numbers(text: str) -> list[NumberMention]:
    """Numbers with optional multiplier and unit, in Arabic and Chinese numerals."""
    found: list[NumberMention] = []
    for m in _NUMBER.finditer(text):
        num = m.group("num")
        try:
            value = float(num.replace(",", ""))
        except ValueError:  # pragma: no cover - the regex only admits digits
            continue
        mult = m.group("mult")
        if mult:
            value *= _MULTIPLIERS[mult.lower()]
        unit = m.group("unit")
        cur = m.group("cur")
        if unit:
            unit = unit.lower()
        elif cur:
            unit = cur
        start = m.start("cur") if cur else m.start("num")
        raw = text[start : m.end()].strip()
        found.append(NumberMention(raw, value, unit, start, m.end()))
    taken = [(n.start, n.end) for n in found]
    for m in _CN_NUMBER.finditer(text):
        s, e = m.span()
        if any(a < e and s < b for a, b in taken):
            continue
        num, unit = m.group("num"), m.group("unit")
        if unit is None and not any(c in num for c in "十百千万亿"):
            continue
        parsed = _parse_cn_number(num)
        if parsed is None or parsed == 0:
            continue
        found.append(NumberMention(m.group(), float(parsed), unit, s, e))
    found.sort(key=lambda n: n.start)
    return found


# --- paths and quoted phrases ------------------------------------------------------------

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_EXT = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|md|json|jsonl|toml|yaml|yml|sql|rs|go|java|kt|c|h|cc|cpp|hpp"
    "|txt|sh|bash|cfg|ini|lock|html|css|scss|xml|csv|env|sqlite|db|log|proto|rb|php|swift"
)
_PATH = re.compile(
    r"(?<![\w/.\-])("
    r"(?:~|\.{1,2})?/[\w.@\-]+(?:/[\w.@\-]+)*/?"  # /abs, ./rel, ../rel, ~/home
    r"|[\w.@\-]+(?:/[\w.@\-]+)+/?"  # dir/file
    rf"|[\w\-]+(?:\.[\w\-]+)*\.(?:{_EXT})"  # file.ext
    r"|[A-Za-z]:\\[^\s\"'<>|]+"  # C:\windows
    r")(?![\w])"
)


def paths(text: str) -> list[str]:
    """File-system paths mentioned in the text (URLs are not paths)."""
    text = _URL.sub(" ", text)
    out: dict[str, None] = {}
    for m in _PATH.finditer(text):
        p = m.group(1).rstrip(".")
        pathlike = "/" in p or "\\" in p or re.search(rf"\.(?:{_EXT})$", p)
        if pathlike and len(p) >= 3 and not p.replace("/", "").replace(".", "").isdigit():
            out.setdefault(p, None)
    return list(out)


_QUOTES = (
    re.compile(r'"([^"\n]{2,200})"'),
    re.compile(r"“([^”\n]{2,200})”"),
    re.compile(r"「([^」\n]{1,200})」"),
    re.compile(r"『([^』\n]{1,200})』"),
    re.compile(r"`([^`\n]{2,200})`"),
    re.compile(r"(?<!\w)'([^'\n]{2,120})'(?!\w)"),
)


def quoted_phrases(text: str) -> list[str]:
    """Phrases in straight, curly, CJK corner or back quotes, in order of appearance."""
    hits: list[tuple[int, str]] = []
    for pattern in _QUOTES:
        hits.extend((m.start(), m.group(1).strip()) for m in pattern.finditer(text))
    out: dict[str, None] = {}
    for _, phrase in sorted(hits):
        if phrase:
            out.setdefault(phrase, None)
    return list(out)


def clip(text: str, limit: int) -> str:
    """Shorten to at most ``limit`` characters, marking the cut with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"
