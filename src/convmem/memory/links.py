"""Which earlier item a new clause corrects, contradicts or withdraws.

Given a :class:`~convmem.memory.candidates.Candidate` and the store, :func:`relate`
looks at a bounded set of earlier user items — the newest of the same subject key (an indexed
lookup), full-text matches of the subject, the old value it rejects and the names
it mentions, and the newest few — and returns at most one :class:`Link`:

* ``supersedes``: the clause is a correction (a cue such as "actually", "make it",
  "改成", or an old value it rejects by name) of an item about the same thing;
* ``disputes``: no correction cue, but the same subject with a different value
  (a different number in the same unit under the same conditions, or another
  choice of the same kind of thing);
* ``retracts``: the person withdraws an earlier item ("forget the parking thing").

Only the item the clause is about is touched: in "keep p95 under 200 ms and the
timeout at 30 s", correcting the timeout leaves the p95 item in force, because
each value was stored as its own clause. The work per clause is bounded whatever
the session's length.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from convmem.core.dates import WEEKDAYS
from convmem.core.numbers import find_numbers
from convmem.memory import subjects
from convmem.memory.act_cues import SETTLED_CHOICE, SHARE_OF_COST, THEIR_ASK
from convmem.memory.candidates import Candidate
from convmem.memory.models import MemoryItem, Scope
from convmem.memory.segment import MISSPOKE, SLIPPED

if TYPE_CHECKING:
    from convmem.memory.store import MemoryStore

#: Earlier items considered per clause: the newest ones, and the newest holding its
#: subject or each of its words (a lookup, not a ranking of every match).
NEWEST = 30
MATCHES = 30
COMPARABLE = ("fact", "constraint", "decision", "preference")
#: A decision can settle an open question; nothing else links to one.
SETTLES = ("open_question",)
STATUSES = ("active", "disputed")


@dataclass(frozen=True)
class Link:
    relation: str  # supersedes | disputes | retracts
    target: MemoryItem
    why: str


def _pool(
    store: MemoryStore,
    session_id: str,
    cand: Candidate,
    seq: int,
    same_event: Sequence[MemoryItem],
    others: Sequence[str] = (),
    newest: Sequence[MemoryItem] | None = None,
) -> list[MemoryItem]:
    found: dict[str, MemoryItem] = {}
    # subject and word lookups reach the project's other sessions too: a correction in a
    # later session supersedes the earlier session's item
    where = Scope(session_id, (session_id, *others)) if others else session_id
    if newest is None:
        newest = store.items(session_id, STATUSES, newest=NEWEST)
    for item in newest:
        found[item.id] = item
    if cand.topic:
        for item in store.items_by_topic(where, cand.topic, STATUSES, newest=MATCHES):
            found.setdefault(item.id, item)
    words = set(subjects.subject_words(cand.topic)) | {
        w for w in (*cand.reading.rejected, *cand.reading.names) if len(w) >= 3
    }
    if cand.reading.retract_target:
        words |= {w for w in cand.reading.retract_target.split() if len(w) >= 3}
    # a CJK pair is a word of the index too, but one pair names items all over a
    # Chinese session (CrossWOZ's replay took half as long again, and no labelled
    # link was gained): the topic lookup above finds the items sharing a subject
    terms = sorted(w for w in words if len(w) >= 3)
    for item in store.items_with_terms(where, terms, MATCHES, STATUSES):
        found.setdefault(item.id, item)
    for item in same_event:
        found[item.id] = item
    kinds = COMPARABLE + (SETTLES if cand.kind == "decision" else ())
    earlier = [
        i
        for i in found.values()
        if i.evidence_type == "user_explicit"
        and i.kind in kinds
        and (
            i.session_id != session_id
            or (i.derived_from_seq or 0) < seq
            or i.id in {s.id for s in same_event}
        )
    ]
    order = {item.id: n for n, item in enumerate(same_event)}
    # oldest first: the other sessions, least recently active first, then this session
    age = {sid: -n for n, sid in enumerate(others, start=1)} | {session_id: 0}
    return sorted(
        earlier,
        key=lambda i: (
            age.get(i.session_id, -len(others) - 1),
            (i.derived_from_seq or 0),
            order.get(i.id, -1),
            i.id,
        ),
    )


#: Units of one measure under different names: 512Mi and then 1Gi is one limit changed.
_BYTES = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
_BYTES |= {"KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40}


def _counts_the_same(units: set[str], text: str, other_units: set[str], other: str) -> bool:
    """Whether a count in 个 on one side counts the thing the other side's unit names."""
    if "个" in units:
        return any(u != "个" and u in text.casefold() for u in other_units)
    if "个" in other_units:
        return any(u != "个" and u in other.casefold() for u in units)
    return False


def _units(numbers: Sequence[dict[str, object]]) -> set[str]:
    return {"bytes" if n["unit"] in _BYTES else str(n["unit"]) for n in numbers if n.get("unit")}


def _values(numbers: Sequence[dict[str, object]]) -> set[object]:
    return {(n.get("value"), n.get("high")) for n in numbers}


def _has_version(numbers: Sequence[dict[str, object]]) -> bool:
    return any(n.get("type") == "version" for n in numbers)


def _versioned(content: str, numbers: Sequence[dict[str, object]]) -> set[str]:
    """The words just before each version ("go 1.22", "node 18", "python3.11"): what
    it is a version of, when no known tool is named."""
    out = set()
    for n in numbers:
        raw = str(n.get("raw"))
        if n.get("type") == "version" and raw in content:
            before = _WORD_BEFORE.search(content, 0, content.index(raw))
            if before and before[1].lower() not in _NOT_A_TOOL:
                out.add(before[1].lower())  # (not "to v5", "the v3 design", "is 2.4.1")
    return out


_WORD_BEFORE = re.compile(r"([A-Za-z][\w.+-]*)\s*v?$")


def _owner(content: str, numbers: Sequence[dict[str, object]]) -> str:
    """The word the first value hangs on, past the verb that sets it: "limit" in
    "内存limit帮我改成2Gi", "request" in "request也改成1.5Gi", "timeout" in "bump the
    timeout to 30s" ("" when there is none to read)."""
    raw = str(numbers[0].get("raw")) if numbers else ""
    if not raw or raw not in content:
        return ""
    at = content.index(raw)
    # (what the value hangs on is just before it: the search reads no further back)
    word = _WORD_BEFORE.search(_SETTING_VERB.sub("", content[max(0, at - _OWNER_REACH) : at]))
    return word[1].lower() if word and word[1].lower() not in _NOT_AN_OWNER else ""


def _value_of_another(owner: str, item: MemoryItem) -> bool:
    """``item`` names ``owner``, but its value hangs on another word: "内存limit帮我改成2Gi
    request先不动" holds the limit's value, which "request也改成1.5Gi" leaves alone."""
    if not owner or owner not in _TOKEN.findall(item.content.lower()):
        return False
    theirs = _owner(item.content, item.numbers)
    return bool(theirs) and theirs != owner


#: What sits between a setting's name and its new value: the verb and its particles
#: (改成, 也调到, "to", "is now", "=").
_SETTING_VERB = re.compile(
    r"(?:[\u4e00-\u9fff\s:=]|\b(?:to|at|is|now|be|should|set|bumped|raised|lowered"
    r"|changed|moved|goes|went|up|down)\b)+$",
    re.IGNORECASE,
)
_OWNER_REACH = 60
_NOT_A_TOOL = frozenset(
    "to the a an is are was were be at on in of from with and or v version now".split()
)
_NOT_AN_OWNER = _NOT_A_TOOL | frozenset(
    "it this that them make bump set change let's lets please just also too maybe then so"
    " ok okay up down".split()
)


def _types(numbers: Sequence[dict[str, object]]) -> set[str]:
    """The kinds of measure the numbers are. A count ("quantity") is a measure only with
    its unit (4.5 分 and 9000 tokens are two things), which ``_units`` compares; a day of
    the week is not the same kind of date as a day of the month."""
    return {
        "weekday" if n.get("value") in WEEKDAYS else str(n["type"])
        for n in numbers
        if n.get("type") not in ("number", "version", "quantity")
    }


