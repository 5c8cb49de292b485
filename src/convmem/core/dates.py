"""Dates and clock times as people write them, in English and Chinese.

``2024-03-15``, ``May 5``, ``5 May 2024``, ``by 3/15``, ``5月5号``, ``2024年3月15日``,
``5月1号到4号``; ``8:30 PM``, ``20:30``, ``晚上8点半``, ``下午3点``. Dates become
``YYYY-MM-DD``, ``MM-DD`` or ``YYYY-MM``; times ``HH:MM`` on a 24-hour clock.
"""

from __future__ import annotations

import calendar
import re
from bisect import bisect_left, bisect_right
from dataclasses import replace
from typing import Protocol

from convmem.core.units import CN_DIGIT, Value, parse_chinese_number


class _Finds(Protocol):
    text: str

    def free(self, start: int, end: int) -> bool: ...

    def add(self, value: Value) -> None: ...


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

_ISO_DATE = re.compile(r"(?<![\d.:/-])(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?![\d:])")
_YEAR_MONTH = re.compile(r"(?<![\d.:/-])((?:19|20)\d{2})-(\d{2})(?![\d-])")
_CN_DATE = re.compile(
    r"(?:(\d{4}|[二〇零一三四五六七八九]{4})年)?"
    # (a space beside the digits, as people type between Latin and Chinese: "7 月 12 号")
    r"(\d{1,2}|[一二三四五六七八九十]{1,3})\s?月"
    r"(?:\s?(\d{1,2}|[一二三四五六七八九十]{1,3})\s?(?:日|号|號)"
    # the day in digits with nothing after it, as chat often writes it ("6月15 太赶了")
    r"|(\d{1,2})(?![\d.])(?=[\s，,。!！?？~～、)）]|$|前|后|之前|之后|左右|那天|当天|到|至))?"
)
#: A day of the month alone ("2号走", "每月15号"); not a house number ("景山前街4号"),
#: an ordinal ("第2号") or a name ("2号线", "3号厅", "5号电池", "38号鞋").
_CN_DAY = re.compile(
    r"(?<![\dA-Za-z街路道巷弄同村里院区楼层室栋座门站甲乙丙丁第号號.-])"
    r"(?<![街路道巷弄村院区楼层室栋座门站第间本]\s)"
    r"(\d{1,2}|[一二三四五六七八九十]{1,3})\s?[号號]"
    r"(?!\s?[线線楼樓房厅館馆门門口院机機位床桌座车車窗店铺堂码碼字鞋电電池选球])"
)
_EN_DATE_MD = re.compile(
    rf"\b({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I
)
_EN_DATE_DM = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\b(?:,?\s+(\d{{4}}))?", re.I
)
#: "by the 20th", "on the 19th": a day of a month the conversation names elsewhere.
_EN_ORDINAL_DAY = re.compile(
    r"\b(?:on|by|before|until|till|from|after|since|for|back|to|through|thru)\s+the\s+"
    r"((\d{1,2})(?:st|nd|rd|th))\b"
    r"(?!\s+(?:century|anniversary|birthday|floor|percentile|place|row|time|street|grade|edition"
    r"|step|chapter|page|level|item|question|round|generation|gen|version|attempt|try|one|ones"
    r"|episode|season|book|line|position|spot|slot|term|semester|quarter|period|inning|hole"
    r"|lap|stage|phase|week|day|month|year|draft|revision|amendment|power|degree))",
    re.I,
)
#: "it's the 14th", "moving day is the 14th": the day a thing is on, said with nothing
#: after it ("it's the 2nd largest", "the 3rd option" are no days).
_EN_ORDINAL_IS = re.compile(
    r"(?:\b(?:is|its|was)|'s)\s+the\s+((\d{1,2})(?:st|nd|rd|th))\b"
    r"(?!\s+(?!(?:of|at|or|and|then|instead|now|not|lol|right|too|either|though|actually)\b)"
    r"[a-z])",
    re.I,
)
#: A bare day closing a span that a month and day open: "may 22 to 27", "to sunday the 16th".
_DAY_AFTER = re.compile(
    r"\s*(?:to|through|thru|until|till|-|–)\s*(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+)?"
    r"(?:the\s+)?(\d{1,2})(st|nd|rd|th)?\b(?!\s*(?:[:.,/]\d|%|[ap]\.?m\b))"
    r"(?!\s+(?!(?:now|and|or|but|then|so|this|next|for|in|at|when|because)\b)[A-Za-z])",
    re.I,
)
#: The end of a month or a year, in Chinese: "8月底", "2024年底", "2025年3月底".
_CN_MONTH_END = re.compile(
    r"(?<![\d零〇一二三四五六七八九十])(?:(\d{4})年)?(?:(\d{1,2}|[一二三四五六七八九十]{1,3})月)?底"
)
#: A part of a month: "early October", "mid-june", "late May 2026", "the end of June",
#: "十月初", "5月中旬", "3月下旬". The end of a month is its last day; another part is
#: the month ("--10", or "2026-05" with its year), and ``raw`` keeps which part.
_EN_MONTH_PART = re.compile(
    rf"\b(early|beginning of|start of|mid|middle of|late|end of)"
    rf"[\s-]*({_MONTH_RE})"
    rf"(?![\w'’-])(?!\s+\d{{1,2}}(?!\d))(?:,?\s+(\d{{4}}))?",
    re.I,
)
_CN_MONTH_PART = re.compile(
    r"(?<![\d零〇一二三四五六七八九十])(?:(\d{4})年)?(\d{1,2}|[一二三四五六七八九十]{1,3})\s?月"
    r"(初(?![一二三四五六七八九十])|上旬|中旬|下旬|中(?=[\s，,。出前后去回走到左]|$))"
)
#: "the end of 2026": the year's last day.
_END_OF = re.compile(r"\bend of\s+(\d{4})\b", re.I)
#: Words after which a lower-case "may 5" is the month: a modal never follows them.
_DATE_LEAD = re.compile(
    r"\b(?:on|by|before|until|till|til|from|since|due|is|are|was|were|be|to|at|for|after|around|of"
    r"|it's|its|back|leave|leaving|return|returning|depart|departing|arrive|arriving|land"
    r"|landing|fly|flying|start|starting|move|moving|mid|early|late"
    r"|thru|through)\s*$",
    re.I,
)
#: What ends a lower-case "may 12" that is a date: a comma, the sentence's end, a span.
_MAY_DAY_END = re.compile(
    r"\s*(?:[,.;!?)]|$|[-–]\s*\d{1,2}(?![\d%.]|\s*(?:%|x\b))(?![a-zA-Z])"
    r"|(?:to|and|through|thru|instead)\b)",
    re.I,
)
_EN_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\s+(\d{{4}})\b", re.I)
_SLASH_DATE = re.compile(
    r"\b(?:on|by|before|until|till|due|from|after)\s+(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b", re.I
)

