"""Chinese names asked about late in one long session of real Chinese requests.

CrossWOZ's 500 validation dialogues (``../shared/data/crosswoz``, crowd workers
planning trips in Beijing) are replayed in id order as one session of about 8,400
events: the person's turns as ``user/message``, the system's as
``assistant/message``. Its annotators marked the names each person asked for
(``Inform`` acts: a dish, a sight, a restaurant, a hotel). After the whole session,
each distinctive name (one said in one to three of the person's turns, numbers left
out) is asked about in a question of the person's own kind ("我之前说的{name}，你还
记得吗？"), and the question's ranked evidence (``Retriever.rank_events``, what a
pre-step quotes from) is scored against the person's turns that hold the name:
recall at 5, 10 and 25, over all names and apart for names last said within the
session's newest 1,000 events and before them.

Beside it, in the same run: BM25 (FTS5's k1 = 1.2, b = 0.75) over every two-character
window of the person's turns, the whole session indexed, as a reference for what
those windows give with no lifting of neighbours and no recency.

Usage::

    python bench/zh_recall.py [--out bench/results] [--date YYYY-MM-DD]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import zipfile
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))

from convmem.capture import Event  # noqa: E402
from convmem.config import load_settings  # noqa: E402
from convmem.core.text import cjk_runs  # noqa: E402
from convmem.memory.store import MemoryStore  # noqa: E402
from convmem.retrieval import Retriever  # noqa: E402
from convmem.runtime import MemoryRuntime  # noqa: E402
from realtext import SHARED  # noqa: E402
from scale import machine, machine_line, source_state  # noqa: E402

CROSSWOZ = SHARED / "crosswoz" / "val.json.zip"
SESSION = "crosswoz-val"
NAME_SLOTS = {("餐馆", "推荐菜"), ("景点", "名称"), ("餐馆", "名称"), ("酒店", "名称")}
QUESTIONS = ("我之前说的{}，你还记得吗？", "{}那个当时是怎么说的来着？", "再回到{}的事情上")
KS = (5, 10, 25)
RECENT = 1000
BATCH = 200
K1, B = 1.2, 0.75


@lru_cache(maxsize=1)
def dialogues() -> dict[str, Any]:
    with zipfile.ZipFile(CROSSWOZ) as zf:
        data: dict[str, Any] = json.loads(zf.read("val.json"))
    return data


def session() -> list[Event]:
    """The validation dialogues, in id order, as one session's events."""
    data = dialogues()
    events: list[Event] = []
    for dialogue_id in sorted(data, key=int):
        for m in data[dialogue_id]["messages"]:
            seq = len(events) + 1
            when = f"2026-01-{1 + seq // 400:02d}T{seq // 60 % 24:02d}:{seq % 60:02d}:00Z"
            if m["role"] == "usr":
                events.append(Event(SESSION, seq, "user/message", m["content"], when, role="user"))
            else:
                events.append(
                    Event(
                        SESSION,
                        seq,
                        "assistant/message",
                        m["content"],
                        when,
                        role="assistant",
                        source_kind="model",
                    )
                )
    return events


def names(events: list[Event]) -> list[str]:
    """The distinctive names the people asked for, in the order first said."""
    data = dialogues()
    wanted: dict[str, None] = {}
    for dialogue_id in sorted(data, key=int):
        for m in data[dialogue_id]["messages"]:
            if m["role"] != "usr":
                continue
            for intent, domain, slot, value in m["dialog_act"]:
                value = value.strip()
                # a name all in CJK characters (values with digits are numbers)
                cjk = bool(value) and "".join(cjk_runs(value)) == value
                if intent == "Inform" and (domain, slot) in NAME_SLOTS and cjk:
                    wanted.setdefault(value, None)
    person = [e for e in events if e.type == "user/message"]
    out = []
    for name in wanted:
        holders = [e.seq for e in person if name in e.text]
        if 1 <= len(holders) <= 3:
            out.append(name)
    return out


def pairs(text: str) -> list[str]:
    return [run[i : i + 2] for run in cjk_runs(text) for i in range(len(run) - 1)]


