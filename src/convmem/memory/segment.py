"""Cutting a message into the pieces extraction judges: prose sentences and clauses.

A person's message mixes what they say with what they paste. Pasted material —
fenced or indented code, log lines, stack traces, shell sessions, diffs, tables,
JSON and config blocks, command output — is found line by line first and set
aside: it stays in the event (quotable evidence) but is never read as something
the person stated. The prose that remains is cut into sentences (lines and list
items first, then ``sentencex``, which knows "e.g.", decimals and versions, and
Chinese punctuation), and each sentence into clauses at coordinators and
subordinators ("but", "so", "because", "; ", "，但是", "，所以", …), so that a
60-word message with one deadline in it yields the deadline, not the message.

Every piece keeps its character offsets in the original text; a clause also
carries the discourse opener that was trimmed from it ("Actually,", "算了，"),
which is how corrections are recognised.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from convmem.core.units import Value

# --- pasted material ----------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")
# each alternative is anchored at the line's start: tried once, with .match
_PASTED_START = re.compile(
    "|".join(
        (
            # 2024-03-15 10:22:01 …, 2024-03-15 10:22 INFO …; not a plan's "2024-10-01 09:00 fly"
            r"^\s*\[?\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}|\S*\s+(?:INFO|WARN|WARNING"
            r"|ERROR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\b)",
            # 2024-03-15 ERROR …: a date, then a level, with no time between
            r"^\s*\[?\d{4}[-/]\d{2}[-/]\d{2}\]?\s+\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL"
            r"|CRITICAL|NOTICE)\b",
            r"^\s*\[?\d{1,2}:\d{2}:\d{2}",  # 10:22:01 …
            # a chat log copied in, who spoke by a handle: "[10:03] kevin.l: ALWAYS set
            # fail-fast" (not the person's own notes: "[8:00] breakfast: no eggs")
            r"^\s*\[\d{1,2}:\d{2}(?:\s?[AaPp][Mm])?\]\s+(?:@[A-Za-z0-9_.-]{2,30}"
            r"|[A-Za-z0-9]+[._][A-Za-z0-9._-]+):\s",
            r"^\s*[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}",  # syslog
            r"^\s*\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\]?[\s:|]",
            r"^\s*DETAIL: +Key \(|^\s*DETAIL: +Failing row",  # PostgreSQL's report
            r"^\s*at [\w.$<>\[\]/]+ ?\(",  # JS / Java stack frame
            r"^\s*at [\w.$<>]+ \S+:\d+",
            r'^\s*File "[^"]+", line \d+',  # Python frame
            r"^\s*Traceback \(most recent call last\)",
            r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning|Fault)(?::|$| at )",
            r"^\s*(?:panic|fatal error|goroutine \d+|thread '.*' panicked|Caused by):?",
            r"^\s*#\d+ +0x[0-9a-f]+",
            r"^\s*(?:\$|❯|➜|PS [A-Z]:\\[^>]*>|>>>|>|In \[\d+\]:)\s+\S",  # prompts, quotes
            r"^\s*【[^】]{1,20}】",  # a copied listing
            r"^\s*[\w.-]+@[\w.-]+:[~/][^$#]*[$#]\s",
            r"^\s*(?:npm|yarn|pnpm) (?:ERR!|WARN|error)",
            r"^\s*E {2,}\S",  # pytest failure detail
            r"^\s*(?:PASSED|FAILED|ERROR|SKIPPED|XFAIL)\b.*::",
            r"^\s*(?:=|-|_|\*|#|~){4,}",  # separators
            r"^\s*\|.*\|\s*$",  # table row
            r"^\s*[-+|: ]{6,}$",
            r"^\s*(?:diff --git|index [0-9a-f]{6,}|@@ .* @@|\+\+\+ |--- a/)",
            r"^\s*[{}\[\]](?:,)?\s*$",
            r'^\s*"[^"\n]{1,60}"\s*:\s*',  # JSON member
            r"^\s*(?:def|class|import|from \S+ import|function|const|let|var|return|public|private"
            r"|package|#include|func|fn|impl|struct|enum"
            r"|interface|async def|export)\b[^。，]*[:({=;]",
            r"^\s*(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP) [A-Z*]",
            # a statement in lower-case names: "SELECT oi.* FROM …", "SET timestamp=17…;"
            r"^\s*(?:SELECT|INSERT INTO|UPDATE|DELETE FROM|SET|WITH|EXPLAIN(?: ANALYZE)?)"
            r" [^。，]*?(?:\b(?:FROM|WHERE|VALUES|SET|AS)\b|\w=\S|;\s*$)",
            r"^\s*# (?:Query_time|User@Host|Time|Schema|Thread_id):",  # MySQL's slow log
            r"^\s*(?:GET|POST|PUT|PATCH|DELETE|HEAD) /\S* ",
            r"^\s*\d{3} (?:GET|POST|PUT|DELETE)",
            r"^\s*(?:✓|✗|✔|✘|×|√|PASS|FAIL)\s+\S",
            r"^\s{0,3}\d+\s+(?:passed|failed|errors?)\b",
            r"^\s*Process finished with exit code",
            r"^\s*(?:real|user|sys)\s+\d+m[\d.]+s",
            r"^\s*(?:Requests/sec|Latency|Transfer/sec|Running \d+s test)",
        )
    )
)
_LOG_LEVEL = re.compile(r"\blevel=(?:info|warn|warning|error|debug)\b")
_COLUMNS = re.compile(r"\S(?: {2,}|\t)\S+(?: {2,}|\t)\S")
_KEY_VALUES = re.compile(r"(?:\w+=\S+\s+){2,}\w+=\S+")  # key=value key=value key=value


def _pasted_line(line: str) -> bool:
    """Does the line look like something pasted (a log, a trace, a prompt, code, a table)?

    The patterns that may match anywhere in the line run only when the characters they
    need are there: one combined search over every position cost ~90 µs a line."""
    return bool(
        _PASTED_START.match(line)
        or line.rstrip().endswith("Traceback (most recent call last):")
        or ("level=" in line and _LOG_LEVEL.search(line))
        or (("  " in line or "\t" in line) and _COLUMNS.search(line))
        or (line.count("=") >= 3 and _KEY_VALUES.search(line))
    )


_CODE_END = re.compile(r"[;{}]\s*$|\)\s*[:{]\s*$|^\s*[)}\]];?\s*$")
_INDENTED = re.compile(r"^(?: {4,}|\t)\S")
_CONFIG_LINE = re.compile(r"^\s*[\w.\-/]+\s*[:=]\s*\S+\s*$|^[+-](?![-+\s])\S")
#: A line laid out in columns, as a program prints one: "Service Account:  worker",
#: "Type              Status" (a key, then its value lined up after spaces), or a key
#: that opens a nested block ("Containers:").
_ALIGNED = re.compile(r"^[\w .()/-]{1,40}?:\s{3,}\S|\S {3,}\S|^\s*[A-Za-z][\w.-]{0,30}:$")
#: A database server's notice ("DETAIL:  Process 31877 waits…", "HINT:  See server log") or
#: an exception named by its module ("psycopg2.errors.DeadlockDetected: deadlock detected").
_DB_NOTICE = re.compile(
    r"^\s*(?:(?:DETAIL|HINT|CONTEXT|STATEMENT|ERROR|WARNING|NOTICE|LOG|FATAL|PANIC):  \S"
    r"|[a-z_]\w*(?:\.\w+)+\.[A-Z]\w+:\s)"
)
_CJK = re.compile(r"[\u3400-\u9fff]")
_SYMBOLS = set("{}[]()<>=;:/\\|_$#@*\"'`~^&%+")


def _symbol_ratio(line: str) -> float:
    """The share of the line's non-space characters that are code or markup symbols."""
    chars = "".join(line.split())  # split() cuts at every character isspace() knows
    if not chars:
        return 0.0
    return sum(chars.count(c) for c in _SYMBOLS) / len(chars)