_CLOCK = re.compile(
    r"(?<![\d:.])(\d{1,2}):(\d{2})(?!:\d)(?![\d])(?:\s*([ap])\.?m\.?\b)?"
    r"|(?<![\d:.])(\d{1,2})\s*([ap])\.?m\.?(?![a-z])",
    re.I,
)
_CLOCK_SPAN = re.compile(r"(?<![\d:.$])(\d{1,2})\s?[-–~]\s?(\d{1,2})\s*([ap])\.?m\b", re.I)
#: Parts of the day a Chinese clock time may name before its hour.
_CN_PERIOD = r"凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜|今晚|明早|明晚"
_CN_CLOCK = re.compile(
    rf"((?:{_CN_PERIOD})\s?)?(\d{{1,2}}\s?|[一二两三四五六七八九十]{{1,3}})[点點](?:(半)|(一刻)|(三刻)|(\d{{1,2}}|[零〇一二三四五六七八九十]{{1,3}})(分)?)?"
)
#: What follows 点 when it counts points made, not hours ("三点建议", "两点要注意").
_POINTS = re.compile(
    r"\s?(?:建议|意见|要求|(?:要|需要|得)?注意|原因|想法|问题|看法|理由|需求|补充|说明|疑问|顾虑|改进|不足"
    r"|优势|好处|区别|变化|内容|结论|心得|感受|体会|经验|教训|规则|原则)"
)
#: What makes a bare 一点 one o'clock rather than "a little".
_ONE_OCLOCK = re.compile(r"钟|整|前|后|以前|以后|之前|之后|左右|到|至|-|~|～")
#: What joins the two ends of a range of clock times ("7点到9点").
_CLOCK_RANGE = re.compile(r"\s*(?:到|至|-|~|～|—|－)\s*")
#: A part of the day said a few words before a bare hour, no day or hour between.
_PERIOD_BEFORE = re.compile(rf"({_CN_PERIOD})[^点點\d天早日周号号，,。；;]{{0,6}}$")
#: A meal names its part of the day (晚饭七点前吃完 is 19:00, 午饭一点 13:00).
_MEAL_BEFORE = re.compile(r"(晚饭|晚餐|夜宵|宵夜|午饭|午餐)[^点點\d天早日周号，,。；;]{0,6}$")
_MEAL_PERIOD = {
    "晚饭": "晚上",
    "晚餐": "晚上",
    "夜宵": "晚上",
    "宵夜": "晚上",
    "午饭": "中午",
    "午餐": "中午",
}
_CN_PERIOD_CLOCK = re.compile(rf"({_CN_PERIOD})\s*(\d{{1,2}}):(\d{{2}})")


