"""Small formatting helpers the templates use: times, numbers, clipped text, links.

They return plain strings or data; the templates escape what they print. A link is
built only from ids convmem made (item ids, sequence numbers, rule paths) and always
through :func:`convmem.ui.app.url`, which encodes every parameter.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

_ITEM_ID = re.compile(r"^mem_[\w-]+$")
_SEQ = re.compile(r"^seq:(-?\d+)$")

#: Which timeline filter shows which event types.
TIMELINE_FILTERS: dict[str, tuple[str, ...]] = {
    "all": (),
    "messages": ("user/message", "assistant/message", "system/message"),
    "tools": ("tool/call", "tool/result", "command/invoke", "command/output"),
    "compactions": (
        "compaction/start",
        "compaction/summary",
        "compaction/prune",
        "compaction/end",
    ),
    "corrections": (),  # events whose item corrected an earlier one (not an event type)
}


def when(value: Any) -> str:
    """An ISO time as ``YYYY-MM-DD HH:MM:SS`` (anything else as it is)."""
    if not value:
        return ""
    text = str(value)
    if len(text) >= 19 and text[10] == "T":
        return text[:10] + " " + text[11:19]
    return text


def clip(value: Any, limit: int = 200) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def tail(value: Any, limit: int = 60) -> str:
    """The end of a long text (a path), with an ellipsis in front."""
    text = "" if value is None else str(value)
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def pct(part: float, whole: float) -> float:
    """``part`` as a percentage of ``whole``, within 0..100, for bar widths."""
    if not whole:
        return 0.0
    return round(max(0.0, min(100.0, 100.0 * part / whole)), 2)


def num(value: Any) -> str:
    """An integer with thin thousands separators; anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, int):
        return "" if value is None else str(value)
    return f"{value:,}".replace(",", "\u202f")


def score(value: Any) -> str:
    try:
        return f"{float(value):.3f}".rstrip("0").rstrip(".") or "0"
    except (TypeError, ValueError):
        return str(value)


def event_type_class(event_type: str) -> str:
    """A CSS class for an event type's badge (a fixed set, never the raw type)."""
    head = event_type.split("/", 1)[0]
    return head if head in ("user", "assistant", "tool", "compaction", "command") else "other"


def timeline_href(session_id: str, seq: int) -> str:
    return "/timeline?" + urlencode({"s": session_id, "at": seq}) + f"#ev-{seq}"


def event_href(session_id: str, seq: int) -> str:
    return "/event?" + urlencode({"s": session_id, "seq": seq})


def item_href(item_id: str) -> str:
    return "/item?" + urlencode({"id": item_id})


def label_link(label: str, session_id: str) -> str | None:
    """Where a block's label points: ``mem ID`` / item ids to the item, ``ev seq:N`` and
    ``seq:N`` to the event, ``rule PATH:LINE`` to the rules page; else nowhere."""
    text = label.strip()
    if text.startswith("mem "):
        text = text[4:].strip()
    if _ITEM_ID.match(text):
        return item_href(text)
    if text.startswith("ev "):
        text = text[3:].strip()
    seq = _SEQ.match(text)
    if seq:
        return event_href(session_id, int(seq.group(1)))
    if text.startswith("rule "):
        return "/skills?" + urlencode({"rule": text[5:].strip()})
    return None


def detail_pairs(detail: dict[str, Any], session_id: str) -> list[tuple[str, str, str | None]]:
    """A lifecycle row's detail as (key, text, link) triples, in key order."""
    out: list[tuple[str, str, str | None]] = []
    for key in sorted(detail):
        value = detail[key]
        if isinstance(value, list):
            for one in value:
                out.append((key, str(one), label_link(str(one), session_id)))
            continue
        text = "" if value is None else str(value)
        link = None
        if key == "seq" and isinstance(value, int):
            link = event_href(session_id, value)
        elif isinstance(value, str):
            link = label_link(value, session_id)
        out.append((key, text, link))
    return out
