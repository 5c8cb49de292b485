"""Numbers as people write them, in English and Chinese, typed and with their unit.

:func:`find_numbers` reads a piece of text and returns every number in it as a
:class:`Value`: its exact text, a type (``quantity``, ``money``, ``percent``,
``duration``, ``time``, ``date``, ``version``, ``number``), the value (a float, or
a canonical string for dates ``YYYY-MM-DD`` / ``MM-DD`` / ``YYYY-MM``, clock times
``HH:MM`` and versions), the upper end of a range, a canonical unit and a bound
(``upper`` for "under 200 ms" / "200毫秒以内", ``lower`` for "at least 3" / "4.5分以上").

Written forms covered: digits with thousands separators and decimals, ``k``/``M``/
``万``/``千``/``亿`` multipliers, Chinese numerals (``三千``, ``两百``, ``一万五``,
``两个半``), ``百分之…``, currency signs and words before or after the number,
ranges (``50-100``, ``50 to 100``, ``between 50 and 100``, ``50到100``,
``1小时 - 2小时``), English and Chinese clock times (``8:30 PM``, ``晚上8点半``) and
dates (``2024-03-15``, ``May 5``, ``5月5号``), and versions (``Python 3.12``,
``v2.3.1``), which are never quantities. Text with no spaces between Chinese and
digits (``上限是3000元``) reads the same as spaced text.

Everything is a pure function of the text: the same input gives the same values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# --- units -----------------------------------------------------------------------------

#: Written unit -> (canonical unit, type). Longest spellings are tried first.
_UNIT_TABLE: dict[str, tuple[str, str]] = {}


def _units(canonical: str, kind: str, *spellings: str) -> None:
    for s in spellings:
        _UNIT_TABLE[s] = (canonical, kind)


_units("ms", "duration", "milliseconds", "millisecond", "msec", "ms", "毫秒")
_units("s", "duration", "seconds", "second", "secs", "sec", "s", "秒钟", "秒")
_units("min", "duration", "minutes", "minute", "mins", "min", "分钟")
_units("h", "duration", "hours", "hour", "hrs", "hr", "h", "小时", "个小时", "个钟头", "钟头")
_units("day", "duration", "days", "day", "天")
_units("week", "duration", "weeks", "week", "wks", "周", "个星期", "星期", "个礼拜", "礼拜")
_units("month", "duration", "months", "month", "个月")
_units("year", "duration", "years", "year", "yrs", "年")
_units("B", "quantity", "bytes", "byte")
_units("KB", "quantity", "kb")
_units("MB", "quantity", "mb")
_units("GB", "quantity", "gb", "g")
_units("TB", "quantity", "tb")
_units("KiB", "quantity", "kib", "ki")
_units("MiB", "quantity", "mib", "mi")
_units("GiB", "quantity", "gib", "gi")
_units("TiB", "quantity", "tib", "ti")
_units("lb", "quantity", "lbs", "lb")
_units("mg", "quantity", "mg")
_units("m", "quantity", "meters", "meter", "metres", "metre", "m", "米")
_units("km", "quantity", "kilometers", "kilometer", "kilometres", "kilometre", "km", "公里")
_units("rps", "quantity", "rps", "req/s", "requests/s", "requests per second")
_units("qps", "quantity", "qps")
_units("tps", "quantity", "tps")
_units("token", "quantity", "tokens", "token")
_units("char", "quantity", "characters", "character", "chars", "char", "字符", "个字")
_units("line", "quantity", "lines", "line", "行")
_units("word", "quantity", "words", "word")
_units("%", "percent", "%", "percent", "per cent", "pct")
_units("USD", "money", "dollars", "dollar", "bucks", "usd", "美元", "美金", "刀")
_units("EUR", "money", "euros", "euro", "eur", "欧元")
_units("GBP", "money", "pounds", "gbp", "英镑")
_units("CNY", "money", "元", "块钱", "块", "rmb", "cny", "人民币")
_units("JPY", "money", "yen", "jpy", "日元")
_units("分", "quantity", "分")
_units("star", "quantity", "stars", "star", "星")

#: Chinese measure words and counted nouns kept as written (``3台`` -> unit ``台``).
_CN_COUNTERS = (
    "人", "位", "晚", "间", "台", "个", "次", "条", "张", "件", "套", "辆", "家",
    "层", "页", "本", "节", "份", "场", "周岁", "岁", "斤", "公斤", "千克", "平米", "平",
)  # fmt: skip
for _c in _CN_COUNTERS:
    _UNIT_TABLE.setdefault(_c, (_c, "quantity"))
_UNIT_TABLE["公斤"] = ("kg", "quantity")
_UNIT_TABLE["千克"] = ("kg", "quantity")
_UNIT_TABLE["kg"] = ("kg", "quantity")
_UNIT_TABLE["kgs"] = ("kg", "quantity")
_UNIT_TABLE["平米"] = ("m2", "quantity")
_UNIT_TABLE["sqft"] = ("sqft", "quantity")

_JAPAN = re.compile(
    r"japan|tokyo|kyoto|osaka|hakone|hokkaido|okinawa|\byen\b|日本|东京|京都|大阪|日元", re.I
)
_CURRENCY_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "CNY", "￥": "CNY"}
_CURRENCY_CODES = {"usd": "USD", "eur": "EUR", "gbp": "GBP", "rmb": "CNY", "cny": "CNY"}

#: English words that follow a number but are not what it counts.
_NOT_NOUNS = frozenset(
    """a an the and or of to in on at for with by from into as is are was were be been
    am pm more less than then so but if it its this that these those i we you he she they
    me my our your his her their them us what which who how when where why not no yes all
    any some each every other another both either neither one two three same few many much
    most very too also just only still even about around over under after before per via
    or between up down out off do does did done has have had will would can could should
    shall may might must ago later earlier left remaining total overall plus minus
    x th st nd rd ok okay etc vs am pm because since though although while whereas unless until
    whether cause just maybe probably really already yet again now today tonight tomorrow
    yesterday anyway haha lol please thanks max min tops instead either also ish plus
    """.split()
)
_IE_NOUNS = frozenset({"calorie", "movie", "cookie", "pie", "tie", "rookie", "selfie", "zombie"})
_IRREGULAR_PLURALS = {"people": "person", "children": "child", "men": "man", "women": "woman"}

# --- Chinese numerals ---------------------------------------------------------------------

_CN_DIGIT = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4,
    "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
_CN_SMALL = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_CN_CHARS = "零〇一二两俩三四五六七八九十百千万亿"
_CN_ARTICLE_UNITS = frozenset("家种下点些样位张条件套份本场")
#: Characters that end a counted noun ("3个人的" -> 人).
_CN_PARTICLES = frozenset("的了在要是都和就也还吧呢吗啊呀着过给把被让对从到")


def parse_chinese_number(s: str) -> float | None:
    """``三千`` 3000, ``两百`` 200, ``一万五`` 15000, ``十五`` 15, ``三千五`` 3500."""
    if not s or any(ch not in _CN_CHARS for ch in s):
        return None
    if all(ch in _CN_DIGIT for ch in s):  # digit by digit: 二〇二四
        return float(int("".join(str(_CN_DIGIT[ch]) for ch in s))) if len(s) > 1 else None
    total, section, current = 0, 0, 0
    last_unit = 0
    for ch in s:
        if ch in _CN_DIGIT:
            current = _CN_DIGIT[ch]
        elif ch in _CN_SMALL:
            section += (current or 1) * _CN_SMALL[ch]
            last_unit = _CN_SMALL[ch]
            current = 0
        else:
            total += (section + current) * _CN_BIG[ch]
            last_unit = _CN_BIG[ch]
            section, current = 0, 0
    if (
        current
        and last_unit >= 100
        and not section % (last_unit // 10 or 1)
        and s[-2] in ("万千百亿")
    ):
        # 一万五 = 15000, 三千五 = 3500, 两百五 = 250: a trailing digit is the next place
        current *= last_unit // 10
    return float(total + section + current)


# --- the value --------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A number as written: where it is, what kind of value, and its parts."""

    raw: str
    type: str
    value: float | str
    unit: str | None
    start: int
    end: int
    high: float | None = None
    bound: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"raw": self.raw, "type": self.type, "value": _plain(self.value)}
        if self.high is not None:
            out["high"] = _plain(self.high)
        out["unit"] = self.unit
        if self.bound:
            out["bound"] = self.bound
        return out


