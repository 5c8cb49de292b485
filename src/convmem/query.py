"""What a query asks about: content terms, short terms, exact terms, numbers, paths.

The step's task text (usually the person's latest message) becomes
:class:`QuerySignals`, the forms the rankers in :mod:`convmem.retrieval` use. Any text
is safe: it is only ever read, never turned into query syntax.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from convmem.core.stopwords import QUERY_STOPWORDS, ZH_FRAME_CHARS, ZH_FRAME_PAIRS
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
#: Scripts written without spaces between words (Thai, Lao, Myanmar, Khmer).
_UNSPACED = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")
_IDENT = re.compile(r"\b[A-Za-z_][\w.-]*[_.-][\w.-]+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z]{2,}\w*\b")


@lru_cache(maxsize=1 << 14)  # a query's hundred words each try sixteen suffixes
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
    #: The terms as the word indexes hold them: the Latin ``terms`` and the CJK pairs of
    #: ``short_terms`` that are not the question's frame (see :func:`content_terms`).
    words: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.terms or self.short_terms or self.exact)


#: A query that gives work to do and asks nothing of the past: "write the export script
#: now", "fix the failing test", "帮我把脚本写完" (not "remind me what we decided", "what
#: port did we pick?", "写的时候用之前说的格式吗").
_TASK = re.compile(
    r"^\W*(?:(?:ok|okay|now|so|then|please|pls|alright|great|cool|thanks|go ahead and"
    r"|let's|lets)[\s,!.]+)*"
    r"(?:write|implement|add|fix|create|build|make|run|refactor|update|generate|draft|deploy"
    r"|rename|remove|delete|convert|set up|install|start|continue|go on|finish|rewrite|clean up"
    r"|move|split|merge|test|debug|format|translate|summari[sz]e|plan|book|order)"
    # with what to do it to ("start date for the lease" is a question in few words)
    r"\s+(?:me\s+|us\s+)?(?:up\s+|out\s+)?(?:the|a|an|it|this|that|these|those|some|all"
    r"|everything)\b"
    r"|^\W*(?:continue|go on|proceed|keep going)\W*$"
    r"|^\W*(?:请|麻烦)?(?:帮我|给我)?(?:把[^，,。？?]{1,12}?)?"
    r"(?:写|实现|加|修|改|生成|跑|部署|重构|继续|开始|翻译|总结|整理|订|安排)",
    re.IGNORECASE,
)
_ASKS_OF_THE_PAST = re.compile(
    r"[?？]|\b(?:remind|recall|remember|earlier|before|said|told|decided|agreed|we picked"
    r"|mentioned|talked|discussed|gave|usual|last time|yesterday|what|which|when|where|who|why"
    r"|how|i|we|my|our)\b|之前|刚才|上次|说过|决定|记得|什么|哪|吗|呢|多少|几|定的|选好|说的"
    # (the person named in a task points at what they said: "add my allergies to the form";
    # 帮我 and 给我 only ask)
    r"|(?<![帮给])我",
    re.IGNORECASE,
)


def is_task(text: str) -> bool:
    """Whether a query only gives work to do: memory that does not bear on it is no gap
    in what the person said, so no "insufficient evidence" notice is owed."""
    return bool(_TASK.search(text)) and not _ASKS_OF_THE_PAST.search(text)


def query_signals(text: str, max_tokens: int = 160) -> QuerySignals:
    """Tokens, ranking terms and exact terms of a query; safe for any input text."""
    text = normalize_text(text[:20_000])
    words = latin_words(text)
    toks = tokens(text, max_tokens, words)
    terms: dict[str, None] = {}
    short: dict[str, None] = {}
    for word in words:
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
    latin = [t for t in terms if not cjk_runs(t)]
    pairs = [t for t in content_terms(tuple(short)) if cjk_pair(t)]
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
        words=tuple([*latin, *pairs][:max_tokens]),
    )


def _frame(term: str) -> bool:
    """A CJK window of a query that is part of its question frame, not of what it asks
    about (:data:`~convmem.core.stopwords.ZH_FRAME_CHARS`)."""
    return term in ZH_FRAME_PAIRS or not ZH_FRAME_CHARS.isdisjoint(term)


def content_terms(short_terms: tuple[str, ...]) -> tuple[str, ...]:
    """A query's terms below trigram size without its Chinese question frame (什么, 是什,
    哪里 would match every question asked before); all of them when nothing else is left
    ("哪里" alone)."""
    return tuple(t for t in short_terms if not _frame(t)) or short_terms


@lru_cache(maxsize=1 << 16)
def word_stem(word: str) -> str:
    """The one form a word and its inflections take in the word index.

    :func:`stem` strips one suffix and is not symmetric: ``cache`` keeps its ``e``
    that ``caches`` and ``cached`` lose (``cach``), ``running`` keeps a doubled
    consonant (``runn``) that ``run`` lacks, and a short root keeps every suffix
    (``hiking``, ``hiked``, ``loved``). Each step here strips what :func:`stem`
    strips, or else drops a final ``e``, ``i`` or ``y`` (five letters or more:
    ``company`` and ``companies`` meet), a plural ``s`` (four or more, not ``ss``)
    or a doubled final consonant other than l, s, z; then an English word of ASCII
    letters goes through the Porter2 stemmer (Snowball's English), which knows short
    roots (``hiking``, ``hikes`` and ``hike`` are all ``hike``). Steps repeat until
    nothing changes. The result is a fixed point, and it is the same for a word and
    for its :func:`stem` (whose first step is the same), so a query's stems and the
    index's words meet without a prefix search (whose cost grows with the whole store).
    """
    for _ in range(2 * len(word) + 2):  # every step but a Porter2 y -> i shortens the word
        nxt = stem(word)
        if nxt == word:
            nxt = _trim(word)
        if nxt.isascii() and nxt.isalpha():
            root = _porter2(nxt)
            nxt = root if len(root) >= 3 else nxt  # "its" stays a word of three
        if nxt == word:
            break
        word = nxt
    return word


_stemmers = threading.local()


def _porter2(word: str) -> str:
    """``word`` through Snowball's English stemmer (one per thread: it is not safe
    to share)."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        import Stemmer  # PyStemmer: Snowball's C stemmers

        stemmer = _stemmers.english = Stemmer.Stemmer("english")
    return str(stemmer.stemWord(word))