def tail_start(text: str, end: int, *steps: int) -> int:
    """Where to start searching for a pattern that must end at ``end`` after white space
    (``\\s*$`` with ``endpos=end``): each step skips white space backwards, then ``n``
    characters, the longest run of others the pattern has there. A search from 0 (or of
    ``text[:end]``) reads the whole text before ``end``: once per value found, that is
    quadratic in a text of many values."""
    start = end
    for n in steps:
        while start > 0 and text[start - 1].isspace():
            start -= 1
        start = max(0, start - n)
    return start


#: 五一, the May Day holiday: never how 51 is written (五十一), unless more digits follow.
_MAY_DAY = re.compile(
    r"(?<![\d零〇一二两三四五六七八九十百千万亿.])五一(?![\d零〇一二两三四五六七八九十百千万亿个块元%.])"
)


def find_dates(f: _Finds) -> None:
    t = f.text
    for m in _CN_MONTH_END.finditer(t):
        if not (m[1] or m[2]):
            continue  # 底 alone
        month = small_int(m[2]) if m[2] else 12
        year = int(m[1]) if m[1] else None
        if month is None or not 1 <= month <= 12 or not f.free(*m.span()):
            continue
        last = calendar.monthrange(year or 2001, month)[1]  # a year that is no leap year
        value = f"{year:04d}-{month:02d}-{last:02d}" if year else f"{month:02d}-{last:02d}"
        f.add(Value(m.group(), "date", value, None, *m.span()))  # 8月底, 2024年底
    for m in (*_EN_MONTH_PART.finditer(t), *_CN_MONTH_PART.finditer(t)):
        english = m.re is _EN_MONTH_PART
        part, month_text, year_text = (m[1], m[2], m[3]) if english else (m[3], m[2], m[1])
        month = _MONTHS.get(month_text.lower().rstrip(".")) if english else small_int(month_text)
        year = int(year_text) if year_text else None
        if not month or not 1 <= month <= 12 or not f.free(*m.span()):
            continue
        if english and month_text == "may" and not _MAY_DAY_END.match(t, m.end()):
            continue  # "running late may cause…": the verb
        if english and month_text.lower() in ("march", "may") and t[: m.start()].endswith("the "):
            continue  # "the late march was long" (not "the mid-june deadline")
        if part.lower() == "end of":
            last = calendar.monthrange(year or 2001, month)[1]
            value = f"{year:04d}-{month:02d}-{last:02d}" if year else f"{month:02d}-{last:02d}"
        else:
            value = f"{year:04d}-{month:02d}" if year else f"--{month:02d}"
        f.add(Value(m.group(), "date", value, None, *m.span()))
    for m in _ISO_DATE.finditer(t):
        y, mo, d = int(m[1]), int(m[2]), int(m[3])
        if 1 <= mo <= 12 and 1 <= d <= 31 and f.free(*m.span()):
            f.add(Value(m.group(), "date", f"{y:04d}-{mo:02d}-{d:02d}", None, *m.span()))
    for m in _YEAR_MONTH.finditer(t):
        if 1 <= int(m[2]) <= 12 and f.free(*m.span()):
            f.add(Value(m.group(), "date", f"{m[1]}-{m[2]}", None, *m.span()))
    months: list[tuple[int, str]] = []  # where a Chinese date with a month ends, its month
    for m in _CN_DATE.finditer(t):
        if not f.free(*m.span()):
            continue
        month = small_int(m[2])
        day = small_int(m[3] or m[4]) if m[3] or m[4] else None
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
        f.add(Value(m.group(), "date", value, None, *m.span()))
        if day is not None:
            months.append((m.end(), value[: -len("-DD")]))
    for m in re.finditer(r"(\d{1,2})月\d{1,2}[号日](?:到|至|-|~|～)(\d{1,2})[号日]", t):
        start = m.start(2)
        if f.free(start, m.end()) and 1 <= int(m[2]) <= 31 and 1 <= int(m[1]) <= 12:
            value = f"{int(m[1]):02d}-{int(m[2]):02d}"
            f.add(Value(t[start : m.end()], "date", value, None, start, m.end()))
    for m in _CN_DAY.finditer(t):
        day = small_int(m[1])
        if day is None or not 1 <= day <= 31 or not f.free(*m.span()):
            continue
        # "3月12号去，19号回": the month said last before it; else a day of any month
        said = next((mo for end, mo in reversed(months) if end <= m.start()), "--")
        f.add(Value(m.group(), "date", f"{said}-{day:02d}", None, *m.span()))
    for m in _MAY_DAY.finditer(t):
        if f.free(*m.span()):
            f.add(Value(m.group(), "date", "05-01", None, *m.span()))
    for pattern, order in ((_EN_DATE_MD, "md"), (_EN_DATE_DM, "dm")):
        for m in pattern.finditer(t):
            if not f.free(*m.span()):
                continue
            month_word, day_text = (m[1], m[2]) if order == "md" else (m[2], m[1])
            month = _MONTHS.get(month_word.lower().rstrip("."))
            # "may 5" in lower case is more often the verb ("it may 5x…")
            if (
                month_word.lower().rstrip(".") == "may"
                and order == "md"
                and not m[3]
                and month_word[0].islower()
                and not _DATE_LEAD.search(t, tail_start(t, m.start(), 7), m.start())
                and not _MAY_DAY_END.match(t, m.end())
            ):
                continue
            d = int(day_text)
            if not month or not 1 <= d <= 31:
                continue
            value = f"{int(m[3]):04d}-{month:02d}-{d:02d}" if m[3] else f"{month:02d}-{d:02d}"
            f.add(Value(m.group(), "date", value, None, *m.span()))
            end = _DAY_AFTER.match(t, m.end())
            if end is not None and d < int(end[1]) <= 31 and f.free(*end.span(1)):
                # "may 22 to 27", "March 14 to Sunday the 16th": the end of the span
                closing = f"{value[: -len('DD')]}{int(end[1]):02d}"
                f.add(
                    Value(end[1] + (end[2] or ""), "date", closing, None, end.start(1), end.end())
                )
    for m in _END_OF.finditer(t):
        if f.free(*m.span()):
            f.add(Value(m.group(), "date", f"{m[1]}-12-31", None, *m.span()))
    for m in (*_EN_ORDINAL_DAY.finditer(t), *_EN_ORDINAL_IS.finditer(t)):
        if f.free(*m.span(1)) and 1 <= int(m[2]) <= 31:
            f.add(Value(m[1], "date", f"---{int(m[2]):02d}", None, *m.span(1)))
    for m in _EN_MONTH_YEAR.finditer(t):
        month = _MONTHS.get(m[1].lower().rstrip("."))
        if month and f.free(*m.span()) and not (m[1].lower() == "may" and m[1][0] == "m"):
            f.add(Value(m.group(), "date", f"{int(m[2]):04d}-{month:02d}", None, *m.span()))
    for m in _SLASH_DATE.finditer(t):
        mo, d = int(m[1]), int(m[2])
        if 1 <= mo <= 12 and 1 <= d <= 31 and f.free(m.start(1), m.end()):
            start = m.start(1)
            year_text = m[3]
            if year_text:
                y = int(year_text) + (2000 if len(year_text) == 2 else 0)
                value = f"{y:04d}-{mo:02d}-{d:02d}"
            else:
                value = f"{mo:02d}-{d:02d}"
            f.add(Value(t[start : m.end()], "date", value, None, start, m.end()))


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_WEEKDAY = re.compile(
    r"\b(?<!black )(?<!cyber )(?<!good )(?:(?:next|this|last|coming)\s+)?"
    r"(mon|tues|wednes|thurs|fri|satur|sun)days?\b",
    re.I,
)
#: 周五, 星期三, 下周一, 下下周三; not 一周一次 (once a week), 这周一直 (all this week), 一周五天.
_CN_WEEKDAY = re.compile(
    r"(?:下下个?|下个?|这个?|上上个?|上个?|本)?(?:周|星期|礼拜)([一二三四五六日天])(?![次回遍趟直共般样定切些])"
)
_CN_WEEKDAY_NUMBER = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}