def _plain(v: float | str) -> float | int | str:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


# --- patterns -----------------------------------------------------------------------------

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        (
            "january jan", "february feb", "march mar", "april apr", "may", "june jun",
            "july jul", "august aug", "september sep sept", "october oct",
            "november nov", "december dec",
        )
    )
    for m in names.split()
}  # fmt: skip
_MONTH_RE = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_MULT = (
    r"(?:[kK](?![a-zA-Z])|[mM](?=\b)(?!\s*(?:s\b|in\b|inute|eter|etre))"
    r"|million|mn|bn|billion|万|千|亿|w(?![a-zA-Z]))"
)

_ISO_DATE = re.compile(r"(?<![\d.:/-])(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?![\d:])")
_YEAR_MONTH = re.compile(r"(?<![\d.:/-])((?:19|20)\d{2})-(\d{2})(?![\d-])")
_CN_DATE = re.compile(
    r"(?:(\d{4}|[二〇零一三四五六七八九]{4})年)?"
    r"(\d{1,2}|[一二三四五六七八九十]{1,3})月"
    r"(?:(\d{1,2}|[一二三四五六七八九十]{1,3})(?:日|号|號))?"
)
_EN_DATE_MD = re.compile(
    rf"\b({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I
)
_EN_DATE_DM = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\b(?:,?\s+(\d{{4}}))?", re.I
)
_DATE_LEAD = re.compile(r"\b(?:on|by|before|until|till|from|since|due)\s*$", re.I)
_EN_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\s+(\d{{4}})\b", re.I)
_SLASH_DATE = re.compile(
    r"\b(?:on|by|before|until|till|due|from|after)\s+(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b", re.I
)

