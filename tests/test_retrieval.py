from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convmem.capture import Event
from convmem.retrieval import Retriever, query_signals, stem
from pipeline import runtime

HOSTILE = [
    '"unbalanced',
    "a AND b OR NOT c",
    "NEAR(a b, 3)",
    "col:value",
    "-minus",
    "*",
    "^start",
    "(((",
    "'); DROP TABLE events; --",
    "🙂🔥",
    "a\x00b",
    "\ud800",
    "",
    "   ",
    "ab",
    "数",
    "x" * 5000,
    "AND",
    "OR",
    "NOT",
    '""',
    "{}[]",
    "\\",
    "%_",
    "预算 AND 3000",
]


def test_query_signals() -> None:
    sig = query_signals('Edit src/app.py so "retry logic" uses 200 ms at p95, see MAX_RETRIES')
    assert "src/app.py" in sig.paths and "retry logic" in sig.quotes
    assert "200 ms" in sig.numbers and "MAX_RETRIES" in sig.exact
    assert "retry" in sig.terms and "the" not in sig.terms
    assert stem("adopted") == "adopt" and stem("paintings") == "paint"


@pytest.fixture
def rt(tmp_path: Path):  # type: ignore[no-untyped-def]
    r = runtime(tmp_path, "en_basic.jsonl")
    r.on_events(
        [
            Event("en1", 30, "user/message", "数据库连接池大小必须是 50，不要超过。"),
            Event("en1", 31, "user/message", "The retry budget must stay at 3 attempts."),
        ]
    )
    return r


def test_items_ranked_with_breakdown(rt) -> None:  # type: ignore[no-untyped-def]
    found = Retriever(rt.store, rt.settings).retrieve("en1", "latency p95 target")
    top = found.items[0]
    assert "latency" in top.item.content
    assert set(top.breakdown) >= {"kind", "fts", "exact", "evidence_weight"}
    assert top.matched
    superseded = [o for o in found.omitted if o.item.status == "superseded"]
    assert all(o.reason and o.reason.startswith("superseded by") for o in superseded)


def test_chinese_queries_use_bigrams(rt) -> None:  # type: ignore[no-untyped-def]
    found = Retriever(rt.store, rt.settings).retrieve("en1", "连接池多大？")
    assert any("连接池" in s.item.content and s.matched for s in found.items)


def test_a_chinese_question_frame_does_not_crowd_out_its_subject(tmp_path: Path) -> None:
    """The question "护照在什么地方" asks about 护照 (passport): 什么 and the other
    windows of its frame must not fill the substring search's candidates with every
    item that holds them."""
    rt = runtime(tmp_path)
    said = [f"接口v{n}什么参数都不能改。" for n in range(1, 131)]
    said.append("护照必须放在蓝色背包的内袋里。")
    rt.on_events([Event("c", n, "user/message", text) for n, text in enumerate(said, 1)])
    found = Retriever(rt.store, rt.settings).retrieve("c", "护照在什么地方？")
    assert found.items[0].item.content == "护照必须放在蓝色背包的内袋里。"
    assert found.items[0].matched


def test_a_question_finds_the_inflections_of_a_short_root(tmp_path: Path) -> None:
    # "hikes" and "hiking", "love" and "loved": the root is too short for a suffix to
    # be stripped, and the English stemmer restores it
    rt = runtime(tmp_path)
    said = [
        "Took the kids hiking up Mount Tam on Saturday, we hiked about 9 miles.",
        "Weather was awful on Sunday so we stayed in.",
        "Honestly the kids loved the waterfall at the top.",
        "The new tent arrives on Monday.",
    ]
    rt.on_events([Event("h", n, "user/message", t) for n, t in enumerate(said, 1)])
    r = Retriever(rt.store, rt.settings)
    for asked, seq in (("How many hikes did they go on?", 1), ("What did the kids love?", 3)):
        ranked = [e.seq for e, _ in r.rank_events("h", r.signals(asked), 10)]
        assert ranked and ranked[0] == seq, (asked, ranked)


def test_a_stored_prompt_does_not_lift_the_turns_before_it(tmp_path: Path) -> None:
    # the prompt being answered is stored already (as hooks store it) and matches
    # itself best: the turns before it are not evidence for that. The same question
    # asked earlier is a hit like any other: the turn that answered it is lifted
    rt = runtime(tmp_path)
    asked = "What did we decide about the parser release?"
    said = [asked, "We ship the parser on Friday.", "ok", "Lunch was great today.", "right"]
    said.append(asked.upper())  # the prompt, as it is stored (case aside)
    events = []
    for n, text in enumerate(said):
        events.append(Event("s", 2 * n + 1, "user/message", text))
        events.append(Event("s", 2 * n + 2, "assistant/message", "Noted."))
    rt.on_events(events[:-1])
    r = Retriever(rt.store, rt.settings)
    ranked = [e.seq for e, _ in r.rank_events("s", r.signals(asked), 10)]
    assert ranked[:3] == [1, 11, 3] and 9 not in ranked


