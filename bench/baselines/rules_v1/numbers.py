"""Numbers as rules-v1 read them (frozen copy of convmem.core.text at 82ecaef)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

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
