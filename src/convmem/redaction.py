"""Secret redaction: two rule sets in one format, scanned in time linear in the text.

The rules are data. ``data/gitleaks.toml`` is the default rule set of the gitleaks
project (MIT licence, ``data/gitleaks.LICENSE``), vendored unchanged so that it can
be refreshed by copying a newer file over it; ``data/secret_rules.toml`` holds
convmem's own rules in the same format (credentials in URLs, ``KEY=value`` lines of
env dumps, authorization headers, private key blocks, JSON credential fields). A
found secret is replaced by ``[redacted:<rule id>]``; when a rule names the part
that is secret (its first group), the rest (``API_KEY=``) stays readable.

gitleaks writes its patterns for Go's linear-time engine. Python's ``re``
backtracks, so a pattern that is harmless there can be quadratic here (a long run
of token characters with many places a match could start). Three things keep a
scan linear:

* the text is capped before scanning (the caller scans only what it stores);
* a rule runs only where one of its keywords occurs, within a window of
  :data:`BEFORE` characters before and the rule's ``maxLength`` after it;
* every unbounded quantifier (``+``, ``*``, ``{n,}``) is bounded by ``maxLength``
  when a pattern is loaded, so no attempt can scan further than a window.

Loading translates the few Go constructs Python lacks (a ``(?i)`` in mid-pattern,
POSIX classes, ``\\z``). Rules that need a file path (``path``) and gitleaks'
generic rule (replaced by the entropy-checked assignment rules here) are left out;
a rule that still fails to compile is skipped and listed by :func:`skipped_rules`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

#: Characters scanned before a keyword (gitleaks' prefixes are at most 50 long).
BEFORE = 80
#: Longest match a rule may have unless it says otherwise.
DEFAULT_MAX_LENGTH = 1024
#: gitleaks rules left out: its generic rule (convmem's assignment rules replace it).
EXCLUDED = frozenset({"generic-api-key"})
DATA_FILES = ("secret_rules.toml", "gitleaks.toml")

_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "digit": "0-9",
    "xdigit": "0-9A-Fa-f",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "word": "0-9A-Za-z_",
    "punct": "!-/:-@\\[-`{-~",
}
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass
class Rule:
    """One rule; its patterns are compiled the first time a keyword triggers it (a hook
    process that sees no secret compiles none)."""

    id: str
    source: str
    flags: int
    keywords: tuple[str, ...]
    go_syntax: bool = False
    group: int | None = None
    entropy: float = 0.0
    max_length: int = DEFAULT_MAX_LENGTH
    allow_sources: tuple[str, ...] = ()
    stopwords: tuple[str, ...] = ()
    _pattern: re.Pattern[str] | None = None
    _allow: tuple[re.Pattern[str], ...] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._pattern is None:
            source, flags = self.source, self.flags
            if self.go_syntax:
                source, ignore_case = translate(source, self.max_length or DEFAULT_MAX_LENGTH)
                flags |= re.IGNORECASE if ignore_case else 0
            self._pattern = re.compile(source, flags)
            if self.group is None:
                self.group = 1 if self._pattern.groups else 0
        return self._pattern

    def allowed(self, secret: str) -> bool:
        low = secret.lower()
        if any(word in low for word in self.stopwords):
            return True
        if self._allow is None:
            sources = self.allow_sources
            if self.go_syntax:
                sources = tuple(translate(p, 256)[0] for p in sources)
            self._allow = tuple(re.compile(p) for p in sources)
        return any(p.search(secret) for p in self._allow)


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: keyword -> indexes of the rules it triggers
    by_keyword: dict[str, list[int]] = field(default_factory=dict)
    #: rules whose pattern did not compile
    disabled: set[str] = field(default_factory=set)
    #: the keyword finder of :meth:`triggered`, compiled on first use
    _finder: tuple[re.Pattern[str], dict[str, list[int]]] | None = field(
        default=None, repr=False, compare=False
    )

    def triggered(self, low: str) -> set[int]:
        """The rules whose keywords occur in ``low`` (the text, ASCII lower-cased).

        One pass over the text, not one per keyword: a pattern of every keyword as a
        trie, in a lookahead so that each position is tried, finds the longest keyword
        starting there; the shorter ones starting there are its prefixes.
        """
        if not self.by_keyword:
            return set()
        if self._finder is None:
            keywords = list(self.by_keyword)
            rules = {
                k: sorted({i for p in keywords if k.startswith(p) for i in self.by_keyword[p]})
                for k in keywords
            }
            self._finder = (re.compile(f"(?=({_trie(keywords)}))"), rules)
        finder, rules = self._finder
        out: set[int] = set()
        for found in finder.finditer(low):
            out.update(rules[found.group(1)])
        return out


def _trie(words: list[str]) -> str:
    """A pattern matching each of ``words`` (none empty), the longest first where
    one is a prefix of another."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = "(?:" + "|".join(branches) + ")"
        return body + "?" if "" in node else body

    return emit(root)


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (gitleaks' measure)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


# --- loading ----------------------------------------------------------------------------


def translate(pattern: str, limit: int) -> tuple[str, bool]:
    """A Go (RE2) pattern as Python: ``(text, ignore_case)``.

    A leading ``(?i)`` becomes the flag; one in mid-pattern applies to the rest of
    its group, as in Go. POSIX classes become ranges, ``\\z`` becomes ``\\Z``, and
    unbounded quantifiers are bounded by ``limit``.
    """
    ignore_case = False
    if pattern.startswith("(?i)"):
        ignore_case, pattern = True, pattern[4:]
    out: list[str] = []
    closers = [0]  # per open group (the pattern itself first): ")" to add when it closes
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            out.append("\\Z" if nxt == "z" else pattern[i : i + 2])
            i += 2
            continue
        if ch == "[":
            j = i + 1
            body = "["
            if j < n and pattern[j] == "^":
                body += "^"
                j += 1
            if j < n and pattern[j] == "]":
                body += "\\]"
                j += 1
            while j < n and pattern[j] != "]":
                if pattern[j] == "\\" and j + 1 < n:
                    body += pattern[j : j + 2]
                    j += 2
                    continue
                posix = re.match(r"\[:(\w+):\]", pattern[j:])
                if posix and posix.group(1) in _POSIX:
                    body += _POSIX[posix.group(1)]
                    j += posix.end()
                    continue
                if pattern[j] == "[":
                    body += "\\["
                else:
                    body += pattern[j]
                j += 1
            out.append(body + "]")
            i = j + 1
            continue
        if pattern.startswith("(?i)", i):
            out.append("(?i:")  # to the end of the enclosing group
            closers[-1] += 1
            i += 4
            continue
        if ch == "(":
            closers.append(0)
            out.append(ch)
            i += 1
            continue
        if ch == ")":
            extra = closers.pop() if len(closers) > 1 else 0
            out.append(")" * extra + ")")
            i += 1
            continue
        if ch in "+*":
            low = "1" if ch == "+" else "0"
            out.append(f"{{{low},{limit}}}")
            i += 1
            continue
        if ch == "{":
            bound = re.match(r"\{(\d+),\}", pattern[i:])
            if bound:
                low_n = int(bound.group(1))
                out.append(f"{{{low_n},{max(limit, low_n)}}}")
                i += bound.end()
                continue
        out.append(ch)
        i += 1
    out.append(")" * closers[0])
    return "".join(out), ignore_case


def _rule(raw: dict[str, Any], source: str) -> Rule:
    max_length = int(raw.get("maxLength", DEFAULT_MAX_LENGTH))
    flags = 0
    if "s" in str(raw.get("flags", "")):
        flags |= re.DOTALL
    allow: list[str] = []
    stopwords: list[str] = []
    for entry in raw.get("allowlists", ()):
        if entry.get("paths") or entry.get("regexTarget") not in (None, "secret"):
            continue  # about file paths, or the whole line: not applicable to a message
        if entry.get("condition", "OR") == "AND" and len(entry) > 2:
            continue
        allow += [str(item) for item in entry.get("regexes", ())]
        stopwords += [str(w).lower() for w in entry.get("stopwords", ())]
    group = raw.get("secretGroup")
    return Rule(
        id=str(raw["id"]),
        source=str(raw["regex"]),
        flags=flags,
        go_syntax=source == "gitleaks.toml",
        keywords=tuple(str(k).lower() for k in raw.get("keywords", ())),
        group=None if group is None else int(group),
        entropy=float(raw.get("entropy", 0.0)),
        max_length=max_length,
        allow_sources=tuple(allow),
        stopwords=tuple(stopwords),
    )


def compile_all() -> None:
    """Compile every rule now; one that fails is dropped and listed by
    :func:`skipped_rules` (tests and the benchmark call this; scanning compiles lazily)."""
    rules = rule_set()
    for rule in list(rules.rules):
        try:
            _ = rule.pattern
            rule.allowed("")
        except (re.error, ValueError, OverflowError) as exc:
            rules.skipped.append((rule.id, str(exc)))
            rules.disabled.add(rule.id)


@lru_cache(maxsize=1)
def rule_set() -> RuleSet:
    """Both rule files, compiled once per process."""
    import tomllib
    from importlib.resources import files

    result = RuleSet()
    seen: set[str] = set()
    for name in DATA_FILES:
        data = tomllib.loads(files("convmem.data").joinpath(name).read_text("utf-8"))
        for raw in data.get("rules", ()):
            rule_id = str(raw.get("id", "?"))
            if rule_id in EXCLUDED or "regex" not in raw or raw.get("path"):
                continue
            if rule_id in seen or not raw.get("keywords"):
                continue  # convmem's own rule of that name wins; no keyword: no trigger
            rule = _rule(raw, name)
            seen.add(rule_id)
            index = len(result.rules)
            result.rules.append(rule)
            for keyword in rule.keywords:
                result.by_keyword.setdefault(keyword, []).append(index)
    return result


def skipped_rules() -> list[tuple[str, str]]:
    """Rules that could not be used, with why (a test keeps this list short)."""
    compile_all()
    return list(rule_set().skipped)


# --- scanning -----------------------------------------------------------------------------


def _windows(low: str, keywords: tuple[str, ...], after: int, size: int) -> list[tuple[int, int]]:
    """Merged spans around every occurrence of the rule's keywords."""
    spans: list[tuple[int, int]] = []
    for keyword in keywords:
        start = low.find(keyword)
        while start >= 0:
            spans.append((max(0, start - BEFORE), min(size, start + len(keyword) + after)))
            start = low.find(keyword, start + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, rule id)`` of every secret, leftmost first, without overlaps."""
    rules = rule_set()
    low = text.translate(_ASCII_LOWER)  # ASCII only: positions stay the same
    triggered = rules.triggered(low)
    found: list[tuple[int, int, int, str]] = []
    size = len(text)
    for index in sorted(triggered):
        rule = rules.rules[index]
        if rule.id in rules.disabled:
            continue
        try:
            pattern = rule.pattern
        except re.error as exc:  # a rule file Python cannot read: drop it, keep scanning
            rules.skipped.append((rule.id, str(exc)))
            rules.disabled.add(rule.id)
            continue
        group = rule.group or 0
        if rule.max_length <= 0:
            spans = [(0, size)]
        else:
            spans = _windows(low, rule.keywords, rule.max_length, size)
        for lo, hi in spans:
            for match in pattern.finditer(text, lo, hi):
                start, end = match.span(group)
                if start < 0 or end <= start:
                    continue
                secret = match.group(group)
                if rule.entropy and shannon_entropy(secret) < rule.entropy:
                    continue
                if rule.allowed(secret):
                    continue
                found.append((start, -end, index, rule.id))
    # leftmost, then longest, then the rule listed first (convmem's own before gitleaks')
    found.sort()
    kept: list[tuple[int, int, str]] = []
    for start, neg_end, _, rule_id in found:
        end = -neg_end
        if kept and start < kept[-1][1]:
            if end > kept[-1][1]:  # overlapping finds: cover both
                kept[-1] = (kept[-1][0], end, kept[-1][2])
            continue
        kept.append((start, end, rule_id))
    return kept


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[redacted:<rule id>]``."""
    found = find_secrets(text)
    if not found:
        return text
    parts: list[str] = []
    last = 0
    for start, end, rule_id in found:
        parts.append(text[last:start])
        parts.append(f"[redacted:{rule_id}]")
        last = end
    parts.append(text[last:])
    return "".join(parts)