def _line_kind(line: str) -> str:
    """``pasted``, ``prose``, ``blank`` or ``maybe`` (config-like, decided by neighbours)."""
    if not line.strip():
        return "blank"
    cjk = len(_CJK.findall(line))
    if cjk >= 4 and cjk >= 0.25 * len(line.strip()):
        return "pasted" if _pasted_line(line[:40]) and ":" in line[:12] else "prose"
    if _pasted_line(line):
        return "pasted"
    stripped = line.strip()
    if _INDENTED.match(line) and (_symbol_ratio(stripped) > 0.08 or _CODE_END.search(stripped)):
        return "pasted"
    if len(stripped) > 15 and _symbol_ratio(stripped) > 0.3:
        return "pasted"
    if _CODE_END.search(stripped) and _symbol_ratio(stripped) > 0.1:
        return "pasted"
    if _DB_NOTICE.match(line):
        return "pasted"
    if _CONFIG_LINE.match(line) or _INDENTED.match(line) or _ALIGNED.search(stripped):
        return "maybe"
    return "prose"


@dataclass(frozen=True)
class Span:
    """A piece of a message: its offsets in the message and its text."""

    start: int
    end: int
    text: str


#: How a line of a log begins: a build step ("#14 12.81 …", "#5 [builder 2/7]"), a level
#: or a time in brackets ("[INFO] …", "[2024-06-01 12:00:01] …"), a clock time with its
#: seconds, a date and such a time (a plan's "2024-10-01 09:00 出发" is no log).
_LOG_PREFIX = re.compile(
    r"\s*(?:#\d+ (?:\[|\d+(?:\.\d+)? |DONE|CACHED|ERROR|extracting|sha256|resolve|transferring)"
    r"|\[(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\]"
    r"|\[\d[\d/:.,T -]{6,30}\]|\d{1,2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}:\d{2})"
)


_DIGIT_TO_0 = str.maketrans("123456789", "000000000")


def _log_runs(lines: list[tuple[int, int, str]], kinds: list[str]) -> None:
    """Three or more lines in a row that begin the same way a log's lines do are pasted,
    whatever each says on its own ("#14 12.81 - Make sure optional dependencies are
    installed: …" reads as a request)."""

    def shape(line: str) -> str:
        m = _LOG_PREFIX.match(line)
        return "" if m is None else m.group().lstrip()[:1].translate(_DIGIT_TO_0)

    _paste_runs(lines, kinds, shape)


def _paste_runs(
    lines: list[tuple[int, int, str]], kinds: list[str], shape: Callable[[str], object]
) -> None:
    """Mark as pasted every run of three or more lines of the same (non-empty) shape."""
    i, n = 0, len(lines)
    while i < n:
        first = shape(lines[i][2])
        j = i + 1
        while first and j < n and shape(lines[j][2]) == first:
            j += 1
        if j - i >= 3:
            kinds[i:j] = ["pasted"] * (j - i)
        i = j


_CSV_VALUE = re.compile(r"[-+]?[$€£¥]?\d[\d.:/-]*%?")
_CSV_NAME = re.compile(r"[A-Za-z_][\w.]{0,30}")


def _csv_runs(lines: list[tuple[int, int, str]], kinds: list[str]) -> None:
    """Three or more lines in a row with the same count of bare commas (two at least, none
    followed by a space) are a pasted CSV: "date,desc,amount" and its rows."""

    def shape(line: str) -> int:
        commas = line.count(",")
        if commas < 2 or ", " in line or len(line) > 400:
            return 0
        fields = [f.strip() for f in line.split(",")]
        # a row holds a bare number or date, or the line is a header of bare names (not
        # "预算3000,最多5天,必须有早餐": the person's own list)
        data = any(_CSV_VALUE.fullmatch(f) for f in fields)
        header = all(_CSV_NAME.fullmatch(f) for f in fields)
        return commas if data or header else 0

    _paste_runs(lines, kinds, shape)


def prose_lines(text: str) -> list[Span]:
    """The message's lines that are prose, pasted material left out."""
    return list(_prose_lines(text))


#: How a line a program wrote starts, after its indent: a fence, a log line's time or
#: level, a trace's frames (or its caret line, below).
_MACHINE_START = (
    r"```|~~~|\[?\d{4}-\d{2}-\d{2}[T ]\d|\[?\d{1,2}:\d{2}:\d{2}|Traceback \("
    r"|File \"|at [\w.$<>]+[ (]|\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|FATAL|TRACE|CRITICAL)\b"
    r"|(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b"
)
#: Lines a program wrote.
_MACHINE_LINE = re.compile(rf"^\s*(?:{_MACHINE_START}|\s{{2,}}\^)")
#: The start of any such line in a text. Each kind above starts with a character that
#: is not white space, so only the whole indent can come before it, and the caret line
#: is an indent of two or more before a caret: the same matches as ``_MACHINE_LINE``'s
#: at every line start, without trying each shorter indent again (an indented line cost
#: a retry of every kind per character of its indent).
_MACHINE_LINES = re.compile(rf"^(?:\s*+(?:{_MACHINE_START})|\s{{2,}}+\^)", re.MULTILINE)


def may_hold_program_output(text: str) -> bool:
    """False when no line of ``text`` is a fence, a log line or a trace's: then nothing in
    it is :func:`printed_by_a_program`, and splitting it into lines can be skipped (one
    search, where reading its lines costs some 50 µs each)."""
    if text.count("\n") > _FEW_LINES:
        return _MACHINE_LINES.search(text) is not None
    # only a line's start can match: trying those alone is faster than a search, which
    # tries every position of a message of prose (the same answer)
    match = _MACHINE_LINES.match
    at = -1
    while True:
        if match(text, at + 1):
            return True
        at = text.find("\n", at + 1)
        if at < 0:
            return False


#: Up to this many lines, :func:`may_hold_program_output` tries each line's start.
_FEW_LINES = 100


def printed_by_a_program(lines: Sequence[str]) -> bool:
    """Whether lines left out of a message's prose are what a program printed (fenced,
    or mostly log and trace lines), not the person's own table or list: the block may
    leave them out of a long quote (see :func:`prose_lines`)."""
    if any(line.lstrip().startswith(("```", "~~~")) for line in lines):
        return True
    return 5 * sum(1 for line in lines if _MACHINE_LINE.match(line)) >= 4 * len(lines)


#: Extraction asks for a message's lines and sentences more than once (its clauses, the
#: task state): the last few messages' answers are kept.
_RECENT = 8


