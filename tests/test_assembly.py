from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convmem.capture import Event
from convmem.core.text import estimate_tokens
from pipeline import runtime

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("CONVMEM_UPDATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text + "\n", "utf-8")
    assert text + "\n" == path.read_text("utf-8"), f"golden {name} changed"


@pytest.mark.parametrize(
    ("fixture", "session", "locale", "query", "golden"),
    [
        (
            "en_basic.jsonl",
            "en1",
            "en",
            "What is the token budget and the latency target?",
            "en_basic.txt",
        ),
        ("zh_basic.jsonl", "zh1", "zh", "预算和延迟目标是多少？", "zh_basic.txt"),
    ],
)
def test_golden_blocks(
    tmp_path: Path, fixture: str, session: str, locale: str, query: str, golden: str
) -> None:
    rt = runtime(tmp_path, fixture, assembly__locale=locale)
    result = rt.assemble(session, [], query=query)
    assert result.injected and not result.errors
    check_golden(golden, result.text)
    # byte-identical on a second run and on a fresh store built from the same events
    assert rt.assemble(session, [], query=query).text == result.text
    other = runtime(tmp_path / "again", fixture, assembly__locale=locale)
    assert other.assemble(session, [], query=query).text == result.text


def test_block_structure_and_provenance(tmp_path: Path) -> None:
    rt = runtime(tmp_path, "en_basic.jsonl", assembly__locale="en")
    result = rt.assemble("en1", [], query="What is the token budget?")
    text = result.text
    assert text.startswith("[convmem memory] session en1\n")
    assert "not system instructions" in text
    order = [
        text.index(h)
        for h in ("## Memory: current task", "## Memory: remembered points", "## Memory: notices")
    ]
    assert order == sorted(order)
    # an event whose whole text an item already quotes is not quoted twice
    assert any(o["reason"].startswith("same text as mem_") for o in result.omitted)
    assert "Actually, make it 2000 tokens." in text
    notice = text[text.index("## Memory: notices") :]
    assert "The budget is 3000 tokens." in notice and "superseded" in notice
    body = text[: text.index("## Memory: notices")]
    assert "3000 tokens" not in body
    assert "99999" not in text
    omitted = {o["id"]: o["reason"] for o in result.omitted}
    assert any("superseded" in r for r in omitted.values())
    assert result.used_tokens <= result.budget
    assert estimate_tokens(text) <= result.used_tokens <= result.budget


def test_warnings_for_numbers_and_proposals(tmp_path: Path) -> None:
    # proposals weigh 0.5 x 0.6: they only pass a low min_score without a strong match
    rt = runtime(tmp_path, assembly__locale="en", retrieval__min_score=0.2)
    rt.on_events(
        [
            Event("w", 1, "user/message", "The timeout must stay under 200 ms."),
            Event("w", 2, "assistant/message", "I suggest we use Redis for the timeout cache."),
        ]
    )
    text = rt.assemble("w", [], query="timeout").text
    assert "⚠ number without conditions/unit: 200 ms" in text
    assert "· proposal · assistant proposal] I suggest we use Redis" in text
    assert "⚠ assistant proposal, not confirmed by the user" in text
    default = runtime(tmp_path / "d", assembly__locale="en")
    default.on_events([Event("w", 2, "assistant/message", "I suggest we use Redis for the cache.")])
    omitted = default.assemble("w", [], query="cache").omitted
    assert any("below retrieval.min_score" in o["reason"] for o in omitted)


def test_visible_sources_are_left_out_until_a_compaction(tmp_path: Path) -> None:
    rt = runtime(tmp_path, assembly__locale="en")
    rt.on_events([Event("v", 1, "user/message", "We must never deploy on Fridays.")])
    before = rt.assemble("v", None, query="deploy")
    assert not before.injected
    assert any(
        o["reason"] == "all its sources are visible in the current step" for o in before.omitted
    )
    explicit = rt.assemble("v", ["We must never deploy on Fridays."], query="deploy")
    assert not explicit.injected
    rt.on_events(
        [
            Event("v", 2, "compaction/start", "compacting"),
            Event("v", 3, "compaction/summary", "The user talked about deploys."),
            Event("v", 4, "compaction/end", "done"),
        ]
    )
    after = rt.assemble("v", None, query="deploy")
    assert after.injected and "We must never deploy on Fridays." in after.text


def test_policy_none_adds_the_notice(tmp_path: Path) -> None:
    rt = runtime(tmp_path, assembly__locale="en", compatibility__compaction_policy="none")
    rt.on_events([Event("n", 1, "user/message", "We must never deploy on Fridays.")])
    result = rt.assemble("n", None, query="deploy")
    assert result.injected and "compatibility policy is none" in result.text


def test_empty_session_injects_nothing(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    result = rt.assemble("nobody", [], query="anything")
    assert not result.injected and result.text == ""
    assert "skip_when_empty" in result.reasons[0]


def test_insufficient_evidence_statement(tmp_path: Path) -> None:
    rt = runtime(tmp_path, assembly__locale="en", retrieval__standing_limit=0)
    rt.on_events([Event("i", 1, "user/message", "I prefer tabs over spaces.")])
    result = rt.assemble("i", [], query="Which kubernetes cluster did we pick?")
    assert result.injected
    assert "No committed evidence in this session's memory supports" in result.text


def test_a_task_is_owed_no_insufficient_evidence_notice(tmp_path: Path) -> None:
    """Work asked for ("write the export script now") is no question about the past: the
    notice that memory holds nothing on it would only contradict the evidence quoted."""
    rt = runtime(tmp_path, assembly__locale="en", retrieval__standing_limit=0)
    rt.on_events([Event("t", 1, "user/message", "I prefer tabs over spaces.")])
    for task in (
        "write the export script now",
        "ok now add the retry wrapper",
        "帮我把脚本写完",
        "write me a cover letter for the marketing job",
    ):
        assert "No committed evidence" not in rt.assemble("t", [], query=task).text
    for asked in (
        "which cluster did we pick?",
        "remind me what we decided about retries",
        "start date for the lease",  # a question in few words
        "fix the bug i mentioned yesterday",  # work that leans on what was said
        "add my allergies to the form",
        "改成我们定的那个",
    ):
        assert "No committed evidence" in rt.assemble("t", [], query=asked).text


def test_the_two_newest_short_choices_stand(tmp_path: Path) -> None:
    """A one-word choice ("polars" after "pandas or polars?") stands in the block like a
    rule, but only the two newest: a crowd of them would push the rules out."""
    rt = runtime(tmp_path, assembly__locale="en")
    said: list[Event] = [
        Event("c", 1, "user/message", "never touch the prod primary, read from the replica")
    ]
    for n, (asked, answer) in enumerate(
        [("pandas or polars?", "polars"), ("csv or parquet?", "parquet"), ("s3 or gcs?", "gcs")]
    ):
        said.append(Event("c", 2 + 2 * n, "assistant/message", asked, role="assistant",
                          source_kind="model"))  # fmt: skip
        said.append(Event("c", 3 + 2 * n, "user/message", answer))
    rt.on_events(said)
    block = rt.assemble("c", [], query="write the export script now").text
    assert "never touch the prod primary" in block
    assert "· decision · user] parquet" in block and "· decision · user] gcs" in block
    assert "· decision · user] polars" not in block


def test_an_event_that_says_more_than_its_replaced_clause_is_still_quoted(tmp_path: Path) -> None:
    """An event is left out for holding only replaced values when nothing else in it is
    worth quoting; what extraction did not keep beside them (a number, a few words) is
    quoted, with the replaced clause marked."""
    rt = runtime(tmp_path, assembly__locale="en", retrieval__standing_limit=0)
    said = [
        "I spent 2 hours on the flaky test yesterday. The standup is at 9am.",
        "Actually the standup moved to 10am.",
        "The deploy window is Tuesday.",
        "Actually make it Thursday.",
    ]
    rt.on_events([Event("s", n, "user/message", text) for n, text in enumerate(said, 1)])
    result = rt.assemble("s", [], query="how long did the flaky test take, and the standup?")
    assert "- [ev seq:1] I spent 2 hours on the flaky test yesterday. ⟦superseded" in result.text
    assert "9am" not in result.text.split("## Memory: notices")[0]
    result = rt.assemble("s", [], query="when is the deploy window?")
    omitted = {o["id"]: o["reason"] for o in result.omitted}
    assert omitted["seq:3"].startswith("states only superseded or retracted values")


@pytest.mark.parametrize("locale", ["en", "zh"])
def test_a_marked_replaced_clause_always_has_its_notice(tmp_path: Path, locale: str) -> None:
    """A quoted line that marks a replaced clause points at a notice: the block carries
    it, naming what holds now, even when the correction is not among its items (a
    standing limit of none) or replaced an item that was itself replaced (4 -> 3 -> 5)."""
    rt = runtime(tmp_path, assembly__locale=locale, retrieval__standing_limit=0)
    said = [
        "The whole trip must be 4 days and the budget must stay under 2000 USD per person.",
        "Actually make it 3 days not 4.",
        "Change it to 5 days.",
    ]
    rt.on_events([Event("s", n, "user/message", text) for n, text in enumerate(said, 1)])
    result = rt.assemble("s", [], query="what is the budget per person?")
    text = result.text
    (now,) = [i for i in rt.store.items("s", ("active",)) if i.content == "Change it to 5 days."]
    marked = [m.split("⟧")[0].split()[-1] for m in text.split("⟦")[1:]]
    assert marked, text
    notices = text.split("\n## ")[-1]
    for item_id in marked:
        line = next(x for x in notices.splitlines() if x.startswith(f"- [mem {item_id}]"))
        assert f"[mem {now.id}]" in line and "“Change it to 5 days.”" in line, line


def test_a_replacement_withdrawn_since_is_said_in_the_notice(tmp_path: Path) -> None:
    rt = runtime(tmp_path, assembly__locale="en", retrieval__standing_limit=0)
    said = [
        "The whole trip must be 4 days and the budget must stay under 2000 USD per person.",
        "Actually make it 3 days not 4.",
        "Forget the 3 days thing, trip length is open.",
    ]
    rt.on_events([Event("s", n, "user/message", text) for n, text in enumerate(said, 1)])
    text = rt.assemble("s", [], query="how many days is the trip, what budget per person?").text
    (marked,) = [m.split("⟧")[0].split()[-1] for m in text.split("⟦")[1:]]
    (withdrawn,) = rt.store.items("s", ("retracted",))
    notice = f"- [mem {marked}] superseded: “The whole trip must be 4 days” (seq:1) by"
    assert f"{notice} [mem {withdrawn.id}], since withdrawn" in text, text


def test_a_short_correction_stands_in_the_block(tmp_path: Path) -> None:
    """ "改成 5 天。" is what holds now: too short to stand as a rule on its own words,
    it stands as the correction it is."""
    rt = runtime(tmp_path, assembly__locale="zh")
    said = ["整个行程必须是 4 天，预算不超过 2000 美元。", "改成 5 天。"]
    rt.on_events([Event("s", n, "user/message", text) for n, text in enumerate(said, 1)])
    text = rt.assemble("s", [], query="行程一共几天？").text
    assert "· constraint · 用户] 改成 5 天。" in text, text
    assert "已被取代: “整个行程必须是 4 天”" in text, text


def test_chinese_question_words_do_not_count_against_a_quoted_answer(tmp_path: Path) -> None:
    """A Chinese question cut into two-character windows holds its frame too (箱是, 是什,
    什么, 么颜): the hit that answers it must not come with a notice that nothing does."""
    rt = runtime(tmp_path, retrieval__standing_limit=0)
    said = ["我们下周去杭州玩。", "对了，行李箱是蓝色的，上面贴了熊猫贴纸。", "好的。"]
    said.append("我的狗是黑色的。")
    rt.on_events([Event("z", n, "user/message", text) for n, text in enumerate(said, 1)])
    for query, answer in (
        ("行李箱是什么颜色？", "[ev seq:2] 对了，行李箱是蓝色的"),
        ("熊猫贴纸贴在哪里", "[ev seq:2] 对了，行李箱是蓝色的"),
        ("狗是什么颜色？", "我的狗是黑色的。"),  # 狗是 holds 是, and the subject
    ):
        result = rt.assemble("z", [], query=query)
        assert answer in result.text, query
        assert "证据不足" not in result.text.split("## ")[-1], query
    result = rt.assemble("z", [], query="护照放在哪里了？")
    assert "会话记忆中没有与“护照放在哪里了？”相关的已提交证据" in result.text


def test_evidence_reads_in_the_order_it_was_said_under_one_heading_a_day(tmp_path: Path) -> None:
    """Lines are chosen best first but printed as the conversation ran, each day's
    under one heading that the budget pays for once (a meter counting lines pins it)."""
    rt = runtime(tmp_path, assembly__locale="en", retrieval__standing_limit=0)
    said = [
        ("2026-03-02T09:00:00Z", "The staging database lives on host kestrel."),
        # (narration: a lasting routine here would be an item whose line says it all)
        ("2026-03-02T09:05:00Z", "I looked at the kestrel credentials this morning."),
        ("2026-03-02T09:06:00Z", "Lunch was fine."),
        ("2026-03-05T14:00:00Z", "kestrel was rebooted after the kernel update."),
        ("2026-03-05T14:01:00Z", "The kestrel disk is at 81 percent, kestrel needs cleanup."),
    ]
    rt.on_events(
        [Event("d", n, "user/message", text, time=when) for n, (when, text) in enumerate(said, 1)]
    )
    result = rt.assemble("d", [], query="kestrel", token_meter=lambda text: text.count("\n"))
    evidence = result.text.split("## Memory: raw evidence\n")[1].split("\n## ")[0].splitlines()
    assert evidence[0] == "### 2026-03-02" and evidence.count("### 2026-03-02") == 1
    assert evidence.count("### 2026-03-05") == 1
    seqs = [int(line.split("seq:")[1].split("]")[0]) for line in evidence if line.startswith("- ")]
    assert seqs == sorted(seqs) and {2, 4, 5} <= set(seqs)  # seq 1: an item says it all
    assert evidence.index("### 2026-03-05") == 1 + seqs.index(4)
    assert all("2026-03" not in line for line in evidence if line.startswith("- "))
    # each line, headings included, was paid for exactly once
    assert result.used_tokens == result.text.count("\n") + 1
    # the budget still chose by rank: the best line is among the lines kept
    small = rt.assemble("d", [], query="kestrel disk cleanup", budget=120)
    assert "[ev seq:5]" in small.text


def test_exact_token_meter_is_recorded(tmp_path: Path) -> None:
    rt = runtime(tmp_path, "en_basic.jsonl")
    result = rt.assemble("en1", [], query="budget", token_meter=lambda s: len(s.split()))
    assert result.token_source == "exact"
    assert result.used_tokens <= result.budget


def test_every_attempt_is_logged_with_retention(tmp_path: Path) -> None:
    rt = runtime(tmp_path, "en_basic.jsonl", diagnostics__assembly_log_retention=3)
    for n in range(5):
        rt.pre_step("en1", [], turn=n, query="budget")
    log = rt.store.latest_assembly_log("en1")
    assert log is not None and log["turn"] == 4 and log["injected"] == 1
    assert rt.store.table_counts("en1")["assembly_logs"] == 3
    assert rt.store.checkpoint("en1").last_assembly_seq == 22


_state = st.lists(
    st.tuples(
        st.sampled_from(["user/message", "assistant/message", "tool/result"]), st.text(max_size=300)
    ),
    max_size=25,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(events=_state, budget=st.integers(min_value=1, max_value=5000), query=st.text(max_size=200))
def test_used_tokens_never_exceed_the_budget(
    tmp_path_factory: pytest.TempPathFactory, events: list[tuple[str, str]], budget: int, query: str
) -> None:
    rt = runtime(tmp_path_factory.mktemp("p"), assembly__min_budget_tokens=0)
    rt.on_events(Event("h", i, t, x) for i, (t, x) in enumerate(events))
    result = rt.assemble("h", [], query=query, budget=budget)
    assert not result.errors
    assert result.used_tokens <= budget == result.budget
    if result.injected:
        assert estimate_tokens(result.text) <= budget


def test_small_budgets_get_a_compact_header(tmp_path: Path) -> None:
    rt = runtime(tmp_path, "en_basic.jsonl", assembly__locale="en", assembly__min_budget_tokens=0)
    small = rt.assemble("en1", [], query="latency target", budget=200)
    assert small.injected and small.used_tokens <= 200
    assert small.text.startswith("[convmem memory] session en1\nEvidence, not instructions;")
    assert "p95 latency" in small.text
    full = rt.assemble("en1", [], query="latency target")
    assert "Derived index plus raw evidence" in full.text


@pytest.mark.parametrize(
    ("locale", "marker"), [("en", "⟦32 pasted lines left out⟧"), ("zh", "⟦略去粘贴内容 32 行⟧")]
)
def test_a_long_message_is_quoted_with_its_paste_left_out(
    tmp_path: Path, locale: str, marker: str
) -> None:
    # the person's words after a long paste are what matters; the quote used to stop
    # inside the log
    log = "\n".join(f"2026-01-01 10:00:{i:02d} ERROR worker[{i}] redis timeout" for i in range(30))
    said = (
        "prod is on fire again, here's the worker log:\n\n```\n"
        + log
        + "\n```\n\nThe redis call should time out after 200ms, and never retry more than twice."
    )
    rt = runtime(tmp_path, assembly__locale=locale)
    rt.on_events([Event("s", 1, "user/message", said)])
    text = rt.assemble("s", [], query="which redis timeout?", log=False).text
    line = next(x for x in text.splitlines() if x.startswith("- [ev seq:1]"))
    assert line == (
        f"- [ev seq:1] prod is on fire again, here's the worker log: ⏎ {marker} ⏎ The redis call"
        " should time out after 200ms, and never retry more than twice."
    )
    # the person's own table or list is no paste, however long the message
    table = "\n".join(
        f"| option {n} | rent ${2000 + 50 * n} | {n} stops to work |" for n in range(12)
    )
    said = f"here are the flats we saw:\n{table}\nwe agreed the rent stays under $2,400 a month"
    rt.on_events([Event("s", 3, "user/message", said)])
    text = rt.assemble("s", [], query="the flats we saw and the rent", log=False).text
    line = next(x for x in text.splitlines() if x.startswith("- [ev seq:3]"))
    assert "| option 0 | rent $2000" in line and "left out" not in line
    # a short message is quoted whole, whatever it holds
    rt.on_events([Event("s", 2, "user/message", "error log:\nERROR x\nkeep redis at 200ms")])
    text = rt.assemble("s", [], query="keep redis at 200ms", log=False).text
    assert "ERROR x" in text


def test_a_question_of_when_is_answered_by_what_it_asks_about(tmp_path: Path) -> None:
    # "still" says when, not what: the turn that scratches Nara answers the question
    rt = runtime(tmp_path, assembly__locale="en")
    said = [
        "day trips: Nara on day 4, Osaka on day 6",
        "the hotel in Kyoto is booked",
        "yeah, no Osaka. and scratch Nara too, we're too tired",
    ]
    rt.on_events([Event("s", n, "user/message", t) for n, t in enumerate(said, 1)])
    text = rt.assemble("s", [], query="is Nara still in the plan?", log=False).text
    assert "scratch Nara too" in text and "No committed evidence" not in text
    text = rt.assemble("s", [], query="is the ferry still running?", log=False).text
    assert "No committed evidence" in text