def find_weekdays(f: _Finds, dates: list[tuple[int, int]]) -> None:
    """Days of the week ("Friday", "next monday", "周五", "星期天") as dates whose value is
    the day's English name; not one written beside a date ("Saturday May 17"), which
    only names that date's day."""
    t = f.text
    found = [
        (m.span(), next(w for w in WEEKDAYS if w.startswith(m[1].lower())))
        for m in _EN_WEEKDAY.finditer(t)
    ]
    for m in _CN_WEEKDAY.finditer(t):
        if m[1] != "天" and t[m.end() : m.end() + 1] == "天":
            continue  # 一周五天: five days a week
        found.append((m.span(), WEEKDAYS[_CN_WEEKDAY_NUMBER[m[1]] - 1]))
    starts = sorted(a for a, _ in dates)
    ends = sorted(b for _, b in dates)
    for (start, end), name in found:
        # a date starting within 3 characters after it, or ending within 3 before it
        after = bisect_left(starts, end) < bisect_right(starts, end + 3)
        beside = after or bisect_left(ends, start - 3) < bisect_right(ends, start)
        if not beside and f.free(start, end):
            f.add(Value(t[start:end], "date", name, None, start, end))


#: What puts two clock times in different sentences or days.
_ANOTHER_DAY = re.compile(
    r"[。！!？?；;\n]|[明后昨今每]天|第二天|次日|天天|[周星期礼拜][一二三四五六日天]|早上|上午|早晨|凌晨"
)