@lru_cache(maxsize=_RECENT)
def _prose_lines(text: str) -> tuple[Span, ...]:
    lines: list[tuple[int, int, str]] = []
    pos = 0
    for raw in text.split("\n"):
        lines.append((pos, pos + len(raw), raw))
        pos += len(raw) + 1
    kinds = []
    fenced = False
    for _, _, line in lines:
        if _FENCE.match(line):
            kinds.append("pasted")
            fenced = not fenced
            continue
        kinds.append("pasted" if fenced else _line_kind(line))
    _log_runs(lines, kinds)
    _csv_runs(lines, kinds)
    # config-looking and indented lines are pasted when they stand beside pasted lines or
    # come in a run of three or more; otherwise they are prose ("Budget: 3000")
    # (each run is read once: a pasted config of thousands of lines stays linear)
    n = len(kinds)
    k = 0
    while k < n:
        if kinds[k] not in ("maybe", "pasted"):
            k += 1
            continue
        j = k
        while j < n and kinds[j] in ("maybe", "pasted"):
            j += 1
        run = "pasted" if j - k >= 3 or "pasted" in kinds[k:j] else "prose"
        kinds[k:j] = [run if kind == "maybe" else kind for kind in kinds[k:j]]
        k = j
    # a short prose line sandwiched in a pasted block is part of it ("  ...", "^^^^")
    for i in range(1, n - 1):
        if (
            kinds[i] == "prose"
            and kinds[i - 1] == "pasted"
            and kinds[i + 1] == "pasted"
            and len(lines[i][2].strip()) < 40
            and not _CJK.search(lines[i][2])
            and not re.search(r"[.!?。！？]\s*$", lines[i][2])
        ):
            kinds[i] = "pasted"
    return tuple(
        Span(s, e, line) for (s, e, line), kind in zip(lines, kinds, strict=True) if kind == "prose"
    )


# --- sentences ----------------------------------------------------------------------------

_LIST_MARKER = re.compile(
    r"^\s*(?:[-*•·>+]|\d{1,2}[.)、]|[a-zA-Z][.)]|[（(]\d{1,2}[）)]|[一二三四五六七八九十][、.])\s+"
)
#: (a number's decimal point is no list mark: "0.5 it is")
_CN_LIST_MARKER = re.compile(r"^\s*(?:\d{1,2}(?:[、)]|\.(?!\d))|[一二三四五六七八九十]、)")
_HEADING = re.compile(r"^\s*#{1,6}\s+")


def _segmenter(language: str, text: str) -> list[str]:
    import sentencex

    try:
        return list(sentencex.segment(language, text))
    except UnicodeEncodeError:  # a lone surrogate: captured text never has one
        from convmem.core.text import fix_surrogates

        return list(sentencex.segment(language, fix_surrogates(text)))


_UNIT_STOP = re.compile(r"[.!?]\s+(?=[A-Z])")
_NUMBER_UNIT_END = re.compile(r"\d\s?[A-Za-z%]{0,3}$")
#: A run that only says the choice before it is still open ("…本地内存 还没想好",
#: "大理还是版纳 我跟我老公还没商量好"): it stays with the options.
_UNDECIDED = (
    r"(?:我们?|我[跟和]我?\w{1,3})?[也都]?"
    r"(?:还没(?:有)?(?:想好|定|决定|确定|商量好|考虑好)|没想好|没商量好|没定|待定|还在考虑|还在纠结"
    r"|还不确定|拿不定主意)(?:[\s。，,！!~～]|$)"
)
_OPEN_CHOICE = re.compile(_UNDECIDED)
#: … said before the options instead ("还没想好 A还是B").
_UNDECIDED_END = re.compile(
    r"(?:没想好|没定|没决定|没确定|没商量好|没考虑好|在纠结|拿不定主意|不确定)$"
)
_CHOICE_AHEAD = re.compile(r"[^，,。！!？?；;]*(?:还是|或者|要不要)")
_NOT_THIS = re.compile(r"不是[^\s，,。]{1,20}$")
_NOT_THAT = re.compile(r"不是\s?[^\s，,。]{1,8}(?:[\s，,。！!]|$)")
#: "说 50 太多了", "8px 太小了": a value, then the verdict on it (the same clause as "64太大了").
_VALUE_BEFORE = re.compile(r"\d[\w%]{0,6}$")
_VERDICT_AFTER = re.compile(r"太[多少长短久贵晚早大小快慢远近高低紧]了?|不够|不合适|来不及")
#: "不去日本了 改去韩国", "不用redis了，换成postgres": a plan dropped, then the one instead.
_DROPPED = re.compile(r"不(?:去|用|要|买|选|住|坐|订|考虑|报|学)\s*[^\s，,。！!？?]{1,10}了$")
_INSTEAD_NEXT = re.compile(r"(?:改|换)(?:成|去|用|为|买|住|坐|订|报|学)")
#: "学习率不对 是1e-4", "副本数说错了 是3": what was wrong, then what is right.
_WRONG_BEFORE = re.compile(r"(?:不对|说错了|写错了|搞错了|记错了|弄错了)$")
#: Where run-on chat text starts a new sentence with no punctuation before it.
_RUN_ON = re.compile(
    r"(?<=[\u3400-\u9fff])[ \u3000]+(?=[\u3400-\u9fff])"  # 第一次去新疆 好激动
    f"(?!{_UNDECIDED})"
    r"|(?<=[\U0001F300-\U0001FAFF\u2600-\u27BF])\s*(?=\w)"  # after an emoji
    r"|(?<=[。！？])(?=[a-z])"  # 那就用 pgvector。pg 版本是16 (the segmenter waits for a capital)
    r"|(?<=[a-z0-9)'\".%])\s+(?=(?:Also|So|But|And|Then|Oh|Ok|OK|Okay|Btw|BTW|Anyway|Plus|Actually"
    r"|Honestly|Basically|My|Our|We|We're|We've|We'll|It|It's|This|That|That's|There|He|She|They"
    r"|What|How|Why|When|Where|Which|Who|Can|Could|Should|Would|Is|Are|Do|Does|Did|Will|Please"
    r"|Thanks|Thank|Yeah|Yes|No|Hmm|Ugh|Wait|Sorry|Also|Just|Let's|Lets|Any|Maybe|I'm|I've|I'll"
    r"|I'd|Not|Never|Always|Don't|Budget|Note)\b)"
    # a request run on in lower case: "…at 3pm now can you shift things"
    r"|(?<=[a-z0-9])(?<!\byou)(?<!\bu)\s+"
    r"(?=(?:can|could|would|will) (?:you|u) (?!be\b|have\b)[a-z])"
    r"|(?<=[a-z0-9])\s+(?=(?:what|how|why|where|which|who|should|can|could|would|do|does|is|are)"
    r"\s+(?:i|we|you|it|they|the|this|that|there|he|she|my|our)\b[^.!?]*\?\s*$)"
    # "…REALLY wants the band ok we're going with the band": a lower-case "ok" that opens
    # what the person says next
    # (not "ok" said of something: "is it ok we use pnpm", "sounds ok so we ship")
    r"|(?<=[a-z])(?<!\bis)(?<!\bit)(?<!\bbe)(?<!\bwas)(?<!\bare)(?<!sounds)(?<!looks)(?<!seems)"
    r"(?<!\bfeel)(?<!that's)(?<!it's)(?<!\bthat)(?<!\bthis)(?<!\bits)"
    r"\s+(?=(?:ok|okay|alright)\s+(?:we|i|let's|lets)\b)"
    # chat text goes on in lower case after a full stop: "one-time is ok. we're on 8.9"
    r"|(?<=[.!?])\s+(?=[a-z])"
)
#: Words a full stop ends without ending the sentence ("vs. memcached", "approx. 5").
_ABBREVIATIONS = frozenset(
    """vs etc approx incl excl esp min max no nr fig cf al dept est ca mr mrs ms dr st jr sr
    ft lb lbs oz pt qt tsp tbsp hr hrs sec mins ave blvd rd mt jan feb mar apr jun jul aug
    sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun""".split()
)
_WORD_BEFORE = re.compile(r"([\w.]*\w)[.!?]+$")
#: A unit written short after its number, and its full stop: "10 min.", "2 hrs.", "5 lbs."
#: (where "min. 5" or "approx. 5" goes on).
_SHORT_UNIT_END = re.compile(
    r"\d\s*(?:ms|s|secs?|mins?|m|hrs?|h|days?|d|wks?|mos?|yrs?|kb|mb|gb|tb|k|lbs?|oz|ft|km|mi"
    r"|pt|qt|tsp|tbsp)\.$",
    re.I,
)
#: Words that go on with a value after its unit: "2 hrs. max", "5 min. per user", "3 yrs.
#: of backups", "30 sec. or so".
_GOES_ON_AFTER_UNIT = re.compile(
    r"(?:max|min|maximum|minimum|tops|each|per|of|or|between|before|after|until|till|apart"
    r"|ago|later|long)\b",
    re.I,
)


