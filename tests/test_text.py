from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from convmem.core import text as t


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("p95 latency under 200 ms at 1k rps", [("200 ms", 200, "ms"), ("1k rps", 1000, "rps")]),
        ("budget 3,000 tokens", [("3,000 tokens", 3000, "tokens")]),
        ("预算改成 2000 tokens", [("2000 tokens", 2000, "tokens")]),
        ("连接池大小必须是 50 个", [("50 个", 50, "个")]),
        ("超时两千毫秒", [("两千毫秒", 2000, "毫秒")]),
        ("峰值 1万 QPS", [("1万 QPS", 10000, "qps")]),
        ("costs $20 and 5% more", [("$20", 20, "$"), ("5%", 5, "%")]),
        ("version p95 and v2", []),
        ("retry 3 times", [("3 times", 3, "times")]),
        ("three point 2.5GB", [("2.5GB", 2.5, "gb")]),
    ],
)
def test_numbers_keep_raw_text_value_and_unit(
    source: str, expected: list[tuple[str, float, str]]
) -> None:
    got = [(n.raw, n.value, n.unit) for n in t.numbers(source)]
    assert got == expected


def test_tokens_latin_and_cjk_bigrams() -> None:
    assert t.tokens("Hello World 数据库连接 it's a test") == [
        "hello",
        "world",
        "it's",
        "test",
        "数据",
        "据库",
        "库连",
        "连接",
    ]
    assert len(t.tokens(" ".join(f"w{i}x" for i in range(500)))) == 160


def test_paths_and_quotes() -> None:
    assert t.paths("edit src/app/main.py, /etc/hosts and ~/x/y; see https://a.b/c/d.py") == [
        "src/app/main.py",
        "/etc/hosts",
        "~/x/y",
    ]
    assert t.quoted_phrases('say "hello world", 「你好」 and `make test` don\'t') == [
        "hello world",
        "你好",
        "make test",
    ]


def test_token_estimate_formula() -> None:
    assert t.estimate_tokens("") == 0
    assert t.estimate_tokens("abcd") == 1
    assert t.estimate_tokens("数据库") == 2  # ceil(3 / 1.6)
    assert t.estimate_tokens("数据库 abcd") == 4  # ceil(3/1.6 + 5/4)


def test_normalize_removes_controls_and_lone_surrogates() -> None:
    assert t.normalize_text("a\ud800b\r\n\x00c  \n\n\n\nd ") == "a\ufffdb\nc\n\nd"
    assert t.normalize_text("e\u0301") == "\u00e9"  # NFC


def test_stable_ids_are_deterministic_and_session_scoped() -> None:
    a = t.stable_id("mem", "sess-1", "constraint", "x")
    assert a == t.stable_id("mem", "sess-1", "constraint", "x")
    assert a != t.stable_id("mem", "sess-2", "constraint", "x")
    assert a.startswith("mem_sess1_") and len(a.split("_")[2]) == 16
    assert t.canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'


def test_collapse_spaces_joins_every_run_of_whitespace() -> None:
    # the token estimate once defined a second _SPACES (one ASCII space character)
    # under the same name, and this collapsed nothing
    assert t.collapse_spaces("  a   b\n\n c\u3000d\t e ") == "a b c d e"
    assert t.dedupe_key("Keep p95\nunder  200 ms") == t.dedupe_key("keep p95 under 200 ms")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain words 123!",
        "我们的预算是3000元",
        "ä — “q” 😀\x0b",
        "a\tb\r\nc  {x: 1}",
        "x\ud800 y",
    ],
)
def test_estimate_tokens_counts_character_classes(text: str) -> None:
    import math
    import re

    cjk = t.count_cjk(text)
    letters = len(re.findall(r"[A-Za-z]", text))
    digits = len(re.findall(r"[0-9]", text))
    spaces = len(re.findall(r"[ \t\r\n]", text))
    punct = len(re.findall(r"[!-/:-@\[-`{-~]", text))
    other = len(text) - cjk - letters - digits - spaces - punct
    expected = math.ceil(
        cjk / 1.5 + letters / 4.3 + digits / 1 + punct / 1.8 + spaces / 14 + other / 1.1
    )
    assert t.estimate_tokens(text) == expected


@given(st.text(max_size=60))
def test_character_classes_are_counted_per_character(text: str) -> None:
    # counted on the UTF-8 bytes: no other character may count as an ASCII class
    # (lone surrogates included), and CJK counts the same with or without its shortcut
    import re

    assert t.ascii_classes(text) == (
        len(re.findall(r"[A-Za-z]", text)),
        len(re.findall(r"[0-9]", text)),
        len(re.findall(r"[ \t\r\n]", text)),
        len(re.findall(r"[!-/:-@\[-`{-~]", text)),
    )
    assert t.count_cjk(text) == len(t._CJK.findall(text))


@given(st.text(alphabet=st.sampled_from("ab \n\r\u2028…"), max_size=40), st.integers(1, 30))
def test_an_evidence_line_is_clipped_from_its_first_characters(text: str, limit: int) -> None:
    # the assembler quotes clip(one_line(text[: limit + 1]), limit) to skip long texts
    from convmem.assembly import one_line

    assert t.clip(one_line(text[: limit + 1]), limit) == t.clip(one_line(text), limit)