def find_times(f: _Finds) -> None:
    t = f.text
    before = (-1, "")  # where the last Chinese clock time ended, and its part of the day
    shifted_last: tuple[str, int, int] | None = None  # the last one its part of the day moved
    for m in _CN_CLOCK.finditer(t):
        if not f.free(*m.span()):
            continue
        hour = small_int(m[2].rstrip())
        if hour is None or hour > 24 or _POINTS.match(t, m.end()):
            continue
        minute = 30 if m[3] else 15 if m[4] else 45 if m[5] else small_int(m[6]) if m[6] else 0
        if minute is None or minute > 59:
            continue
        if m[6] and len(m[6]) == 1 and m[6] in "一二三四五六七八九" and not m[7]:
            continue  # 两点五, 一点五倍: a decimal, not a clock time (2:05 is 两点零五 or 两点五分)
        period = (m[1] or "").rstrip()
        if (
            m[2] == "一"
            and not period
            and m.end() == m.end(2) + 1
            and not _ONE_OCLOCK.match(t, m.end())
        ):
            continue  # 便宜一点, 快一点: "a little", unless 一点钟, 一点前, 一点到三点
        if not period and _CLOCK_RANGE.fullmatch(t, before[0], m.start()):
            period = before[1]  # 晚上7点到9点: the end of the range is in the evening too
        if not period:
            # 晚上我一般9点多: the part of the day said just before, or its meal
            start = max(0, m.start() - 8, before[0])
            said = _PERIOD_BEFORE.search(t, start, m.start())
            meal = None if said else _MEAL_BEFORE.search(t, start, m.start())
            period = said[1] if said else _MEAL_PERIOD[meal[1]] if meal else ""
        if not period and shifted_last is not None:
            # 下午三点开始，两点半集合 and 晚上八点吃饭 九点散: an hour close to a time the
            # text put in the afternoon or evening, in the same sentence and day, is in it
            # too (not 晚上十一点睡，七点起床, nor 晚上9点到酒店，明天8点退房)
            near = _afternoon(shifted_last[0], hour)
            apart = _ANOTHER_DAY.search(t, shifted_last[2], m.start())
            if near != hour and abs(near - shifted_last[1]) <= 2 and apart is None:
                period = shifted_last[0]
        shifted = _afternoon(period, hour)
        if shifted != hour:
            shifted_last = (period, shifted, m.end())
        # 夜里0点到8点: a start its part of the day left as it was says nothing of the end
        before = (m.end(), period if shifted != hour else "")
        hour = shifted
        f.add(Value(m.group(), "time", f"{hour:02d}:{minute:02d}", None, *m.span()))
    for m in _CN_PERIOD_CLOCK.finditer(t):
        if f.free(*m.span()) and m[1]:
            hour, minute = _afternoon(m[1], int(m[2])), int(m[3])
            if hour < 24 and minute < 60:
                f.add(Value(m.group(), "time", f"{hour:02d}:{minute:02d}", None, *m.span()))
    for m in _CLOCK_SPAN.finditer(t):
        # "2-5pm": the start of the span is in the same half of the day as its end
        start, end = int(m[1]), int(m[2])
        if f.free(*m.span(1)) and 1 <= start < end < 12:  # (not "10-12pm": 10 in the morning)
            hour = start % 12 + (12 if m[3].lower() == "p" else 0)
            f.add(Value(m[1], "time", f"{hour:02d}:00", None, *m.span(1)))
    for m in _CLOCK.finditer(t):
        if not f.free(*m.span()):
            continue
        if m[1] is not None:
            hour, minute, ampm = int(m[1]), int(m[2]), m[3]
        else:
            hour, minute, ampm = int(m[4]), 0, m[5]
        if minute > 59 or hour > 24 or (ampm and not 1 <= hour <= 12):
            continue
        if ampm:
            hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
        f.add(Value(m.group(), "time", f"{hour:02d}:{minute:02d}", None, *m.span()))