_CLOCK = re.compile(
    r"(?<![\d:.])(\d{1,2}):(\d{2})(?!:\d)(?![\d])(?:\s*([ap])\.?m\.?\b)?"
    r"|(?<![\d:.])(\d{1,2})\s*([ap])\.?m\.?(?![a-z])",
    re.I,
)
_CN_PERIOD = r"(?:凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜|今晚|明早|明晚)?"
_CN_CLOCK = re.compile(
    rf"({_CN_PERIOD})(\d{{1,2}}|[一二两三四五六七八九十]{{1,3}})[点點](?:(半)|(\d{{1,2}}|[一二三四五六七八九十]{{1,3}})分?|(一刻)|(三刻))?"
)
_CN_PERIOD_CLOCK = re.compile(rf"({_CN_PERIOD[3:-2]})\s*(\d{{1,2}}):(\d{{2}})")

_VERSION_PREFIX = re.compile(r"(?<![\w.])[vV](\d+(?:\.\d+)+|\d+)(?![\w.]*\d)")
_DOTTED_VERSION = re.compile(r"(?<![\w.])(\d+\.\d+\.\d+(?:[-+.][\w.]+)?)(?![\w])")
#: Names that a plain number right after is the version of.
_PRODUCTS = frozenset(
    """python py node nodejs node.js npm pnpm yarn deno bun react vue angular svelte next nextjs
    next.js nuxt django flask fastapi rails ruby php perl java jdk jre kotlin scala swift go
    golang rust rustc cargo gcc clang llvm cmake typescript ts es ecmascript postgres
    postgresql pg mysql mariadb sqlite redis mongodb mongo elasticsearch kafka rabbitmq
    nginx apache tomcat kubernetes k8s docker compose helm terraform ansible ubuntu debian
    centos rhel fedora alpine windows win macos osx ios ipados android chrome firefox safari
    edge electron spring springboot boot laravel symfony dotnet .net net c# vs visual
    studio xcode numpy pandas torch pytorch tensorflow tf cuda cudnn scipy sklearn
    jquery bootstrap tailwind webpack vite babel eslint prettier jest pytest mocha junit
    gradle maven sdk api iphone ipad pixel galaxy macbook opus sonnet haiku gpt claude
    llama qwen deepseek gemini mistral html css http tls ssl ipv oauth unicode utf
    pydantic sqlalchemy celery airflow spark hadoop hive flink vitest playwright selenium
    """.split()
)
_PRODUCT_BEFORE = re.compile(r"([A-Za-z][\w.#+-]*)\s*(?:版本|version|ver\.?|v)?\s*$", re.I)

_CN_PERCENT = re.compile(r"百分之([零〇一二两三四五六七八九十百]+|\d+(?:\.\d+)?)")
_CN_NUM_RUN = re.compile(r"[零〇一二两俩三四五六七八九十百千万亿]+(?:个?半)?")

_RANGE_JOIN = re.compile(r"\s*(?:-|–|—|~|～|〜|to|through|thru|至|到|－)\s*", re.I)
_BETWEEN = re.compile(r"\bbetween\s*$", re.I)

_UPPER_BEFORE = re.compile(
    r"(?:\b(?:under|below|less than|fewer than|at most|no more than|not more than|max(?:imum)?"
    r"|up to|within|not exceed(?:ing)?|no higher than|no longer than|lower than|shorter than"
    r"|cap(?:ped)? at|limit(?:ed)? to|less then|tops)"
    r"|<=?|≤|不(?:能|要|得|可以|应)?超过|不(?:能|要)?高于"
    r"|最多|最高|顶多|低于|少于|小于|不大于|控制在|压到|压在|限制在|上限(?:是|为)?)\s*$",
    re.I,
)
_LOWER_BEFORE = re.compile(
    r"(?:\b(?:over|above|more than|greater than|at least|no less than|not less than|min(?:imum)?"
    r"|higher than|longer than|upwards of|in excess of|exceed(?:ing)?|starting at|beat|beats)"
    r"|>=?|≥|至少|最少|起码|不低于|不少于|高于|大于|超过|下限(?:是|为)?)\s*$",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no|nothing|can't|cannot|don't|won't|shouldn't|mustn't|isn't|aren't|without)\b"
    r"|不|别|没|勿",
    re.I,
)
_NEGATED_LOWER = re.compile(
    r"(?:不(?:能|要|得|可以|应该?|会|准)?(?:低于|少于"
    r"|小于|短于)|\b(?:not|never) (?:go |drop |fall )?"
    r"(?:below|under|less than|lower than))\s*$",
    re.I,
)
_NEGATED_UPPER = re.compile(
    r"(?:不(?:能|要|得|可以|应该?|会|准)?(?:超过|高于|大于|多于|长于|超出)"
    r"|\b(?:not|never) (?:go |exceed )?(?:above|over|more than|higher than|exceed))\s*$",
    re.I,
)
_DEADLINE_BEFORE = re.compile(
    r"\b(?:by|before|until|till|no later than|due|deadline(?: is)?|latest)\s*(?:the\s+)?"
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+|next\s+\w+\s+)?$"
    r"|(?:最晚|最迟|截止(?:到|日期是|时间是)?|之前要)\s*$",
    re.I,
)
_AFTER_BEFORE = re.compile(r"\b(?:after|no earlier than|not before|from)\s*$|(?:最早)\s*$", re.I)
_LIMIT_NOUN_UPPER = re.compile(
    r"\b(?:max(?:imum)?|limit|cap|ceiling|deadline|no more than)\b|上限|最多|最高|最晚|最迟|封顶",
    re.I,
)
_LIMIT_NOUN_LOWER = re.compile(r"\b(?:min(?:imum)?|floor)\b|下限|至少|最少|最低", re.I)
_UPPER_AFTER = re.compile(
    r"^\s*(?:以内|以下|之内|内|或以下|及以下|封顶|or less|or fewer|max\b|tops\b|or under|at most)",
    re.I,
)
_LOWER_AFTER = re.compile(
    r"^\s*(?:以上|或以上|及以上|起|多|or more|or above|plus\b|\+|at least|minimum\b|min\b)", re.I
)

