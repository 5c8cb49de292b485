"""What a query asks about: content terms, short terms, exact terms, numbers, paths.

The step's task text (usually the person's latest message) becomes
:class:`QuerySignals`, the forms the rankers in :mod:`convmem.retrieval` use. Any text
is safe: it is only ever read, never turned into query syntax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from convmem.core.stopwords import QUERY_STOPWORDS
from convmem.core.text import (
    cjk_runs,
    latin_words,
    normalize_text,
    numbers,
    paths,
    quoted_phrases,
    tokens,
)

_SUFFIXES = (
    "ingly",
    "edly",
    "ations",
    "ation",
    "ments",
    "ment",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "ed",
    "es",
    "s",
    "ly",
)
_IDENT = re.compile(r"\b[A-Za-z_][\w.-]*[_.-][\w.-]+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z]{2,}\w*\b")


def stem(word: str) -> str:
    """Strip one common English suffix, keeping at least four letters (a prefix stem)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class QuerySignals:
    """What a query asks about, in the forms the rankers use."""

    text: str
    tokens: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    short_terms: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.terms or self.short_terms or self.exact)


def query_signals(text: str, max_tokens: int = 160) -> QuerySignals:
    """Tokens, ranking terms and exact terms of a query; safe for any input text."""
    text = normalize_text(text[:20_000])
    toks = tokens(text, max_tokens)
    terms: dict[str, None] = {}
    short: dict[str, None] = {}
    for word in latin_words(text):
        if word in QUERY_STOPWORDS or word.isdigit():
            continue
        s = stem(word)
        (terms if len(s) >= 3 else short).setdefault(s, None)
    for run in cjk_runs(text):
        # every 3-character window is a trigram the index can serve; Chinese words are
        # mostly two characters, so bigrams go to the (bounded) substring scan too
        for i in range(len(run) - 2):
            terms.setdefault(run[i : i + 3], None)
        for i in range(max(1, len(run) - 1)):
            short.setdefault(run[i : i + 2], None)
    nums = tuple(dict.fromkeys(n.raw for n in numbers(text)))
    found_paths = tuple(paths(text))
    quotes = tuple(quoted_phrases(text))
    idents = tuple(dict.fromkeys(m.group() for m in _IDENT.finditer(text)))
    exact = tuple(dict.fromkeys([*quotes, *found_paths, *nums, *idents]))
    return QuerySignals(
        text=text,
        tokens=tuple(toks),
        terms=tuple(list(terms)[:max_tokens]),
        short_terms=tuple(list(short)[:max_tokens]),
        exact=exact,
        numbers=nums,
        paths=found_paths,
        quotes=quotes,
    )


def selective(terms: tuple[str, ...], limit: int) -> tuple[str, ...]:
    """At most ``limit`` of ``terms`` for a ranked search: the longest ones, in query order.

    A long message (a pasted log, a page of prose) gives a hundred terms or more, and a
    ranked full-text search costs what every term matches. Longer words are rarer
    (Zipf's law of abbreviation), so they carry most of the ranking; the same rule on
    every backend keeps the ranks the same. A short query keeps all its terms.
    """
    if len(terms) <= limit:
        return terms
    keep = set(sorted(terms, key=lambda t: (-len(t), terms.index(t)))[:limit])
    return tuple(t for t in terms if t in keep)