def _ends_sentence(before: str, after: str = "") -> bool:
    """Whether the full stop (or ! or ?) that ends ``before`` ends a sentence, when a
    lower-case word follows: not after an abbreviation or an initial ("e.g.", "vs.",
    "J.")."""
    m = _WORD_BEFORE.search(before)
    if m is None:
        return False
    word = m.group(1).lower()
    if _SHORT_UNIT_END.search(before):
        # "finish in under 10 min. ruff line-length is 100": a unit ends it, unless what
        # follows goes on with it ("2 hrs. max", "3 yrs. of backups")
        return not _GOES_ON_AFTER_UNIT.match(after)
    return len(word) > 1 and "." not in word and word not in _ABBREVIATIONS


#: "…the nanny share it has to be…": a subject and its verb start a clause, unless the
#: word before them leads into it ("I think it has", "because it is", "anything he has
#: to take"), or they end the sentence as the idiom of a choice ("ok Biscuit it is then").
_SUBJECT_START = re.compile(
    r"(?<=[a-z0-9%])\s+(?!it\s+is(?:\s+then)?[\s!.]*$)"
    r"(?=(?:i|we|it|they|he|she)\s+(?:is|are|was|were|has|have|had|can|can't|will"
    r"|would|should|must|need|needs|doesn't|don't|didn't|isn't|wasn't|won't|gets|got|goes|went"
    r"|says|said|takes|took|starts|eats|works|lives|uses|runs|knows|wants|likes|loves|hates"
    r"|just|also|still|already|really|only|never|always)\b)"
)
_LEADS_INTO_SUBJECT = frozenset(
    """think thought said says know knew guess hope mean means believe feel told tell ask asked
    want wanted need make let help see saw because that if when so and but or nor than as since
    unless until where what how why which who whether to for with of in on at by from about like
    is are was were be did does do sure maybe also then once after before while though just
    realized noticed found heard assuming suppose figure bet wish promise remember forgot
    thinks knows believes feels hopes reckons insists claims suggests figures guesses agrees
    argues mentions mentioned suggested insisted claimed agreed argued figured reckon insist
    tells anything everything something nothing anyone everyone someone nobody anywhere
    somewhere everywhere whatever whichever""".split()
)


def _units_go_on(segments: list[str]) -> list[str]:
    """The segmenter's sentences, joined again where a unit written short ends one and the
    next goes on with it ("deploy window is 2 hrs. max", "keep 3 yrs. of backups")."""
    out: list[str] = []
    for seg in segments:
        if out and _SHORT_UNIT_END.search(out[-1].rstrip()) and _GOES_ON_AFTER_UNIT.match(seg):
            out[-1] += seg
        else:
            out.append(seg)
    return out


def _after_units(piece: str) -> list[str]:
    """ "…is 30 s. Can you…": a unit's period ends the sentence (the segmenter reads "s."
    as an abbreviation)."""
    out, pos = [], 0
    for m in _UNIT_STOP.finditer(piece):
        if _NUMBER_UNIT_END.search(piece[pos : m.start()]):
            out.append(piece[pos : m.start() + 1])
            pos = m.end()
    out.append(piece[pos:])
    return out


#: A space in Chinese text with a number or a Latin word on one side ("那就西安吧 10月2号出发",
#: "batch size 16 学习率2e-4 跑3个epoch 帮我写个train.py"): see ``_mixed_space_ends``.
_MIXED_SPACE = re.compile(
    r"(?<=[\u3400-\u9fff])[ \u3000]+(?=[A-Za-z0-9])"
    r"|(?<=[A-Za-z0-9%])[ \u3000]+(?=[\u3400-\u9fff])"
    r"|(?<=[0-9%])[ \u3000]+(?=[A-Za-z])"
)
#: A closing particle: what comes before it is said in full.
_CLOSING = re.compile(r"[吧啊呢哈嘛呀啦]$")
#: A Chinese predicate with its Latin object ("帮我写个train.py"), not "，minSdk".
_CJK_THEN_LATIN = re.compile(
    r"[\u3400-\u9fff]{2}[A-Za-z][\w.+-]*$"
    # a verb and a setting's name of two words: "开gradient checkpointing"
    r"|(?:^|[\s，,])[开关][A-Za-z][\w.+-]* [A-Za-z][\w.+-]*$"
)
_MEASURE = "个台张块件套只条位名家部款种次处份篇行项段页层步轮"
_COUNT = rf"[0-9零一二两三四五六七八九十百千万几]+[{_MEASURE}]"
#: A count before the thing counted ("两台 L4"), and said as the topic ("两个 yml 我对比过").
_MEASURE_END = re.compile(rf"{_COUNT}$")
_COUNTED_TOPIC = re.compile(rf"^{_COUNT}\s*[A-Za-z][\w.+-]*$")
#: The words before a space, from the last comma or colon (at most this far back).
_LAST_PART = re.compile(r"[^，,、；;：:（(]*$")
_REACH = 60
#: What leads into the words after it (和, 从, 改成, 的…) …
_LEADS_ON = re.compile(
    r"(?:和|跟|与|或|或者|还是|及|以及|把|被|对|给|在|从|到|用|是|为|设|改成|调到|换成|改到|降到|升到"
    r"|比|叫|说|要|想|让|像|约|大概|差不多|至少|最多|不超过|不低于|不是|的|一共|总共|共|有)$"
)
#: … and what goes on from the words before it (左右, 就行, 的, 比, 改到, 上，…).
_GOES_ON = re.compile(
    r"(?:左右|上下|以上|以下|以内|之内|之间|多|来|余|的|得|地|了|吗|呢|吧|啊|哈|嘛|呀|啦|等|和|跟|与"
    r"|或|还是|及|以及|也|都|就|才|又|再|版|是|被|比|起|试|看看|[改换降升调变涨减加提](?:到|成|为|至)|到|至"
    r"|[上里中内外下](?![\u3400-\u9fff]))"
)
#: A short modifier of what came before ("4 核 8G 的", "64G 内存的").
_MODIFIER = re.compile(r"[^\s，,。！!？?；;]{0,4}\s?的(?=[\s，,。！!？?；;]|$)")
#: "从 3.9 升上来": a "from" whose "to" has not come yet.
_OPEN_FROM = re.compile(r"从(?!.*[到至])")
#: What follows a space, up to the next punctuation (at most ``_REACH`` characters).
_HEAD = re.compile(r"[^，,。！!？?；;：:]*")
_LATIN = re.compile(r"[A-Za-z]")


