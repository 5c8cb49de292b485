"""Asking one text about many case-insensitive cue patterns, faster on ASCII text.

Python's ``re`` pays for ``IGNORECASE`` at every position it tries: a pattern such as
``\\b(?:must|have to|...)`` runs three to four times slower with the flag than without
it. On ASCII text the answer is the same when the text is lower-cased first and the
flag dropped, provided nothing in the pattern accepts an upper-case letter, or a
character that case folding pairs with an ASCII letter (the Kelvin sign with ``k``):
lower-casing ASCII keeps every position, and each letter the pattern accepts is then
met in the one case it names. :func:`case_sensitive_twin` checks that on the parsed
pattern; a pattern that fails it, and any text that is not ASCII, is searched as
written.
"""

from __future__ import annotations

import re
from typing import Any

#: Characters outside ASCII that ``re``'s case folding pairs with an ASCII letter
#: (İ, ı, ſ, the Kelvin sign); a test checks the list against every code point.
FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f\u212a")

#: Twins by the id of their pattern (a pattern's own hash reads its whole compiled
#: program), with the pattern kept so that its id cannot be reused.
_twins: dict[int, tuple[re.Pattern[str], re.Pattern[str] | None]] = {}


def case_sensitive_twin(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` without ``IGNORECASE``, to search lower-cased ASCII text with the
    same answers (None when they could differ, or without the flag: nothing to gain)."""
    known = _twins.get(id(pattern))
    if known is not None:
        return known[1]
    twin = None
    if pattern.flags & re.IGNORECASE:
        from re import _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern.pattern, pattern.flags)
        if _lower_only(parsed.data):
            twin = re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)
    _twins[id(pattern)] = (pattern, twin)
    return twin


def _cased(lo: int, hi: int) -> bool:
    """Whether a code point in ``lo..hi`` is an upper-case ASCII letter or folds to one."""
    return (lo <= ord("Z") and hi >= ord("A")) or any(lo <= ord(c) <= hi for c in FOLDS_TO_ASCII)


def _lower_only(items: list[tuple[Any, Any]]) -> bool:
    """No part of a parsed pattern accepts a cased character (see the module)."""
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        if op in (c.LITERAL, c.NOT_LITERAL):
            if _cased(av, av):
                return False
        elif op is c.IN:
            for kind, value in av:
                if kind is c.LITERAL and _cased(value, value):
                    return False
                if kind is c.RANGE and _cased(*value):
                    return False
        elif op is c.BRANCH:
            if not all(_lower_only(branch.data) for branch in av[1]):
                return False
        elif op is c.SUBPATTERN:
            _, _, del_flags, sub = av
            if del_flags & re.IGNORECASE or not _lower_only(sub.data):
                return False  # (?-i:...) matches its part by case
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            if not _lower_only(av[2].data):
                return False
        elif op in (c.ASSERT, c.ASSERT_NOT):
            if not _lower_only(av[1].data):
                return False
        elif op is c.ATOMIC_GROUP:
            if not _lower_only(av.data):
                return False
        elif op is c.GROUPREF_EXISTS:
            _, yes, no = av
            if not _lower_only(yes.data) or (no is not None and not _lower_only(no.data)):
                return False
        elif op not in (c.AT, c.ANY, c.GROUPREF, c.CATEGORY):
            return False  # something this check does not know: keep the flag
    return True


class CueText:
    """One text, asked whether each of many patterns occurs in it (``search``) or
    starts it (``match``): the same answers as the patterns' own methods. Meant for
    patterns compiled once, at import: each one is remembered with its twin."""

    __slots__ = ("lowered", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lowered = text.lower() if text.isascii() else None

    def _pair(self, pattern: re.Pattern[str]) -> tuple[re.Pattern[str], str]:
        """The pattern to run and the text to run it on."""
        if self.lowered is not None:
            twin = case_sensitive_twin(pattern)
            if twin is not None:
                return twin, self.lowered
        return pattern, self.text

    def search(self, pattern: re.Pattern[str]) -> bool:
        run, text = self._pair(pattern)
        return run.search(text) is not None

    def match(self, pattern: re.Pattern[str]) -> bool:
        run, text = self._pair(pattern)
        return run.match(text) is not None

    def find(self, pattern: re.Pattern[str], group: int | str = 0) -> tuple[int, int] | None:
        """The span of ``group`` in the first occurrence of ``pattern`` (None: none)."""
        run, text = self._pair(pattern)
        found = run.search(text)
        return None if found is None else found.span(group)

    def spans(self, pattern: re.Pattern[str], group: int | str = 0) -> list[tuple[int, int, int]]:
        """Where ``pattern`` occurs, as ``finditer`` finds it: each occurrence's start
        and the span of ``group`` in it (read the text from ``self.text``)."""
        run, text = self._pair(pattern)
        return [(m.start(), *m.span(group)) for m in run.finditer(text)]
