"""How a logged block is shown: its sections, budget bars, and a comparison of two.

An assembly log row holds the block's text exactly as the host inserted it, with
per-section token counts, what was included and what was left out and why. These
functions turn a row into what the block pages draw; they read nothing else.
"""

from __future__ import annotations

import difflib
from typing import Any

from convmem.assembly import SECTION_ORDER
from convmem.ui.display import pct
from convmem.wording import HEADINGS

#: Section heading line (either language) -> section name.
_HEADING_SECTION = {
    heading: name for locale in HEADINGS.values() for name, heading in locale.items()
}
#: Colour slot of each part of a block (the stylesheet defines ``seg-0`` … ``seg-6``).
SLOTS = {name: n for n, name in enumerate(("header", *SECTION_ORDER))}


def split_sections(text: str) -> list[dict[str, Any]]:
    """The block's lines grouped by section, in order; the lines before the first
    heading are the ``header``."""
    parts: list[dict[str, Any]] = []
    current: dict[str, Any] = {"name": "header", "lines": []}
    for line in text.split("\n"):
        name = _HEADING_SECTION.get(line.strip())
        if name is not None:
            if current["lines"]:
                parts.append(current)
            current = {"name": name, "lines": [line]}
        else:
            current["lines"].append(line)
    if current["lines"] and text:
        parts.append(current)
    for part in parts:
        part["slot"] = SLOTS.get(part["name"], 0)
    return parts


def budget_bars(log: dict[str, Any]) -> dict[str, Any]:
    """Geometry of the budget bar: one segment per section (and the header), in
    percent of the budget, plus one row per section with its own share."""
    budget = int(log.get("budget") or 0)
    used = int(log.get("used_tokens") or 0)
    sections = list(log.get("sections") or [])
    in_sections = sum(int(s.get("tokens", 0)) for s in sections)
    header = max(used - in_sections, 0) if log.get("injected") else 0
    parts = ([{"name": "header", "tokens": header, "lines": 1}] if header else []) + [
        {"name": s["name"], "tokens": int(s.get("tokens", 0)), "lines": s.get("lines", 0)}
        for s in sections
    ]
    x = 0.0
    segments = []
    for part in parts:
        width = pct(part["tokens"], budget)
        segments.append({**part, "x": round(x, 2), "width": width, "slot": SLOTS.get(part["name"])})
        x += width
    return {
        "budget": budget,
        "used": used,
        "free": max(budget - used, 0),
        "used_pct": pct(used, budget),
        "segments": segments,
        # no host hands convmem its tokenizer: counts are estimates unless a meter says
        "unit": "tokens" if log.get("token_source") == "exact" else "est. tokens",
    }


def _omitted_by_id(log: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{o.get('section')}:{o.get('id')}": o for o in log.get("omitted") or []}


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two blocks side by side: aligned lines, and what changed in items, sections
    and omissions (A is the first block, B the second)."""
    left, right = (a.get("text") or "").split("\n"), (b.get("text") or "").split("\n")
    if not a.get("text"):
        left = []
    if not b.get("text"):
        right = []
    rows: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        span = max(i2 - i1, j2 - j1)
        for k in range(span):
            rows.append(
                {
                    "tag": tag,
                    "left": left[i1 + k] if i1 + k < i2 else None,
                    "right": right[j1 + k] if j1 + k < j2 else None,
                }
            )
    items_a, items_b = list(a.get("items") or []), list(b.get("items") or [])
    set_a, set_b = set(items_a), set(items_b)
    sections: dict[str, dict[str, int]] = {}
    for log, side in ((a, "a"), (b, "b")):
        for s in log.get("sections") or []:
            sections.setdefault(s["name"], {"a": 0, "b": 0})[side] = int(s.get("tokens", 0))
    om_a, om_b = _omitted_by_id(a), _omitted_by_id(b)
    omitted = []
    for key in sorted(set(om_a) | set(om_b)):
        ra, rb = om_a.get(key), om_b.get(key)
        reason_a = None if ra is None else ra.get("reason")
        reason_b = None if rb is None else rb.get("reason")
        if reason_a != reason_b:
            some = ra or rb or {}
            omitted.append(
                {"id": some.get("id"), "section": some.get("section"), "a": reason_a, "b": reason_b}
            )
    return {
        "rows": rows,
        "changed_lines": sum(1 for r in rows if r["tag"] != "equal"),
        "only_a": [i for i in items_a if i not in set_b],
        "only_b": [i for i in items_b if i not in set_a],
        "both": [i for i in items_a if i in set_b],
        "sections": [
            {"name": name, **sections[name]} for name in SECTION_ORDER if name in sections
        ],
        "omitted": omitted,
    }