#: Two values this close (the larger over the smaller) can be one value put right:
#: 11 people and then 13, $2,600 and then $2,900, 14 lbs and then 15.5.
NEAR = 1.5


def _magnitudes(numbers: Sequence[dict[str, object]]) -> list[float]:
    out = []
    for n in numbers:
        for key in ("value", "high"):
            v = n.get(key)
            if isinstance(v, int | float) and not isinstance(v, bool) and v > 0:
                out.append(float(v) * _BYTES.get(str(n.get("unit")), 1))
    return out


def _small_counts(a: Sequence[dict[str, object]], b: Sequence[dict[str, object]]) -> bool:
    """Both sides hold a small whole count ("make it 3" after "retry count should be 5"),
    where a ratio says little of whether one puts the other right."""

    def small(numbers: Sequence[dict[str, object]]) -> bool:
        return _counts(numbers) and any(
            isinstance(v, int | float) and 0 < v <= 12 and float(v).is_integer()
            for v in (n.get("value") for n in numbers)
        )

    return small(a) and small(b)


def _uncounted(numbers: Sequence[dict[str, object]]) -> list[dict[str, object]]:
    """Counts of things read as bare counts ("3 attempts" as 3); none if the item holds
    any other kind of value."""
    if not numbers or any(n.get("type") != "quantity" for n in numbers):
        return []
    return [{**n, "type": "number", "unit": None} for n in numbers]


def near(a: Sequence[dict[str, object]], b: Sequence[dict[str, object]]) -> bool:
    """Some value of ``a`` is within :data:`NEAR` of some value of ``b``."""
    return any(max(x, y) <= NEAR * min(x, y) for x in _magnitudes(a) for y in _magnitudes(b))


def _far(a: Sequence[dict[str, object]], b: Sequence[dict[str, object]]) -> bool:
    """Every value of ``a`` is more than five times, or a fifth of, every value of ``b``."""
    xs, ys = _magnitudes(a), _magnitudes(b)
    return bool(xs and ys) and all(max(x, y) > 5 * min(x, y) for x in xs for y in ys)


_SECONDS = {"ms": 0.001, "s": 1, "min": 60, "h": 3600, "day": 86400, "week": 604800}
_SECONDS |= {"month": 30 * 86400, "year": 365 * 86400}
#: Two durations further apart than this measure two things: "drive at most 6 hours a
#: day" is not put right by "make it 7 days".
APART = 10


def _apart(a: Sequence[dict[str, object]], b: Sequence[dict[str, object]]) -> bool:
    """Every duration of ``a`` lies more than :data:`APART` times from every one of ``b``."""

    def seconds(numbers: Sequence[dict[str, object]]) -> list[float]:
        out = []
        for n in numbers:
            v, scale = n.get("value"), _SECONDS.get(str(n.get("unit")))
            if n.get("type") == "duration" and scale and isinstance(v, int | float) and v > 0:
                out.append(float(v) * scale)
        return out

    xs, ys = seconds(a), seconds(b)
    return bool(xs and ys) and all(max(x, y) > APART * min(x, y) for x in xs for y in ys)


#: Words that make a value a limit of its own, or a say in what the limit should be:
#: "硬装预算只有12万", "the cap is 40", "1 hour a day is plenty".
_LIMIT_NAMED = re.compile(
    r"预算|上限|封顶|够了|足够|\b(?:budget|cap|limit|max|maximum|minimum|enough|plenty|should|too)\b",
    re.I,
)


def _within(cand: Candidate, item: MemoryItem) -> bool:
    """Whether another person's value, no limit itself, keeps to the person's own bound
    and so says nothing against it: "the lake place sleeps 20" beside "need it to sleep
    at least 14"."""
    claim = cand.numbers
    bounded = [n for n in item.numbers if n.get("bound") in ("lower", "upper")]
    if len(claim) != 1 or len(bounded) != 1 or claim[0].get("bound"):
        return False  # (a limit of their own is another limit: "she says max $14k")
    if _LIMIT_NAMED.search(cand.content):
        return False
    v, b = claim[0].get("value"), bounded[0].get("value")
    if claim[0].get("unit") != bounded[0].get("unit") or not (
        isinstance(v, int | float) and isinstance(b, int | float)
    ):
        return False
    # (the limit's own value named is about the limit: "15 分钟做不到")
    return v > b if bounded[0]["bound"] == "lower" else v < b


_EXPONENT = re.compile(r"\d[eE][-+]?\d")


def _exponent(numbers: Sequence[dict[str, object]]) -> list[float]:
    """The values written with their exponent ("2e-5")."""
    return [
        float(v)
        for n in numbers
        if _EXPONENT.search(str(n.get("raw", "")))
        and isinstance(v := n.get("value"), int | float)
        and v > 0
    ]


def _nearest_exponent(cand: Candidate, pool: Sequence[MemoryItem]) -> list[MemoryItem]:
    """Of the settings written with an exponent, the one nearest the new value in size."""
    new = _exponent(cand.numbers)
    if not new:
        return []
    gaps = [
        (min(abs(math.log10(a / b)) for a in new for b in theirs), -n, item)
        for n, item in enumerate(pool)
        if item.kind != "fact" and (theirs := _exponent(item.numbers))
    ]
    return [min(gaps, key=lambda g: (g[0], g[1]))[2]] if gaps else []


def _first_said(item: MemoryItem, ranked: Sequence[MemoryItem], here: set[str]) -> MemoryItem:
    """``item``, or, when it is of the correcting message itself, the first of ``ranked``
    an earlier message said with the same value, naming the same things: "sampling
    at 10% is way too noisy, make it 1%" puts right "sample debug logs at 10%", which the
    complaint only names ("the worker timeout of 30s is too short" is no "timeout 30s for
    the api")."""
    if item.id not in here:
        return item
    named = _thing_words(item.content)
    said = [
        i
        for i in ranked
        if i.id not in here
        and _values(i.numbers) & _values(item.numbers)
        and _one_names_the_other(named, _thing_words(i.content))
    ]
    return said[0] if said else item


#: What a complaint about a value says of it, beside what it names.
_VERDICT_WORDS = frozenset(
    """way too very so much many far bit little kinda still just really is are was were be
    noisy short long low high slow fast big small large tight loose strict aggressive
    expensive cheap pricey much little few think guess""".split()
)


def _one_names_the_other(a: set[str], b: set[str]) -> bool:
    """(Either names nothing in Latin words, as Chinese text: the value decides.)"""
    return not a or not b or (bool(a & b) and (a <= b or b <= a))


def _thing_words(text: str) -> set[str]:
    """The roots of the words naming things in ``text``: no number, no verdict on a value."""
    words = (w for w in _TOKEN.findall(text.lower()) if not any(c.isdigit() for c in w))
    return {_root(w) for w in words if w not in subjects.STOP and w not in _VERDICT_WORDS}


def _alike(a: Sequence[dict[str, object]], b: Sequence[dict[str, object]]) -> bool:
    """Values of one kind: a unit in common, a type other than a bare number, or a bare
    number against one bare or near it ("改成1800吧" and "1600大卡以内")."""
    return bool(
        _units(a) & _units(b)
        or (_types(a) & _types(b)) - {"number"}
        or (_counts(a) and (_counts(b) or near(a, b)))
    )


def _bounds(numbers: Sequence[dict[str, object]]) -> bool:
    return any(n.get("bound") in ("lower", "upper") for n in numbers)


def _counts(numbers: Sequence[dict[str, object]]) -> bool:
    """Only bare numbers: "make it 15", "we're 13 now"."""
    return bool(numbers) and all(n.get("type") == "number" and not n.get("unit") for n in numbers)


_AT_HOUR = re.compile(r"\bat\s+(?:1[0-2]|[1-9])\b(?![:.\d])")


def _bare_hour(cand: Candidate) -> bool:
    """A lone bare hour said as one: "dinner's at 3"."""
    if len(cand.numbers) != 1:
        return False
    n = cand.numbers[0]
    value, raw = n.get("value"), str(n.get("raw"))
    if n.get("type") != "number" or n.get("unit") or not isinstance(value, int):
        return False
    return 1 <= value <= 12 and raw == str(value) and bool(_AT_HOUR.search(cand.content))