_NUMBER = re.compile(
    rf"(?P<cur>[$€£¥￥])?\s?(?<![A-Za-z0-9_.])(?P<num>{_NUM})(?P<pct>\s?%)?"
    rf"(?:\s?(?P<mult>{_MULT}))?",
)
_UNIT_WORDS = sorted(_UNIT_TABLE, key=len, reverse=True)
_UNIT_AFTER = re.compile(
    r"\s?(?:" + "|".join(re.escape(u) for u in _UNIT_WORDS) + r")(?![A-Za-z])",
    re.I,
)
_NOUN_AFTER = re.compile(
    r"\s(?:more\s|extra\s|additional\s|new\s|separate\s)?([A-Za-z][A-Za-z]+)(?![\w-])"
    r"(?:\s([A-Za-z][a-z]+s)(?![\w-]))?"
)
_EN_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30,
    "fifty": 50, "hundred": 100,
}  # fmt: skip
_EN_WORD_COUNT = re.compile(
    r"\b(" + "|".join(_EN_NUMBER_WORDS) + r")\s+(?:more\s+|extra\s+|new\s+)?([a-z]{3,}s)\b", re.I
)


def _unit_at(text: str, pos: int) -> tuple[str, str, int] | None:
    """A unit written at ``pos`` (after a number): (canonical, type, end)."""
    m = _UNIT_AFTER.match(text, pos)
    if not m:
        return None
    word = m.group().strip().lower()
    if word == "g" and pos < len(text) and text[pos] == " ":
        return None  # "3 g…": a lone g after a space is rarely grams or gigabytes
    canonical, kind = _UNIT_TABLE.get(word) or _UNIT_TABLE[m.group().strip()]
    if word == "年" and kind == "duration":
        return None  # 2024年: a year, handled as a date or left alone
    return canonical, kind, m.end()


def _singular(word: str) -> str:
    w = word.lower()
    if w.endswith(("ies",)) and w[:-1] in _IE_NOUNS:
        return w[:-1]
    if w in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[w]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ses", "xes", "ches", "shes")) and len(w) > 4:
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def _to_float(num: str) -> float:
    return float(num.replace(",", ""))


_MULTIPLIERS = {
    "k": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9,
    "万": 1e4, "w": 1e4, "千": 1e3, "亿": 1e8,
}  # fmt: skip


_ANY_NUMBER = re.compile(
    r"[\d零〇一二两俩三四五六七八九十百千万亿半]|two|three|four|five|six|seven|eight|nine|ten|eleven"
    r"|twelve|twenty|thirty|fifty|hundred",
    re.I,
)
_AMOUNT_AT = re.compile(rf"(?P<num>{_NUM})(?P<pct>\s?%)?(?:\s?(?P<mult>{_MULT}))?")