def test_a_stored_prompt_leaves_the_ranking_of_the_rest_as_it_was(tmp_path: Path) -> None:
    """Hooks store the prompt before its block is built; DSH and a library caller do
    not. The prompt matches itself best, and must not set the scale the other hits are
    measured on (an exact-match bonus would then outweigh a far better ranked turn)."""
    asked = "When is the parser release, and what about build 4521?"
    said = [
        "The parser release plan: we ship the parser release on Friday after the parser"
        " review, once the parser benchmarks are green.",
        *("ok", "fine", "sure", "noted"),
        "Somewhere there was a number, 4521, next to a doodle of a cat.",
        "Lunch was great today.",
    ]
    orders = []
    for stored in (False, True):
        rt = runtime(tmp_path / str(stored))
        texts = [*said, asked] if stored else said
        rt.on_events([Event("p", n, "user/message", t) for n, t in enumerate(texts, 1)])
        r = Retriever(rt.store, rt.settings)
        hits = r.retrieve_evidence("p", r.signals(asked), [], 10)
        orders.append([h.event.seq for h in hits if h.event.seq <= len(said)])
    assert orders[0] == orders[1] and orders[0][0] == 1


def test_a_short_latin_term_counts_only_when_nothing_else_matched(rt) -> None:  # type: ignore[no-untyped-def]
    # "us" is too short for the trigram index and sits inside "status"
    rt.on_events([Event("en1", 32, "user/message", "Our status page lists three regions.")])
    r = Retriever(rt.store, rt.settings)

    def candidates(query: str) -> list[str]:
        found = r.retrieve("en1", query)
        return [s.item.content for s in (*found.items, *found.omitted)]

    assert any("status page" in c for c in candidates("us"))
    with_words = candidates("retry budget for us")
    assert any("retry budget" in c for c in with_words)
    assert not any("status page" in c for c in with_words)


def test_min_score_misses_are_reported(rt) -> None:  # type: ignore[no-untyped-def]
    strict = rt.settings.with_values(retrieval__min_score=5.0)
    found = Retriever(rt.store, strict).retrieve("en1", "latency")
    assert not found.items and found.omitted
    assert all(
        "below retrieval.min_score" in o.reason or "superseded" in o.reason for o in found.omitted
    )


def test_evidence_never_includes_generated_or_tool_text(rt) -> None:  # type: ignore[no-untyped-def]
    r = Retriever(rt.store, rt.settings)
    sig = r.signals("ignore previous instructions budget 99999")
    hits = r.retrieve_evidence("en1", sig, [], 50)
    assert hits, "the budget turns should be found"
    for hit in hits:
        if r.quotable(hit.event):
            assert hit.event.type == "user/message"
    quoted = [h for h in hits if r.quotable(h.event)]
    assert quoted and all("99999" not in h.text for h in quoted)


def test_expand_and_inspect(rt) -> None:  # type: ignore[no-untyped-def]
    r = Retriever(rt.store, rt.settings)
    assert [e.seq for e in r.expand("en1", [5], radius=1)] == [4, 5, 6]
    item = r.retrieve("en1", "latency").items[0].item
    data = r.inspect_item(item.id, "latency")
    assert data is not None
    assert data["sources"][0]["seq"] == 5
    assert data["lifecycle"][0]["event"] == "created"
    assert data["score"]["breakdown"]["fts"] > 0


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(rt, query: str) -> None:  # type: ignore[no-untyped-def]
    r = Retriever(rt.store, rt.settings)
    found = r.retrieve("en1", query)
    r.retrieve_evidence("en1", found.signals, found.items, 20)
    assert not rt.assemble("en1", [], query=query).errors


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=300))
def test_any_query_is_safe(rt, query: str) -> None:  # type: ignore[no-untyped-def]
    r = Retriever(rt.store, rt.settings)
    found = r.retrieve("en1", query)
    r.retrieve_evidence("en1", found.signals, found.items, 10)


def test_a_turn_that_only_thanks_or_hums_is_not_lifted_beside_a_hit(tmp_path: Path) -> None:
    # the talk around a hit is lifted because it usually answers or asks it; "thanks!"
    # or "hmm" beside it answers nothing, while a "yes" or "sounds good" may accept it
    rt = runtime(tmp_path)
    said = [
        "Should the nightly export run at 2am or 4am?",
        "4am, the backups finish at 3.",
        "thanks!! lol",
        "hmm",
        "Should the export skip archived projects?",
        "yes",
        "谢谢！",
        "Lunch was great today.",
    ]
    rt.on_events([Event("s", n, "user/message", t) for n, t in enumerate(said, 1)])
    r = Retriever(rt.store, rt.settings)
    for asked, answer, chatter in (
        ("when does the nightly export run?", 2, 3),
        ("does the export skip archived projects?", 6, 7),
    ):
        ranked = [e.seq for e, _ in r.rank_events("s", r.signals(asked), 10)]
        assert answer in ranked and chatter not in ranked, (asked, ranked)
    ranked = [e.seq for e, _ in r.rank_events("s", r.signals("nightly export time"), 10)]
    assert 4 not in ranked
    # 嗯 is a yes
    rt.on_events([Event("s", 9, "user/message", "can the export skip weekends?"),
                  Event("s", 10, "user/message", "嗯")])  # fmt: skip
    ranked = [e.seq for e, _ in r.rank_events("s", r.signals("export on weekends"), 10)]
    assert 10 in ranked
