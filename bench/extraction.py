"""Extraction quality on the labelled set and on CrossWOZ, extractors side by side.

    python bench/extraction.py                 # dev split only (what tuning may look at)
    python bench/extraction.py --heldout       # both splits (the held-back figures)
    python bench/extraction.py --check         # validate the labelled files and stop

Three systems run in the same process on the same conversations:

* ``naive``: every gold sentence that is not a question, kept whole (no kind);
* ``rules-v1``: the cue-word extractor as it was (a frozen copy in bench/baselines);
* ``convmem``: the library's current extractor, through ``MemoryRuntime.on_events``.

Each conversation is replayed into a fresh in-memory store as events (user,
assistant and tool turns), then the items and their lifecycle are read back and
aligned with the hand labels: an item belongs to the gold clause of the same turn
it overlaps most; it *matches* when it covers at least half of that clause, is not
much longer than it (at most twice its length plus 20 characters: the clause, not
the whole message) and has the same kind. Reported per split:

* precision and recall per kind and overall (kind must match), and "kept"
  precision/recall (any kind);
* "nothing" accuracy: gold sentences with nothing to keep that no item covers;
* numbers: of the gold numbers in clauses the extractor found, the share it got
  exactly (type, value, range end, unit, bound, conditions), English and Chinese
  apart, and by type;
* links: supersedes / disputes / retracts between items, correct against gold and
  wrong; accuracy = correct / (gold + wrong); final status of every found item;
* CrossWOZ (validation split, a separate answer key): of the user turns' Inform
  acts that carry a number, the share whose requirement became a constraint item
  holding exactly that number.

JSON goes to bench/results/extraction-<date>.json, the table to stdout.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import extraction_data as gold  # noqa: E402
from convmem.capture import Capture, Event  # noqa: E402
from convmem.config import load_settings  # noqa: E402
from convmem.core.text import said_part  # noqa: E402
from convmem.memory.store import MemoryStore  # noqa: E402
from convmem.runtime import MemoryRuntime  # noqa: E402
from realtext import SHARED  # noqa: E402

CROSSWOZ = SHARED / "crosswoz" / "val.json.zip"
KINDS = gold.KINDS
CLOCK = "2026-01-01T00:00:00Z"
SYSTEMS = ("naive", "rules-v1", "convmem")
MAX_LONGER = 2.0
LONGER_SLACK = 20
MIN_COVER = 0.5


# --- running an extractor over one conversation -----------------------------------------


@dataclass
class Found:
    """One extracted item, located in its turn's stored text."""

    id: str
    seq: int
    kind: str | None
    content: str
    numbers: list[dict[str, Any]]
    status: str
    start: int
    end: int


@dataclass
class Run:
    items: list[Found]
    links: set[tuple[str, str, str]]  # (type, new item id or "seq:N", old item id)
    texts: dict[int, str]  # stored text of every user turn
    seconds: float = 0.0


def _events(conv: gold.Conversation) -> list[Event]:
    types = {"user": "user/message", "assistant": "assistant/message", "tool": "tool/result"}
    out = []
    for turn in conv.turns:
        kind = None if turn.role != "tool" else "tool"
        role = turn.role if turn.role != "tool" else "tool"
        out.append(
            Event(conv.id, turn.seq, types[turn.role], turn.text, role=role, source_kind=kind)
        )
    return out


def _locate(content: str, text: str) -> tuple[int, int]:
    """Where an item's content sits in its turn's text (best effort for rewritten text)."""
    probe = said_part(content).rstrip("…").strip()  # (not the option a pick names)
    at = text.find(probe)
    if at >= 0:
        return at, at + len(probe)
    low = text.casefold()
    at = low.find(probe.casefold())
    if at >= 0:
        return at, at + len(probe)
    from difflib import SequenceMatcher

    m = SequenceMatcher(None, text, probe, autojunk=False).find_longest_match(
        0, len(text), 0, len(probe)
    )
    if m.size == 0:
        return 0, 0
    start = max(0, m.a - m.b)
    return start, min(len(text), start + len(probe))


