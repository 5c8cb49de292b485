"""Delivery to a host: its size limit, no pile-up of blocks, the person's language.

Real SQLite files and the real runtime; blocks "delivered" are stored back as the
host would log them (Claude Code: a ``hook-context`` user message; DSH: a message of
source kind ``convmem``), and the next block is read against them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Cli, write_events
from convmem.capture import Event
from convmem.delivery import (
    CLAUDE_CODE_CONTEXT_CAP,
    CLAUDE_CODE_CONTEXT_LIMIT,
    block_lines,
    person_locale,
    utf16_units,
)
from pipeline import runtime

FACTS = [
    "The token budget must stay under 3000 tokens at peak load.",
    "We decided to use PostgreSQL 16 for storage.",
    "The p95 latency must stay under 200 ms at 1k rps.",
    "Never touch the production database directly.",
]


def _feed(rt, session: str, texts: list[str], start: int = 1) -> int:  # type: ignore[no-untyped-def]
    seq = start
    for text in texts:
        rt.on_events([Event(session, seq, "user/message", text, turn=seq, role="user")])
        seq += 1
    return seq


def _delivered(rt, session: str, seq: int, block: str, kind: str = "hook-context") -> int:  # type: ignore[no-untyped-def]
    rt.on_events([Event(session, seq, "user/message", block, role="user", source_kind=kind)])
    return seq + 1


def test_utf16_units_count_like_javascript() -> None:
    assert utf16_units("abc") == 3
    assert utf16_units("中文") == 2
    assert utf16_units("😀") == 2  # outside the BMP: a surrogate pair
    assert CLAUDE_CODE_CONTEXT_CAP < CLAUDE_CODE_CONTEXT_LIMIT


@pytest.mark.parametrize(
    "filler", ["The rollout must keep item {n} under {n}0 ms.", "第{n}项必须低于{n}0毫秒😀。"]
)
def test_the_cap_cuts_by_budget_order_and_explain_says_so(tmp_path: Path, filler: str) -> None:
    rt = runtime(tmp_path, assembly__soft_budget_tokens=20_000, retrieval__limit=100)
    texts = [filler.format(n=n) + " " + "padding words " * 30 for n in range(120)]
    _feed(rt, "big", texts)
    whole = rt.assemble("big", [], query="rollout item ms 毫秒", repeat=True)
    assert utf16_units(whole.text) > CLAUDE_CODE_CONTEXT_LIMIT  # the budget alone lets it grow
    capped = rt.assemble("big", [], query="rollout item ms 毫秒", max_units=CLAUDE_CODE_CONTEXT_CAP)
    assert capped.injected
    assert utf16_units(capped.text) <= CLAUDE_CODE_CONTEXT_CAP
    # the same order: memory and evidence lines are kept in the budget's order
    kept = [line for line in capped.text.splitlines() if line.startswith(("- [mem", "- [ev"))]
    assert kept
    assert [line for line in whole.text.splitlines() if line in kept] == kept
    cut = [o for o in capped.omitted if o["reason"].startswith("the host's limit")]
    assert cut and all("UTF-16 units" in o["reason"] for o in cut)
    assert any("not the token budget" in r for r in capped.reasons)
    assert not any("not the token budget" in r for r in whole.reasons)


def test_explain_reports_the_cap(cli: Cli, home: Path, tmp_path: Path) -> None:
    events = [
        {
            "session_id": "x",
            "seq": n,
            "type": "user/message",
            "text": f"Deploy step {n} must finish under {n}0 seconds. " + "more words here " * 40,
        }
        for n in range(1, 80)
    ]
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        "[assembly]\nsoft_budget_tokens = 20000\n[retrieval]\nlimit = 100\n"
    )
    assert cli("ingest", str(write_events(tmp_path / "x.jsonl", events))).code == 0
    from convmem.config import load_settings
    from convmem.runtime import MemoryRuntime

    with MemoryRuntime.open(load_settings(None, str(home))) as rt:
        assert rt.pre_step("x", [], query="deploy step seconds", max_units=CLAUDE_CODE_CONTEXT_CAP)
    out = cli("explain", "--session", "x").out
    assert "not the token budget" in out


def test_a_later_block_carries_only_what_is_new(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    seq = _feed(rt, "p", FACTS)
    first = rt.pre_step("p", None, query="token budget latency storage")
    # nothing compacted yet and the sources are visible: nothing to say
    assert first is None
    # after a compaction the whole memory comes back once
    rt.on_events(
        [
            Event("p", seq, "compaction/start", "compacted", role="system"),
            Event("p", seq + 1, "compaction/summary", "Scripted summary.", role="system"),
        ]
    )
    seq += 2
    full = rt.pre_step("p", None, query="token budget latency storage")
    assert full and "3000 tokens" in full and "Memory update" not in full
    seq = _delivered(rt, "p", seq, full)
    # the block is still in context: the next one has nothing new, so none is sent
    assert rt.pre_step("p", None, query="token budget latency storage") is None
    log = rt.store.latest_assembly_log("p")
    assert any("earlier memory block" in r for r in log["reasons"])
    # a correction is news although the prompt is visible: the block above says the old
    # value; only the new item and its notice go out, under the update header
    _feed(rt, "p", ["Actually, make the token budget 2000 tokens, not 3000."], seq)
    update = rt.pre_step("p", None, query="token budget")
    assert update and "Memory update" in update
    body, notice = update.split("## Memory: notices")
    assert "2000 tokens" in body and "under 3000 tokens" not in body
    assert "superseded" in notice and "3000 tokens" in notice
    assert not set(block_lines(full)) & set(block_lines(update))


def test_every_line_at_most_once_across_visible_blocks(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    seq = _feed(rt, "q", FACTS)
    rt.on_events(
        [
            Event("q", seq, "compaction/start", "compacted", role="system"),
            Event("q", seq + 1, "compaction/summary", "Scripted summary.", role="system"),
        ]
    )
    seq += 2
    seen: list[str] = []
    for n, query in enumerate(["token budget", "latency p95", "storage database", "token budget"]):
        block = rt.pre_step("q", None, query=query)
        if block:
            seen += block_lines(block)
            seq = _delivered(rt, "q", seq, block, kind="convmem")
        seq = _feed(rt, "q", [f"Unrelated chat number {n}."], seq)
    assert seen and len(seen) == len(set(seen))


def test_visible_messages_from_the_host_count_too(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    _feed(rt, "v", FACTS)
    whole = rt.assemble("v", [], query="token budget").text
    assert whole
    again = rt.pre_step("v", [whole, "an unrelated message"], query="token budget")
    assert again is None


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["Please keep the budget at 3000 tokens.", "And use PostgreSQL."], "en"),
        (["预算必须低于3000个token。", "我们决定使用 PostgreSQL 16。"], "zh"),
        (["预算必须低于3000个token。", "OK, English from now on.", "Use PostgreSQL."], "en"),
        ([], "en"),
    ],
)
def test_auto_locale_follows_the_person(tmp_path: Path, texts: list[str], expected: str) -> None:
    rt = runtime(tmp_path)
    _feed(rt, "l", texts)
    # generated text never counts: a Chinese tool result or block changes nothing
    rt.on_events(
        [
            Event("l", 90, "tool/result", "错误：连接被拒绝" * 20, role="tool", source_kind="tool"),
            Event("l", 91, "user/message", "[convmem memory] 会话记忆" * 20, source_kind="convmem"),
        ]
    )
    assert person_locale(rt.store, "l", "auto") == expected
    assert person_locale(rt.store, "l", "zh") == "zh"
    assert person_locale(rt.store, "l", "en") == "en"


def test_auto_gives_the_forced_locale_goldens(tmp_path: Path) -> None:
    for fixture, session, query, locale in (
        ("en_basic.jsonl", "en1", "What is the token budget and the latency target?", "en"),
        ("zh_basic.jsonl", "zh1", "预算和延迟目标是多少？", "zh"),
    ):
        auto = runtime(tmp_path / f"a-{locale}", fixture)
        forced = runtime(tmp_path / f"f-{locale}", fixture, assembly__locale=locale)
        assert auto.settings["assembly.locale"] == "auto"
        assert (
            auto.assemble(session, [], query=query).text
            == forced.assemble(session, [], query=query).text
        )


def test_a_correction_in_the_prompt_is_current_in_its_own_block(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    seq = _feed(rt, "c", ["The summariser token budget is 3000 tokens."])
    rt.on_events([Event("c", seq, "compaction/start", "x", role="system")])
    rt.defer_derived = True  # as the UserPromptSubmit hook does
    rt.on_events(
        [
            Event(
                "c",
                seq + 1,
                "user/message",
                "Actually, make the summariser token budget 2000 tokens, not 3000.",
                role="user",
            )
        ]
    )
    assert rt.extract_recent("c")
    block = rt.assemble("c", [], query="summariser token budget").text
    body = block.split("## Memory: notices")[0]
    assert "2000 tokens" in body and "is 3000 tokens" not in body


def test_extract_recent_leaves_a_long_backlog(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    rt.defer_derived = True
    _feed(rt, "b", [f"The limit {n} is {n} ms." for n in range(1, 30)])
    assert not rt.extract_recent("b", max_events=10)
    assert rt.store.checkpoint("b").last_extract_seq < 29
    assert rt.extract_recent("b", max_events=64)
    assert rt.store.checkpoint("b").last_extract_seq == 29


def test_lines_an_earlier_block_shows_spend_no_share(tmp_path: Path) -> None:
    """Skipped as already shown, a line costs nothing: it must not use up the share of
    its kind and keep a new item out of an update block."""
    from convmem.assembly import Assembler
    from convmem.delivery import Budget, EarlierBlocks

    rt = runtime(tmp_path)
    assembler = Assembler(rt.store, rt.settings)
    shown = [
        "- [mem m1 · constraint · user] the pool size must be 50 connections at most in production",
        "- [mem m2 · constraint · user] the timeout must be 30 seconds for payment gateway calls",
    ]
    new = "- [mem m3 · constraint · user] retries are capped at 3 per request"
    budget = Budget(
        400,
        lambda t: max(1, len(t) // 4),
        None,
        EarlierBlocks(frozenset(shown), frozenset({"m1", "m2"})),
    )
    for line, ident in ((shown[0], "m1"), (shown[1], "m2"), (new, "m3")):
        assert assembler._within(
            budget, "matched", "memory", "## Memory: remembered points", line, ident
        )
    assert budget.sections["memory"][1:] == [new]


def test_earlier_blocks_are_found_among_long_messages(tmp_path: Path) -> None:
    """Only the head of each message is read to find them: a block after long messages
    of the person's is still one, and so is one stored after a run of white space
    (capture trims it; a row written otherwise may keep it), even when the head read
    first cuts the marker in two."""
    from convmem.delivery import BLOCK_MARKER, earlier_blocks

    rt = runtime(tmp_path)
    seq = _feed(rt, "h", ["The pool size must be 50. " + "x " * 4000])
    line = "- [mem m9 · constraint · user] the pool size must be 50"
    other = "- [mem h2 · constraint · user] retries stay at 3"
    padded = {}
    for pad, text in ((" \n" * 300, line), (" " * 250, other)):
        padded[seq] = pad + f"{BLOCK_MARKER} session h\n{text}\n"
        seq = _delivered(rt, "h", seq, f"{BLOCK_MARKER} session h\n{text}\n")
    for at, text in padded.items():
        rt.store.db.execute(
            "UPDATE events SET text = ? WHERE session_id = 'h' AND seq = ?", (text, at)
        )
    seq = _feed(rt, "h", [BLOCK_MARKER[:-1] + " is how the block opens, I saw it"], seq)
    found = earlier_blocks(rt.store, "h")
    assert found is not None and found.item_ids == {"m9", "h2"}
    assert found.lines == {block_lines(line)[0], block_lines(other)[0]}
    rt.on_events([Event("h", seq, "compaction/start", "", role="system")])
    assert earlier_blocks(rt.store, "h") is None  # hidden by the compaction


_PIECES = ["mem_", "mem_a1", "[ev ", "[ev seq:3]", "(seq:", "(seq:4)", "]", ")", " ", "  ", "\t"]
_PIECES += ["\u3000", "\n", "- ", "[mem ", "x", "数据", "_", "mem", "ev"]


@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_line_keys_equal_the_three_substitutions_they_stand_for(line: str) -> None:
    import re

    from convmem.delivery import line_key

    spaced = re.sub(r"\s+", " ", line).strip()
    ids = re.sub(r"\bmem_\w+", "mem", spaced)
    assert line_key(line) == re.sub(r"\[ev [^\]]*\]|\(seq:[^)]*\)", "[ev]", ids)


_RANGE = st.tuples(st.integers(0, 40), st.integers(0, 12)).map(lambda r: (r[0], r[0] + r[1]))


@pytest.fixture
def sized(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A session of 30 events from seq 3, with convmem's blocks and a compaction."""
    from convmem.delivery import BLOCK_MARKER

    rt = runtime(tmp_path)
    events = []
    for seq in range(3, 33):
        if seq % 7 == 0:
            events.append(Event("z", seq, "compaction/summary", "summary " * seq, role="system"))
        elif seq % 5 == 0:
            text = f"{BLOCK_MARKER} session z\n- [mem m{seq} · fact · user] x{seq}\n"
            events.append(Event("z", seq, "user/message", text, role="user", source_kind="convmem"))
        else:
            events.append(Event("z", seq, "user/message", "word " * seq, role="user"))
    rt.on_events(events)
    return rt.store


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_RANGE, max_size=5))
def test_the_share_counts_what_the_hidden_ranges_leave_shown(sized, ranges) -> None:  # type: ignore[no-untyped-def]
    """Reading from the end of the hidden prefix counts the same as reading it all."""
    from convmem.delivery import (
        COMPACTION_EVENT_TYPES,
        FIRST_BLOCK_FLOOR,
        OWN_SOURCE_KINDS,
        hidden_prefix,
        outside_ranges,
        share_allowance,
    )

    prefix = hidden_prefix(sized, "z", ranges)
    seqs = [seq for seq, *_ in sized.event_sizes("z")]
    if prefix is not None:
        assert all(any(a <= s <= b for a, b in ranges) for s in seqs if s <= prefix)
    shown = outside_ranges(ranges) if ranges else (lambda s: True)
    ours = others = 0
    for seq, type_, kind, chars in sized.event_sizes("z"):
        if shown((seq,)) and type_ not in COMPACTION_EVENT_TYPES:
            ours += chars if kind in OWN_SOURCE_KINDS else 0
            others += 0 if kind in OWN_SOURCE_KINDS else chars
    allowed = max(0, int((0.1 * (ours + others) - ours) / (1 - 0.1)))
    expected = allowed if ours else max(allowed, FIRST_BLOCK_FLOOR)
    assert share_allowance(sized, "z", 0.1, ranges) == expected
