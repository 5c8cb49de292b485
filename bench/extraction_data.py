"""The labelled extraction set (bench/data/extraction): loading and validation.

See ``bench/data/extraction/README.md`` for the format and the labelling guide.
``python bench/extraction_data.py`` checks every file and prints counts; it exits 1
and names file, conversation and turn for each problem.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent / "data" / "extraction"
SPLITS = ("dev", "heldout")
KINDS = ("constraint", "decision", "fact", "preference", "open_question")
NUMBER_TYPES = ("quantity", "money", "percent", "duration", "time", "date", "version", "number")
LINK_TYPES = ("supersedes", "disputes", "retracts")
BOUNDS = ("upper", "lower")
ROLES = ("user", "assistant", "tool")
_DATE = re.compile(r"^(?:\d{4}-\d{2}-\d{2}|\d{2}-\d{2}|\d{4}-\d{2})$")
_TIME = re.compile(r"^\d{2}:\d{2}$")


def split_of(conversation_id: str) -> str:
    """``heldout`` for a fifth of the ids (by hash), ``dev`` for the rest."""
    digest = hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()
    return "heldout" if int(digest, 16) % 5 == 0 else "dev"


@dataclass
class GoldItem:
    kind: str
    clause: str
    numbers: list[dict[str, Any]]
    start: int  # character offsets of the clause in the turn's text
    end: int


@dataclass
class GoldSentence:
    text: str
    start: int
    end: int
    items: list[GoldItem]


@dataclass
class Turn:
    seq: int
    role: str
    text: str
    sentences: list[GoldSentence] = field(default_factory=list)


@dataclass
class Conversation:
    id: str
    domain: str
    lang: str
    split: str
    path: str
    turns: list[Turn]
    links: list[dict[str, Any]]

    def item(self, ref: list[Any]) -> GoldItem | None:
        seq, clause = ref
        for turn in self.turns:
            if turn.seq == seq:
                for sentence in turn.sentences:
                    for item in sentence.items:
                        if item.clause == clause:
                            return item
        return None


class DataError(Exception):
    pass


def _number_problems(n: Any, clause: str) -> list[str]:
    if not isinstance(n, dict):
        return ["a number is not a mapping"]
    out = []
    raw = n.get("raw")
    if not isinstance(raw, str) or raw not in clause:
        out.append(f"number raw {raw!r} is not a substring of the clause")
    kind = n.get("type")
    if kind not in NUMBER_TYPES:
        out.append(f"number {raw!r}: type {kind!r} not in {NUMBER_TYPES}")
    value = n.get("value")
    if kind == "date":
        if not (isinstance(value, str) and _DATE.match(value)):
            out.append(f"number {raw!r}: a date value is YYYY-MM-DD, MM-DD or YYYY-MM")
    elif kind == "time":
        if not (isinstance(value, str) and _TIME.match(value)):
            out.append(f"number {raw!r}: a time value is HH:MM (24 h)")
    elif kind == "version":
        if not isinstance(value, str):
            out.append(f"number {raw!r}: a version value is a string")
    elif isinstance(value, bool) or not isinstance(value, int | float):
        out.append(f"number {raw!r}: value must be a number")
    if "high" in n and (isinstance(n["high"], bool) or not isinstance(n["high"], int | float)):
        out.append(f"number {raw!r}: high must be a number")
    if n.get("bound") not in (None, *BOUNDS):
        out.append(f"number {raw!r}: bound must be upper or lower")
    conditions = n.get("conditions", [])
    if not isinstance(conditions, list) or not all(isinstance(c, str) for c in conditions):
        out.append(f"number {raw!r}: conditions must be a list of strings")
    unknown = set(n) - {"raw", "type", "value", "high", "unit", "bound", "conditions"}
    if unknown:
        out.append(f"number {raw!r}: unknown fields {sorted(unknown)}")
    return out


def _parse(conv: dict[str, Any], path: Path, problems: list[str]) -> Conversation | None:
    cid = conv.get("id")
    where = f"{path.name}: {cid}"
    if not isinstance(cid, str):
        problems.append(f"{path.name}: a conversation without a string id")
        return None
    split = path.parent.name
    if split_of(cid) != split:
        problems.append(f"{where}: belongs in {split_of(cid)}/, not {split}/")
    for key, allowed in (("domain", ("project", "chat", "social")), ("lang", ("en", "zh"))):
        if conv.get(key) not in allowed:
            problems.append(f"{where}: {key} must be one of {allowed}")
    turns: list[Turn] = []
    seqs: set[int] = set()
    for raw_turn in conv.get("turns") or []:
        seq, role, text = raw_turn.get("seq"), raw_turn.get("role"), raw_turn.get("text")
        at = f"{where} seq {seq}"
        if not isinstance(seq, int) or seq in seqs:
            problems.append(f"{at}: seq must be a unique whole number")
            continue
        seqs.add(seq)
        if role not in ROLES or not isinstance(text, str) or not text.strip():
            problems.append(f"{at}: role must be one of {ROLES} and text non-empty")
            continue
        turn = Turn(seq, role, text)
        turns.append(turn)
        if role != "user":
            if raw_turn.get("sentences"):
                problems.append(f"{at}: only user turns are labelled")
            continue
        cursor = 0
        raw_sentences = raw_turn.get("sentences")
        if not isinstance(raw_sentences, list) or not raw_sentences:
            problems.append(f"{at}: a user turn needs its sentences")
            continue
        for s in raw_sentences:
            stext = s.get("text") if isinstance(s, dict) else None
            if not isinstance(stext, str) or not stext.strip():
                problems.append(f"{at}: a sentence without text")
                continue
            start = text.find(stext, cursor)
            if start < 0:
                problems.append(f"{at}: sentence not found (in order) in the text: {stext[:60]!r}")
                continue
            gap = text[cursor:start]
            if re.search(r"\w", gap):
                problems.append(f"{at}: text left unlabelled before {stext[:40]!r}: {gap[:60]!r}")
            cursor = start + len(stext)
            items = []
            raw_items = s.get("items")
            if not isinstance(raw_items, list):
                problems.append(f"{at}: sentence {stext[:40]!r} needs items (a list, [] for none)")
                raw_items = []
            for it in raw_items:
                kind, clause = it.get("kind"), it.get("clause")
                if kind not in KINDS:
                    problems.append(f"{at}: kind {kind!r} not in {KINDS}")
                    continue
                if not isinstance(clause, str) or clause not in stext:
                    problems.append(f"{at}: clause {clause!r} is not a substring of its sentence")
                    continue
                cstart = start + stext.index(clause)
                nums = it.get("numbers") or []
                for n in nums:
                    problems.extend(f"{at}: {p}" for p in _number_problems(n, clause))
                items.append(GoldItem(kind, clause, list(nums), cstart, cstart + len(clause)))
            turn.sentences.append(GoldSentence(stext, start, start + len(stext), items))
        if re.search(r"\w", text[cursor:]):
            problems.append(f"{at}: text left unlabelled at the end: {text[cursor:][:60]!r}")
    result = Conversation(
        cid, conv.get("domain", ""), conv.get("lang", ""), split, path.name, turns, []
    )
    for link in conv.get("links") or []:
        if link.get("type") not in LINK_TYPES:
            problems.append(f"{where}: link type {link.get('type')!r} not in {LINK_TYPES}")
            continue
        ok = True
        for end in ("new", "old"):
            ref = link.get(end)
            if not (isinstance(ref, list) and len(ref) == 2):
                problems.append(f"{where}: link {end} must be [seq, clause]")
                ok = False
                continue
            if link["type"] == "retracts" and end == "new":
                continue  # the retracting sentence yields nothing
            if result.item(ref) is None:
                problems.append(f"{where}: link {end} {ref} names no labelled item")
                ok = False
        if ok:
            result.links.append(link)
    return result


def load(splits: tuple[str, ...] = SPLITS, root: Path = ROOT) -> list[Conversation]:
    """Every conversation of the given splits; raises DataError listing all problems."""
    problems: list[str] = []
    out: list[Conversation] = []
    ids: Counter[str] = Counter()
    for split in splits:
        for path in sorted((root / split).glob("*.yaml")):
            try:
                data = yaml.safe_load(path.read_text("utf-8")) or []
            except yaml.YAMLError as exc:
                problems.append(f"{path.name}: not valid YAML: {exc}")
                continue
            if not isinstance(data, list):
                problems.append(f"{path.name}: the file must hold a list of conversations")
                continue
            for conv in data:
                parsed = _parse(conv, path, problems) if isinstance(conv, dict) else None
                if parsed is not None:
                    ids[parsed.id] += 1
                    out.append(parsed)
    problems.extend(f"conversation id {i} appears {n} times" for i, n in ids.items() if n > 1)
    if problems:
        raise DataError("\n".join(problems))
    return out


def counts(conversations: list[Conversation]) -> dict[str, Any]:
    """Sentences, items and links by split, domain and language."""
    table: Counter[str] = Counter()
    for c in conversations:
        for t in c.turns:
            for s in t.sentences:
                table[f"{c.split} sentences"] += 1
                table[f"{c.split} {c.domain} sentences"] += 1
                table[f"{c.split} {c.lang} sentences"] += 1
                table[f"{c.split} nothing" if not s.items else f"{c.split} kept"] += 1
                for item in s.items:
                    table[f"{c.split} item {item.kind}"] += 1
                    table[f"{c.split} numbers"] += len(item.numbers)
        for link in c.links:
            table[f"{c.split} link {link['type']}"] += 1
        table[f"{c.split} conversations"] += 1
    return dict(sorted(table.items()))


def main() -> int:
    try:
        conversations = load()
    except DataError as exc:
        print(exc, file=sys.stderr)
        return 1
    for key, value in counts(conversations).items():
        print(f"{key:32} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