def _trim(word: str) -> str:
    n, last = len(word), word[-1:]
    if n >= 5 and last in "eiy":
        return word[:-1]
    if n >= 4 and last == "s" and word[-2] != "s":
        return word[:-1]
    if n >= 4 and last == word[-2] and last.isalpha() and last not in "aeiouylsz":
        return word[:-1]
    return word


def word_key(term: str) -> str:
    """A query term or an indexed word as the word index holds it: no apostrophes.

    What is left is letters and digits only, one token for FTS5's ``ascii`` tokenizer
    (which splits on ASCII punctuation and folds nothing else), so SQLite's index and
    PostgreSQL's arrays see the same words.
    """
    return term.replace("'", "")


def index_words(text: str) -> list[str]:
    """The words of a message the word index holds, in order with repeats.

    The mirror of :attr:`QuerySignals.words`: lower-cased non-CJK words that are not
    stopwords or numbers, three characters or more, each as its :func:`word_stem`,
    so that a term finds the word's inflections (``cache``, ``caches`` and
    ``caching`` are all held as ``cach``); then every two-character window of each
    CJK run, as Chinese words are mostly two characters (连接池 holds 连接 and 接池).
    """
    out: list[str] = []
    for word in latin_words(text):
        if word in QUERY_STOPWORDS or word.isdigit():
            continue
        # stemmed before the apostrophes go, as a query's term is (ssh'ing -> ssh)
        key = word_key(stem(word))
        if len(key) >= 3:
            out.append(word_stem(key))
    for run in cjk_runs(text):
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


