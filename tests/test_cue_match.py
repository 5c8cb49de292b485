"""CueText answers as the patterns themselves do, on every cue pattern extraction uses."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convmem.core.cue_match import FOLDS_TO_ASCII, CueText, case_sensitive_twin
from convmem.memory import act_cues, candidates, cues, small_talk, subjects


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for module in (act_cues, candidates, cues, small_talk, subjects):
        for name, value in sorted(vars(module).items()):
            if isinstance(value, re.Pattern) and value.flags & re.IGNORECASE:
                out.append((f"{module.__name__.rsplit('.', 1)[-1]}.{name}", value))
    return out


PATTERNS = _patterns()


def _words(pattern: re.Pattern[str]) -> list[str]:
    """Runs of letters, apostrophes and spaces in the pattern's source: the phrases it
    looks for, so that random text often holds them."""
    return [w for w in re.findall(r"[a-z' ]{2,}", pattern.pattern) if w.strip()]


VOCABULARY = sorted({w for _, p in PATTERNS for w in _words(p)})


def _recase(draw: st.DrawFn, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.upper() if f else c for c, f in zip(text, flips, strict=True))


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(VOCABULARY),
                st.text(alphabet=" .,!?'-:;()0123456789abcXYZ", max_size=6),
                st.sampled_from(["K", "ſ", "ı", "İ", "é", "我们", "’"]),
            ),
            max_size=12,
        )
    )
    return _recase(draw, " ".join(parts))


def test_the_cue_patterns_have_twins() -> None:
    """The speed-up applies where it matters: the cue vocabulary names no upper case."""
    for name, pattern in PATTERNS:
        if name.startswith(("act_cues.", "cues.", "small_talk.")):
            assert case_sensitive_twin(pattern) is not None, name


@settings(max_examples=300, deadline=None)
@given(texts())
def test_cue_text_answers_as_the_pattern_does(text: str) -> None:
    cue = CueText(text)
    for name, pattern in PATTERNS:
        assert cue.search(pattern) == (pattern.search(text) is not None), name
        assert cue.match(pattern) == (pattern.match(text) is not None), name
        first = pattern.search(text)
        assert cue.find(pattern) == (first.span() if first else None), name
        assert cue.spans(pattern) == [(m.start(), *m.span()) for m in pattern.finditer(text)], name


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (r"\bapi\b", "API"),  # lower-case only: a twin
        (r"[a-z]+ing", "RUNNING"),
    ],
)
def test_a_lower_case_pattern_has_a_twin(source: str, text: str) -> None:
    pattern = re.compile(source, re.IGNORECASE)
    twin = case_sensitive_twin(pattern)
    assert twin is not None and not twin.flags & re.IGNORECASE
    assert CueText(text).search(pattern) and pattern.search(text)


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (r"API", "api"),  # an upper-case literal
        (r"[!-^]", "a"),  # a range holding A-Z but not a-z
        ("\u212a", "k"),  # the Kelvin sign folds to k
        (r"x(?-i:a)", "xA"),  # case matters inside the group
    ],
)
def test_a_pattern_that_could_answer_otherwise_keeps_its_flag(source: str, text: str) -> None:
    pattern = re.compile(source, re.IGNORECASE)
    assert case_sensitive_twin(pattern) is None
    # the naive twin would answer otherwise on this text; CueText does not
    naive = re.compile(source).search(text.lower()) is not None
    assert naive != (pattern.search(text) is not None)
    assert CueText(text).search(pattern) == (pattern.search(text) is not None)


def test_folds_to_ascii_lists_every_such_character() -> None:
    letters = re.compile("[A-Za-z]", re.IGNORECASE)
    found = {
        chr(i)
        for i in range(128, 0x110000)
        if not 0xD800 <= i <= 0xDFFF and letters.fullmatch(chr(i))
    }
    assert found == FOLDS_TO_ASCII