#: A short clause that puts right what was just said, naming nothing it shares with it:
#: "actually no we're flying", "lets do boise instead", "还是坐高铁吧".
_PUT_RIGHT = re.compile(
    r"^(?:actually|no wait|not quite|correction|changed my mind|on second thought|nah|nope)"
    r"\b|\binstead\b|\bafter all\b|^(?:不对|其实|算了|还是|改成|改去|换成|改用)",
    re.I,
)
#: A slip the person owns up to: "之前邮件写错了", "I misread", "had it wrong".
_OWNED_SLIP = re.compile(
    SLIPPED + r"|\b(?:(?:had|got) it wrong|" + MISSPOKE + r")\b",
    re.I,
)
#: The person taking another's word as theirs: "nana says 9 is fine and i agree".
_AGREES = re.compile(
    r"\bi (?:totally |kinda )?agree\b|\b(?:she|he|they)(?:'s|'re| is| are) right\b"
    r"|我(?:也)?同意|(?:他|她|他们)说得对",
    re.I,
)
#: A value said to hold from now on, at the end of the clause: "husband says 3 bedrooms now".
_NOW_END = re.compile(r"\bnow\W*$", re.I)
#: A change said in so many words, at the start of the clause.
_CHANGED_TO = re.compile(r"^(?:改成|改为|换成|改去|改用|换用|还是.{1,12}吧)", re.I)
#: How far back (in events) "just said" reaches.
_JUST_SAID = 4
_CJK = re.compile(r"[\u3400-\u9fff]")
_PLAN_KINDS = ("decision", "preference")


def _shares_a_word(a: str, b: str) -> bool:
    latin = set(_TOKEN.findall(a.lower())) & set(_TOKEN.findall(b.lower()))
    return bool(latin or subjects.content_words(a) & subjects.content_words(b))


def _words_in_common(a: str, b: str) -> bool:
    """A content word in common, not a number: "timeout" in "a 45s server timeout"."""
    shared = subjects.content_words(a) & subjects.content_words(b)
    return any(not any(c.isdigit() for c in w) for w in shared)


def _plan_put_right(
    cand: Candidate, pool: Sequence[MemoryItem], seq: int, here: set[str]
) -> MemoryItem | None:
    """The plan or choice a short correction with no value and no shared subject puts
    right: the newest one of the person's message just before it."""
    # a change said in so many words ("改成us-west-2", "还是坐高铁吧") puts right what
    # was told as a fact too ("我们deploy到us-east-1", "我们坐飞机去北京")
    explicit = _CHANGED_TO.search(cand.content)
    kinds = COMPARABLE if explicit else _PLAN_KINDS
    if cand.numbers or cand.kind not in kinds:
        return None
    said = f"{cand.opener} {cand.content}".strip()
    short = len(cand.content) <= 30 if _CJK.search(cand.content) else len(said.split()) <= 10
    if not (short and _PUT_RIGHT.search(said)):
        return None
    recent = [
        i
        for i in pool
        if i.id not in here
        and i.kind in kinds
        and i.source_seqs
        and 0 < seq - max(i.source_seqs) <= _JUST_SAID
        # what was told as a fact is put right only when the change names a word of it
        # ("改成us-west-2" after "我们deploy到us-east-1", not "改成 !prod 吧" after "两个
        # yml 我对比过是一样的")
        and (i.kind in _PLAN_KINDS or _shares_a_word(cand.content, i.content))
    ]
    if _SETTLED.search(cand.content):
        # a choice put right puts right the choice ("we're going with Stonecrest instead"
        # after "let's go with the barn, I'll put the deposit down Friday")
        # (of the same message as the newest plan: "we'll take the train down at 4pm",
        # said after the dinner choice, is what "the subway instead" puts right)
        newest = max(recent[-1].source_seqs) if recent else None
        chosen = [
            i
            for i in recent
            if (_SETTLED.search(i.content) or SETTLED_CHOICE.search(i.content))
            and max(i.source_seqs) == newest
        ]
        if chosen:
            return chosen[-1]
    return recent[-1] if recent else None


#: What says another person holds a value wrong: "is unrealistic", "too much", 太大了, 不好.
_DOUBT = re.compile(
    r"\b(?:not|isn't|wrong|unrealistic|too (?:much|many|big|small|late|early|soon|high|low)"
    r"|no way|won't|can't|doubt|instead|(?:a|pure|total) fantasy|pipe dream)\b"
    r"|不[好行对够]|太[大小多少长短赶早晚贵紧慢快]|太激进|不可能|不现实|[做达办]不到|来不及|有问题|要改|改到",
    re.I,
)


_IN_THOUSANDS = re.compile(r"\dk$", re.I)


def _doubted(cand: Candidate, pool: Sequence[MemoryItem], here: set[str]) -> MemoryItem | None:
    """The newest earlier item whose value another person's clause names and doubts
    (with a word of doubt, or beside a value of its own of the same kind). A bare
    number names a value of any type ("2,400 is way too much" names "$2,400")."""
    mine = {(n.get("type"), n.get("value")) for n in cand.numbers}
    for item in reversed(pool):
        if item.id in here or item.kind not in COMPARABLE:
            continue
        if subjects.THIRD_PARTY.search(item.content):
            continue  # another's doubt is of the person's value, not of another's word
        said = {(n.get("type"), n.get("value")) for n in item.numbers}
        # a bare number also names the thousands said with a k ("375 won't get us 3
        # bedrooms" of "stay under 375k")
        thousands = {n.get("value") for n in item.numbers if _IN_THOUSANDS.search(str(n["raw"]))}
        named = {
            (t, v)
            for t, v in mine
            for u, w in said
            if (v == w and "number" in (t, u))
            or (t, v) == (u, w)
            or (t == "number" and isinstance(v, int | float) and v * 1000 in thousands)
        }
        if not named:
            continue
        other = {t for t, _ in mine - named} & {t for t, _ in said}
        if other or _DOUBT.search(cand.content):
            return item
    return None


#: Words against a thing a claim names, more than a plain "not": "doesn't want
#: Shinjuku", "a mistake at my age", 太卷了.
_AGAINST_WORDS = (
    r"disagree\w*|(?:doesn't|does not|don't|didn't) (?:want|like|agree|think)|mistake|wrong"
    r"|bad idea|overkill|unrealistic"
)
_AGAINST_ZH = r"不同意|反对|不行|不好|不让|不对|太\S{1,2}了"
_AGAINST_IN_WORDS = re.compile(rf"\b(?:{_AGAINST_WORDS})\b|{_AGAINST_ZH}", re.I)
#: The same, or a plain "not", "instead", "too …": enough beside a value of one's own.
_AGAINST = re.compile(
    rf"\b(?:{_AGAINST_WORDS}|instead|rather|too \w+|isn't|aren't|not)\b|{_AGAINST_ZH}", re.I
)
#: Only a disagreement, naming nothing: what it is against is what was just said.
_DISAGREES = re.compile(
    r"\b(?:disagree\w*|doesn't agree|does not agree|objects?|pushed back|(?:a|the) mistake"
    r"|bad idea)\b|不同意|反对",
    re.I,
)


def _speaks_against(cand: Candidate) -> bool:
    """Another person's clause said against something: in its words, or answered by the
    person's own disbelief later in the message."""
    return cand.pushed_back or bool(_AGAINST.search(cand.content))