#: A version said as what a thing is or uses ("python 只能用 3.8", "clickhouse 是 23.8").
_VERSION_SAID = re.compile(r"(?:是|用|到|为)\s*$")


def _values_of(text: str) -> list[Value]:
    """The values of ``text`` that say something: no day of the week, no version but
    one said as what a thing is or uses."""
    from convmem.core.dates import WEEKDAYS
    from convmem.core.numbers import find_numbers

    return [
        v
        for v in find_numbers(text)
        if (v.type != "version" or _VERSION_SAID.search(text, max(0, v.start - 16), v.start))
        and v.value not in WEEKDAYS
    ]


def _value_owner(piece: str) -> list[int]:
    """For each character of ``piece``, the index of the value it is part of (-1: none)."""
    from convmem.core.numbers import find_numbers

    owner = [-1] * len(piece)
    for n, v in enumerate(find_numbers(piece)):
        owner[v.start : v.end] = [n] * (v.end - v.start)
    return owner


def _mixed_space_ends(piece: str, pos: int, m: re.Match[str], owner: list[int]) -> bool:
    """Whether a space between Chinese and a number or Latin word ends a sentence.

    The words before it (from the last comma) must be said in full: a value, a closing
    particle, or a predicate with its Latin object; and what follows must hold a value
    or a Latin word of its own, or start a correction ("利率是3.85 不对 是3.95"). Never
    when the words before lead into what follows (和, 从, 的, 改成), when what follows
    goes on from them (左右, 就行, 比, 起, a measure word after a number, a short "…的"),
    says the options are open, or is said about a value alone ("9000 被占了"), nor inside
    a value ("30 分钟"). So "那就西安吧 10月2号出发 5号回" is three sentences, while
    "MinIO 和 Ceph 我们还没定", "端口 9000 已经被占了" and "我们用Python 开发" stay one.
    Each test reads a bounded stretch around the space.
    """
    a, b = m.start(), m.end()
    if 0 <= owner[a - 1] == owner[b]:
        return False  # inside a value
    if a - pos <= 24 and _OPENER.fullmatch(piece[pos:a].strip()):
        return False  # "算了 80那个不用管了": the opener belongs to what follows
    tail = _LAST_PART.search(piece, max(pos, a - _REACH), a).group().strip()  # type: ignore[union-attr]
    head = _HEAD.match(piece, b, b + _REACH).group()  # type: ignore[union-attr]
    if len(tail) < 2 or len(head) < 2 or _LEADS_ON.search(tail) or _OPEN_FROM.search(tail):
        return False
    if _COUNTED_TOPIC.match(tail) or _GOES_ON.match(piece, b) or _MODIFIER.match(piece, b):
        return False
    if _OPEN_CHOICE.match(piece, b):
        return False
    if piece[b] in _MEASURE or (piece[b].isascii() and _MEASURE_END.search(tail)):
        return False
    values = _values_of(tail)
    if values and values[0].start == 0 and values[-1].end == len(tail):
        return False  # "9000 被占了", "0.78 有点低": the value is what the rest is about
    if not (values or _CLOSING.search(tail) or _CJK_THEN_LATIN.search(tail)):
        return False
    return bool(_LATIN.search(head) or _values_of(head) or _CORRECTS_NEXT.match(head))


#: A topic said alone before a space, then what is said of it ("咖啡 就2杯吧").
_BARE_TOPIC = re.compile(r"\s*[\u3400-\u9fff]{1,4}(?<![了吧啊呢哈嘛呀啦吗的])\s*$")
_COMMENT = re.compile(
    r"(?:就|还是)\s*(?:给|用|选|设|定)?\s*[\d两一二三四五六七八九十](?![^，,。]*[吗呢？?])"
)


def _run_ons(piece: str) -> list[str]:
    """Chat text runs sentences together: a space between Chinese words, an emoji, a
    capitalised sentence opener after a lower-case word, a trailing question."""
    out, pos = [], 0
    mixed = list(_MIXED_SPACE.finditer(piece)) if _CJK.search(piece) else []
    owner = _value_owner(piece) if mixed else []
    marks = sorted(
        [*_RUN_ON.finditer(piece), *_SUBJECT_START.finditer(piece), *mixed],
        key=lambda m: m.start(),
    )
    for m in marks:
        if m.start() <= pos or m.end() >= len(piece):
            continue
        if m.re is _MIXED_SPACE and not _mixed_space_ends(piece, pos, m, owner):
            continue
        if _UNDECIDED_END.search(
            piece, max(pos, m.start() - 12), m.start()
        ) and _CHOICE_AHEAD.match(piece, m.end(), m.end() + _REACH):
            continue  # "还有个事没想好 年终奖是提前还房贷还是买理财": the choice left open
        if piece[m.start() - 1] in ".!?" and not _ends_sentence(
            piece[pos : m.start()], piece[m.end() : m.end() + 16]
        ):
            continue
        if m.re is _SUBJECT_START:
            before = piece[pos : m.start()].split()
            if not before or before[-1].lower() in _LEADS_INTO_SUBJECT or len(before) < 3:
                continue
        if _CJK.search(piece[m.end() : m.end() + 1]) and len(piece[pos : m.start()].strip()) < 2:
            continue
        if piece.startswith("是", m.end()) and (
            _NOT_THIS.search(piece, pos, m.start()) or _WRONG_BEFORE.search(piece, pos, m.start())
        ):
            continue  # "不是周三 是周四晚上", "学习率不对 是1e-4": one correction
        if _NOT_THAT.match(piece, m.end()):
            continue  # "婚期是5月20号 不是18号": the value and the one it replaces
        if _VERDICT_AFTER.match(piece, m.end()) and _VALUE_BEFORE.search(piece, pos, m.start()):
            continue  # "DBA 说 50 太多了": the value and the verdict on it
        if _INSTEAD_NEXT.match(piece, m.end()) and _DROPPED.search(piece, pos, m.start()):
            continue  # "不去日本了 改去韩国": one change of plan
        if _BARE_TOPIC.match(piece, pos, m.start()) and _COMMENT.match(piece, m.end()):
            continue  # "咖啡 就2杯吧", "瑜伽 还是给2次吧": a topic, then what is said of it
        out.append(piece[pos : m.start()])
        pos = m.end()
    out.append(piece[pos:])
    return out


def sentences(text: str) -> list[Span]:
    """Prose sentences of a message, with offsets; pasted material is never among them."""
    return list(_sentences(text))