def small_int(s: str | None) -> int | None:
    if s is None:
        return None
    if s.isdigit():
        return int(s)
    v = (
        parse_chinese_number(s)
        if len(s) > 1
        else (CN_DIGIT.get(s) if s in CN_DIGIT else (10 if s == "十" else None))
    )
    return int(v) if v is not None else None


def _year(s: str) -> int | None:
    if s.isdigit():
        return int(s)
    if all(ch in CN_DIGIT for ch in s):
        return int("".join(str(CN_DIGIT[ch]) for ch in s))
    return None


def _afternoon(period: str | None, hour: int) -> int:
    if period in ("下午", "傍晚") and hour < 12:
        return hour + 12
    if period in ("晚上", "夜里", "今晚", "明晚"):
        # 晚上8点 is 20:00, but 夜里2点 and 夜里0点 are the small hours, 晚上12点 midnight
        return hour + 12 if 6 <= hour < 12 else 0 if hour == 12 else hour
    if period in ("中午",) and hour < 6:
        return hour + 12
    if period in ("凌晨", "半夜") and hour == 12:
        return 0
    return hour


#: A clock time's half of the day, when written ("下午三点", "3pm").
_HALF_OF_DAY = re.compile(
    r"上午|下午|晚上|早上|中午|凌晨|傍晚|夜里|早晨|今晚|明晚|[ap]\.?m\b|o'?clock", re.I
)


def in_the_afternoon(values: list[Value], before: list[Value]) -> list[Value]:
    """A bare clock time after an afternoon one in the clause before is in the afternoon
    too when it comes later that way: "下午三点开始 玩到五点半" ends at 17:30."""
    pm = [
        _minutes(str(v.value)) for v in before if v.type == "time" and _minutes(str(v.value)) >= 720
    ]
    if not pm:
        return values
    out = []
    for v in values:
        at = _minutes(str(v.value)) if v.type == "time" else -1
        if 60 <= at < 720 and at < max(pm) < at + 720 and not _HALF_OF_DAY.search(v.raw):
            v = replace(v, value=f"{at // 60 + 12:02d}:{at % 60:02d}")
        out.append(v)
    return out


def _minutes(clock: str) -> int:
    """Minutes since midnight of an "HH:MM" value (-1 for anything else)."""
    m = re.fullmatch(r"(\d{2}):(\d{2})", clock)
    return int(m[1]) * 60 + int(m[2]) if m else -1