def _collect(store: MemoryStore, conv: gold.Conversation) -> Run:
    texts = {e.seq: e.text for e in store.events(conv.id, types=["user/message"])}
    items: list[Found] = []
    statuses = ("active", "superseded", "disputed", "retracted")
    links: set[tuple[str, str, str]] = set()
    for item in store.items(conv.id, statuses):
        if item.evidence_type != "user_explicit":
            continue  # assistant proposals are not labelled
        seq = item.derived_from_seq or 0
        start, end = _locate(item.content, texts.get(seq, ""))
        items.append(
            Found(
                item.id, seq, item.kind, item.content, list(item.numbers), item.status, start, end
            )
        )
        for row in store.memory_events(item.id):
            detail = row["detail"]
            if row["event"] == "superseded" and detail.get("by"):
                links.add(("supersedes", detail["by"], item.id))
            elif row["event"] == "disputed" and detail.get("with"):
                pair = sorted((item.id, detail["with"]))
                links.add(("disputes", pair[1], pair[0]))
            elif row["event"] == "retracted" and detail.get("seq") is not None:
                links.add(("retracts", f"seq:{detail['seq']}", item.id))
    return Run(items, links, texts)


def run_convmem(conv: gold.Conversation) -> Run:
    settings = load_settings(env={})
    runtime = MemoryRuntime(MemoryStore.open(":memory:", lambda: CLOCK), settings)
    start = time.perf_counter()
    runtime.on_events(_events(conv))
    seconds = time.perf_counter() - start
    run = _collect(runtime.store, conv)
    run.seconds = seconds
    runtime.close()
    return run


def run_rules_v1(conv: gold.Conversation) -> Run:
    from baselines.rules_v1.extraction import Extractor

    settings = load_settings(env={})
    store = MemoryStore.open(":memory:", lambda: CLOCK)
    Capture(store, settings).capture_many(_events(conv))
    start = time.perf_counter()
    Extractor(store).run(conv.id)
    seconds = time.perf_counter() - start
    run = _collect(store, conv)
    run.seconds = seconds
    store.close()
    return run


def run_naive(conv: gold.Conversation) -> Run:
    """Every gold sentence that does not end in a question mark, kept whole, no kind."""
    items = []
    texts = {}
    for turn in conv.turns:
        if turn.role != "user":
            continue
        texts[turn.seq] = turn.text
        for n, s in enumerate(turn.sentences):
            if s.text.rstrip().endswith(("?", "？")):
                continue
            items.append(
                Found(f"naive-{turn.seq}-{n}", turn.seq, None, s.text, [], "active", s.start, s.end)
            )
    return Run(items, set(), texts)


RUNNERS: dict[str, Callable[[gold.Conversation], Run]] = {
    "naive": run_naive,
    "rules-v1": run_rules_v1,
    "convmem": run_convmem,
}


# --- aligning with the labels -------------------------------------------------------------


@dataclass
class GoldSpan:
    conv: str
    seq: int
    lang: str
    kind: str
    clause: str
    numbers: list[dict[str, Any]]
    start: int
    end: int
    key: tuple[int, str]


def _gold_spans(conv: gold.Conversation, texts: dict[int, str]) -> tuple[list[GoldSpan], list]:
    """Gold clauses and nothing-sentences, located in the stored turn texts."""
    clauses: list[GoldSpan] = []
    nothing: list[tuple[int, int, int]] = []
    for turn in conv.turns:
        if turn.role != "user":
            continue
        text = texts.get(turn.seq, turn.text)
        cursor = 0
        for s in turn.sentences:
            at = _find(text, s.text, cursor)
            s_start, s_end = (at, at + len(_norm(s.text))) if at >= 0 else (s.start, s.end)
            cursor = max(cursor, s_start)
            if not s.items:
                nothing.append((turn.seq, s_start, s_end))
            for item in s.items:
                c_at = _find(text, item.clause, s_start)
                c_start = c_at if c_at >= 0 else item.start
                c_end = c_start + len(_norm(item.clause))
                clauses.append(
                    GoldSpan(
                        conv.id,
                        turn.seq,
                        conv.lang,
                        item.kind,
                        item.clause,
                        item.numbers,
                        c_start,
                        c_end,
                        (turn.seq, item.clause),
                    )
                )
    return clauses, nothing


