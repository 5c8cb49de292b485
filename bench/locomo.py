"""LoCoMo retrieval benchmark: evidence recall R@k of memory systems.

Run from the repository root::

    python bench/locomo.py [--systems bm25,convmem] [--limit-convs N]
                           [--json-out PATH] [--date YYYY-MM-DD] [--data PATH]

For every conversation of LoCoMo (Maharana et al., ACL 2024) each system indexes
the conversation's turns (``index``), then ranks turn ids for each question of
that conversation (``rank``). The score is the paper's recall accuracy: per
question, the fraction of its gold evidence ``dia_id``s found among the top k
(a question without evidence counts 1), averaged over all questions, for
k = 5, 10, 25, 50, overall and per category. The published DRAGON row of the
paper's Table 3 is printed alongside as a constant.

Systems that can also assemble a context block under a token budget
(``BlockAssembler``) are scored on evidence recall inside the block at budgets
of 150/300/750/1500/3000 tokens (see ``block_recall``).

Everything is deterministic and offline; results go to
``bench/results/locomo-<date>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import math
import platform
import re
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

import numpy as np
from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

if __package__ in (None, ""):  # run as `python bench/locomo.py`: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._locomo_data import (
    CATEGORY_NAMES,
    Conversation,
    LocomoData,
    Question,
    load_locomo,
    turn_text,
    with_raw_evidence,
)

KS: tuple[int, ...] = (5, 10, 25, 50)
BLOCK_BUDGETS: tuple[int, ...] = (150, 300, 750, 1500, 3000)
PUBLISHED: dict[str, dict[int, float]] = {
    "DRAGON (published)": {5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7},
}
QUOTE_PREFIX_CHARS = 200
RESULTS_DIR = Path(__file__).resolve().parent / "results"
_TOKEN = re.compile(r"[a-z0-9]+")


# --------------------------------------------------------------------------- systems


class Retriever(Protocol):
    """A system under test. ``index`` replaces whatever was indexed before."""

    name: str

    def index(self, conversation: Conversation) -> None:
        """Index all turns of one conversation (and forget any earlier one)."""
        ...

    def rank(self, question_text: str, k: int) -> list[str]:
        """The ``dia_id``s of the (at most) k best turns, best first."""
        ...


@runtime_checkable
class BlockAssembler(Protocol):
    """Optional: a system that assembles a context block under a token budget."""

    def assemble(self, question_text: str, budget_tokens: int) -> str:
        """The block of text the system would inject for this question."""
        ...


def tokenize(text: str) -> list[str]:
    """Lowercase ``[a-z0-9]+`` tokens (the README's BM25 tokenization)."""
    return _TOKEN.findall(text.lower())


def approx_tokens(text: str) -> int:
    """A model-free token estimate: ceil(characters / 4), at least one."""
    return max(1, math.ceil(len(text) / 4))


class BM25Retriever:
    """rank-bm25 ``BM25Okapi`` over ``turn_text`` of each turn; ties by turn order."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._bm25: BM25Okapi | None = None

    def index(self, conversation: Conversation) -> None:
        """Build the BM25 index over the conversation's turns."""
        turns = conversation.turns
        self._ids = [turn.dia_id for turn in turns]
        self._texts = [turn_text(turn) for turn in turns]
        self._bm25 = BM25Okapi([tokenize(text) for text in self._texts], k1=self.k1, b=self.b)

    def _order(self, question_text: str) -> list[int]:
        if self._bm25 is None:
            raise RuntimeError("index() must be called before rank()")
        scores = self._bm25.get_scores(tokenize(question_text))
        return [int(i) for i in np.argsort(-scores, kind="stable")]

    def rank(self, question_text: str, k: int) -> list[str]:
        """The k best turn ids by BM25 score, earlier turns first on ties."""
        return [self._ids[i] for i in self._order(question_text)[:k]]

    def assemble(self, question_text: str, budget_tokens: int) -> str:
        """Best-ranked turns, one per line, skipping any that would overflow."""
        lines: list[str] = []
        used = 0
        for i in self._order(question_text):
            cost = approx_tokens(self._texts[i])
            if used + cost <= budget_tokens:
                lines.append(self._texts[i])
                used += cost
        return "\n".join(lines)


def _import_convmem() -> ModuleType:
    """Import convmem, from the repository's ``src`` when it is not installed."""
    try:
        return importlib.import_module("convmem")
    except ModuleNotFoundError:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        return importlib.import_module("convmem")


class ConvmemRetriever:
    """convmem itself: each turn replayed as a ``user/message`` event (both speakers
    are people), ranked by the same retrieval a pre-step runs, and blocks built by
    the same assembler a host gets. Nothing reads answers or evidence ids.
    """

    name = "convmem"

    def __init__(self, mode: str = "pre-step") -> None:
        _import_convmem()  # lazy: only when this system is asked for
        from convmem.config import load_settings

        self.mode = mode
        # the budgets below the default floor are measured as asked, not raised to it
        self.settings = load_settings(env={}, overrides={"assembly.min_budget_tokens": 0})
        self._runtime: Any = None
        self._session = ""
        self._ids: dict[int, str] = {}
        #: Lifecycle changes extraction made while replaying (see ``links_made``).
        self.links: Counter[str] = Counter()

    def links_made(self) -> Counter[str]:
        """How many items the current store holds superseded, retracted or disputed by
        extraction. LoCoMo's friends seldom correct themselves: every one is worth reading."""
        rows = self._runtime.store.db.execute(
            "SELECT event, COUNT(*) FROM memory_events WHERE actor = 'extractor'"
            " AND event IN ('superseded', 'retracted', 'disputed') GROUP BY event"
        ).fetchall()
        return Counter({str(event): int(n) for event, n in rows})

    def index(self, conversation: Conversation) -> None:
        """Replay the conversation into a fresh in-memory store (capture + extraction)."""
        if self._runtime is not None:
            self._runtime.close()
        self._runtime = self._new_runtime()
        self._replay(conversation)
        self.links.update(self.links_made())

    def _new_runtime(self) -> Any:
        from convmem.memory.store import MemoryStore
        from convmem.runtime import MemoryRuntime

        return MemoryRuntime(MemoryStore.open(":memory:"), self.settings)

    def _replay(self, conversation: Conversation) -> None:
        """The conversation's turns, as one session's events, into the current store."""
        from convmem.capture import Event

        self._session = conversation.conv_id
        self._ids = {}
        events = []
        for seq, turn in enumerate(conversation.turns, start=1):
            self._ids[seq] = turn.dia_id
            events.append(
                Event(self._session, seq, "user/message", turn_text(turn), time=turn.date_time)
            )
        self._runtime.on_events(events)

    def rank(self, question_text: str, k: int) -> list[str]:
        """The evidence turns a pre-step retrieves for the question, in order."""
        from convmem.retrieval import Retriever as ConvmemRanker

        ranker = ConvmemRanker(self._runtime.store, self.settings)
        signals = ranker.signals(question_text)
        if self.mode == "events":
            ranked = [e.seq for e, _ in ranker.rank_events(self._session, signals, k)]
        else:
            found = ranker.retrieve(self._session, signals)
            hits = ranker.retrieve_evidence(self._session, signals, found.items, k)
            ranked = [h.event.seq for h in hits if ranker.quotable(h.event)]
        return [self._ids[seq] for seq in ranked[:k]]

    def assemble(self, question_text: str, budget_tokens: int) -> str:
        """The block a host would inject for this question, nothing visible yet."""
        result = self._runtime.assemble(
            self._session, [], query=question_text, budget=budget_tokens, log=False
        )
        return str(result.text)


class ConvmemProjectRetriever(ConvmemRetriever):
    """convmem across sessions (issue "Project memory"): each LoCoMo session is a convmem
    session of one project (the conversation), replayed in order, and every question is
    asked from a fresh session of that project after the last one, so that everything
    it can find comes from earlier sessions.
    """

    name = "convmem-project"

    def index(self, conversation: Conversation) -> None:
        """Replay each session as its own convmem session of the conversation's project."""
        from convmem.capture import Event

        if self._runtime is not None:
            self._runtime.close()
        self._runtime = self._new_runtime()
        self._project = conversation.conv_id
        self._session = f"{conversation.conv_id}-question"
        self._where: dict[tuple[str, int], str] = {}
        for session in conversation.sessions:
            sid = f"{conversation.conv_id}-s{session.session_no:02d}"
            self._runtime.session_start(sid, project=self._project)
            events = []
            for seq, turn in enumerate(session.turns, start=1):
                self._where[(sid, seq)] = turn.dia_id
                events.append(Event(sid, seq, "user/message", turn_text(turn), time=turn.date_time))
            self._runtime.on_events(events)
        self.links.update(self.links_made())

    def rank(self, question_text: str, k: int) -> list[str]:
        """The evidence turns a fresh session's pre-step retrieves, in order."""
        from convmem.retrieval import Retriever as ConvmemRanker

        ranker = ConvmemRanker(self._runtime.store, self.settings)
        signals = ranker.signals(question_text)
        scope = ranker.scope(self._session, self._project)
        found = ranker.retrieve(self._session, signals, scope=scope)
        hits = ranker.retrieve_evidence(self._session, signals, found.items, k, scope)
        ranked = [(h.event.session_id, h.event.seq) for h in hits if ranker.quotable(h.event)]
        return [self._where[key] for key in ranked[:k]]

    def assemble(self, question_text: str, budget_tokens: int) -> str:
        """The block a fresh session of the project would get for this question."""
        result = self._runtime.assemble(
            self._session,
            [],
            query=question_text,
            budget=budget_tokens,
            log=False,
            project=self._project,
        )
        return str(result.text)


class ConvmemSharedRetriever(ConvmemRetriever):
    """convmem in a store shared by sessions: each conversation is replayed as its own
    session into one store that keeps the conversations before it, and its questions
    are asked of its session. What moves against ``convmem`` (a store per
    conversation) is the word statistics the other sessions bring into a session's
    ranking.
    """

    name = "convmem-shared"

    def index(self, conversation: Conversation) -> None:
        """Replay the conversation as one more session of the shared store."""
        if self._runtime is None:
            self._runtime = self._new_runtime()
        before = self.links_made()
        self._replay(conversation)
        self.links.update(self.links_made() - before)


SYSTEMS: dict[str, Callable[[], Retriever]] = {
    "bm25": BM25Retriever,
    "convmem": ConvmemRetriever,
    "convmem-project": ConvmemProjectRetriever,
    "convmem-shared": ConvmemSharedRetriever,
}


# --------------------------------------------------------------------------- scoring


def recall_at_k(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """The official per-question recall: share of evidence ids among the top k."""
    if not evidence:
        return 1.0
    top = set(ranked[:k])
    return sum(dia_id in top for dia_id in evidence) / len(evidence)


def _squash(text: str) -> str:
    # a block writes a line break inside a quoted message as " ⏎ " (one line per
    # source, so no quote can open a line of its own): it reads as the break it is
    text = unicodedata.normalize("NFC", text).replace(LINE_BREAK_MARK, " ")
    return " ".join(text.split())


#: How convmem's blocks write a line break inside a quoted message.
LINE_BREAK_MARK = "⏎"


def is_quoted(turn_raw_text: str, block_text: str) -> bool:
    """Whether a turn's text is quoted in a block.

    Both are NFC- and whitespace-normalised (runs of whitespace become one
    space, ends stripped; a block's line-break mark counts as whitespace). The
    turn is quoted when its whole text is a substring of the block or, for a
    text longer than 200 characters, when its first 200 characters are (so a
    block may shorten long turns). An empty turn text is
    never quoted.
    """
    needle = _squash(turn_raw_text)
    if not needle:
        return False
    if len(needle) > QUOTE_PREFIX_CHARS:
        needle = needle[:QUOTE_PREFIX_CHARS]
    return needle in _squash(block_text)


def block_recall(evidence_texts: Sequence[str | None], block_text: str) -> float:
    """Share of evidence turns quoted in the block (see ``is_quoted``).

    ``evidence_texts`` holds the raw text of each evidence turn, None for an
    evidence id that names no turn (a miss). No evidence counts 1, as for R@k.
    """
    if not evidence_texts:
        return 1.0
    found = sum(text is not None and is_quoted(text, block_text) for text in evidence_texts)
    return found / len(evidence_texts)


@dataclass
class SystemResult:
    """Per-question scores of one system, and its timings."""

    name: str
    categories: list[int] = field(default_factory=list)
    recall: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    block: dict[int, list[float]] = field(default_factory=dict)
    index_s: float = 0.0
    rank_s: float = 0.0
    block_s: float = 0.0
    links: dict[str, int] | None = None

    def summary(self, scores: Mapping[int, list[float]]) -> dict[str, Any]:
        """Mean (in percent) overall and per category, with question counts."""
        return {
            "overall": _means(scores, range(len(self.categories))),
            "per_category": {
                CATEGORY_NAMES[cat]: _means(scores, self._where(cat))
                | {"questions": len(self._where(cat))}
                for cat in CATEGORY_NAMES
                if self._where(cat)
            },
        }

    def _where(self, category: int) -> list[int]:
        return [i for i, cat in enumerate(self.categories) if cat == category]


def _means(scores: Mapping[int, list[float]], rows: Iterable[int]) -> dict[str, float]:
    rows = list(rows)
    return {
        str(key): round(100 * sum(values[i] for i in rows) / len(rows), 2)
        for key, values in scores.items()
    }


# --------------------------------------------------------------------------- running


def _score_question(
    system: Retriever, question: Question, texts: Mapping[str, str], result: SystemResult
) -> None:
    start = time.perf_counter()
    ranked = system.rank(question.question, max(KS))
    result.rank_s += time.perf_counter() - start
    result.categories.append(question.category)
    for k in KS:
        result.recall[k].append(recall_at_k(ranked, question.evidence, k))
    if isinstance(system, BlockAssembler):
        start = time.perf_counter()
        evidence_texts = [texts.get(dia_id) for dia_id in question.evidence]
        for budget in BLOCK_BUDGETS:
            block = system.assemble(question.question, budget)
            result.block.setdefault(budget, []).append(block_recall(evidence_texts, block))
        result.block_s += time.perf_counter() - start


def run_system(
    system: Retriever, data: LocomoData, conversations: list[Conversation]
) -> SystemResult:
    """Index each conversation and score all of its questions."""
    result = SystemResult(system.name)
    for conversation in conversations:
        start = time.perf_counter()
        system.index(conversation)
        result.index_s += time.perf_counter() - start
        texts = {turn.dia_id: turn.text for turn in conversation.turns}
        for question in data.questions:
            if question.conv_id == conversation.conv_id:
                _score_question(system, question, texts, result)
    links = getattr(system, "links", None)
    if links is not None:
        result.links = {k: links[k] for k in LINK_EVENTS}
    return result


#: The lifecycle changes counted while replaying, in the order printed.
LINK_EVENTS = ("superseded", "retracted", "disputed")


# --------------------------------------------------------------------------- reporting


LABEL = 34


def _row(label: str, figures: Mapping[str, float], keys: Iterable[int], extra: str = "") -> str:
    cells = "".join(f"{figures[str(key)]:>7.1f}" for key in keys)
    return f"{label:<{LABEL}}{cells}{extra}"


def format_table(results: list[SystemResult], n_questions: int, n_convs: int) -> str:
    """The R@k table (systems side by side, DRAGON row), per category, and blocks."""
    header = f"{'system':<{LABEL}}" + "".join(f"{'R@' + str(k):>7}" for k in KS)
    lines = [
        (
            f"LoCoMo retrieval recall, {n_convs} conversations, {n_questions} questions, "
            "unit = one turn (percent)"
        ),
        header + f"{'time s':>9}",
    ]
    for name, figures in PUBLISHED.items():
        lines.append(_row(name, {str(k): v for k, v in figures.items()}, KS))
    for res in results:
        total = res.index_s + res.rank_s
        lines.append(_row(res.name, res.summary(res.recall)["overall"], KS, f"{total:>9.1f}"))
    lines += ["", "per category:", f"{'category (n) / system':<{LABEL}}" + header[LABEL:]]
    for cat_name in CATEGORY_NAMES.values():
        for res in results:
            per_cat = res.summary(res.recall)["per_category"].get(cat_name)
            if per_cat:
                label = f"{cat_name} ({per_cat['questions']}) {res.name}"
                lines.append(_row(label, per_cat, KS))
    lines += _block_lines(results)
    with_links = [res for res in results if res.links is not None]
    if with_links:
        lines += ["", "items extraction superseded / retracted / disputed while replaying:"]
        for res in with_links:
            assert res.links is not None
            counts = " / ".join(str(res.links[k]) for k in LINK_EVENTS)
            lines.append(f"{res.name:<{LABEL}}{counts:>16}")
    return "\n".join(lines)


def _block_lines(results: list[SystemResult]) -> list[str]:
    with_blocks = [res for res in results if res.block]
    if not with_blocks:
        return []
    header = f"{'system':<{LABEL}}" + "".join(f"{str(b) + ' tok':>9}" for b in BLOCK_BUDGETS)
    lines = ["", "evidence recall inside the assembled block (percent):", header]
    for res in with_blocks:
        overall = res.summary(res.block)["overall"]
        lines.append(
            f"{res.name:<{LABEL}}" + "".join(f"{overall[str(b)]:>9.1f}" for b in BLOCK_BUDGETS)
        )
    return lines


def build_report(
    results: list[SystemResult], data: LocomoData, conversations: list[Conversation], date: str
) -> dict[str, Any]:
    """The JSON document written to ``bench/results``."""
    questions = [q for q in data.questions if q.conv_id in {c.conv_id for c in conversations}]
    return {
        "benchmark": "locomo-retrieval",
        "date": date,
        "data": {
            "path": str(data.path),
            "conversations": len(conversations),
            "turns": sum(len(c.turns) for c in conversations),
            "questions": len(questions),
            "questions_per_category": {
                name: sum(q.category == cat for q in questions)
                for cat, name in CATEGORY_NAMES.items()
            },
            "questions_without_evidence": sum(not q.evidence for q in questions),
            "evidence_normalisation": data.evidence_stats.as_dict(),
        },
        "metric": "recall accuracy R@k (percent): per question, share of evidence dia_ids "
        "in the top k (no evidence counts 1), mean over questions",
        "published": {name: {str(k): v for k, v in fig.items()} for name, fig in PUBLISHED.items()},
        "systems": {res.name: _system_report(res) for res in results},
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
        },
    }


def _system_report(res: SystemResult) -> dict[str, Any]:
    report: dict[str, Any] = {"recall_at_k": res.summary(res.recall)}
    if res.block:
        report["block_recall_at_budget_tokens"] = res.summary(res.block)
    if res.links is not None:
        report["lifecycle_links_made"] = res.links
    report["wall_time_s"] = {
        "index": round(res.index_s, 3),
        "rank": round(res.rank_s, 3),
        "block": round(res.block_s, 3),
        "total": round(res.index_s + res.rank_s + res.block_s, 3),
    }
    return report


# --------------------------------------------------------------------------- command line


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", default="bm25", help="comma-separated: " + ",".join(SYSTEMS))
    parser.add_argument("--limit-convs", type=int, default=None, help="first N conversations")
    parser.add_argument(
        "--data", default=None, help="locomo10.json (default: $CONVMEM_LOCOMO or ../shared)"
    )
    parser.add_argument(
        "--raw-evidence",
        action="store_true",
        help="score against the evidence strings as published (no normalisation)",
    )
    parser.add_argument(
        "--date", default=None, help="date for the result file name (default: today)"
    )
    parser.add_argument(
        "--json-out", default=None, help="result file (default: bench/results/locomo-DATE.json)"
    )
    args = parser.parse_args(argv)
    args.systems = [name.strip() for name in args.systems.split(",") if name.strip()]
    unknown = [name for name in args.systems if name not in SYSTEMS]
    if unknown:
        parser.error(f"unknown systems: {', '.join(unknown)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table and write the JSON results."""
    args = parse_args(argv)
    data = load_locomo(args.data)
    if args.raw_evidence:
        data = with_raw_evidence(data)
    conversations = data.conversations[: args.limit_convs]
    results = [run_system(SYSTEMS[name](), data, conversations) for name in args.systems]
    n_questions = sum(len(r.categories) for r in results[:1])
    print(format_table(results, n_questions, len(conversations)))
    date = args.date or dt.date.today().isoformat()
    out = Path(args.json_out) if args.json_out else RESULTS_DIR / f"locomo-{date}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    report = build_report(results, data, conversations, date)
    report["data"]["evidence_mode"] = "raw" if args.raw_evidence else "normalised"
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nevidence normalisation: {data.evidence_stats.as_dict()}")
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
