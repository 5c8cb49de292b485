"""Loader for the LoCoMo benchmark data set (``locomo10.json``).

The data set lives outside the project (``../shared/data/locomo/locomo10.json``
relative to the repository root; override with the ``CONVMEM_LOCOMO`` environment
variable or an explicit path) and is never copied into it.

Only what a fair evaluation needs is loaded:

* the conversations (speakers, session times, turns with their text and image
  caption), which are what a system under test may see;
* for each question: its text, its category and its gold evidence turn ids.
  The evidence is for the scorer only.

The answers (``answer``, ``adversarial_answer``) and the model-written
``observation``, ``session_summary`` and ``event_summary`` fields are never read
into these structures, so no system under test can see them by accident.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

ENV_VAR = "CONVMEM_LOCOMO"
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo10.json"

CATEGORY_NAMES: dict[int, str] = {
    4: "single-hop",
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    5: "adversarial",
}

_MONTHS = {
    name: number
    for number, name in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
_SESSION_TIME = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*$",
    re.IGNORECASE,
)
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_ID = re.compile(r"^D:?(\d+):(\d+)$")
_EVIDENCE_SEPARATORS = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class Turn:
    """One utterance of a conversation: the unit that is indexed and retrieved."""

    conv_id: str
    dia_id: str
    session_no: int
    speaker: str
    text: str
    blip_caption: str | None
    date_time: str | None  # ISO 8601 start time of the turn's session


class Session(NamedTuple):
    """One session: its number, raw and ISO 8601 start time, and its turns."""

    session_no: int
    date_time_raw: str | None
    iso_time: str | None
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Conversation:
    """A whole conversation between two people, sessions in chronological order."""

    conv_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[Session]

    @property
    def turns(self) -> list[Turn]:
        """All turns of all sessions, in conversation order."""
        return [turn for session in self.sessions for turn in session.turns]


@dataclass(frozen=True)
class Question:
    """A question with its category and gold evidence (for the scorer only)."""

    conv_id: str
    question: str
    category: int
    evidence: tuple[str, ...]
    evidence_raw: tuple[str, ...] = ()  # the strings as published, unnormalised


@dataclass
class EvidenceStats:
    """What evidence normalisation did, summed over the whole data set.

    ``raw_strings``: evidence strings read; ``normalised_strings``: those whose
    result differs from the string itself (split, re-written or dropped);
    ``split_strings``: those holding several ids; ``dropped_pieces``: pieces
    that were no id at all; ``duplicates_removed``: ids repeated within one
    question (kept once); ``unknown_ids``: well-formed ids naming no turn of the
    conversation (kept, they score as misses); ``examples``: each changed string
    with its result.
    """

    raw_strings: int = 0
    normalised_strings: int = 0
    split_strings: int = 0
    dropped_pieces: int = 0
    duplicates_removed: int = 0
    unknown_ids: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "raw_strings": self.raw_strings,
            "normalised_strings": self.normalised_strings,
            "split_strings": self.split_strings,
            "dropped_pieces": self.dropped_pieces,
            "duplicates_removed": self.duplicates_removed,
            "unknown_ids": self.unknown_ids,
            "examples": self.examples,
        }


@dataclass(frozen=True)
class LocomoData:
    """The loaded data set."""

    path: Path
    conversations: list[Conversation]
    questions: list[Question]
    evidence_stats: EvidenceStats


def resolve_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The data file: ``path`` if given, else ``$CONVMEM_LOCOMO``, else the default."""
    if path is not None:
        return Path(path)
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else DEFAULT_PATH


def parse_session_time(raw: str | None) -> str | None:
    """Parse ``"1:56 pm on 8 May, 2023"`` to ``"2023-05-08T13:56:00"``.

    Returns None for a missing or unparseable value (none occur in locomo10).
    """
    match = _SESSION_TIME.match(raw or "")
    if not match:
        return None
    hour, minute, half, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None:
        return None
    hour_24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    return f"{int(year):04d}-{month:02d}-{int(day):02d}T{hour_24:02d}:{int(minute):02d}:00"


def turn_text(turn: Turn) -> str:
    """The paper's retrieval unit: ``speaker said, "text"`` plus the image caption."""
    text = f'{turn.speaker} said, "{turn.text}"'
    if turn.blip_caption:
        text += f" and shared {turn.blip_caption}"
    return text