def _norm(text: str) -> str:
    from convmem.core.text import normalize_text

    return normalize_text(text)


def _find(text: str, part: str, start: int) -> int:
    at = text.find(part, start)
    if at < 0:
        at = text.find(_norm(part), start)
    if at < 0:
        at = text.find(_norm(part))
    return at


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


@dataclass
class Alignment:
    matched: dict[str, GoldSpan] = field(default_factory=dict)  # item id -> its gold clause
    outcome: dict[str, str] = field(default_factory=dict)  # item id -> tp|kind|long|spurious|dup
    gold_hit: dict[tuple[str, int, str], Found] = field(default_factory=dict)


def align(conv: gold.Conversation, run: Run) -> tuple[Alignment, list[GoldSpan], list]:
    clauses, nothing = _gold_spans(conv, run.texts)
    al = Alignment()
    by_seq: dict[int, list[GoldSpan]] = defaultdict(list)
    for g in clauses:
        by_seq[g.seq].append(g)
    for f in sorted(run.items, key=lambda f: (f.seq, f.start, f.id)):
        best, best_overlap = None, 0
        for g in by_seq.get(f.seq, []):
            o = _overlap((f.start, f.end), (g.start, g.end))
            if o > best_overlap:
                best, best_overlap = g, o
        if best is None or best_overlap < MIN_COVER * (best.end - best.start):
            al.outcome[f.id] = "spurious"
            continue
        al.matched[f.id] = best
        key = (conv.id, *best.key)
        if (f.end - f.start) > MAX_LONGER * (best.end - best.start) + LONGER_SLACK:
            al.outcome[f.id] = "long"
        elif f.kind is not None and f.kind != best.kind:
            al.outcome[f.id] = "kind"
        elif key in al.gold_hit:
            al.outcome[f.id] = "dup"
        else:
            al.outcome[f.id] = "tp"
            al.gold_hit[key] = f
    return al, clauses, nothing


# --- numbers -------------------------------------------------------------------------------

_COND_JUNK = re.compile(r"[\s,，.。:：;；()（）]+")


def _cond(text: str) -> str:
    return _COND_JUNK.sub("", unicodedata.normalize("NFKC", text).casefold())


def _conditions_match(want: Iterable[str], got: Iterable[str]) -> bool:
    w = [_cond(c) for c in want if _cond(c)]
    g = [_cond(c) for c in got if _cond(c)]
    return all(any(a in b or b in a for b in g) for a in w) and all(
        any(a in b or b in a for a in w) for b in g
    )