@lru_cache(maxsize=_RECENT)
def _sentences(text: str) -> tuple[Span, ...]:
    out: list[Span] = []
    for line in _prose_lines(text):
        body_start = line.start
        m = (
            _LIST_MARKER.match(line.text)
            or _CN_LIST_MARKER.match(line.text)
            or _HEADING.match(line.text)
        )
        content = line.text
        if m:
            body_start += m.end()
            content = line.text[m.end() :]
        if not content.strip():
            continue
        language = "zh" if _CJK.search(content) else "en"
        cursor = 0
        pieces = (
            q
            for seg in _units_go_on(_segmenter(language, content))
            for p in _after_units(seg)
            for q in _run_ons(p)
        )
        for piece in pieces:
            at = content.find(piece, cursor)
            if at < 0:
                at = cursor
            cursor = at + len(piece)
            stripped = piece.strip()
            if not stripped:
                continue
            lead = len(piece) - len(piece.lstrip())
            start = body_start + at + lead
            out.append(Span(start, start + len(stripped), stripped))
    return tuple(out)


# --- clauses ------------------------------------------------------------------------------

#: Where a sentence divides into clauses: the separator is dropped, both sides kept.
_SPLIT_EN = re.compile(
    # (a match that starts with white space starts where it starts: a run of thousands of
    # spaces is then read once, not once from each of its spaces)
    r"(?<!\s)\s*;\s+"
    r"|(?:,|(?<![\s,]))\s+(?:but|although|though|whereas|(?<!\ba\s)while|however|because|since"
    r"|so that"
    r"|as long as)\s+(?!of\b)"
    r"|,\s+yet\s+"  # (without a comma "yet" is the adverb: "we haven't decided yet between…")
    r"|,\s*so\s+|(?<!\s)\s+so\s+(?=(?:i|we|you|it|they|he|she|that|this|let's|please)\b"
    # a result, not a purpose: "so the place has to…", not "so my mother can hear"
    r"|(?:the|my|our|his|her|their|everything|nothing|anything|all|every|each)\b"
    r"(?!(?:\s+[\w'-]+){0,3}\s+(?:can|could|will|would|won't|get|gets|(?:have|has)(?!\s+to))\b))"
    r"|(?<!\s)\s+[—–]\s+|(?<!\s)\s+-{1,2}\s+|(?<!\s)\s*—\s*"
    r"|,\s+(?:which|and then|then|plus|also|otherwise|anyway|anyways)\s+"
    r"|,\s+(?=(?:if|unless|when|once|until|before|after)\s+(?:i|we|you|it|they|the|there|that"
    r"|this|he|she|my|our)\b)"
    r"|,\s+and\s+(?=(?:i|we|you|it|they|he|she|my|our|the|that|this|please|also|don't|do not"
    r"|never|always|keep|use|make|set|put|no|then)\b)"
    r"|(?<!\s)\s+and\s+(?=(?:i|we)(?:'m|'ll|'ve|'d|\s+(?:am|will|have|had|want|need|prefer|booked|"
    r"decided|chose|picked|bought|accepted)\b))"
    r"|,\s+(?=(?:i|we|you|they|it|he|she)(?:'m|'re|'ll|'ve|'d|'s|\s+(?:am|are|is|was|were|have|has"
    r"|had|need|want|will|would|should|must|can|could|do|did|don't|didn't|prefer|booked|got|"
    r"live|work|earn|make|think|guess|dont|didnt|cant|doesnt))\b)"
    r"|(?<!\s)\s+so\s+(?=(?:don't|dont|do not|make sure)\b)"
    r"|,\s+(?=(?:ideally|preferably)\b)"
    # a request after what the person tells: "…a beagle mix from the shelter, tips for
    # introducing her?", "…on the 9th, help me with slides?"
    r"|,\s+(?=(?:help me|can you|could you|can u|pls|please|tips for|any tips|ideas for"
    r"|suggestions? for|recommend)\b)"
    r"|,\s+(?=(?:is|are|does|do|did|can|could|should|would|will|what|how|which|why|when|where|"
    r"who|any|right|or)\b[^.!]*\?\s*$)",
    re.I,
)
_SPLIT_ZH = re.compile(
    r"[；;]\s*"
    r"|(?:，|,(?!\d{3}))\s*(?=(?:但是|但|不过|可是|所以|因此|因为|而且|并且|另外|还有|然后|同时|此外|否则|"
    r"以及|顺便|对了|哦对|另|再就是|其次|最后|首先))"
    r"|(?<=[\u4e00-\u9fff])(?<!之)(?=(?:所以|但是|可是|因此)(?!说))"
    r"|(?:，|,(?!\d{3}))\s*(?=[^，,。]{0,12}(?:吗|呢|么|嘛)[？?]?\s*$)"
    r"|(?:，|,(?!\d{3}))\s*(?=[^，,。]*[？?]\s*$)"
)
#: Chinese commas split too when both sides are clauses of their own.
_ZH_COMMA = re.compile(r"(?:，|,(?!\d{3}))\s*")
_ZH_LEADS_INTO = re.compile(
    r"^(?:不是|虽然|与其|在|如果|要是|假如|假设|万一|当|对于|关于|为了|除了|等|一旦|只要|无论|不管)"
)

#: What owns up to a slip: 错了 ("记错了", "打错了", "搞错了") or 反了 ("说反了"); 说错了 is listed
#: apart where a pattern takes it.
SLIPPED = "(?:[打记看写听搞弄算]错了|[说写搞弄记看]反了)"
#: The same in English: the verbs of a slip owned up to ("I misread", "misremembered").
MISSPOKE = "misread|misheard|misremembered|mistyped|misspoke"