def normalise_evidence(raw: str) -> list[str]:
    """Turn one raw evidence string into zero or more canonical ``D<s>:<t>`` ids.

    Rules, applied in order:

    1. The string is split on semicolons, commas and whitespace, so
       ``"D8:6; D9:17"`` and ``"D9:1 D4:4 D4:6"`` give several ids.
    2. Each piece must match ``D<digits>:<digits>``, optionally with a stray
       colon after the ``D`` (``"D:11:26"`` -> ``"D11:26"``).
    3. Both numbers are re-written without leading zeros (``"D30:05"`` ->
       ``"D30:5"``), matching the turn ids of the conversations.
    4. A piece that still does not match (``"D"``) is dropped.

    A well-formed id that names no turn of its conversation is kept (it counts as
    a miss, as the official scorer would count it); the loader counts those, and
    keeps an id repeated within one question's evidence only once.
    """
    ids = []
    for piece in _EVIDENCE_SEPARATORS.split(raw.strip()):
        match = _EVIDENCE_ID.match(piece)
        if match:
            ids.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return ids


def _normalise_question_evidence(
    raw_evidence: Iterable[str], known_ids: set[str], stats: EvidenceStats
) -> tuple[str, ...]:
    result: list[str] = []
    for raw in raw_evidence:
        ids = normalise_evidence(raw)
        _count(raw, ids, stats)
        for dia_id in ids:
            if dia_id in result:
                stats.duplicates_removed += 1
                continue
            stats.unknown_ids += dia_id not in known_ids
            result.append(dia_id)
    return tuple(result)


def _count(raw: str, ids: list[str], stats: EvidenceStats) -> None:
    pieces = [piece for piece in _EVIDENCE_SEPARATORS.split(raw.strip()) if piece]
    stats.raw_strings += 1
    stats.split_strings += len(pieces) > 1
    stats.dropped_pieces += len(pieces) - len(ids)
    if ids != [raw]:
        stats.normalised_strings += 1
        stats.examples.setdefault(raw, ids)


def _session_numbers(conversation: Mapping[str, Any]) -> list[int]:
    numbers = []
    for key, value in conversation.items():
        match = _SESSION_KEY.match(key)
        if match and isinstance(value, list):
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def _load_turn(raw: Mapping[str, Any], conv_id: str, session_no: int, iso: str | None) -> Turn:
    caption = raw.get("blip_caption")
    return Turn(
        conv_id=conv_id,
        dia_id=str(raw["dia_id"]),
        session_no=session_no,
        speaker=str(raw["speaker"]),
        text=str(raw["text"]),
        blip_caption=str(caption) if caption else None,
        date_time=iso,
    )


def _load_conversation(sample: Mapping[str, Any]) -> Conversation:
    conv_id = str(sample["sample_id"])
    raw_conv = sample["conversation"]
    sessions = []
    for number in _session_numbers(raw_conv):
        raw_time = raw_conv.get(f"session_{number}_date_time")
        iso = parse_session_time(raw_time)
        turns = tuple(_load_turn(t, conv_id, number, iso) for t in raw_conv[f"session_{number}"])
        sessions.append(Session(number, raw_time, iso, turns))
    return Conversation(conv_id, str(raw_conv["speaker_a"]), str(raw_conv["speaker_b"]), sessions)


def _load_questions(
    sample: Mapping[str, Any], conversation: Conversation, stats: EvidenceStats
) -> list[Question]:
    known_ids = {turn.dia_id for turn in conversation.turns}
    return [
        Question(
            conv_id=conversation.conv_id,
            question=str(qa["question"]),
            category=int(qa["category"]),
            evidence=_normalise_question_evidence(qa.get("evidence", ()), known_ids, stats),
            evidence_raw=tuple(str(raw) for raw in qa.get("evidence", ())),
        )
        for qa in sample["qa"]
    ]


def with_raw_evidence(data: LocomoData) -> LocomoData:
    """The same data, scored against the evidence strings exactly as published.

    Malformed strings then never match a turn id; this reproduces figures
    measured without normalisation.
    """
    questions = [replace(q, evidence=q.evidence_raw) for q in data.questions]
    return replace(data, questions=questions)


def load_locomo(path: str | os.PathLike[str] | None = None) -> LocomoData:
    """Load conversations and questions (text, category, evidence only)."""
    resolved = resolve_path(path)
    with resolved.open(encoding="utf-8") as handle:
        samples = json.load(handle)
    stats = EvidenceStats()
    conversations: list[Conversation] = []
    questions: list[Question] = []
    for sample in samples:
        conversation = _load_conversation(sample)
        conversations.append(conversation)
        questions.extend(_load_questions(sample, conversation, stats))
    return LocomoData(resolved, conversations, questions, stats)