def _same_value(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    try:
        return abs(float(a) - float(b)) < 1e-9
    except (TypeError, ValueError):
        return False


#: rules-v1 stored units as written; map them to the canonical ones to be fair to it.
_V1_UNITS = {
    "ms": "ms",
    "millisecond": "ms",
    "milliseconds": "ms",
    "毫秒": "ms",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "秒": "s",
    "秒钟": "s",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "分钟": "min",
    "h": "h",
    "hour": "h",
    "hours": "h",
    "hrs": "h",
    "小时": "h",
    "day": "day",
    "days": "day",
    "天": "day",
    "week": "week",
    "weeks": "week",
    "周": "week",
    "month": "month",
    "months": "month",
    "个月": "month",
    "year": "year",
    "years": "year",
    "年": "year",
    "%": "%",
    "percent": "%",
    "$": "USD",
    "usd": "USD",
    "dollars": "USD",
    "€": "EUR",
    "eur": "EUR",
    "£": "GBP",
    "¥": "CNY",
    "元": "CNY",
    "tokens": "token",
    "token": "token",
    "kb": "KB",
    "mb": "MB",
    "gb": "GB",
    "tb": "TB",
    "kib": "KiB",
    "mib": "MiB",
    "gib": "GiB",
    "rps": "rps",
    "qps": "qps",
    "tps": "tps",
}


def _unit(n: dict[str, Any], system: str) -> Any:
    unit = n.get("unit")
    if system == "rules-v1" and isinstance(unit, str):
        return _V1_UNITS.get(unit.lower(), unit)
    return unit


def number_match(want: dict[str, Any], got: dict[str, Any], system: str) -> tuple[bool, bool]:
    """(exact, value and unit) for one gold number against one extracted number."""
    value_unit = _same_value(want.get("value"), got.get("value")) and (
        want.get("unit") == _unit(got, system)
    )
    exact = (
        value_unit
        and want.get("type") == got.get("type")
        and _same_value(want.get("high"), got.get("high"))
        and want.get("bound") == got.get("bound")
        and _conditions_match(want.get("conditions", []), got.get("conditions", []))
    )
    return exact, value_unit


def score_numbers(want: list[dict[str, Any]], got: list[dict[str, Any]], system: str) -> list:
    """Per gold number: (gold number, exact, value+unit)."""
    out = []
    free = list(got)
    for w in want:
        best = (False, False, None)
        for g in free:
            exact, vu = number_match(w, g, system)
            if (exact, vu) > best[:2]:
                best = (exact, vu, g)
        if best[2] is not None and best[1]:
            free.remove(best[2])
        out.append((w, best[0], best[1]))
    return out


# --- the report ----------------------------------------------------------------------------


def _ratio(a: int, b: int) -> float | None:
    return round(100.0 * a / b, 1) if b else None


def evaluate(system: str, conversations: list[gold.Conversation]) -> dict[str, Any]:
    c: Counter[str] = Counter()
    numbers: Counter[str] = Counter()
    seconds = 0.0
    sentences = 0
    for conv in conversations:
        run = RUNNERS[system](conv)
        seconds += run.seconds
        al, clauses, nothing = align(conv, run)
        sentences += sum(len(t.sentences) for t in conv.turns)
        for g in clauses:
            c[f"gold {g.kind}"] += 1
            c["gold all"] += 1
        for f in run.items:
            outcome = al.outcome[f.id]
            kind = f.kind or "any"
            c[f"pred {kind}"] += 1
            c["pred all"] += 1
            c[f"outcome {outcome}"] += 1
            if outcome == "tp":
                c[f"tp {kind}"] += 1
                c["tp all"] += 1
            if outcome in ("tp", "kind"):
                c["kept tp"] += 1
        hit_gold = {key for key in al.gold_hit}
        for f in run.items:
            if al.outcome[f.id] == "kind":
                hit_gold.add((conv.id, *al.matched[f.id].key))
        c["kept gold hit"] += len(hit_gold)
        for seq, start, end in nothing:
            c["nothing gold"] += 1
            covered = any(
                f.seq == seq and _overlap((f.start, f.end), (start, end)) >= 0.5 * (end - start)
                for f in run.items
            )
            if not covered:
                c["nothing right"] += 1
        # numbers in clauses the system found (any kind)
        found_for: dict[tuple[int, str], list[Found]] = defaultdict(list)
        for f in run.items:
            if f.id in al.matched:
                found_for[al.matched[f.id].key].append(f)
        for g in clauses:
            if not g.numbers:
                continue
            got = [n for f in found_for.get(g.key, []) for n in f.numbers]
            found = bool(found_for.get(g.key))
            for w, exact, vu in score_numbers(g.numbers, got, system):
                numbers[f"gold {g.lang}"] += 1
                numbers[f"type {w['type']} gold"] += 1
                if found:
                    numbers[f"found {g.lang}"] += 1
                    numbers[f"exact {g.lang}"] += exact
                    numbers[f"value_unit {g.lang}"] += vu
                    numbers[f"type {w['type']} found"] += 1
                    numbers[f"type {w['type']} exact"] += exact
        # links
        if system != "naive":
            gold_links = set()
            for link in conv.links:
                new = link["new"]
                new_key = f"seq:{new[0]}" if link["type"] == "retracts" else (new[0], new[1])
                gold_links.add((link["type"], new_key, (link["old"][0], link["old"][1])))
            pred_links = set()
            for kind, new, old in run.links:
                old_g = al.matched.get(old)
                if kind == "retracts":
                    new_key: Any = new
                else:
                    new_g = al.matched.get(new)
                    new_key = new_g.key if new_g else ("?", new)
                pred_links.add((kind, new_key, old_g.key if old_g else ("?", old)))
            if any(k == "disputes" for k, _, _ in pred_links | gold_links):
                # a dispute has no direction
                def undirected(links: set) -> set:
                    return {
                        (k, *sorted((a, b), key=str)) if k == "disputes" else (k, a, b)
                        for k, a, b in links
                    }

                gold_links, pred_links = undirected(gold_links), undirected(pred_links)
            c["links gold"] += len(gold_links)
            c["links pred"] += len(pred_links)
            c["links correct"] += len(gold_links & pred_links)
            c["links wrong"] += len(pred_links - gold_links)
            # final status of the gold items the system found
            expected: dict[tuple[int, str], str] = {}
            for link in conv.links:
                old = (link["old"][0], link["old"][1])
                if link["type"] == "supersedes":
                    expected[old] = "superseded"
                elif link["type"] == "retracts":
                    expected[old] = "retracted"
                else:
                    new = (link["new"][0], link["new"][1])
                    for key in (old, new):
                        expected.setdefault(key, "disputed")
            for key, f in ((g.key, al.gold_hit.get((conv.id, *g.key))) for g in clauses):
                if f is None:
                    continue
                c["status found"] += 1
                c["status right"] += f.status == expected.get(key, "active")
    per_kind = {}
    for kind in (*KINDS, "all"):
        per_kind[kind] = {
            "gold": c[f"gold {kind}"],
            "predicted": c[f"pred {kind}"],
            "precision": _ratio(c[f"tp {kind}"], c[f"pred {kind}"]),
            "recall": _ratio(c[f"tp {kind}"], c[f"gold {kind}"]),
        }
    out: dict[str, Any] = {
        "kinds": per_kind,
        "kept": {
            "precision": _ratio(c["kept tp"], c["pred all"]),
            "recall": _ratio(c["kept gold hit"], c["gold all"]),
        },
        "nothing_accuracy": _ratio(c["nothing right"], c["nothing gold"]),
        "outcomes": {k[8:]: v for k, v in c.items() if k.startswith("outcome ")},
        "sentences": sentences,
        "ms_per_sentence": round(1000 * seconds / max(1, sentences), 3),
    }
    if system != "naive":
        out["numbers"] = {
            lang: {
                "gold": numbers[f"gold {lang}"],
                "in_found_clauses": numbers[f"found {lang}"],
                "exact": _ratio(numbers[f"exact {lang}"], numbers[f"found {lang}"]),
                "value_unit": _ratio(numbers[f"value_unit {lang}"], numbers[f"found {lang}"]),
            }
            for lang in ("en", "zh")
        }
        out["numbers_by_type"] = {
            t: {
                "found": numbers[f"type {t} found"],
                "exact": _ratio(numbers[f"type {t} exact"], numbers[f"type {t} found"]),
            }
            for t in gold.NUMBER_TYPES
            if numbers[f"type {t} gold"]
        }
        out["links"] = {
            "gold": c["links gold"],
            "predicted": c["links pred"],
            "correct": c["links correct"],
            "wrong": c["links wrong"],
            "accuracy": _ratio(c["links correct"], c["links gold"] + c["links wrong"]),
            "status_accuracy": _ratio(c["status right"], c["status found"]),
        }
    return out


# --- CrossWOZ -------------------------------------------------------------------------------

_CW_VALUE = re.compile(
    r"^(?P<a>\d+(?:\.\d+)?)\s*(?P<ua>元|分|小时|天|分钟)?"
    r"(?:\s*-\s*(?P<b>\d+(?:\.\d+)?)\s*(?P<ub>元|分|小时|天|分钟)?)?\s*(?P<bound>以上|以下)?$"
)
_CW_UNITS = {"元": "CNY", "分": "分", "小时": "h", "天": "day", "分钟": "min"}
_CW_TYPES = {
    "CNY": "money",
    "分": "quantity",
    "h": "duration",
    "day": "duration",
    "min": "duration",
}


def crosswoz_gold(limit: int | None = None) -> list[dict[str, Any]]:
    """User turns with their numeric Inform acts, parsed from the annotation strings."""
    data = json.loads(zipfile.ZipFile(CROSSWOZ).read("val.json"))
    out = []
    for dialogue_id in sorted(data):
        for n, m in enumerate(data[dialogue_id]["messages"]):
            if m["role"] != "usr":
                continue
            wants = []
            for intent, _domain, slot, value in m["dialog_act"]:
                if intent != "Inform" or slot in ("名称", "出发地", "目的地"):
                    continue
                match = _CW_VALUE.match(value.strip())
                if not match:
                    continue
                unit = _CW_UNITS.get(match["ub"] or match["ua"] or "")
                if unit is None:
                    continue
                want: dict[str, Any] = {
                    "slot": slot,
                    "annotated": value,
                    "value": float(match["a"]),
                    "unit": unit,
                    "type": _CW_TYPES[unit],
                    "bound": {"以上": "lower", "以下": "upper"}.get(match["bound"] or ""),
                }
                if match["b"]:
                    want["high"] = float(match["b"])
                wants.append(want)
            if wants:
                out.append({"id": f"{dialogue_id}:{n}", "text": m["content"], "wants": wants})
    return out[:limit] if limit else out


def evaluate_crosswoz(system: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
    c: Counter[str] = Counter()
    if system == "naive":
        return {}
    for turn in turns:
        conv = gold.Conversation(
            turn["id"],
            "chat",
            "zh",
            "dev",
            "crosswoz",
            [gold.Turn(1, "user", turn["text"])],
            [],
        )
        run = RUNNERS[system](conv)
        constraints = [f for f in run.items if f.kind == "constraint"]
        for want in turn["wants"]:
            c["gold"] += 1
            c[f"gold {want['type']}"] += 1
            nums = [n for f in run.items for n in f.numbers]
            exact_any = any(_cw_match(want, n, system) for n in nums)
            exact_constraint = any(
                _cw_match(want, n, system) for f in constraints for n in f.numbers
            )
            c["number"] += exact_any
            c[f"number {want['type']}"] += exact_any
            c["constraint"] += exact_constraint
    return {
        "turns": len(turns),
        "numbers": c["gold"],
        "number_exact": _ratio(c["number"], c["gold"]),
        "constraint_with_number": _ratio(c["constraint"], c["gold"]),
        "by_type": {
            t: _ratio(c[f"number {t}"], c[f"gold {t}"])
            for t in ("money", "quantity", "duration")
            if c[f"gold {t}"]
        },
    }


def _cw_match(want: dict[str, Any], got: dict[str, Any], system: str) -> bool:
    if not _same_value(want["value"], got.get("value")) or want["unit"] != _unit(got, system):
        return False
    if not _same_value(want.get("high"), got.get("high")):
        return False
    return want["bound"] == got.get("bound")


# --- printing --------------------------------------------------------------------------------


def _f(v: float | None) -> str:
    return "   -" if v is None else f"{v:5.1f}"


def table(split: str, results: dict[str, dict[str, Any]]) -> str:
    lines = [f"\n== {split} split =="]
    any_run = next(iter(results.values()))
    lines.append(
        f"{results['convmem']['sentences']} sentences; gold items: "
        + ", ".join(f"{k} {v['gold']}" for k, v in any_run["kinds"].items() if k != "all")
    )
    head = f"{'':22}" + "".join(f"{s:>16}" for s in results)
    lines.append(head)
    lines.append(f"{'':22}" + "".join(f"{'P':>8}{'R':>8}" for _ in results))
    for kind in (*KINDS, "all"):
        row = f"{kind + ' (kind)':22}"
        for s, r in results.items():
            k = r["kinds"][kind]
            if s == "naive":
                row += f"{'':>16}"
            else:
                row += f"{_f(k['precision']):>8}{_f(k['recall']):>8}"
        lines.append(row)
    row = f"{'kept (any kind)':22}"
    for r in results.values():
        row += f"{_f(r['kept']['precision']):>8}{_f(r['kept']['recall']):>8}"
    lines.append(row)
    lines.append(
        f"{'nothing accuracy':22}"
        + "".join(f"{_f(r['nothing_accuracy']):>16}" for r in results.values())
    )
    for lang in ("en", "zh"):
        lines.append(
            f"{'numbers exact ' + lang:22}"
            + "".join(
                f"{'':>16}" if "numbers" not in r else f"{_f(r['numbers'][lang]['exact']):>16}"
                for r in results.values()
            )
        )
    lines.append(
        f"{'link accuracy':22}"
        + "".join(
            f"{'':>16}" if "links" not in r else f"{_f(r['links']['accuracy']):>16}"
            for r in results.values()
        )
    )
    lines.append(
        f"{'final status':22}"
        + "".join(
            f"{'':>16}" if "links" not in r else f"{_f(r['links']['status_accuracy']):>16}"
            for r in results.values()
        )
    )
    lines.append(
        f"{'ms per sentence':22}"
        + "".join(f"{r['ms_per_sentence']:>16.3f}" for r in results.values())
    )
    return "\n".join(lines)


def errors(conversations: list[gold.Conversation], system: str = "convmem") -> None:
    """Every disagreement with the labels on the dev split, for tuning (never held-back)."""
    for conv in conversations:
        if conv.split != "dev":
            raise SystemExit("--errors reads the dev split only")
        run = RUNNERS[system](conv)
        al, clauses, _ = align(conv, run)
        by_key = {g.key: g for g in clauses}
        for f in run.items:
            o = al.outcome[f.id]
            if o == "tp":
                continue
            g = al.matched.get(f.id)
            want = f"{g.kind}: {g.clause!r}" if g else "nothing"
            print(f"{conv.id}#{f.seq} {o:8} got {f.kind}: {f.content!r}\n{'':20}want {want}")
        hit = {k[1:] for k in al.gold_hit} | {
            al.matched[f.id].key for f in run.items if al.outcome[f.id] in ("kind", "long")
        }
        for key, g in by_key.items():
            if key not in hit:
                print(f"{conv.id}#{g.seq} missed   want {g.kind}: {g.clause!r}")
        for n, link in enumerate(conv.links):
            print(f"{conv.id} gold link {n}: {link['type']} {link['new']} -> {link['old']}")
        for kind, new, old in sorted(run.links):
            items = {f.id: f for f in run.items}
            o = items.get(old)
            nw = items.get(new)
            print(
                f"{conv.id} pred link: {kind} {nw.content if nw else new!r} -> "
                f"{o.content if o else old!r}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--heldout", action="store_true", help="also the held-back split")
    parser.add_argument("--check", action="store_true", help="validate the labelled set only")
    parser.add_argument("--crosswoz-limit", type=int, default=None)
    parser.add_argument("--domain", choices=("project", "chat", "social"), help="only this domain")
    parser.add_argument("--errors", action="store_true", help="print dev-split disagreements")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--date", default=date.today().isoformat())
    args = parser.parse_args()
    try:
        conversations = gold.load()
    except gold.DataError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.domain:
        conversations = [c for c in conversations if c.domain == args.domain]
    if args.errors:
        errors([c for c in conversations if c.split == "dev"])
        return 0
    if args.check:
        for key, value in gold.counts(conversations).items():
            print(f"{key:32} {value}")
        return 0
    splits = ("dev", "heldout") if args.heldout else ("dev",)
    report: dict[str, Any] = {"date": args.date, "splits": {}}
    for split in splits:
        convs = [c for c in conversations if c.split == split]
        results = {s: evaluate(s, convs) for s in SYSTEMS}
        report["splits"][split] = {"conversations": len(convs), "systems": results}
        print(table(split, results))
    cw_turns = crosswoz_gold(args.crosswoz_limit)
    report["crosswoz"] = {s: evaluate_crosswoz(s, cw_turns) for s in SYSTEMS if s != "naive"}
    print(f"\n== CrossWOZ validation: {len(cw_turns)} user turns with numeric requirements ==")
    for s, r in report["crosswoz"].items():
        print(
            f"{s:10} number exact {_f(r['number_exact'])}   as a constraint with that number"
            f" {_f(r['constraint_with_number'])}   by type {r['by_type']}"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    name = "extraction-heldout" if args.heldout else "extraction-dev"
    (args.out / f"{name}-{args.date}.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