def _contradicted(
    cand: Candidate, pool: Sequence[MemoryItem], here: set[str], seq: int
) -> MemoryItem | None:
    """The person's own item another person's clause speaks against, in words
    (:data:`_AGAINST`): the newest that shares a word with what the clause says beyond
    who says it ("my wife really doesn't want Shinjuku"), or, when it shares none with
    any, the item of the person's message just before ("my physio disagrees, she says
    3 days max", "我老公不同意")."""
    if not _speaks_against(cand) or "ctx:in_question" in cand.act.features:
        return None  # "my cousin thinks we should split per person instead, which is fairer?"
    own = [
        i
        for i in pool
        if i.id not in here
        and i.kind in COMPARABLE
        and i.source_seqs
        and not subjects.THIRD_PARTY.search(i.content)  # another's claim is no one's own
    ]
    if cand.numbers:
        # a value of its own: against the person's value of that kind ("我老公说总共最多
        # 1万2 多了他不同意" is about the budget, not the head count said just before)
        units, types = _units(cand.numbers), _types(cand.numbers) - {"number"}
        same = [
            i
            for i in own
            if units & _units(i.numbers)
            # (durations far apart are two things: "4 hours is overkill" is no "10 day course")
            or (types & _types(i.numbers) and not _apart(cand.numbers, i.numbers))
        ]
        # a total is no nightly rate, when a total was said ("3 days max" still speaks
        # against "5 days a week")
        alike = [i for i in same if _rate(cand.numbers) == _rate(i.numbers)] or same
        if alike:
            return alike[-1]
    frame = subjects.THIRD_PARTY.search(cand.content)
    said = cand.content[: frame.start()] + " " + cand.content[frame.end() :] if frame else ""
    words = subjects.content_words(said)
    shared = [i for i in own if words & subjects.content_words(i.content)]
    # a word in common is little: the claim must say more than "not" or "too" against it
    # ("my sister says the beach is not crowded on weekdays" disputes no beach trip)
    if shared and (cand.pushed_back or _AGAINST_IN_WORDS.search(cand.content)):
        return shared[-1]
    latest = max((max(i.source_seqs) for i in own), default=0)
    disagrees = cand.pushed_back or _DISAGREES.search(cand.content)
    if disagrees and not cand.numbers and own and 0 < seq - latest <= 2:
        return next(i for i in reversed(own) if max(i.source_seqs) == latest)
    return None


#: Words that say a clause is not so: "not", "n't", "no longer", 不, 没.
_NEGATION = re.compile(r"\b(?:not|no longer|never)\b|n't\b|[不没]", re.I)


#: Who speaks, before quoted words: `Jolene said, "…` (chats replayed as one voice).
_SPEAKER = re.compile(r"^\s*[\w'-]+(?:\s[\w'-]+)?\s+said,?\s*\"?", re.I)


def _claim_words(text: str) -> set[str]:
    """The content words of what a clause claims, whether or not it is negated."""
    return subjects.content_words(_NEGATION.sub(" ", _SPEAKER.sub("", text)))


def _negates(cand: Candidate, pool: Sequence[MemoryItem], here: set[str]) -> MemoryItem | None:
    """The person's own earlier clause this one says is not so: all its words, one "not"
    before them and little else ("i'm not allergic to penicillin at all" after "i'm
    allergic to penicillin"). Not a restatement with more stress ("I really can't eat
    gluten, not even a little"), another subject ("my brother doesn't live in Boston"),
    nor a contrast after it ("we're driving to Denver, not flying")."""
    found = list(_NEGATION.finditer(cand.content))
    if len(found) != 1:
        return None
    negation = found[0].start()
    words = _claim_words(cand.content)
    lowered = cand.content.lower()
    for item in reversed(pool):
        if item.id in here or item.kind not in COMPARABLE or _NEGATION.search(item.content):
            continue
        theirs = _claim_words(item.content)
        if len(theirs) < 2 or not theirs <= words or len(words - theirs) > 2:
            continue
        first = min((lowered.find(w) for w in theirs if w in lowered), default=-1)
        return item if 0 <= negation < first else None
    return None


def _said_before(pool: Sequence[MemoryItem], here: set[str]) -> list[MemoryItem]:
    """The pool less the clauses of this message that only name a value said in an
    earlier one: "8080 被 jenkins 占了 改成 9090" puts right "端口用 8080", not its own
    mention of 8080."""
    earlier = {v for i in pool if i.id not in here for v in _values(i.numbers)}
    return [i for i in pool if not (i.id in here and i.numbers and _values(i.numbers) <= earlier)]


def _named_in_reply(cand: Candidate, items: Sequence[MemoryItem]) -> MemoryItem | None:
    """Of ``items``, the newest whose value the assistant's message just before a bare
    correction names, value and unit ("make it 90s" after "a 45s server timeout will
    cut the export off"); None when the correction names a subject or an old value of
    its own, or the message names none of the items' values or more than one."""
    reply = str(cand.extra.get("replied_to", ""))
    if not reply or len(items) < 2 or cand.topic or cand.reading.rejected:
        return None
    # a value said with a word of the item in its sentence ("a 45s server timeout" for
    # "the request timeout set to 45 seconds", not "$200 more than the connecting one"
    # for the hotel's $200)
    said = {
        (v.value, v.unit, sentence)
        for sentence in _SENTENCE_END.split(reply)
        for v in find_numbers(sentence)
    }
    named = [
        i
        for i in items
        if any(
            (n.get("value"), n.get("unit")) == (value, unit)
            and _words_in_common(sentence, i.content)
            for n in i.numbers
            for value, unit, sentence in said
        )
    ]
    values = {v for i in named for v in _values(i.numbers)}
    return named[-1] if named and len(values) == 1 else None


_SENTENCE_END = re.compile(r"(?<=[.!?;。！？；])\s*")


def _numbers_before(cand: Candidate) -> list[dict[str, object]]:
    """The values the person's message says before the clause."""
    said = str(cand.extra.get("message", ""))[: cand.start]
    return [v.as_dict() for v in find_numbers(said)] if said else []


def _reply_numbers(cand: Candidate) -> list[dict[str, object]]:
    reply = str(cand.extra.get("replied_to", ""))
    return [v.as_dict() for v in find_numbers(reply)] if reply else []


#: A value chosen with "那就…吧" or "let's go with": a change of one the person said, or an
#: answer, a pick or a value for once (see :func:`_not_a_change`).
_PICKS_AGAIN = re.compile(
    r"那就|\blet'?s (?:just )?(?:do|go with|go for)\b|\bwe'?ll go with\b", re.I
)
#: A reply that asks for a value ("主桌要留几桌？", "How many of those should be kids' tables?").
_ASKS = re.compile(r"[?？]\s*$|几|多少|\bhow (?:many|much|long)\b|\bwhat time\b", re.I)
#: A reply that puts a change to the person: "要不要改成三间？", "you'd need 24 tables".
_PROPOSES_CHANGE = re.compile(
    r"改成|换成|改为|改到|instead|\b(?:change|bump|raise|lower) (?:it|that|this)\b"
    r"|\b(?:you'd|you will|you'll|you would) need\b",
    re.I,
)
#: Said just before the value: it is for once, or someone else's ("今天下雨 那就两公里吧",
#: "这周出差 那就一次吧", "他们那边 那就一间吧").
_FOR_ONCE = re.compile(
    r"今天|今晚|明天|这次|这回|这周|本周|下次|累了|他们|她们|他那|她那|对方"
    r"|\b(?:today|tonight|this time|this week|they|they're|their)\b",
    re.I,
)


def _not_a_change(cand: Candidate) -> str:
    """Why a value chosen with "那就…吧" or "let's go with" puts nothing right ("" when
    it does): an answer to the reply's question of something else, a pick of what the
    reply offered ("那就8寸吧" after "6寸刚好，加上室友的话8寸更稳"), a value for once or
    someone else's. A reply that proposes the change ("要不要改成三间？") leaves it one."""
    reply = str(cand.extra.get("replied_to", ""))
    if reply and not _PROPOSES_CHANGE.search(reply):
        if _ASKS.search(reply):
            return "an answer to the reply's question"
        offered = {(n.get("value"), n.get("unit")) for n in _reply_numbers(cand)}
        if any((n.get("value"), n.get("unit")) in offered for n in cand.numbers):
            return "a pick of a value the reply offered"
    said = str(cand.extra.get("message", ""))[: cand.start]
    if _FOR_ONCE.search(re.split(r"[。！？!?.\n]", said)[-1]):
        return "a value for once, or someone else's"
    return ""


def _it_is(item: MemoryItem, said: Sequence[dict[str, object]]) -> bool:
    """With no value said beside "it", any item; else the item whose value was said, of
    a thing the item's words name ("3 retries is too aggressive" for "the retry limit
    is 3 attempts max", not "3 slides")."""
    if not said:
        return True
    content = {_root(w) for w in _TOKEN.findall(item.content.lower())}
    values = _values(item.numbers)
    return any(
        (n.get("value"), n.get("high")) in values
        and (not n.get("unit") or _root(str(n.get("unit")).lower()) in content)
        for n in said
    )


