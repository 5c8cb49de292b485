"""Links on conversations written apart from the code: corrections, changes, withdrawals
and other people's claims, each with the one link it should make (or none).

The conversations (``bench/data/links``, see its README) were written by people who
had not read the rules: ``tuning`` is what the rules were then tuned on, ``heldout`` was
written afterwards and is only ever scored. Each conversation is replayed into a fresh
in-memory store through ``MemoryRuntime.on_events``, as a host delivers it, and the
links extraction made are compared with the one expected. A conversation is right when
it makes exactly the expected link (a withdrawal may also be a replacement by what the
same message says instead) or, for a negative, no link at all.

Two baselines in the same run: ``none`` never links (right on every negative), and
``naive`` links every person's message holding a correction word ("actually", "instead",
"不对", "改成" …) as replacing the person's message just before it. These conversations
are short, so the message just before is nearly always the one meant; what the naive
rule costs shows on long conversations: the links each system makes while replaying
LoCoMo's ten conversations of friends chatting (``--locomo``, default the data set
``bench/locomo.py`` reads), where next to none are right.

Usage::

    python bench/links.py [--out bench/results] [--date DATE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "src"))

from convmem.capture import Event  # noqa: E402
from convmem.config import load_settings  # noqa: E402
from convmem.memory.store import MemoryStore  # noqa: E402
from convmem.runtime import MemoryRuntime  # noqa: E402

DATA = HERE / "data" / "links"
SPLITS = ("tuning", "heldout")
_EXPECT = re.compile(
    r"# expect: (?:msg(\d+) (supersedes|retracts|disputes) msg(\d+)|NO link)", re.IGNORECASE
)
_EVENT = {"supersedes": "superseded", "retracts": "retracted", "disputes": "disputed"}
_NAIVE_CUE = re.compile(
    r"\b(?:actually|instead|wait|sorry|correction|scratch that|never ?mind|forget|ignore"
    r"|not|changed)\b|不对|改成|改到|换成|其实|算了|错了|不是|取消|不用",
    re.IGNORECASE,
)

Link = tuple[str, int, int]  # (superseded | retracted | disputed, new message, old message)


@dataclass
class Conversation:
    name: str
    messages: list[tuple[str, str]]  # (U | A, text)
    expected: Link | None


def load(path: Path) -> list[Conversation]:
    out: list[Conversation] = []
    expected: Link | None = None
    for line in path.read_text("utf-8").splitlines():
        m = _EXPECT.match(line)
        if m:
            expected = (_EVENT[m[2].lower()], int(m[1]), int(m[3])) if m[1] else None
        elif line.startswith("==="):
            out.append(Conversation(line[3:].strip(), [], expected))
            expected = None
        elif line.strip() and not line.startswith("#"):
            role, _, text = line.partition(":")
            out[-1].messages.append((role.strip().upper(), text.strip()))
    return out


def convmem_links(conv: Conversation) -> set[Link]:
    runtime = MemoryRuntime(MemoryStore.open(":memory:"), load_settings(env={}))
    try:
        runtime.on_events(
            Event(conv.name, seq, "user/message", text, role="user", turn=seq)
            if role == "U"
            else Event(conv.name, seq, "assistant/message", text, source_kind="model", turn=seq)
            for seq, (role, text) in enumerate(conv.messages, 1)
        )
        db = runtime.store.db
        source = {
            r["id"]: json.loads(r["source_refs_json"])
            for r in db.execute("SELECT id, source_refs_json FROM memory_items")
        }
        found: set[Link] = set()
        for r in db.execute(
            "SELECT event, memory_id, detail_json FROM memory_events WHERE actor = 'extractor'"
            " AND event IN ('superseded', 'retracted', 'disputed') ORDER BY id"
        ):
            new = json.loads(r["detail_json"]).get("seq")
            old = [int(ref[4:]) for ref in source.get(r["memory_id"], []) if ref.startswith("seq:")]
            if old and old[0] != new:  # (a dispute also marks the new item: not a link)
                found.add((str(r["event"]), int(new), old[0]))
        return found
    finally:
        runtime.close()


def naive_links(conv: Conversation) -> set[Link]:
    found: set[Link] = set()
    previous = None
    for seq, (role, text) in enumerate(conv.messages, 1):
        if role != "U":
            continue
        if previous is not None and _NAIVE_CUE.search(text):
            found.add(("superseded", seq, previous))
        previous = seq
    return found


def right(conv: Conversation, found: set[Link]) -> bool:
    if conv.expected is None:
        return not found
    if conv.expected[0] == "retracted":
        # withdrawn, or replaced by what the same message says instead
        found = {("retracted", *f[1:]) if f[0] == "superseded" else f for f in found}
    return found == {conv.expected}


def run() -> dict[str, object]:
    systems = {"none": lambda c: set(), "naive": naive_links, "convmem": convmem_links}
    report: dict[str, object] = {}
    for split in SPLITS:
        rows: dict[str, dict[str, object]] = {}
        for path in sorted((DATA / split).glob("*.txt")):
            for conv in load(path):
                kind = conv.expected[0] if conv.expected else "none"
                lang = path.stem.split("-")[-1]
                for system, links in systems.items():
                    ok = right(conv, links(conv))
                    row = rows.setdefault(system, {"right": 0, "total": 0, "by": Counter()})
                    row["right"] += ok  # type: ignore[operator]
                    row["total"] += 1  # type: ignore[operator]
                    for key in (f"kind:{kind}", f"lang:{lang}"):
                        row["by"][f"{key}:right"] += ok  # type: ignore[index]
                        row["by"][f"{key}:total"] += 1  # type: ignore[index]
        report[split] = {
            system: {**{k: v for k, v in row.items() if k != "by"}, "by": dict(row["by"])}
            for system, row in rows.items()
        }
    return report


def locomo_links(path: str | None) -> dict[str, int] | None:
    """Links each system makes replaying LoCoMo (None when the data is not there)."""
    from _locomo_data import load_locomo, turn_text

    try:
        data = load_locomo(path)
    except (OSError, ValueError):
        return None
    made = {"turns": 0, "naive": 0, "convmem": 0}
    for conversation in data.conversations:
        texts = [turn_text(t) for t in conversation.turns]
        made["turns"] += len(texts)
        made["naive"] += sum(1 for t in texts[1:] if _NAIVE_CUE.search(t))
        runtime = MemoryRuntime(MemoryStore.open(":memory:"), load_settings(env={}))
        try:
            runtime.on_events(
                Event(conversation.conv_id, seq, "user/message", text, time=turn.date_time)
                for seq, (turn, text) in enumerate(zip(conversation.turns, texts, strict=True), 1)
            )
            made["convmem"] += int(
                runtime.store.db.scalar(
                    "SELECT COUNT(*) FROM memory_events WHERE actor = 'extractor'"
                    " AND event IN ('superseded', 'retracted', 'disputed')"
                )
            )
        finally:
            runtime.close()
    return made


def render(report: dict[str, object]) -> str:
    lines = ["links on conversations written apart from the code (right / total, percent)"]
    groups = [
        ("all", None),
        ("supersedes", "kind:superseded"),
        ("retracts", "kind:retracted"),
        ("disputes", "kind:disputed"),
        ("no link", "kind:none"),
        ("english", "lang:en"),
        ("chinese", "lang:zh"),
        ("mixed", "lang:mixed"),
    ]
    for split in SPLITS:
        systems = report[split]
        assert isinstance(systems, dict)
        lines.append("")
        lines.append(f"== {split} ==")
        lines.append(f"{'':<14}" + "".join(f"{s:>18}" for s in systems))
        for label, key in groups:
            cells = []
            for row in systems.values():
                ok = row["right"] if key is None else row["by"].get(f"{key}:right", 0)
                total = row["total"] if key is None else row["by"].get(f"{key}:total", 0)
                cells.append(f"{ok:>4}/{total:<4} {100 * ok / max(total, 1):5.1f}%")
            lines.append(f"{label:<14}" + "".join(f"{c:>18}" for c in cells))
    made = report.get("locomo")
    if isinstance(made, dict):
        lines.append("")
        lines.append(
            f"links made replaying LoCoMo ({made['turns']:,} turns of friends chatting, where"
            " next to none are right):"
        )
        lines.append(f"{'':<14}{'none':>18}{'naive':>18}{'convmem':>18}")
        lines.append(f"{'links':<14}{0:>18}{made['naive']:>18,}{made['convmem']:>18,}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--date", default=date.today().isoformat())
    parser.add_argument("--locomo", default=None, help="LoCoMo data file (default: as locomo.py)")
    args = parser.parse_args()
    report = run()
    report["locomo"] = locomo_links(args.locomo)
    text = render(report)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"links-{args.date}.json").write_text(
        json.dumps({"date": args.date, **report}, indent=2, ensure_ascii=False) + "\n", "utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