class PairBM25:
    """Okapi BM25 over the two-character windows of the person's turns."""

    def __init__(self, events: list[Event]) -> None:
        self.docs = [(e.seq, Counter(pairs(e.text))) for e in events if e.type == "user/message"]
        self.avgdl = statistics.mean(sum(c.values()) for _, c in self.docs) or 1.0
        self.df: Counter[str] = Counter()
        for _, counts in self.docs:
            self.df.update(counts.keys())

    def rank(self, query: str, k: int) -> list[int]:
        n = len(self.docs)
        terms = set(pairs(query))
        idf = {t: math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5)) for t in terms}
        scored = []
        for seq, counts in self.docs:
            dl = sum(counts.values())
            s = sum(
                idf[t] * counts[t] * (K1 + 1) / (counts[t] + K1 * (1 - B + B * dl / self.avgdl))
                for t in terms
                if t in counts
            )
            if s > 0:
                scored.append((-s, seq))
        return [seq for _, seq in sorted(scored)[:k]]


def recall(ranked: list[int], gold: set[int], k: int) -> float:
    return len(gold.intersection(ranked[:k])) / len(gold)


def run() -> dict[str, Any]:
    events = session()
    asked = names(events)
    person = {e.seq: e.text for e in events if e.type == "user/message"}
    last = events[-1].seq
    runtime = MemoryRuntime(MemoryStore.open(":memory:"), load_settings(env={}))
    start = time.perf_counter()
    for i in range(0, len(events), BATCH):
        runtime.on_events(events[i : i + BATCH])
    replay_s = time.perf_counter() - start
    retriever = Retriever(runtime.store, runtime.settings)
    bm25 = PairBM25(events)
    rows: list[dict[str, Any]] = []
    ms: list[float] = []
    for n, name in enumerate(asked):
        question = QUESTIONS[n % len(QUESTIONS)].format(name)
        gold = {seq for seq, text in person.items() if name in text}
        start = time.perf_counter()
        ranked = retriever.rank_events(SESSION, retriever.signals(question), max(KS))
        ms.append((time.perf_counter() - start) * 1000)
        seqs = [e.seq for e, _ in ranked]
        reference = bm25.rank(question, max(KS))
        rows.append(
            {
                "name": name,
                "recent": last - max(gold) < RECENT,
                "convmem": [recall(seqs, gold, k) for k in KS],
                "bm25": [recall(reference, gold, k) for k in KS],
            }
        )
    runtime.close()
    return {
        "benchmark": "zh-recall",
        "machine": machine(),
        "source": source_state(),
        "events": len(events),
        "person_turns": len(person),
        "names": len(rows),
        "replay_s": round(replay_s, 1),
        "rank_ms_median": round(statistics.median(ms), 2),
        "rows": rows,
    }


def render(report: dict[str, Any]) -> str:
    rows = report["rows"]
    lines = [
        "zh-recall: CrossWOZ's validation dialogues as one session of"
        f" {report['events']:,} events ({report['person_turns']:,} of the person's turns);"
        f" {report['names']} distinctive names they asked for, each asked about after it",
        machine_line(report["machine"]),
        f"  {'system':<10} {'names':<22} {'n':>4}" + "".join(f"  R@{k:<4}" for k in KS),
    ]
    parts = [
        ("all", rows),
        (f"in newest {RECENT:,}", [r for r in rows if r["recent"]]),
        ("said before", [r for r in rows if not r["recent"]]),
    ]
    for system in ("convmem", "bm25"):
        for label, subset in parts:
            if not subset:
                continue
            figures = "".join(
                f"  {100 * statistics.mean(r[system][i] for r in subset):5.1f} "
                for i in range(len(KS))
            )
            lines.append(f"  {system:<10} {label:<22} {len(subset):>4}{figures}")
    lines.append(
        f"replay {report['replay_s']} s; convmem ranking median {report['rank_ms_median']} ms"
        " a question (bm25 here: pure Python over every turn, not timed)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="write JSON and text here")
    parser.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    args = parser.parse_args(argv)
    report = run()
    text = render(report)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"zh-recall-{args.date}.json").write_text(
            json.dumps(report, ensure_ascii=False, indent=1) + "\n", "utf-8"
        )
        (args.out / f"zh-recall-{args.date}.txt").write_text(text + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