#: A value written as a word of a subject key ("1.74" of "msrv 1.74").
_VALUE_WORD = re.compile(r"(?<![\w.])\d[\d.,]*(?![\w.])")
#: A bare number added, not put in place of another: "add 22", "adding 3.12 too".
_ADDS = re.compile(r"\b(?:add|adding)\b", re.I)
#: A value said to stay as it is: "stays 5s", "still 30", "TTL 还是30分钟", "仍然是3".
_STAYS = re.compile(r"\b(?:stays?|still|remains?|unchanged)\b|还是|仍然|依然|不变", re.I)


def _latest_value(
    cand: Candidate,
    pool: Sequence[MemoryItem],
    change_only: bool = False,
    owner: str = "",
) -> tuple[MemoryItem, str] | None:
    """The newest item a correction puts right when no item shares its subject: the
    latest value in the same unit; when the correction names no subject at all, the
    latest date or time, or, for a bare number, the latest count near it ("make it 15"
    after "bump to 13"). ``change_only``: the clause has a verb of change and no
    correction cue; ``owner``: the word its value hangs on (see :func:`_owner`)."""
    units = _units(cand.numbers)
    if units:
        # without a correction cue, a value of a thing named otherwise is changed only by
        # a value near it: "门槛先降到百分之七十" after "覆盖率不能低于80%", but
        # "训练集现在9500条" is no count of "验证集2000条" ("actually the down payment is
        # $800" still puts "the deposit is $500" right)
        same = [
            i
            for i in pool
            if units & _units(i.numbers)
            # "定投的改成500" puts right the amount put in, not a monthly one beside it
            and _rate(cand.numbers) == _rate(i.numbers)
            and not _reads_within(cand, i)
            and not _value_of_another(owner, i)
            and (
                not change_only
                or not (cand.topic and i.topic and _overlap(cand.topic, i.topic) == 0)
                or near(cand.numbers, i.numbers)
            )
        ]
        if same:
            # of several, the one the assistant's message just before names by its value
            # ("make it 90s" after "a 45s server timeout will cut the export off", not
            # nginx's 60s said after the 45 s)
            replied = _named_in_reply(cand, same)
            if replied is not None:
                return replied, "a correction of the value the assistant's reply named"
            if _STAYS.search(cand.content) and not _values(cand.numbers) - _values(
                same[-1].numbers
            ):
                return None  # "lock_timeout stays 5s", "TTL 还是30分钟": nothing put right
            return same[-1], "a correction of the latest value in that unit"
    if cand.topic:
        return None
    # without a unit to compare, only a date or a time says what kind of value it is
    types = _types(cand.numbers) & {"date", "time"}
    if types:
        side = _side(cand.content)
        same = [
            i
            for i in pool
            if types & _types(i.numbers) and (not side or _side(i.content) in ("", side))
        ]
        if same:
            return same[-1], "a correction of the latest value of that type"
    if _counts(cand.numbers) and not _ADDS.search(cand.content):
        # a count, an amount or a length near it ("actually, 2500" after "2000 USD");
        # a bare number is no day, hour or version; one added is no value put right
        # ("actually add 22 but mark it continue-on-error" after "20 min")
        counts = [
            i
            for i in pool
            if any(n.get("type") not in ("date", "time", "version") for n in i.numbers)
            and near(cand.numbers, i.numbers)
        ]
        # else a small bare count of the same kind ("make it 3" after "retry count should
        # be 5"; not "3 hour party", "terminal 2" beside "4 tickets")
        counts = counts or [i for i in pool if _small_counts(cand.numbers, i.numbers)]
        # or a setting written with its exponent, the one nearest in size ("make it 5e-5"
        # after "lr 2e-5", not "adam eps 1e-8" nor "loss plateaued at 2e-3")
        counts = counts or _nearest_exponent(cand, pool)
        if _HEADCOUNT.search(str(cand.extra.get("message", cand.content))):
            # "make it 9, my cousin's coming" counts people: "8 ppl", not the "7 is
            # better" that picked a table's time
            counts = [i for i in counts if _counts_people(i)] or counts
        if not counts and change_only:
            # "bump it to 5" after "the retry limit is 3 attempts max": a small count of
            # what the item counts, said with a verb of change (not "the carousel shows 3
            # slides, bump it to 5": what the message or the reply just before counted is
            # what "it" is, and it must be what the item is about)
            said = _numbers_before(cand) + _reply_numbers(cand)
            counts = [
                i
                for i in pool
                if _small_counts(cand.numbers, _uncounted(i.numbers)) and _it_is(i, said)
            ]
        if counts:
            return counts[-1], "a correction of the latest value near it"
    return None


#: A time something ends at, or must: "玩到五点半", "until 5:30", "done by 6", "五点结束",
#: "deadline is 06:30".
_ENDS_AT = re.compile(
    r"到\s*(?:上午|下午|晚上|早上|中午)?\s*[\d两一二三四五六七八九十]+\s*(?:点|[:：]\d)"
    r"|\b(?:until|till|til|ends? at|done by|finish(?:es|ed)? (?:at|by)|wrap(?:s)? up (?:at|by)"
    r"|end(?:s|ing)?|deadline|cutoff|no later than)\b|结束|收工|散场|截止|最晚|最迟",
    re.I,
)
#: A time something starts at: "下午两点开始", "starts at 7", "两点出发", "集合".
_STARTS_AT = re.compile(
    r"\b(?:starts?|started|starting|begins?|kicks? off|opens? at)\b|开始|出发|集合|开饭|开场", re.I
)


def _side(text: str) -> str:
    """``end`` or ``start`` when the text says which side of a span its time is ("" when
    it says neither, or both)."""
    ends, starts = bool(_ENDS_AT.search(text)), bool(_STARTS_AT.search(text))
    return "" if ends == starts else ("end" if ends else "start")


#: A value read off, told: "initial is ~231kb now", "p95 is at 180ms".
_READING = re.compile(r"\b(?:is|are|was|'s|at|came in at|comes to|measures?)\s+[~≈]?\$?\d", re.I)


#: The person keeping a value: "i'm keeping the 600", "想了下 还是 2048", "final answer 650".
_HOLDS = re.compile(
    r"\b(?:keep(?:ing)?|stick(?:ing)? with|staying with|final answer|still|going with)\b"
    r"|还是|就定|坚持|不改|维持|保持",
    re.I,
)


def _holds_to(cand: Candidate, item: MemoryItem, reading: subjects.Reading) -> bool:
    """The person holds to their own value another person disputed (restating it is
    how: the restatement puts the disputed item right, and the claim stays theirs)."""
    return (
        not reading.hearsay
        and bool(_HOLDS.search(cand.content))
        and not _DOUBT.search(cand.content)
        and not subjects.THIRD_PARTY.search(item.content)
    )


def _reads_within(cand: Candidate, item: MemoryItem) -> bool:
    """A value read off that keeps to the item's limit puts no limit right ("initial is
    ~231kb now" beside "must be under 250kb"; "make it 200kb" does)."""
    return _reads_a_value(cand) and _within(cand, item)


def _reads_a_value(cand: Candidate) -> bool:
    """The half of :func:`_reads_within` that reads the clause alone (asked once per
    clause where a loop asks the other half of every item)."""
    return bool(_READING.search(cand.content) and not _SETS_ANEW.search(cand.content))


#: Where things stand, told: "squat is 85 now", "目前体重 92".
_NOW_TOLD = re.compile(
    r"\b(?:now|currently|right now|at the moment|these days|so far)\b|现在|目前", re.I
)
#: A value set anew, which may be a goal's: "let's make it 90kg now", "现在改成 65kg 吧".
_SETS_ANEW = re.compile(
    r"\b(?:make it|make that|change (?:it|that)|set it|bump|lower|raise)\b"
    r"|(?:改成|改为|改到|调到|降到|提到)(?![^，,。]*了)",
    re.I,
)
#: A value aimed at, not where things stand: "goal is 100kg", "target latency 200ms".
_GOAL = re.compile(r"\b(?:goals?|targets?|aim(?:ing)?|hop(?:e|ing) to)\b|目标|争取", re.I)