class _Finder:
    """One pass over a text; spans already taken are not read twice."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[Value] = []
        self.taken: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in self.taken)

    def add(self, value: Value) -> None:
        self.found.append(value)
        self.taken.append((value.start, value.end))

    def raw(self, start: int, end: int) -> str:
        return self.text[start:end].strip()

    # --- dates, times, versions ----------------------------------------------------------

    def dates(self) -> None:
        t = self.text
        for m in _ISO_DATE.finditer(t):
            y, mo, d = int(m[1]), int(m[2]), int(m[3])
            if 1 <= mo <= 12 and 1 <= d <= 31 and self.free(*m.span()):
                self.add(Value(m.group(), "date", f"{y:04d}-{mo:02d}-{d:02d}", None, *m.span()))
        for m in _YEAR_MONTH.finditer(t):
            if 1 <= int(m[2]) <= 12 and self.free(*m.span()):
                self.add(Value(m.group(), "date", f"{m[1]}-{m[2]}", None, *m.span()))
        for m in _CN_DATE.finditer(t):
            if not self.free(*m.span()):
                continue
            month = _small_int(m[2])
            day = _small_int(m[3]) if m[3] else None
            year = _year(m[1]) if m[1] else None
            if not month or not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
                continue
            if day is None and year is None:
                # "3月" alone: a month (or "3个月" was already a duration): leave it
                continue
            if day is None:
                value = f"{year:04d}-{month:02d}"
            elif year is None:
                value = f"{month:02d}-{day:02d}"
            else:
                value = f"{year:04d}-{month:02d}-{day:02d}"
            self.add(Value(m.group(), "date", value, None, *m.span()))
        for m in re.finditer(r"(\d{1,2})月\d{1,2}[号日](?:到|至|-|~|～)(\d{1,2})[号日]", t):
            start = m.start(2)
            if self.free(start, m.end()) and 1 <= int(m[2]) <= 31 and 1 <= int(m[1]) <= 12:
                value = f"{int(m[1]):02d}-{int(m[2]):02d}"
                self.add(Value(t[start : m.end()], "date", value, None, start, m.end()))
        for pattern, order in ((_EN_DATE_MD, "md"), (_EN_DATE_DM, "dm")):
            for m in pattern.finditer(t):
                if not self.free(*m.span()):
                    continue
                month_word, day_text = (m[1], m[2]) if order == "md" else (m[2], m[1])
                month = _MONTHS.get(month_word.lower().rstrip("."))
                # "may 5" in lower case is more often the verb ("it may 5x…")
                if (
                    month_word.lower().rstrip(".") == "may"
                    and order == "md"
                    and not m[3]
                    and month_word[0].islower()
                    and not _DATE_LEAD.search(t[: m.start()])
                ):
                    continue
                d = int(day_text)
                if not month or not 1 <= d <= 31:
                    continue
                value = f"{int(m[3]):04d}-{month:02d}-{d:02d}" if m[3] else f"{month:02d}-{d:02d}"
                self.add(Value(m.group(), "date", value, None, *m.span()))
        for m in _EN_MONTH_YEAR.finditer(t):
            month = _MONTHS.get(m[1].lower().rstrip("."))
            if month and self.free(*m.span()) and not (m[1].lower() == "may" and m[1][0] == "m"):
                self.add(Value(m.group(), "date", f"{int(m[2]):04d}-{month:02d}", None, *m.span()))
        for m in _SLASH_DATE.finditer(t):
            mo, d = int(m[1]), int(m[2])
            if 1 <= mo <= 12 and 1 <= d <= 31 and self.free(m.start(1), m.end()):
                start = m.start(1)
                year_text = m[3]
                if year_text:
                    y = int(year_text) + (2000 if len(year_text) == 2 else 0)
                    value = f"{y:04d}-{mo:02d}-{d:02d}"
                else:
                    value = f"{mo:02d}-{d:02d}"
                self.add(Value(t[start : m.end()], "date", value, None, start, m.end()))

    def times(self) -> None:
        t = self.text
        for m in _CN_CLOCK.finditer(t):
            if not self.free(*m.span()):
                continue
            hour = _small_int(m[2])
            if hour is None or hour > 24:
                continue
            minute = (
                30 if m[3] else (_small_int(m[4]) if m[4] else 15 if m[5] else 45 if m[6] else 0)
            )
            if minute is None or minute > 59:
                continue
            hour = _afternoon(m[1], hour)
            self.add(Value(m.group(), "time", f"{hour:02d}:{minute:02d}", None, *m.span()))
        for m in _CN_PERIOD_CLOCK.finditer(t):
            if self.free(*m.span()) and m[1]:
                hour, minute = _afternoon(m[1], int(m[2])), int(m[3])
                if hour < 24 and minute < 60:
                    self.add(Value(m.group(), "time", f"{hour:02d}:{minute:02d}", None, *m.span()))
        for m in _CLOCK.finditer(t):
            if not self.free(*m.span()):
                continue
            if m[1] is not None:
                hour, minute, ampm = int(m[1]), int(m[2]), m[3]
            else:
                hour, minute, ampm = int(m[4]), 0, m[5]
            if minute > 59 or hour > 24 or (ampm and not 1 <= hour <= 12):
                continue
            if ampm:
                hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
            self.add(Value(m.group(), "time", f"{hour:02d}:{minute:02d}", None, *m.span()))

    def versions(self) -> None:
        t = self.text
        for m in _VERSION_PREFIX.finditer(t):
            if self.free(*m.span()):
                self.add(Value(m.group(), "version", m[1], None, *m.span()))
        for m in _DOTTED_VERSION.finditer(t):
            if self.free(*m.span()) and not re.match(r"\d+\.\d+\.\d+\.\d+$", m[1]):
                self.add(Value(m.group(), "version", m[1], None, *m.span()))
        for m in re.finditer(r"(?<![\w.$€£¥])(\d+(?:\.\d+)*)(?![\w.%]|\s?(?:%|[kK]\b))", t):
            if not self.free(*m.span()):
                continue
            before = t[max(0, m.start() - 30) : m.start()]
            product = _PRODUCT_BEFORE.search(before)
            if not product:
                continue
            name = product.group(1)
            if name.lower() not in _PRODUCTS and not (
                "." in m[1] and name[0].isupper() and not name.isupper()
            ):
                continue
            if _unit_at(t, m.end()) and not t[m.end() : m.end() + 1].isalpha():
                unit = _unit_at(t, m.end())
                if (unit and unit[1] != "duration") or t[m.end() : m.end() + 2].strip() != "":
                    continue
            self.add(Value(m[1], "version", m[1], None, *m.span()))

    # --- amounts -----------------------------------------------------------------------

    def halves(self) -> None:
        for m in re.finditer(r"(?<![一二两三四五六七八九十\d个])半(?:个)?(小时|钟头)", self.text):
            if self.free(*m.span()):
                self.add(Value(m.group(), "duration", 30.0, "min", *m.span()))
        for m in re.finditer(r"([一二两三四五六七八九\d]+)分钱", self.text):
            if self.free(*m.span()):
                n = _small_int(m[1])
                if n is not None:
                    self.add(Value(m.group(), "money", round(n * 0.01, 2), "CNY", *m.span()))

    def words(self) -> None:
        """ "two reports": a number word before a plural noun counts it."""
        for m in _EN_WORD_COUNT.finditer(self.text):
            if self.free(*m.span()) and m[2].lower() not in _NOT_NOUNS:
                value = float(_EN_NUMBER_WORDS[m[1].lower()])
                unit = _UNIT_TABLE.get(m[2].lower())
                if unit is not None:  # "two weeks": a duration
                    self.add(Value(m.group(), unit[1], value, unit[0], *m.span()))
                else:
                    self.add(Value(m.group(), "quantity", value, _singular(m[2]), *m.span()))

    def percents(self) -> None:
        for m in _CN_PERCENT.finditer(self.text):
            if not self.free(*m.span()):
                continue
            body = m[1]
            value = float(body) if body[0].isdigit() else parse_chinese_number(body)
            if body in _CN_DIGIT:
                value = float(_CN_DIGIT[body])
            if value is not None:
                self.add(Value(m.group(), "percent", value, "%", *m.span()))

    def amounts(self) -> None:
        t = self.text
        spans: list[tuple[int, str]] = [(m.start("num"), "digits") for m in _NUMBER.finditer(t)]
        spans += [(m.start(), "chinese") for m in _CN_NUM_RUN.finditer(t)]
        for start, how in sorted(spans):
            if not self.free(start, start + 1):
                continue
            value = self._amount(start, how)
            if value is not None:
                self.add(self._between(self._range(value)))

    def _range(self, value: Value) -> Value:
        """ "50-100元", "50 to 100", "50到100", "1小时 - 2小时", "3-5k": a range, or the value."""
        t = self.text
        join = _RANGE_JOIN.match(t, value.end)
        if not join or (value.type == "percent" and t[value.end - 1] != "%"):
            return value
        nxt = _NUMBER.match(t, join.end()) or _CN_NUM_RUN.match(t, join.end())
        if not nxt or not self.free(join.end(), join.end() + 1):
            return value
        how = "digits" if nxt.group()[0] in "$€£¥￥0123456789." else "chinese"
        start = nxt.start("num") if how == "digits" and "num" in nxt.re.groupindex else nxt.start()
        upper = self._amount(start, how, allow_bare=True)
        if (
            upper is None
            or not (upper.unit == value.unit or value.unit is None or upper.unit is None)
            or not isinstance(upper.value, float)
            or not isinstance(value.value, float)
            or not (upper.value >= value.value or value.unit is None)
        ):
            return value
        low = value.value
        if value.unit is None and upper.raw.endswith(("k", "K", "万", "千")):
            mult = upper.value / _bare_value(upper.raw)  # "3-5k": both ends are thousands
            if mult > 1:
                low *= mult
        kind = value.type if value.unit else upper.type
        raw = t[value.start : upper.end].strip()
        return Value(raw, kind, low, value.unit or upper.unit, value.start, upper.end, upper.value)

    def _between(self, value: Value) -> Value:
        """ "between 50 and 100 dollars": a range written with words."""
        t = self.text
        if value.type != "number" or not _BETWEEN.search(t[: value.start]):
            return value
        m_and = re.match(r"\s+and\s+", t[value.end :])
        if not m_and:
            return value
        upper = self._amount(value.end + m_and.end(), "digits", allow_bare=True)
        if upper is None or not isinstance(upper.value, float):
            return value
        raw = t[value.start : upper.end]
        return Value(raw, upper.type, value.value, upper.unit, value.start, upper.end, upper.value)

    def _amount(self, start: int, how: str, allow_bare: bool = False) -> Value | None:
        t = self.text
        cur_sign = None
        begin = start
        # a currency sign right before the number
        j = start - 1
        while j >= 0 and t[j] == " ":
            j -= 1
        if j >= 0 and t[j] in _CURRENCY_SIGNS:
            cur_sign = _CURRENCY_SIGNS[t[j]]
            begin = j
        code_before = re.search(r"\b(USD|EUR|GBP|RMB|CNY)\s?$", t[max(0, start - 5) : start], re.I)
        if code_before and cur_sign is None:
            cur_sign = _CURRENCY_CODES[code_before.group(1).lower()]
            begin = start - len(code_before.group())
        if how == "digits":
            m = _AMOUNT_AT.match(t, start)
            if not m or (start > 0 and (t[start - 1].isalnum() and not _is_cjk(t[start - 1]))):
                return None
            if (
                start > 0
                and t[start - 1] in "._/#:-"
                and not allow_bare
                and not (t[start - 1] == "-" and (start < 2 or not t[start - 2].isalnum()))
            ):
                return None
            after = t[m.end() : m.end() + 1]
            if (
                after
                and (after.isalpha() and after.isascii() and not m["mult"])
                and not _unit_at(t, m.end())
            ):
                return None  # "3x", "4th", "2fa": not an amount
            if re.match(r"[.:/]\d", t[m.end() : m.end() + 2]):
                return None  # part of an address, a path, a ratio
            value = _to_float(m["num"])
            end = m.end()
            if m["mult"]:
                mult = m["mult"]
                key = mult.lower() if mult.lower() in _MULTIPLIERS else mult
                value *= _MULTIPLIERS.get(key, 1)
            if m["pct"]:
                return Value(t[begin:end].strip(), "percent", value, "%", begin, end)
        else:
            m = _CN_NUM_RUN.match(t, start)
            if not m:
                return None
            body = m.group()
            half = body.endswith("半")
            body = body.rstrip("半").rstrip("个")
            parsed = (
                parse_chinese_number(body)
                if len(body) > 1
                else (
                    float(_CN_DIGIT[body])
                    if body in _CN_DIGIT
                    else float(_CN_SMALL.get(body, 0)) or None
                )
            )
            if parsed is None:
                return None
            value = parsed + (0.5 if half else 0)
            end = m.end()
            if (
                not half
                and len(body) == 1
                and body in _CN_DIGIT
                and not _unit_at(t, end)
                and t[end : end + 1] != "个"
            ):
                return None  # a single 一/两/三 is a number only when a unit follows
            if len(body) == 1 and body in "十百千万亿" and not _unit_at(t, end):
                return None
        unit = _unit_at(t, end)
        if how == "chinese" and unit is not None and unit[0] == "分":
            return None  # 十分 is "very"; a score is written in digits
        if unit is not None and unit[0] == "个":
            unit = None
        if how == "chinese" and body == "一" and unit is not None and unit[0] in _CN_ARTICLE_UNITS:
            return None  # 一家餐馆, 一间房: an article more often than a count
        if unit is None and t[end : end + 2].lstrip(" ")[:1] == "个":
            end = t.index("个", end)
            unit = _unit_at(t, end + 1)
            if unit is not None and t[unit[2] : unit[2] + 1] == "均":
                return None  # 一个人均…: "a per-person average of…"
            if unit is None and how == "chinese" and body == "一":
                return None  # 一个, 一家: "a", not a count
            if unit is None:
                # 三个人, 两个大人: the counted noun follows the measure word
                noun = re.match(r"[\u3400-\u9fff]{1,2}", t[end + 1 : end + 3])
                word = noun.group() if noun else ""
                if len(word) == 2 and word[1] in _CN_PARTICLES:
                    word = word[0]
                if word and word[0] not in _CN_PARTICLES:
                    unit = (word, "quantity", end + 1 + len(word))
                else:
                    unit = ("个", "quantity", end + 1)
        if unit is not None and unit[0] in ("分",) and t[unit[2] : unit[2] + 1] == "钟":
            unit = ("min", "duration", unit[2] + 1)
        if unit is not None and how == "chinese" and t[unit[2] - 1 : unit[2]] in ("个",) and half:
            pass
        if (
            unit is not None
            and unit[0] == "h"
            and t[end : unit[2]].strip().lower() == "h"
            and (cur_sign or how == "chinese")
        ):
            unit = None
        # "两个半小时": the half comes after the counter
        if unit is None and how == "chinese" and t[end : end + 2] == "个半":
            inner = _unit_at(t, end + 2)
            if inner:
                value += 0.5
                unit = inner
        if cur_sign is not None:
            if unit is not None and unit[1] == "money":
                end = unit[2]
            if cur_sign == "CNY" and t[begin] in "¥" and _JAPAN.search(t):
                cur_sign = "JPY"
            return Value(t[begin:end].strip(), "money", value, cur_sign, begin, end)
        if unit is not None:
            canonical, kind, end = unit
            if kind == "money" and canonical == "USD" and _has_cjk_near(t, begin):
                pass
            return Value(t[begin:end].strip(), kind, value, canonical, begin, end)
        # English counted noun: "16 workers", "3 nights", "2 people"
        noun = _NOUN_AFTER.match(t, end)
        if noun and how == "digits":
            word, second = noun.group(1), noun.group(2)
            if second and word.lower() not in _NOT_NOUNS and second.lower() not in _NOT_NOUNS:
                unit_word = _singular(second)  # "6 uvicorn workers": the counted noun is last
                return Value(
                    t[begin : noun.end()].strip(), "quantity", value, unit_word, begin, noun.end()
                )
            if word.lower() not in _NOT_NOUNS and not _is_verbish(word):
                end2 = noun.end(1)
                unit_word = _singular(word)
                return Value(t[begin:end2].strip(), "quantity", value, unit_word, begin, end2)
        if how == "chinese" and not allow_bare and len(body) <= 1:
            return None
        return Value(t[begin:end].strip(), "number", value, None, begin, end)

    def _bound(self, value: Value) -> str | None:
        t = self.text
        before = t[max(0, value.start - 24) : value.start]
        after = t[value.end : value.end + 12]
        timely = value.type in ("date", "time")
        if _UPPER_AFTER.match(after):
            return "upper"
        if _LOWER_AFTER.match(after) and not re.match(r"\s*多(?:少|久|长|大)", after):
            return "lower"
        if timely and re.match(r"\s*(?:之前|以前|前)", after):
            return "upper"
        if timely and re.match(r"\s*(?:之后|以后|后)", after):
            return "lower"
        if _NEGATED_LOWER.search(before):
            return "lower"
        if _NEGATED_UPPER.search(before):
            return "upper"
        if _UPPER_BEFORE.search(before):
            return "upper"
        lower = _LOWER_BEFORE.search(before)
        if lower:
            wider = t[max(0, value.start - 40) : value.start - len(lower.group())]
            if _NEGATION.search(wider) and re.search(
                r"over|above|more|exceed|超过|高于|大于", lower.group(), re.I
            ):
                return "upper"  # "can't spend more than $2,000", "nothing over 80k miles"
            return "lower"
        if timely and _DEADLINE_BEFORE.search(before):
            return "upper"
        if timely and _AFTER_BEFORE.search(before):
            return "lower"
        near = t[max(0, value.start - 32) : value.start]
        if _LIMIT_NOUN_UPPER.search(near):
            return "upper"
        if _LIMIT_NOUN_LOWER.search(near):
            return "lower"
        return None


def _bare_value(raw: str) -> float:
    m = re.search(_NUM, raw)
    return _to_float(m.group()) if m else 1.0


def _is_cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def _has_cjk_near(t: str, pos: int) -> bool:
    return any(_is_cjk(c) for c in t[max(0, pos - 8) : pos + 8])


_VERBISH = re.compile(r"(?:ed|ing)$")


def _is_verbish(word: str) -> bool:
    w = word.lower()
    return bool(_VERBISH.search(w)) and w not in ("wedding", "building", "meeting", "listing")


def _small_int(s: str | None) -> int | None:
    if s is None:
        return None
    if s.isdigit():
        return int(s)
    v = (
        parse_chinese_number(s)
        if len(s) > 1
        else (_CN_DIGIT.get(s) if s in _CN_DIGIT else (10 if s == "十" else None))
    )
    return int(v) if v is not None else None


def _year(s: str) -> int | None:
    if s.isdigit():
        return int(s)
    if all(ch in _CN_DIGIT for ch in s):
        return int("".join(str(_CN_DIGIT[ch]) for ch in s))
    return None


def _afternoon(period: str | None, hour: int) -> int:
    if period in ("下午", "傍晚", "晚上", "夜里", "今晚", "明晚") and hour < 12:
        return hour + 12
    if period in ("中午",) and hour < 6:
        return hour + 12
    if period in ("凌晨", "半夜") and hour == 12:
        return 0
    return hour


def find_numbers(text: str) -> list[Value]:
    """Every number in ``text``, typed, in order of position."""
    return list(_find_numbers(text))


@lru_cache(maxsize=512)
def _find_numbers(text: str) -> tuple[Value, ...]:
    if not _ANY_NUMBER.search(text):
        return ()
    f = _Finder(text)
    f.dates()
    f.times()
    f.versions()
    f.halves()
    f.percents()
    f.amounts()
    f.words()
    out = []
    for v in sorted(f.found, key=lambda v: v.start):
        if v.type != "version":
            bound = f._bound(v)
            if bound:
                v = Value(v.raw, v.type, v.value, v.unit, v.start, v.end, v.high, bound)
        out.append(v)
    return tuple(out)