#: Joins a session's tag to a word in the session-tagged column of the word indexes: not
#: a letter or digit, so no word of a message holds it, and not ASCII, so FTS5's
#: ``ascii`` tokenizer keeps the tagged word one token.
TAG_MARK = "\u00a7"


@lru_cache(maxsize=256)
def session_tag(session_id: str | bytes) -> str:
    """A short fixed-length tag of a session id (12 hex digits and :data:`TAG_MARK`),
    the prefix of its words in the word indexes' ``session_words`` column.

    Each session's words are then terms of their own, so FTS5 reads and counts one
    session's doclists, not the store's. Two sessions whose tags collide share terms:
    their words count in each other's statistics, never in which rows a search of a
    session returns (it still bounds them by session). SQL passes the id as bytes.
    """
    raw = (
        session_id if isinstance(session_id, bytes) else session_id.encode("utf-8", "surrogatepass")
    )
    return hashlib.blake2b(raw, digest_size=6).hexdigest() + TAG_MARK


def session_words(session_id: str | bytes, words: Iterable[str]) -> list[str]:
    """``words`` as the session-tagged column holds them for ``session_id``."""
    tag = session_tag(session_id)
    return [tag + word for word in words]


def word_terms(terms: Iterable[str]) -> list[str] | None:
    """``terms`` as the words the word index holds (:func:`word_stem`), or None when
    one of them is not a word.

    A CJK pair is held as it is. A longer CJK term (or anything :func:`index_words`
    would not produce), or a word of a script written without spaces between words
    (Thai, Lao, Khmer, Myanmar: a "word" there is a whole phrase), needs the substring
    index; the caller then keeps that for the whole query. A Latin term shorter than
    three characters without its apostrophes is left out.
    """
    out: list[str] = []
    for term in terms:
        key = word_key(term.casefold())
        if key.isascii():  # no CJK or unspaced script to look for (most terms)
            if not key.isalnum():
                return None
        elif cjk_pair(key):
            out.append(key)
            continue
        elif not key.isalnum() or cjk_runs(key) or _UNSPACED.search(key):
            return None
        if len(key) >= 3:  # "it's" -> "its": too short to rank, as for a substring
            out.append(word_stem(key))  # word_form(term)
    return list(dict.fromkeys(out))


def cjk_pair(term: str) -> bool:
    """Two CJK characters: a term the word indexes hold (see :func:`index_words`)."""
    return len(term) == 2 and cjk_runs(term) == [term]


def searchable(terms: Iterable[str]) -> list[str]:
    """The terms a ranked search can serve: three characters or more (a trigram's
    size), or a CJK pair, which only the word indexes serve."""
    return [t for t in terms if len(t) >= 3 or cjk_pair(t)]


def substrings(terms: Iterable[str]) -> list[str]:
    """The terms the trigram index serves: three characters or more (not a CJK pair)."""
    return [t for t in terms if len(t) >= 3]


def word_form(term: str) -> str:
    """A query's Latin term as the word index holds it (whatever its length)."""
    return word_stem(word_key(term.casefold()))


def selective(terms: tuple[str, ...], limit: int) -> tuple[str, ...]:
    """At most ``limit`` of ``terms`` for a ranked search: the longest ones, in query order.

    A long message (a pasted log, a page of prose) gives a hundred terms or more, and a
    ranked full-text search costs what every term matches. Longer words are rarer
    (Zipf's law of abbreviation), so they carry most of the ranking; the same rule on
    every backend keeps the ranks the same. A short query keeps all its terms.
    """
    if len(terms) <= limit:
        return terms
    first: dict[str, int] = {}
    for n, term in enumerate(terms):
        first.setdefault(term, n)  # terms.index, without a scan per term
    keep = set(sorted(terms, key=lambda t: (-len(t), first[t]))[:limit])
    return tuple(t for t in terms if t in keep)