#: Someone joining or dropping out: what changes is how many people.
_HEADCOUNT = re.compile(
    r"\b(?:(?:is|are|'s|'re) (?:coming|joining|tagging along|in too)|can't make it"
    r"|cant make it|dropped out|drops? out|backed out|bailed|plus one|\+1)\b"
    r"|也来|要来|不来了|来不了|加一个人|多一个人|少一个人",
    re.I,
)


def _counts_people(item: MemoryItem) -> bool:
    return any(n.get("unit") == "person" for n in item.numbers)


_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,5}\b")


#: A decision worded as the end of a choice, naming what was picked (beside "X it is",
#: :data:`~convmem.memory.act_cues.SETTLED_CHOICE`).
_SETTLED = re.compile(
    r"\b(?:going|go|went) with\b|\bsigned with\b|\bsettled on\b"
    r"|\b(?:the|that) (?:first|second|other|former|latter) one\b"
    r"|\bdecided\s*[:,-]"
    r"|^\W*(?:那|算了\W*)?就(?!是)|(?:就|选|定)(?:它|这个|那个)了|决定了|(?:最后|最终)(?:定|选)|^\W*(?:定|选)了",
    re.I,
)
#: An open question that is a choice between options.
_CHOICE = re.compile(
    r"\b(?:between|or|whether|either|which one)\b|\bthe two\b|还是|或者|要不要|二选一|纠结|之间选",
    re.I,
)


#: A choice told as still open: "still torn between", 还在…选, 还在纠结.
_UNDECIDED = re.compile(
    r"\b(?:still|haven't|not yet)\b.{0,20}\b(?:torn|deciding|decided|choosing)\b"
    r"|还在.{0,12}(?:选|纠结|比较)",
    re.I,
)


def _option_words(text: str) -> set[str]:
    """What can name an option: the content words, the parts of a compound name
    ("redis_rate", "bert-base", "multi-region") and short acronyms ("EV or OV")."""
    parts = subjects.content_words(re.sub(r"[_./+-]", " ", text))
    return subjects.content_words(text) | parts | {a.lower() for a in _ACRONYM.findall(text)}


def _same_option(a: set[str], b: set[str]) -> bool:
    """The two sets name an option in common: a word of both, or a name and its longer
    form ("watermelon" and "WatermelonDB")."""
    if a & b:
        return True
    return any(
        (x.startswith(y) or y.startswith(x)) and min(len(x), len(y)) >= 5 for x in a for y in b
    )


def _overlap(a: str, b: str) -> int:
    return len(subjects.subject_words(a) & subjects.subject_words(b))


def _same_subject(a: str, b: str) -> bool:
    """Both keys name the same thing: one's words are all in the other's."""
    wa, wb = subjects.subject_words(a), subjects.subject_words(b)
    return bool(wa and wb) and (wa <= wb or wb <= wa)


#: Words a withdrawal wraps around what it names ("the 10k cap thing", "上海那个条件").
_TARGET_FRAME = re.compile(
    r"算了|那个|这个|那条|这条|条件|要求|的事|事情|东西|\b(?:the|thing|stuff|part|bit|line|item)\b"
)
_THING = re.compile(r"那个|这个|那条|这条|的事|事情|\b(?:thing|stuff)\b", re.I)
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_]*")


_ENDING = re.compile(r"(?:ing|ed|es|e|s)$")
_LIMIT_WORDS = frozenset("cap limit max maximum min minimum budget floor ceiling".split())


def _root(word: str) -> str:
    """A word without its ending ("caching" and "cache" are "cach")."""
    root = _ENDING.sub("", word)
    return root if len(root) >= 4 else word  # ("notes" is no "not")


def _names(item: MemoryItem, target: str, clause: str) -> bool:
    """Does the withdrawal's ``target`` name ``item``: its subject, a long word of it,
    every word of a short one ("the 10k cap": "cap it at 10k rows"), or a Chinese word
    of it (停车位: 最好带车位)."""
    content = item.content.lower()
    if subjects.mentions(item.content, target) or _overlap(item.topic, target) > 0:
        return True
    if any(w in content for w in target.lower().split() if len(w) >= 4):
        return True
    stems = [w[:5] for w in target.lower().split() if len(w) >= 6 and w.isalpha()]
    if any(re.search(rf"\b{stem}", content) for stem in stems):
        return True  # "key rotation": "we rotate the api keys"
    bare = _TARGET_FRAME.sub(" ", target.lower())
    words = set(_TOKEN.findall(bare))
    numbers = {w for w in words if w.isdigit()}
    limits = words - numbers
    if numbers and limits and limits <= _LIMIT_WORDS and numbers <= set(_TOKEN.findall(content)):
        # "the 450 cap is out the window": "max $450/night" ("scratch the 1,800, my
        # dietitian bumped me to 2,000": the old value of a correction)
        return True
    roots = {_root(w) for w in words if w.isalpha() and w not in subjects.STOP}
    if roots and roots <= {_root(w) for w in _TOKEN.findall(content)}:
        return True  # "the caching requirement": "cache the vendor API responses"
    # a bare value names what holds it when called a thing ("80那个", "the 10k thing");
    # "scratch the 1,800, make it 2,000" is the old value of a correction
    named = any(w.isalpha() for w in words) or _THING.search(clause)
    if named and words and words <= set(_TOKEN.findall(content)):
        return True
    pairs = {w for w in subjects.content_words(bare) if not w.isascii()}
    return bool(pairs & subjects.content_words(item.content))


def _spends(item: MemoryItem) -> bool:
    """A limit on what the person may spend, however it was put ("人均200左右", "under
    $150 a night"): what "别管预算了" withdraws when no item names the budget (not
    "押金已经付了两千", money paid)."""
    if subjects.THIRD_PARTY.search(item.content):
        return False  # ("老板说人均可以到三百" is the boss's word, not the person's budget)
    return "money" in _types(item.numbers) and bool(
        item.kind == "constraint"
        or any(n.get("bound") == "upper" for n in item.numbers)
        or _PER_HEAD.search(item.content)
    )


#: What the person may spend, named as a whole; a sum per person or per night.
_BUDGET = re.compile(r"(?:the\s+)?(?:budget|预算|花费|经费)", re.I)
_PER_HEAD = re.compile(r"人均|每人|\b(?:per|a|each)\s+(?:person|head)\b", re.I)


#: A choice changed to another option: "switch to jimp", "go back to sharp", "换成 redis".
_SWITCH_TO = re.compile(
    r"\b(?:switch(?:ed|ing)?\s+(?:back\s+)?|(?:go|going|went)\s+back\s+)to\s+(?:the\s+)?"
    r"(?P<en>[A-Za-z][\w.+-]*)|(?:换成|改用|换回|改回)\s*(?P<zh>[A-Za-z][\w.+-]*)",
    re.I,
)
#: Money put up by another person: a share of the cost ("put in $200", "put up to $300").
_PUTS_IN = re.compile(r"\bput (?:up|in)\b", re.I)
_PER = re.compile(r"^(?:per|a|an|each|every)\s+\w+|^/|^每", re.I)


def _rate(numbers: Sequence[dict[str, object]]) -> bool:
    """Whether a value is said per something (a night, 每晚, /month)."""
    return any(_PER.search(c) for c in _conditions(numbers))


def _conditions(numbers: Sequence[dict[str, object]]) -> set[str]:
    out: set[str] = set()
    for n in numbers:
        cond = n.get("conditions")
        if isinstance(cond, list | tuple):
            out.update(str(c).lower() for c in cond)
    return out