_SEP = r"[\s,，.。:：!！;；—-]+"
_PUNCT = r"\s*[,，.。:：!！;；—-]+\s*"
#: Words that also start a clause of their own are openers only where they are not part
#: of it: "no" before a new clause ("no we use pnpm", not "no more than 2"), "wait" not
#: before "for", "right" not before "now", "perfect" not before "for"; "update" and
#: "note" only before punctuation.
_NO = (
    r"(?:no|nope)(?:\s+(?=(?:i|i'm|i'd|we|we're|it|it's|that|that's|you|they|he|she|my|our"
    r"|her|his|their|your|the|no|nope|not|just|actually|wait|sorry|so|then|let's|lets|please"
    r"|ok|okay)\b|[\u3400-\u9fff])|" + _PUNCT + "|$)"
)
_NOT_BEFORE = (
    r"(?:wait(?!\s+(?:for|until|till|on|up|out|around|a|an|to|and|or|time|times|list|staff)\b)"
    r"|right(?!\s+(?:now|away|after|before|here|there|next|at|in|on|by|to|of|side|hand|click"
    r"|answer|way|thing|one)\b)"
    r"|well(?!\s+(?:documented|known|done|tested|maintained|suited|over|under|below|above|within"
    r"|before|after|as|enough|worth)\b)"
    r"|(?:great|cool|perfect|nice)(?!\s+(?:for|to|with|at|in|on|and|or|but|if|as|enough|idea"
    r"|job|work|place|spot|choice|option|one|thing|things|question|point|down|off|weather|day)\b))"
    r"(?:" + _SEP + "|$)"
)
#: Openers trimmed from the front of a clause; the ones that mark a correction are kept.
_OPENER = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|so|also|and|but|oh|ah|hmm+|yeah|yes|yep|btw|fyi"
    r"|honestly|basically|anyway|anyways|one more thing|another thing|oh and|and also|plus|then"
    r"|actually|correction|scratch that|sorry|oops|my bad|never mind|nvm"
    r"|not quite|hold on|hm+|um+|uh+|lol|haha|thanks|thank you|got it"
    r"|sounds good|ah ok|ok so|ok cool|ugh|ps|p\.s\.|also note|quick note"
    r"|no worries|no problem|no idea|no clue|no way|np"
    r"|好的|好|嗯+|哦+|噢|那|那么|另外|还有|对了|其实|话说|然后|所以|不过|但是|算了|不对(?:不对)*"
    r"|等等|哦对"
    r"|更正|纠正|补充|刚才说错了|说错了|我说错了|改一下|对|是的|行|可以|好吧|ok的|收到|明白"
    r"|changed my mind|on second thought|(?:我|刚才|刚刚)*"
    + SLIPPED
    + r"|(?:i\s+)?(?:"
    + MISSPOKE
    + r")|my mistake"
    r"|(?:刚才|之前|前面|上面)说的(?:那个|那些)?不算了?|当我没说)"
    r"(?:" + _SEP + "|$)"
    # 其实 before the words it opens, with nothing between ("其实要请150个人")
    r"|其实(?=[\u4e00-\u9fff])"
    r"|" + _NO + "|" + _NOT_BEFORE + r"|(?:update|edit|note|important)(?:" + _PUNCT + "|$)"
    # a plan's label before what it is: "ok plan: $600 a month into the HYSA, …"
    r"|(?:(?:the|new|final|our|my)\s+)?(?:plan|decision)\s*[:：]\s*"
    # "update we're down to 4 ppl": news, not a request to update something
    r"|update\s+(?=(?:we're|were|i'm|im|it's|its|they're)\b))+",
    re.I,
)
_CORRECTION_OPENER = re.compile(
    r"\b(?:actually|correction|scratch that|wait|sorry|oops|my bad|never mind|nvm|update|not quite"
    r"|hold on|no|nope|changed my mind|on second thought|my mistake|"
    + MISSPOKE
    + r")\b|算了|不对|等等|更正|纠正|说错了"
    r"|" + SLIPPED + "|改一下|其实|说的(?:那个|那些)?不算|当我没说",
    re.I,
)


def only_correction(text: str) -> bool:
    """Whether ``text`` is nothing but openers, one of them a correction's ("不对",
    "Wait.", "nope"): what it corrects is said in the next sentence."""
    text = text.strip()
    m = _OPENER.match(text)
    return m is not None and not text[m.end() :].strip() and bool(_CORRECTS_NEXT.search(text))


#: Openers that say the next sentence puts a value right; not 算了 or "never mind", which
#: as often drop a plan for another one ("算了 就接电商的").
_CORRECTS_NEXT = re.compile(
    r"\b(?:actually|correction|wait|sorry|oops|my bad|not quite|hold on|no|nope|update|edit)\b"
    r"|不对|等等|更正|纠正|说错了|" + SLIPPED + "|说的(?:那个|那些)?不算",
    re.I,
)


_TRAILING = re.compile(r"(?<![\s,，;；:：、—–-])[\s,，;；:：、—–-]+$")


@dataclass(frozen=True)
class Clause:
    """A clause of a sentence: its span, the opener trimmed from it, and its sentence."""

    start: int
    end: int
    text: str
    opener: str
    sentence: Span

    @property
    def corrects(self) -> bool:
        return bool(_CORRECTION_OPENER.search(self.opener))


_COMMA = re.compile(r",\s+(?:and\s+|so\s+)?|(?<!\s)\s+and\s+(?!\d|\$|€|£|¥)")
_DIGIT = re.compile(r"\d")


_FINITE = re.compile(
    r"\b(?:is|are|was|were|am|be|been|has|have|had|do|does|did|can|could|can't|cannot|will|would"
    r"|won't|should|shouldn't|must|need|needs|want|wants|use|uses|used|run|runs|work|works|take"
    r"|takes|know|knows|own|owns|go|goes|went|get|gets|got|say|says|said|told|moved|booked|bought"
    r"|eat|eats|live|lives|make|makes|keep|keeps|prefer|like|likes|love|hate|cost|costs|pay|pays"
    r"|start|starts|stay|stays|seem|seems|look|looks|sounds|matters|squashes|doesn't|don't"
    r"|didn't|isn't|aren't|wasn't|weren't)\b|'s\b|'re\b|'m\b|'ll\b|'ve\b|'d\b|\b\w+ed\b",
    re.I,
)
#: A clause that starts by telling what to do ("set pool_size to 10, leave max_overflow
#: alone": two instructions).
_IMPERATIVE = re.compile(
    r"(?:please\s+)?(?:use|keep|make|set|put|stick|avoid|pin|store|leave|limit|cap|stay|skip"
    r"|drop|bump|raise|lower|turn|switch|add|remove|run|cache|retry|reply|answer|write|send)\b"
    # a choice said as what is taken ("going with the bigger company after all")
    r"|(?:let'?s\s+)?(?:go|going|went|stick|sticking|switching)\s+(?:with|to|back)\b",
    re.I,
)
#: … or says the end of a choice ("logan square then, wicker park is pricier").
_THEN_END = re.compile(r"\bthen$", re.I)
_LIMITS = re.compile(
    r"(?:for|in|on|at|with|to|from|by|of|as|except|unless|including|without|where|otherwise"
    r"|or|and|but|so|because|since)\b",
    re.I,
)
#: The words that open and close "between … and …" (a "between" is open until an "and").
_BETWEEN_AND = re.compile(r"\b(?:between|and)\b", re.I)
_CLAUSE_JOIN = re.compile(r",\s+|(?<!\s)\s+and\s+(?!then\b)")
#: A requirement with its subject left out after a comma, in a search ("looking for a
#: hotel in austin for 3 nights, needs to be pet friendly"): a clause of its own ("a 3
#: bedroom near the school, must have a yard" is one requirement).
_REQUIREMENT_START = re.compile(r"(?:needs? to|has to|have to|must|should)\s+(?:be|have)\b", re.I)
_SEARCHING = re.compile(r"(?:i'm |im |we're |were )?(?:looking|searching|shopping|hunting)\b", re.I)
_LEADS_IN = re.compile(
    r"^(?:if|when|once|unless|until|before|after|while|as long as|since)\b", re.I
)


