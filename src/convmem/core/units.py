"""Units, currencies and Chinese numerals: the tables that reading numbers relies on.

``UNIT_TABLE`` maps every written unit (English and Chinese, singular and plural) to
its canonical name and the kind of value it makes (``duration``, ``money``,
``quantity``, ``percent``). :func:`parse_chinese_number` reads Chinese numerals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Written unit -> (canonical unit, type). Longest spellings are tried first.
UNIT_TABLE: dict[str, tuple[str, str]] = {}


def _units(canonical: str, kind: str, *spellings: str) -> None:
    for s in spellings:
        UNIT_TABLE[s] = (canonical, kind)


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
_units("MB", "quantity", "mb", "兆")
_units("GB", "quantity", "gb", "g")
_units("TB", "quantity", "tb")
_units("KiB", "quantity", "kib", "ki")
_units("MiB", "quantity", "mib", "mi")
_units("GiB", "quantity", "gib", "gi")
_units("TiB", "quantity", "tib", "ti")
_units("lb", "quantity", "lbs", "lb")
_units("mg", "quantity", "mg", "milligrams", "milligram")
_units("mcg", "quantity", "mcg", "µg", "μg", "micrograms", "microgram")
_units("m", "quantity", "meters", "meter", "metres", "metre", "m", "米")
_units("cm", "quantity", "centimeters", "centimeter", "centimetres", "centimetre", "cm", "厘米")
_units("mm", "quantity", "millimeters", "millimeter", "millimetres", "millimetre", "mm", "毫米")
_units("km", "quantity", "kilometers", "kilometer", "kilometres", "kilometre", "km", "公里")
_units("rps", "quantity", "rps", "req/s", "requests/s", "requests per second")
_units("qps", "quantity", "qps")
_units("tps", "quantity", "tps")
_units("token", "quantity", "tokens", "token")
_units("char", "quantity", "characters", "character", "chars", "char", "字符", "个字", "字")
_units("line", "quantity", "lines", "line", "行")
_units("word", "quantity", "words", "word")
_units("px", "quantity", "pixels", "pixel", "px", "像素")
_units("%", "percent", "%", "percent", "per cent", "pct")
_units("USD", "money", "dollars", "dollar", "bucks", "usd", "美元", "美金", "刀")
_units("EUR", "money", "euros", "euro", "eur", "欧元", "€")
_units("GBP", "money", "pounds", "quid", "gbp", "英镑")
_units("CNY", "money", "元", "块钱", "块", "rmb", "cny", "人民币")
_units("JPY", "money", "yen", "jpy", "日元")
_units("HKD", "money", "hkd", "港币", "港元")
_units("AUD", "money", "aud", "澳币", "澳元")
_units("CAD", "money", "cad", "加币", "加元")
_units("SGD", "money", "sgd", "新币", "新加坡元")
_units("TWD", "money", "twd", "新台币", "台币")
_units("KRW", "money", "krw", "韩元", "韩币")
_units("kcal", "quantity", "kcal", "千卡", "大卡", "卡路里", "卡")
_units("分", "quantity", "分")
_units("star", "quantity", "stars", "star", "星")

#: Chinese measure words and counted nouns kept as written (``3台`` -> unit ``台``).
CN_COUNTERS = (
    "人", "位", "晚", "间", "台", "个", "次", "条", "张", "件", "套", "辆", "家",
    "层", "页", "本", "节", "份", "场", "周岁", "岁", "斤", "公斤", "千克", "平米", "平",
    "只", "楼", "桌", "座", "核", "瓶", "杯", "盒", "颗", "双", "顿", "碗", "袋", "趟", "遍",
    "篇", "站", "周年", "针", "门", "口", "积分", "轮", "步", "寸", "升", "薪",
)  # fmt: skip
for _c in CN_COUNTERS:
    UNIT_TABLE.setdefault(_c, (_c, "quantity"))
UNIT_TABLE["公斤"] = ("kg", "quantity")
UNIT_TABLE["千克"] = ("kg", "quantity")
UNIT_TABLE["kg"] = ("kg", "quantity")
UNIT_TABLE["kgs"] = ("kg", "quantity")
UNIT_TABLE["平米"] = ("m2", "quantity")
UNIT_TABLE["平"] = ("m2", "quantity")
UNIT_TABLE["克"] = ("g", "quantity")
UNIT_TABLE["毫升"] = ("ml", "quantity")
UNIT_TABLE["ml"] = ("ml", "quantity")
UNIT_TABLE["sqft"] = ("sqft", "quantity")
UNIT_TABLE["口人"] = ("人", "quantity")  # 4口人: four in the family
for _p in ("ppl", "pax", "peeps"):
    UNIT_TABLE[_p] = ("person", "quantity")

JAPAN = re.compile(
    r"japan|tokyo|kyoto|osaka|hakone|hokkaido|okinawa|\byen\b|日本|东京|京都|大阪|日元", re.I
)
CURRENCY_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "CNY", "￥": "CNY"}
#: Dollars named by the letters before the sign.
DOLLARS = {"HK": "HKD", "NT": "TWD", "US": "USD", "A": "AUD", "C": "CAD", "S": "SGD"}
CURRENCY_CODES = {"usd": "USD", "eur": "EUR", "gbp": "GBP", "rmb": "CNY", "cny": "CNY"}

#: English words that follow a number but are not what it counts.
NOT_NOUNS = frozenset(
    """a an the and or of to in on at for with by from into as is are was were be been bis
    am pm more less than then so but if it its this that these those i we you he she they
    me my our your his her their them us what which who how when where why not no yes all
    any some each every other another both either neither one two three same few many much
    most very too also just only still even about around over under after before per via
    or between up down out off do does did done has have had will would can could should
    shall may might must ago later earlier left remaining total overall plus minus
    x th st nd rd ok okay etc vs am pm because since though although while whereas unless until
    whether cause just maybe probably really already yet again now today tonight tomorrow
    yesterday anyway haha lol please thanks max min tops instead either also ish plus last next
    million billion thousand hundred something odd based indexed
    actually anyways honestly basically though tho rn asap pls thx
    works worked seems looks sounds feels helps makes breaks fails passes
    stays stands remains holds says said thinks insists claims bc cuz coz cos
    everybody everyone everything right like here there
    minimum maximum limit cap ceiling floor
    """.split()
)
#: Words that count nothing alone ("115k base", "90k remote") but may say which kind of
#: the noun after them is counted ("3 remote workers", "2 base cabinets").
QUALIFIERS = frozenset("base remote hybrid onsite gross net pretax".split())
NOT_NOUNS = NOT_NOUNS | QUALIFIERS
IE_NOUNS = frozenset({"calorie", "movie", "cookie", "pie", "tie", "rookie", "selfie", "zombie"})
IRREGULAR_PLURALS = {"people": "person", "children": "child", "men": "man", "women": "woman"}

# --- Chinese numerals ---------------------------------------------------------------------

CN_DIGIT = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4,
    "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
CN_SMALL = {"十": 10, "百": 100, "千": 1000}
CN_BIG = {"万": 10_000, "亿": 100_000_000}
CN_CHARS = "零〇一二两俩三四五六七八九十百千万亿"
CN_ARTICLE_UNITS = frozenset("家种下点些样位张条件套份本场桌遍顿趟杯碗口门")
#: Characters that end a counted noun ("3个人的" -> 人).
CN_PARTICLES = frozenset("的了在要是都和就也还吧呢吗啊呀着过给把被让对从到")


def parse_chinese_number(s: str) -> float | None:
    """``三千`` 3000, ``两百`` 200, ``一万五`` 15000, ``十五`` 15, ``三千五`` 3500."""
    if not s or any(ch not in CN_CHARS for ch in s):
        return None
    if all(ch in CN_DIGIT for ch in s):  # digit by digit: 二〇二四
        return float(int("".join(str(CN_DIGIT[ch]) for ch in s))) if len(s) > 1 else None
    total, section, current = 0, 0, 0
    last_unit = 0
    for ch in s:
        if ch in CN_DIGIT:
            current = CN_DIGIT[ch]
        elif ch in CN_SMALL:
            section += (current or 1) * CN_SMALL[ch]
            last_unit = CN_SMALL[ch]
            current = 0
        else:
            total += (section + current) * CN_BIG[ch]
            last_unit = CN_BIG[ch]
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


def singular(word: str) -> str:
    w = word.lower()
    if w.endswith(("ies",)) and w[:-1] in IE_NOUNS:
        return w[:-1]
    if w in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[w]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ses", "xes", "ches", "shes")) and len(w) > 4:
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


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


def is_cjk(ch: str) -> bool:
    """Whether one character is a CJK ideograph."""
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"