def relate(
    store: MemoryStore,
    session_id: str,
    cand: Candidate,
    seq: int,
    same_event: Sequence[MemoryItem] = (),
    others: Sequence[str] = (),
    newest: Sequence[MemoryItem] | None = None,
) -> Link | None:
    """The one earlier item this candidate supersedes, disputes or retracts, if any.

    ``others`` are the project's other sessions (most recently active first) whose
    items count as earlier too; empty when the session remembers only itself.
    ``newest`` is the session's :data:`NEWEST` items in force, when the caller holds
    them already (read from the store otherwise).
    """
    if cand.kind in ("open_question", "proposal"):
        return None
    reading = cand.reading
    pool = _pool(store, session_id, cand, seq, same_event, others, newest)
    here = {i.id for i in same_event}
    change_only = reading.change and not reading.correction
    if change_only and _PICKS_AGAIN.search(cand.content) and _not_a_change(cand):
        change_only = False
        reading = dataclasses.replace(reading, change=False)
    if change_only:
        # a change puts right only what an earlier message said
        pool = [i for i in pool if i.id not in here]
        reading = dataclasses.replace(reading, correction=True)
    if not pool:
        return None
    if reading.hearsay and (
        _OWNED_SLIP.search(cand.opener)
        or _AGREES.search(cand.content)
        or (
            (reading.change or _NOW_END.search(cand.content))
            and not _speaks_against(cand)
            and not THEIR_ASK.match(cand.content)
        )
    ):
        # "HR 打电话说是 15 薪，之前邮件写错了": the person owns up to a slip and takes the
        # other's word as the value now; "husband says 3 bedrooms now": a change told
        reading = dataclasses.replace(reading, hearsay=False)
    if reading.correction and not reading.hearsay:
        # the person's own change puts right what they said, not another's claim beside it
        # ("行 改16号吧" after "我室友说她15号要上班 让改到16号": the 15号 of the move), when
        # they said such a value ("最后定了26桌" settles "我妈说至少要请30桌" when the person
        # gave no count of their own)
        own = [i for i in pool if not subjects.THIRD_PARTY.search(i.content)]
        if any(_alike(cand.numbers, i.numbers) for i in own):
            pool = own
    if cand.retraction and reading.retract_target:
        target = reading.retract_target
        hits = [i for i in pool if _names(i, target, cand.content)]
        if not hits and _BUDGET.fullmatch(target.strip()):
            hits = [i for i in pool if _spends(i)]  # "别管预算了" after "人均200左右"
        if not hits:
            return None
        # the item the target's words name best, the newest of those: "scratch the batch
        # cooking" is "I'd rather batch cook on sundays", not "the sunday batch thing
        # isn't going to work" said just before it; then what an earlier message said
        # before a clause of this one ("so no hotel budget needed lol. forget the hotel
        # budget" withdraws the $250 cap said before); then what was asked or settled
        # before a fact told of it ("nvm the redis thing": "it must not use redis", not
        # "we don't have redis in prod" said after it)
        # (a number or a short word of the target counts too: "the 30 second job limit"
        # is the job's 30 seconds, not "the retry limit is 7" said after it)
        stems = [w[:4] for w in _TOKEN.findall(target.lower()) if len(w) >= 3 or w.isdigit()]
        lowered = [i.content.lower() for i in hits]
        best = max(
            range(len(hits)),
            key=lambda n: (
                sum(w in lowered[n] for w in stems),
                hits[n].id not in here,
                hits[n].kind != "fact",
                n,
            ),
        )
        return Link("retracts", hits[best], f"withdraws {target!r}")

    # 0. another person's word against a value the person said: "my mom says the 6th is
    # a bad day, she wants the 8th", "师兄觉得64太大了": it names the value and doubts it
    if reading.hearsay and cand.kind in COMPARABLE and cand.numbers:
        doubted = _doubted(cand, pool, here)
        if doubted is not None and not _within(cand, doubted):
            return Link("disputes", doubted, "another person's word against that value")

    # 1. a correction that names the old value: the newest item holding it
    if reading.rejected:
        for old in reading.rejected:
            holders = [i for i in pool if subjects.mentions(i.content, old)]
            # "8080 is taken, use 3000 instead": what the message says of the old value
            # stands; an earlier message that holds it is what changes
            holders = [i for i in holders if i.id not in here] or holders
            if holders and reading.hearsay and cand.kind in COMPARABLE:
                # "someone on the team says it's 30, not 15": a claim against the person's
                return Link("disputes", holders[-1], f"another person's claim against {old!r}")
            if holders:
                return Link("supersedes", holders[-1], f"replaces {old!r}")

    # 2. a decision that settles an open question about the same options
    words = subjects.content_words(cand.content)
    if cand.kind == "decision":
        options = _option_words(cand.content)
        # "年会场地还在两个酒店之间选": a choice still open, told as a fact
        open_items = [i for i in pool if i.kind == "open_question" or _UNDECIDED.search(i.content)]
        for item in reversed(open_items):
            if _same_option(options, _option_words(item.content)):
                return Link("supersedes", item, "a decision settles the open question")
        # (in other words only just after it: "we picked the blue invitations" settles no
        # "drive or fly" said long before)
        choices = [
            i
            for i in open_items
            if _CHOICE.search(i.content)
            and i.source_seqs
            and 0 < seq - max(i.source_seqs) <= _JUST_SAID
        ]
        settled = _SETTLED.search(cand.content) or SETTLED_CHOICE.search(cand.content)
        if choices and not cand.numbers and settled:
            # "the chalet it is then" after "torn between the place on lake wren and the
            # one by the ski hill": the choice is made in other words than its options
            return Link("supersedes", choices[-1], "a decision settles the open choice")
    pool = [i for i in pool if i.kind != "open_question"]
    if (
        _NOW_TOLD.search(cand.content)
        and not _GOAL.search(cand.content)
        and not _SETS_ANEW.search(cand.content)
    ):
        # where things stand now is no goal put right ("squat is 85 now" after "goal is
        # 100kg squat by end of the year, currently at 80")
        pool = [i for i in pool if not _GOAL.search(i.content)]
    if not pool:
        return None
    switched = _SWITCH_TO.search(cand.content) if cand.kind == "decision" else None
    if switched and not cand.numbers:
        # "switch to jimp" after "lets go with sharp over jimp": the choice that named the
        # option switched to (as the one not taken) is the one changed
        said = switched["en"] or switched["zh"]
        option = re.compile(rf"\b{re.escape(said.lower())}\b")
        chosen = [i for i in pool if i.kind == "decision" and i.id not in here]
        named_it = [i for i in chosen if option.search(i.content.lower())]
        if named_it:
            return Link("supersedes", named_it[-1], f"switches to {said!r}")
    units, values, types = _units(cand.numbers), _values(cand.numbers), _types(cand.numbers)
    bare = _counts(cand.numbers)
    counted = cand.topic if bare and " " not in cand.topic else ""
    hour = _bare_hour(cand)
    owner = _owner(cand.content, cand.numbers)
    # (a subject key may hold the new value itself: "msrv 1.74" names "MSRV is 1.70")
    named_subject = _VALUE_WORD.sub(" ", cand.topic).strip() or cand.topic
    names = set(reading.names)
    categories = {subjects.category(n) for n in names} - {None}
    scored: list[tuple[int, int, MemoryItem]] = []
    named: set[str] = set()  # items that name the candidate's subject, or its kind of thing
    # the words of the message before the clause, read only when an item needs them (a
    # long message's words cost more than the rest of the loop)
    before: set[str] | None = None
    reads = _reads_a_value(cand)
    # a start is put right by a start, an end by an end ("结束改成六点吧" after "下午三点开始")
    side = _side(cand.content) if "time" in types else ""
    for n, item in enumerate(pool):
        score = 0
        overlap = _overlap(cand.topic, item.topic) if cand.topic and item.topic else 0
        if (
            reading.correction
            and cand.topic
            and (values or names)
            and subjects.mentions(item.content, named_subject)
            and not _value_of_another(owner, item)
        ):
            # a correction's new value for what the item names: "目标是 p95 低于两百毫秒"
            # is about p95 whatever its own key says
            named.add(item.id)
            score += 3
        item_units = _units(item.numbers)
        # (a weekday beside a measured value is when it starts, not the value: "changed
        # the dose to 75mcg starting next monday" is no "500mg, started tuesday")
        shared_types = types & _types(item.numbers) - ({"weekday"} if units else set())
        same_unit = (
            bool(units & item_units)
            or (bool(shared_types) and not _apart(cand.numbers, item.numbers))
            # "drop workers to 2 per pod": a bare count of what "4 uvicorn workers" counts
            or bool(counted and counted in item_units)
            # "make it 5 retries" against "Retries should be 3 max": a count of what the
            # item's bare value is about
            or bool(item.topic in units and _counts(item.numbers))
            # "checkpoint改成最多留5个" against "最多留3个checkpoint": 个 counts what it names
            or _counts_the_same(units, cand.content, item_units, item.content)
            # "the rent can go to 2,900 max": a bare value, said as a change, for the
            # subject that held one ("the hotel is on floor 12" changes no parking limit)
            or bool(bare and overlap and item.numbers and (reading.correction or reading.change))
            # "budget bumped to 1.2k" against "budget around $800": a bare value changed,
            # for a word of the item ("bumped" is no subject of its own)
            or bool(
                bare
                and reading.change
                and len(item.numbers) == 1
                and item.numbers[0].get("type") in ("number", "money")
                and words & subjects.content_words(item.content)
            )
            # "my husband thinks dinner's at 3" against "dinner is at 4pm": a bare hour
            # for the clock time of what the item names
            or bool(
                hour
                and "time" in _types(item.numbers)
                and item.topic
                and subjects.mentions(cand.content.lower(), item.topic)
            )
        )
        if values and item.numbers and not (values - _values(item.numbers)):
            if item.status == "disputed" and _holds_to(cand, item, reading):
                # "my dad says i'm crazy… i'm keeping the 600": the person's word stands
                return Link("supersedes", item, "holds to the value another disputed")
            continue  # restates the same value
        if reads and _within(cand, item):
            continue  # (see _reads_within)
        item_names = set(subjects.named_choices(item.content))
        same_kind_of_thing = bool(categories & {subjects.category(x) for x in item_names}) and not (
            names & item_names and not (item_names - names)
        )
        # "服务器上装的是mysql 8.0" against "数据库用mysql 5.7": the same tool's version
        same_unit = same_unit or bool(
            (
                names & item_names
                or _versioned(cand.content, cand.numbers) & _versioned(item.content, item.numbers)
            )
            and _has_version(cand.numbers)
            and _has_version(item.numbers)
        )
        if same_unit:
            score += 3
            if reading.correction and near(cand.numbers, item.numbers):
                score += 1  # the value put right is near the new one (14 lbs, then 15.5)
        if same_kind_of_thing:
            score += 3
        if side and "time" in _types(item.numbers) and _side(item.content) not in ("", side):
            continue
        if same_kind_of_thing or names & item_names:
            # the same tool, or another of its kind: what it names is the subject
            named.add(item.id)
        score += 2 * min(overlap, 2)
        if cand.topic and item.topic and cand.topic == item.topic:
            score += 1
        if same_unit or same_kind_of_thing:
            # between items that hold the same kind of value, the one that shares the
            # clause's words ("we land October 20 now": "we land October 18", not "Move
            # date is October 15"), or the words of the message before the clause ("the
            # school extended deadlines by 2 weeks, so june 13 now": the deadline, not
            # the draft's date)
            theirs = subjects.content_words(item.content)
            shared = min(len(words & theirs), 2)
            if not shared:
                if before is None:
                    before = subjects.content_words(
                        str(cand.extra.get("message", ""))[: cand.start]
                    )
                shared = int(bool(before & theirs))
            score += shared
        if score:
            scored.append((score, n, item))
    scored.sort(key=lambda t: (-t[0], -t[1]))
    heard = [t for t in scored if t[2].id not in here]  # not the person's own words beside it
    if reading.hearsay and heard and heard[0][0] >= 3 and cand.kind in COMPARABLE:
        # someone else's claim against the person's own: both stand, as a dispute; but
        # what the other person puts in is their share, not a claim about the thing ("she
        # can put up to $300 toward the movers", "她说房租她可以出两千"), and a rate is no
        # total (€180 a night against the trip's €1,800)
        contributes = SHARE_OF_COST.search(cand.content) or _PUTS_IN.search(cand.content)
        if contributes:
            return None
        # (of the items as close, not one whose value is of another size: "至少要三万" is no
        # claim about a rent of 3,500)
        close = [
            t[2] for t in heard if t[0] == heard[0][0] and not _far(cand.numbers, t[2].numbers)
        ]
        top = close[0] if close else heard[0][2]
        if _rate(cand.numbers) == _rate(top.numbers) and not _within(cand, top):
            return Link("disputes", top, "another person's claim about the same subject")
    if reading.hearsay and cand.kind in COMPARABLE:
        # the claim speaks against an item in words, or the person answers it with
        # disbelief ("my physio disagrees, she says 3 days max" against "5 days a week",
        # which the claim of the same subject above leaves alone as a rate beside a total)
        against = _contradicted(cand, pool, here, seq)
        if against is not None and not _within(cand, against):
            return Link("disputes", against, "another person's word against it")
        if heard and heard[0][0] >= 3:
            return None
    elif not cand.numbers and "ctx:in_question" not in cand.act.features:
        negated = _negates(cand, pool, here)
        if negated is not None:
            return Link("supersedes", negated, "says in its words that it is not so")
    if reading.correction:
        # two named subjects that share nothing are two things ("超时时间" is not "p95")
        scored = [
            t
            for t in scored
            if t[2].id in named
            or not (cand.topic and t[2].topic and _overlap(cand.topic, t[2].topic) == 0)
        ]
        if scored and scored[0][0] >= 3:
            # the assistant's message just before names which of them ("make it 90s"
            # after "a 45s server timeout will cut the export off")
            eligible = sorted((t for t in scored if t[0] >= 3), key=lambda t: t[1])
            replied = _named_in_reply(cand, [t[2] for t in eligible])
            if replied is not None:
                return Link("supersedes", replied, "a correction of the value the reply named")
            top = _first_said(scored[0][2], [t[2] for t in scored], here)
            return Link("supersedes", top, "a correction of the same subject")
        if reading.scratch:
            # (a fact told just before, of something else, is not what a change of plan
            # scratches: "算了还是住全季吧" after "我老婆不吃辣")
            last = pool[-1]
            if (
                cand.kind != "fact"
                and last.kind == "fact"
                and not _shares_a_word(cand.content, last.content)
            ):
                return None
            kinds, theirs = _types(cand.numbers), _types(last.numbers)
            if kinds and not kinds & theirs and "number" not in kinds | theirs:
                # "我记错了 是下周五" puts right a date, not the count or place said last
                return None
            return Link("supersedes", last, "scratch that: the item just before")
        latest = _latest_value(cand, _said_before(pool, here), change_only, owner)
        if latest:
            old_item, why = latest
            return Link("supersedes", _first_said(old_item, pool[::-1], here), why)
        plan = _plan_put_right(cand, pool, seq, here)
        return Link("supersedes", plan, "a plan put right just after it") if plan else None
    # 2. no cue: the same subject with a different value is a dispute (not a value
    # supposed: "如果预算是8000的话能住什么酒店", "if we were 12 people")
    if "act:hypothetical" in cand.act.features:
        return None
    for score, _, item in scored:
        if score < 5 or item.kind not in ("fact", "constraint", "decision"):
            continue
        if item.id in here:
            continue  # two values side by side ("Offer A: $92k base. Offer B: $105k base")
        if not _same_subject(cand.topic, item.topic):
            continue  # "timeout of service1" and "timeout of service2" are two things
        if subjects.owner(cand.content) != subjects.owner(item.content):
            continue  # "我妹妹的航班是14号" is not "我的航班是12号" disputed
        if cand.kind not in ("fact", "constraint", "decision"):
            continue
        if _conditions(cand.numbers) != _conditions(item.numbers):
            continue
        if cand.kind == "fact" and _bounds(item.numbers) and not _bounds(cand.numbers):
            continue  # a reading against a limit is no other limit ("initial is ~231kb")
        if not (values and item.numbers) and not (
            names and set(subjects.named_choices(item.content)) - names
        ):
            continue  # no number or name to differ in: two remarks, not two values
        return Link("disputes", item, "the same subject with a different value")
    return None