def _two_clauses(text: str) -> list[tuple[int, int]]:
    """ ", the team already knows it", "… is 50ms and the pool is 20": a comma or an "and"
    between two clauses that each have a verb of their own divides them."""
    if _LEADS_IN.match(text):
        return []  # "if it's slow, skip the cache": one conditional rule
    out = []
    marks = list(_CLAUSE_JOIN.finditer(text))
    start = 0
    # what the words since the last cut hold, kept as each piece between two marks is
    # read (reading them again at every mark was quadratic in a long list)
    enough, finite, between = False, False, False
    for i, m in enumerate(marks):
        fresh = i == 0 or start == marks[i - 1].end()
        piece = text[start if fresh else marks[i - 1].start() : m.start()]
        enough = enough or len(text[start : m.start()].split()) >= 3
        finite = finite or bool(_FINITE.search(piece))
        for word in _BETWEEN_AND.findall(piece):
            between = word.lower() == "between"
        right_end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        right = text[m.end() : right_end]
        if not enough or len(right.split()) < 3:
            continue
        if "and" in m.group() and between:
            continue  # "torn between the back room at Rosalind's and my mom's house"
        left = text[start : min(m.start(), start + 200)]  # (only its start is read)
        opener = _OPENER.match(left)
        # an instruction is a clause of its own, but not before what limits it ("store
        # dates as strings, for anything that's a calendar day")
        told = (
            _IMPERATIVE.match(left, opener.end() if opener else 0)
            or _THEN_END.search(text, max(start, m.start() - 8), m.start())
        ) and not _LIMITS.match(right)
        if (
            (finite or told)
            and (_FINITE.search(right) or (told and _IMPERATIVE.match(right)))
            and not _LEADS_IN.match(right)
        ) or (
            m.group().startswith(",") and _SEARCHING.match(text) and _REQUIREMENT_START.match(right)
        ):
            out.append(m.span())
            start = m.end()
            enough, finite, between = False, False, False
    return out


def _value_list(text: str) -> list[tuple[int, int]]:
    """ "$92k base, 10% bonus target, 3 weeks PTO": a list of values is a list of clauses.

    A comma divides two neighbours that both hold a number; never before the value a
    correction rejects ("2000 tokens, not 3000").
    """
    marks = [m.span() for m in _COMMA.finditer(text)]
    if not marks:
        return []
    bounds = [0, *[x for span in marks for x in span], len(text)]
    parts = [text[bounds[i] : bounds[i + 1]] for i in range(0, len(bounds), 2)]
    out = []
    for i, span in enumerate(marks):
        left, right = parts[i], parts[i + 1]
        if "and" in text[span[0] : span[1]] and _BETWEEN_END.search(left):
            continue  # "between 50 and 100"
        if _DIGIT.search(left) and _DIGIT.search(right) and not _REJECTS.match(right):
            out.append(span)
    return out


#: "walkable to the old town and under £150 a night": an "and" before a bound and its
#: value joins two requirements (each may be put right or withdrawn alone).
_AND_BOUND = re.compile(
    r"(?<=\w)\s+and\s+(?=(?:under|below|over|above|within|up to|less than|more than"
    r"|fewer than|no more than|no less than|not more than|at most|at least|max(?:imum)?"
    r"|min(?:imum)?)\s+(?:of\s+)?[$€£¥]?\d)",
    re.I,
)
_BETWEEN_END = re.compile(r"\bbetween\s+\S+$", re.I)
_REJECTS = re.compile(r"(?:not|rather than|instead of|and not|but not|no longer|never)\b", re.I)


#: "sorry i said 6k down earlier, it's 7,000": the value said before and the right one
#: are one correction.
_SAID_EARLIER = re.compile(
    r"\bi (?:said|wrote|typed|put)\s+[^,.;!?]{1,30}?\s+(?:earlier|before|above)\s*$", re.I
)
_PUT_RIGHT = re.compile(r"(?:it'?s|it is|it should be|should be|i meant|that'?s|it was)\b", re.I)


def _pieces(sentence: Span) -> list[tuple[int, int]]:
    text = sentence.text
    cuts: list[tuple[int, int]] = []
    pattern = _SPLIT_ZH if _CJK.search(text) else _SPLIT_EN
    for m in pattern.finditer(text):
        if m.start() == 0 or m.end() >= len(text):
            continue
        cuts.append(m.span())
    if not _CJK.search(text):
        cuts += _value_list(text) + _two_clauses(text)
        cuts = [
            (a, b)
            for a, b in cuts
            if not (_SAID_EARLIER.search(text, 0, a) and _PUT_RIGHT.match(text, b))
        ]
        cuts += [
            m.span()
            for m in _AND_BOUND.finditer(text)
            if len(text[: m.start()].split()) >= 2
            and not _BETWEEN_END.search(text, max(0, m.start() - 64), m.start())
            and not _LEADS_IN.match(text)  # "if it's a weekday and under $100, book it"
        ]
    if _CJK.search(text):
        cuts = _zh_commas(text, cuts)
        cuts += [
            m.span()
            for m in _SPLIT_EN.finditer(text)
            if not _CJK.search(m.group())
            and m.start() > 0
            and m.end() < len(text)
            and ";" in m.group()
        ]
    cuts.sort()
    out: list[tuple[int, int]] = []
    pos = 0
    for a, b in cuts:
        if a < pos:
            continue
        out.append((pos, a))
        pos = b
    out.append((pos, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _zh_commas(text: str, cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Chinese run-on sentences: a comma divides two clauses that each say something.

    A piece that only leads into the next one (a condition "在高峰期", "如果…") or
    is too short to stand alone stays joined to what follows.
    """
    extra: list[tuple[int, int]] = []
    marks = [m.span() for m in _ZH_COMMA.finditer(text)]
    start = 0
    for a, b in marks:
        if a == 0 or b >= len(text):
            continue
        left = text[start:a].strip()
        stripped_left = _OPENER.sub("", left)
        if len(stripped_left) <= 2 or _ZH_LEADS_INTO.match(stripped_left):
            continue  # joined to the next piece
        if text[b:].startswith(("而是", "而不是", "而非")):
            continue  # "…不是 60 秒，而是 300 秒": one correction
        if _INSTEAD_NEXT.match(text, b) and _DROPPED.search(text, start, a):
            continue  # "不去日本了，改去韩国": one change of plan
        if _OPEN_CHOICE.match(text, b):
            continue  # "钢琴或者舞蹈，还没想好": the options are what is not decided
        if not any(x <= a < y for x, y in cuts):
            extra.append((a, b))
        start = b
    return cuts + extra


def clauses(sentence: Span) -> list[Clause]:
    """The clauses of one sentence, openers trimmed (and remembered), ends tidied."""
    out: list[Clause] = []
    opener_carry = ""
    for a, b in _pieces(sentence):
        piece = sentence.text[a:b]
        lead = len(piece) - len(piece.lstrip())
        a += lead
        piece = piece.strip()
        m = _OPENER.match(piece)
        opener = opener_carry
        if m:
            opener = (opener + " " + m.group()).strip()
            a += m.end()
            piece = piece[m.end() :]
        tail = _TRAILING.search(piece)
        if tail and not piece.rstrip().endswith(("?", "？")):
            piece = piece[: tail.start()]
        elif piece.rstrip().endswith(("?", "？")):
            piece = piece.rstrip()
        if not piece.strip():
            opener_carry = opener  # "Actually," on its own: it belongs to what follows
            continue
        opener_carry = ""
        start = sentence.start + a
        out.append(Clause(start, start + len(piece), piece, opener, sentence))
    if opener_carry and out and _CORRECTION_OPENER.search(opener_carry):
        # "家长会周五晚上七点，刚才说错了": a slip owned up to after what it puts right
        last = out[-1]
        out[-1] = dataclasses.replace(last, opener=f"{last.opener} {opener_carry}".strip())
    return out
