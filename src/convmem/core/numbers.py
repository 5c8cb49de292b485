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
import unicodedata
from dataclasses import replace
from functools import cached_property, lru_cache

from convmem.core.dates import find_dates, find_times, find_weekdays, small_int, tail_start
from convmem.core.units import (
    CN_ARTICLE_UNITS,
    CN_BIG,
    CN_DIGIT,
    CN_PARTICLES,
    CN_SMALL,
    CURRENCY_CODES,
    CURRENCY_SIGNS,
    DOLLARS,
    JAPAN,
    NOT_NOUNS,
    QUALIFIERS,
    UNIT_TABLE,
    Value,
    is_cjk,
    parse_chinese_number,
    singular,
)
from convmem.core.versions import find_versions, version_bound

# --- the value --------------------------------------------------------------------------


# --- patterns -----------------------------------------------------------------------------

__all__ = ["Value", "find_numbers", "parse_chinese_number"]

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_MULT = (
    r"(?:[kK](?![a-zA-Z])|[mM](?=\b|美元|美金|刀|人民币|欧元)(?!\s*(?:s\b|in\b|inute|eter|etre))"
    r"|million|mn|bn|billion|千万|百万|万|千(?!卡)|亿|(?:(?<!\s)w|w(?=\s*[\u4e00-\u9fff]))(?![a-zA-Z]))"
)

_METRE_TAIL = re.compile(
    r"(?:\d{1,2}|[零一二三四五六七八九]{1,2})(?![\d.零一二三四五六七八九十百千万个米])"
)
#: A discount: 八折, 6.5折, 75折 (not 折叠, 折旧, 折算...).
_DISCOUNT = re.compile(
    r"(?<![\d.零一二两三四五六七八九十百千万])(\d\.\d|[1-9]{1,2}|[一二三四五六七八九]{1,2})折(?![叠腾旧射磨断返合算扣])"
)
#: What "10k" counts when it is no distance: "10k requests", "10k of them".
_COUNTED_AFTER = re.compile(r"\s*(?:of\b|(?!(?:this|is|was|has|as|yes|plus|less)\b)[A-Za-z]+s\b)")
#: Words of a text where "10k" is a distance run.
_RUNNING = re.compile(r"\b(?:run|runs|ran|running|race|races|racing|jog\w*|marathon|pace)\b", re.I)
_RISES = re.compile(r"\s*(?:到|至|级|为|成|\d|[一二两三四五六七八九十])")
#: What follows an upper-case M that makes it megabytes in Chinese text ("300M以内").
_SIZE_M = re.compile(r"以内|以下|以上|左右|大小|的")
_ZH_MONEY_WORD = re.compile(r"预算|融资|钱|收入|营收|工资|薪|报价|价|刀|美元|元|块|ARR", re.I)
_JOINED_NOUN = re.compile(r"-([A-Za-z]{3,})(?![A-Za-z])")
#: A count and a half of a unit: "3岁半", "一年半", "两个月半" (not "两个半小时", read later).
_UNIT_AND_HALF = re.compile(
    r"(?<![\d零〇一二两三四五六七八九十百千万.])(\d{1,3}|[一二两三四五六七八九十]{1,3})"
    r"(年|个月|天|周|岁|小时|个小时)半(?![天年月])"
)
#: What follows 千万 when it means "by all means" ("千万别动生产库", "千万注意").
_NOT_TEN_MILLION = re.compile(r"别|不|要|记|注意|小心|得|必须|保证|当心")
_COUNTER_NEXT = re.compile(r" ?(?:[多来几] ?)?个")
#: Counted nouns of three characters (the first two alone would be cut short).
_THREE_CHARACTER_NOUNS = frozenset(
    "小朋友 小孩子 小伙伴 老朋友 大学生 研究生 中学生 小学生 工作日 服务器 数据库 实习生"
    " 志愿者 参赛者 候选人 客户端 应用程序".split()
)
_SIZE_LETTER = {"T": "TB", "G": "GB", "M": "MB", "K": "KB"}
_LATIN_NOUN = re.compile(r"([A-Za-z][A-Za-z_-]{1,30})(?![A-Za-z0-9_\u3400-\u9fff])")
#: An age said with the person: "I'm 34", "they're both 15", "turned 50 in January".
_AGE = re.compile(
    r"\b(?:i'm|i am|he's|he is|she's|she is|they're both|they are both|i was|he was|she was"
    r"|(?:my|our|his|her|their)\s+(?:\w+\s+)?(?:son|daughter|kid|boy|girl|baby|wife|husband"
    r"|mom|mum|dad|brother|sister|grandson|granddaughter|dog|cat|puppy|kitten|pup)\s+(?:is|was))"
    r"(?:\s+(?:like|about|only|just|now|almost|nearly))?\s+(?P<n>\d{1,3})"
    r"(?!\d|[.,:]\d|[%/'’′\"-])"
    r"(?!\s*(?:and\s+\d|(?!(?:now|this|next|and|but|so|today|when|yet|years?\s+old)\b)[A-Za-z%$]))"
    r"|\b(?:turn(?:s|ed|ing)|aged)\s+(?P<t>\d{1,3})(?!\d|[.,:]\d|[%/'’′\"-])"
    r"(?!\s*(?!(?:now|in|on|this|next|last|and|but|so|today|when|yet|years?\s+old)\b)[A-Za-z%$])",
    re.I,
)
_CORES_MEMORY = re.compile(r"(?<![A-Za-z\d])(\d{1,3})([Cc])(\d{1,4})([Gg])(?![A-Za-z\d])")
_CN_PERCENT = re.compile(r"百分之([零〇一二两三四五六七八九十百]+|\d+(?:\.\d+)?)")
#: A share in tenths: 三成 (30%), 3成, 两成半, 九成九 (99%); not 一成不变, 成本, 成功,
#: the 一 of a word (统一成, 合一成), nor "most likely" (他八成忘了, 八成是堵车).
_TENTHS = re.compile(
    r"(?<![\d.零〇一二两三四五六七八九十百千万亿几])(?<![统唯第同专单归划合逐])"
    r"([一二两三四五六七八九]|[1-9])成"
    r"(半|[一二三四五六七八九](?![一二三四五六七八九十百千万]))?"
    r"(?!不变|[本功为员绩果长立熟交型品都语就形份像年是会要又已在得没忘他她它你我不也还有被家团名事行])"
)
#: A fraction: 三分之一, 2分之1, 千分之五 (not 百分之…, read as a percent).
_CN_FRACTION = re.compile(
    r"(?<![\d零〇一二两三四五六七八九十百千万亿])([一二两三四五六七八九十千万]+|\d{1,5})分之"
    r"([一二两三四五六七八九十百千]+|\d{1,5})(?![\d零〇一二两三四五六七八九十百千万亿])"
)
#: What "一" starts when it means "a" or "per" after a sum: "两千五一晚", "三千一天",
#: "两千五一张", "三千二一个人".
_PER_ONE = (
    r"晚|天|日|周|次|小时|个|年|间|张|套|位|人|份|件|台|瓶|盒|斤|公斤|桌|趟|节|课|箱|包|袋|罐|杯"
    r"|双|只|支|条|本|把|辆|碗"
)
#: A run of Chinese numerals (at most 24: a longer one is no number anyone says); a 一
#: after a sum ("两千五", "三千") that starts a period or a count is not its digit:
#: "两千五一晚" is 2,500 a night ("二十一天" is 21 days, "一千一百" 1,100).
_CN_NUM_RUN = re.compile(
    r"[零〇一二两俩三四五六七八九十百千万亿]"
    r"(?:[零〇二两俩三四五六七八九十百千万亿]|(?<![千百万][二两三四五六七八九])(?<![千百万])一"
    r"|一(?!" + _PER_ONE + r")){0,23}(?:个?半)?"
)

#: "三四天", "五六个人", "两三百块": two numerals one apart, then their place, are a range.
_CN_APPROX = re.compile(
    r"(?P<tens>[二三四五六七八九]?十)?(?P<a>[一二两三四五六七八])(?P<b>[二两三四五六七八九])"
    r"(?P<place>[十百千]万|[十百千万])?"
    r"(?![零〇一二两三四五六七八九十百千万亿])"
)
#: After 万 or 千 written with digits, the digits of the next place down: "1万5", "1万5千",
#: "2万零500" (see ``_Finder._tail_digits``); typed short as "1w2" (12,000) and "2k5" (2,500).
_NEXT_PLACE = {"万": "千", "千": "百", "w": "千", "k": "百"}
#: What only comes in thousands: "3万2条" is 32,000 rows ("1万5天" stays 10,000 and 5 days,
#: "6千5次" 6,000 for 5 sessions).
_BULK_COUNTERS = frozenset({"条", "line", "char", "篇", "份", "word", "token"})
_TAIL_DIGITS = re.compile(r"(?P<zero>零)?(?P<digits>\d{1,4})(?P<place>[千百])?(?![\d.kKwW])")
#: A lone numeral and a range's join right before a value: "三到五天", "两到3个".
_LONE_LOW = re.compile(
    r"(?<![零〇一二两三四五六七八九十百千万亿\d])(?P<low>[一二两三四五六七八九十])\s*(?:到|至|~|～|-|－)\s*$"
)
#: "2、3个小时", "3、4天": two whole numbers in a row before a unit (see ``_range``).
_NEIGHBOURS = re.compile(r"(?P<a>\d{1,2})、(?P<b>\d{1,2})(?=\s*个?\s*[\u3400-\u9fff])")
_RANGE_JOIN = re.compile(r"\s*(?:-|–|—|~|～|〜|to|through|thru|至|到|－)\s*", re.I)
_BETWEEN = re.compile(r"\bbetween\s*$", re.I)
_AND = re.compile(r"\s+and\s+")

_UPPER_BEFORE = re.compile(
    r"(?:\b(?:under|below|less than|fewer than|at most|no more than|not more than|max(?:imum)?"
    r"|(?<!went )(?<!gone )(?<!rose )(?<!bumped )(?<!jumped )(?<!we're )(?<!were )(?<!now )"
    r"(?<!moving )up to"
    r"|within|not exceed(?:ing)?|no higher than|no longer than|lower than|shorter than"
    r"|cap(?:ped)? at|limit(?:ed)? to|less then|tops)"
    r"|<=?|≤|不(?:能|要|得|可以|应)?超过|不(?:能|要)?高于|不到|不足"
    r"|最多|最高|顶多|低于|少于|小于|不大于|控制在|压到|压在|限制在|上限(?:是|为)?"
    r"|预算\S{0,2}?(?:可以|能|最多)(?:放宽|加|涨)?到)\s*$",
    re.I,
)
_LOWER_BEFORE = re.compile(
    r"(?:\b(?:over|above|more than|greater than|at least|no less than|not less than|min(?:imum)?"
    r"|higher than|longer than|upwards of|in excess of|exceed(?:ing)?|starting at|beat|beats)"
    r"|>=?|≥|至少|最少|起码|不低于|不少于|高于|大于|超过|下限(?:是|为)?)\s*$",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:not|never|no|nothing|can't|cannot|don't|won't|shouldn't|mustn't|isn't|aren't|without"
    r"|doesn't|didn't|cant|dont|doesnt|didnt|wont|shouldnt|isnt|arent)\b"
    r"|不|别|没|勿",
    re.I,
)
_NEGATED_LOWER = re.compile(
    r"(?:不(?:能|要|得|可以|应该?|会|准)?(?:低于|少于"
    r"|小于|短于)|\b(?:not|never|no)\s+(?:[a-z']+\s+){0,2}?"
    r"(?:below|under|less than|fewer than|lower than))\s*$",
    re.I,
)
_NEGATED_UPPER = re.compile(
    r"(?:不(?:能|要|得|可以|应该?|会|准)?(?:超过|高于|大于|多于|长于|超出)"
    r"|\b(?:not|never|no|don't|dont|do not|shouldn't|mustn't|can't|cannot|won't)\s+"
    r"(?:[a-z']+\s+){0,4}?(?:above|over|more than|higher than|longer than|exceed))\s*$",
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
#: A negation of what comes right after it, in the same clause (not "no rush, after 2pm",
#: "don't forget to submit before friday", "I don't mind arriving after 10pm").
_NEGATED_HERE = re.compile(
    r"\b(?:not|never|no|nothing|can['’]t|cannot|don['’]t|won['’]t|isn['’]t|aren['’]t|doesn['’]t"
    r"|didn['’]t|cant|dont|wont|isnt|doesnt|do not|shouldn['’]t)\b"
    r"(?!\s+(?:forget|mind|worry|rush|problem|matter|sure|care|worries)\b)[^,;.!?，。；]*$",
    re.I,
)
#: What lasts until a time, so that "not until" it still ends there: "I can't stay till
#: 10pm", "not due until may 20" (any other verb is held off until then: "can't start till
#: may 20", "I'm not free until 2pm", "no calls before 9am").
_LASTS = re.compile(
    r"\b(?:stay|stays|last|lasts|wait|due|keep|hold|remain|survive|sleep in)\b(?:\s+\w+){0,2}"
    r"\s+(?:until|till|before)\s+$",
    re.I,
)
#: A time, then what comes before or after it refused: "八点以前起飞的不要", "十点以后的都不行".
_ZH_REFUSED = re.compile(
    r"\s*(?P<side>之前|以前|前|之后|以后|后)[^，,。；;！!？?\s]{0,8}的(?:都|也|就)?"
    r"(?:不要|不行|不考虑|不订|不坐|不买|排除|算了|pass)(?:了|啊|哈)?(?=$|[，,。！!？?\s~])"
)
_RATE_THEN_MAX = re.compile(r"\s*(?:a|an|per|each|every)\s+\w+\s+(?:max|tops|at most)\b", re.I)
#: "an hour and a half", "two days and a half", "half an hour".
_EN_AND_A_HALF = re.compile(
    r"\b(?:(?P<one>an?|one|two|three|four|five|six)\s+(?P<unit>hours?|days?|weeks?|months?|years?)"
    r"\s+and\s+a\s+half|(?P<half>half)\s+an?\s+(?P<unit2>hour|day|week|month|year))\b",
    re.I,
)
_ONCE = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
#: How often: "3x a week", "2x/day", "take it 2x daily", "twice a week" (not "3x faster").
_TIMES_A = re.compile(
    r"\b(?P<n>\d{1,2}x|once|twice|thrice)(?=\s*(?:a|an|per|each|every|/)\s*"
    r"(?:day|week|month|year|night|morning|evening|session)s?\b|\s+(?:daily|weekly|monthly|nightly)\b)",
    re.I,
)
#: Thousands written with dots, as in German and much of Europe, beside euros.
_DOT_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:\.\d{3})+")
_EURO_AFTER = re.compile(
    r"[^.,;\n\d]{0,12}?(?:\d{1,3}(?:\.\d{3})+\s?)?(?:€|\bEUR\b|\bEuros?\b)", re.I
)
_LIMIT_NOUN_LOWER = re.compile(r"\b(?:min(?:imum)?|floor)\b|下限|底线|至少|最少|最低", re.I)
#: A ceiling named after its amount: "$500 limit", "50k hard cap".
_LIMIT_WORD = r"(?:cap|ceiling|limit)\b"
_UPPER_AFTER = re.compile(
    r"^\s*(?:以内|以下|之内|内(?![存容部网置核测])|或以下|及以下|封顶"
    r"|or less|or fewer|max\b(?!\s*[:=]?\s*\d)|tops\b|or under|at most"
    r"|(?:hard|firm|absolute) " + _LIMIT_WORD + r"|" + _LIMIT_WORD + r"(?=\s*(?:[,.;!?)]|$)))",
    re.I,
)
#: A number that names which one, not how many: "type 2 diabetes", "stage 3 cancer".
_LABEL_BEFORE = re.compile(r"\b(?:type|stage|level|grade|phase|tier|class|category)\s+$", re.I)
#: The adjective of such a ceiling, which is no counted noun ("the 'hard' of 50k hard cap").
_FIRM_AFTER = re.compile(r"\s(?:hard|firm|absolute|soft)\s+" + _LIMIT_WORD, re.I)
#: What "plus" or "+" adds to an amount, rather than saying "or more": "145k + bonus".
_ADDED = (
    r"(?:[\d$€£¥]|(?:tips?|tax(?:es)?|utilities|bonus|fees?|shipping|vat|gst|equity|benefits"
    r"|expenses|parking|gas|fuel|insurance|deposit|commission|extras?|stock|rsus?)\b)"
)
_LOWER_AFTER = re.compile(
    r"^\s*(?:以上|或以上|及以上|起(?![床来飞身])|多|or more|or above|(?:plus\b|\+)(?!\s*"
    + _ADDED
    + r")|at least"
    r"|minimum\b|min\b(?!\s*[:=]?\s*\d))",
    re.I,
)

_NUMBER = re.compile(
    rf"(?P<cur>[$€£¥￥])?\s?(?<![A-Za-z0-9_.])(?P<num>{_NUM})(?P<pct>\s?%)?"
    rf"(?:\s?(?P<mult>{_MULT}))?",
)
_UNIT_WORDS = sorted(UNIT_TABLE, key=len, reverse=True)
_UNIT_AFTER = re.compile(
    r"\s?(?:" + "|".join(re.escape(u) for u in _UNIT_WORDS) + r")(?![A-Za-z])",
    re.I,
)
_NOUN_AFTER = re.compile(
    r"\s(?:more\s|extra\s|additional\s|new\s|separate\s)?([A-Za-z][A-Za-z]+)(?![\w'’-])"
    r"(?:\s([A-Za-z][a-z]+s)(?![\w-]))?"
)
_EN_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30,
    "fifty": 50, "hundred": 100,
}  # fmt: skip
_EN_WORD_COUNT = re.compile(
    r"\b(?:(?P<times>two|three|four|five|six|seven|eight|nine)\s+(?=hundred))?"
    r"(?P<word>" + "|".join(_EN_NUMBER_WORDS) + r")\s+(?:more\s+|extra\s+|new\s+)?"
    r"(?P<noun>[a-z]{3,}s)\b",
    re.I,
)


#: What follows 平 when it starts a word of its own (平时, 平均, 平台), not square metres.
_NOT_SQUARE_METRES = tuple("时常均台安静稳价衡板躺")


#: What makes a lower-case g grams, near the number: food and the body ("160g protein",
#: "500g flour", "鸡胸肉大概 200g"); elsewhere it is gigabytes ("jvm heap 6g", "16g ram").
_GRAMS_NEAR = re.compile(
    r"protein|carb|fat\b|fibre|fiber|sugar|salt|sodium|flour|butter|rice|pasta|oat|cheese"
    r"|chocolate|coffee|bean|meat|chicken|beef|fish|serving|portion|calorie|\bcal\b|kcal"
    r"|dose|powder|creatine|weigh|diet|\beat|food|snack|whey|scoop|shake|yog(?:h)?urt"
    r"|almond|peanut|\bfruits?\b|\boats?\b|\bveg(?:gies?|etables?)?\b|breast|\beggs?\b|tofu"
    r"|蛋白|碳水|脂肪|糖|盐|面粉|米饭|鸡胸|鸡蛋|牛肉|猪肉|鱼肉|蔬菜|水果|燕麦|坚果|牛奶|酸奶|豆腐|食谱|克重|体重"
    r"|薯片|咖啡豆|猫粮|狗粮|巧克力|黄油|奶酪|零食|面包|饼干|蛋糕|每份|肉"
    r"|每顿|每餐|吃",
    re.I,
)
#: What a size in gigabytes is said of: the nearer of the two decides ("我上传了食谱
#: 面粉200g" is grams, "蛋白粉…内存16g" gigabytes).
_GIGABYTES_NEAR = re.compile(
    r"内存|显存|硬盘|存储|流量|带宽|容量|空间|磁盘|固态|机器|服务器|显卡|镜像|文件|数据|模型|权重"
    r"|日志|缓存|备份|下载|上传|安装包|电脑|手机|U盘|网盘|容器|堆|信号|网速|流量|套餐|主机|配置"
    r"|\b(?:ram|disk|memory|mem|gpu|vram|ssd|hdd|storage|data|file|image|heap"
    r"|laptop|macbook|mac|iphone|ipad|phone|pc|pod|container|vm|vps|node|server|drive|jvm|java|k8s)"
    r"s?(?![a-z])",
    re.I,
)
#: An HTTP status written in the plural ("retry on 429s", "the 503s"), after the words
#: that name statuses (not "set the timeout to 500s", "make it 450s").
_STATUS_CODE = re.compile(
    r"\b(?:on|the|those|these|any|all|some|more|many|few|of|getting|got|seeing|see|retry"
    r"|retrying|handle|handling|with|no|by)\s+[45]\d\d$",
    re.I,
)
#: What a 2k, 4k or 8k names when it is a screen's resolution ("4k的屏幕", "a 4k monitor").
_CN_DIGITS = frozenset("一二两三四五六七八九十0123456789")
#: The words around 618 that make it the June shopping festival, not an amount.
_SALE_BEFORE = re.compile(r"(?:等|等到|等不到|赶上?|过了|趁)\s*$")
_SALE_AFTER = re.compile(r"\s*(?:大促|活动|的时候|那天|期间|再买|前后|买|囤|促销|优惠|打折)")
_RESOLUTION_AFTER = re.compile(
    r"的?(?:屏|显示器|电视|分辨率)|\s?(?:monitors?|displays?|screens?|tvs?|resolution|hdr)\b",
    re.I,
)
_RESOLUTION_BEFORE = re.compile(r"(?:寸|inch|\d\")\s*$", re.I)
#: People counted by who they are: "it's 6 of us now", "there are only 8 of us".
_OF_US = re.compile(r"\s+of\s+us\b", re.I)


#: What makes 字 part of another word: 字段 (a field), 字母 (a letter), 字节 (a byte).
_WORD_COMPOUND = frozenset("段母节幕典体样号")


def _grams(text: str, start: int, end: int) -> bool:
    """Whether a lower-case g written at ``start..end`` is grams: a word of food or the
    body is nearer it than a word of storage or memory, within 30 characters."""

    def nearest(pattern: re.Pattern[str]) -> int | None:
        lo = max(0, start - 30)
        spans = [m.span() for m in pattern.finditer(text, lo, end + 30)]
        gaps = [max(a - end, start - b, 0) for a, b in spans]
        return min(gaps) if gaps else None

    food, storage = nearest(_GRAMS_NEAR), nearest(_GIGABYTES_NEAR)
    return food is not None and (storage is None or food < storage)


#: What follows 只 when it means "only" (只想, 只要, 只有), not a counter of animals.
_ONLY_BEFORE = frozenset("想要是有能会剩好需用够")
#: What follows 行 when it asks "will that do" (行吗, 行不行), not lines of text.
_OK_ASKED = frozenset("吗嘛么")


def _unit_at(text: str, pos: int) -> tuple[str, str, int] | None:
    """A unit written at ``pos`` (after a number): (canonical, type, end)."""
    m = _UNIT_AFTER.match(text, pos)
    if not m:
        return None
    word = m.group().strip().lower()
    follows = text[m.end() : m.end() + 1]
    if follows == "性" or (word in ("个字", "字") and follows in _WORD_COMPOUND):
        return None  # 一次性 (at once), 三个字段 (fields): no unit of count
    if word == "只" and text[pos - 1 : pos] in ("俩", "个") and follows in _ONLY_BEFORE:
        return None  # 我们俩只想请…, 两个只要: "only" (俩 and 个 count people, not animals)
    if m.group() == "S" and follows == "店":
        return None  # 4S店: a car dealership
    if word == "行" and (follows in _OK_ASKED or text.startswith("不行", m.end())):
        return None  # 改成三千五行吗, 就八千行不行: "will that do", not lines
    if m.group().isupper() and follows.isdigit():
        return None  # "4个H100": a model name, not hours
    if m.group() == "M" and _SIZE_M.match(text, m.end()) and not _ZH_MONEY_WORD.search(text):
        return "MB", "quantity", m.end()  # 镜像300M以内: a size (metres are a lower-case m)
    if word == "s" and _STATUS_CODE.search(text, max(0, pos - 64), pos):
        return None  # "backoff on 429s", "the 503s": HTTP statuses, not seconds
    if word == "g" and pos < len(text) and text[pos] == " ":
        return None  # "3 g…": a lone g after a space is rarely grams or gigabytes
    if m.group() == "g" and _grams(text, pos, m.end()):
        return "g", "quantity", m.end()
    if word == "兆" and (
        not text[pos - 1 : pos].isdigit() or text[m.end() : m.end() + 1] in "瓦赫元日美"
    ):
        return None  # 300兆: megabytes; 三兆日元 and 一兆瓦 are not
    known = UNIT_TABLE.get(word) or UNIT_TABLE.get(m.group().strip())
    if known is None:  # "5ſ": case folding matched a letter the table does not spell
        known = UNIT_TABLE.get(unicodedata.normalize("NFKC", word).lower())
        if known is None:
            return None
    canonical, kind = known
    if word == "平" and text.startswith(_NOT_SQUARE_METRES, m.end()):
        return None  # "3000 平时800": 平时 (usually), not 平米
    if (
        word == "年"
        and kind == "duration"
        and not _YEARS_BEFORE.search(text, max(0, pos - 16), pos)
    ):
        return None  # 2024年: a year, handled as a date or left alone
    if word == "年" and text[m.end() : m.end() + 1] == "级":
        return None  # 3年级: a school grade
    if word == "卡" and text[m.end() : m.end() + 1] in ("车", "片", "号", "位"):
        return None  # 3卡车, 卡片: not calories
    if word == "升" and _RISES.match(text, m.end()):
        return None  # "从2升到4", "react 18 升 19": a rise, not litres
    return canonical, kind, m.end()


def _count(numeral: str) -> float | None:
    """A whole number in digits or Chinese numerals, a place alone too (千分之五: 千)."""
    n = small_int(numeral)
    return float(n if n is not None else CN_SMALL.get(numeral, 0)) or None


def _to_float(num: str) -> float:
    return float(num.replace(",", ""))


_MULTIPLIERS = {
    "k": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9,
    "万": 1e4, "w": 1e4, "千": 1e3, "亿": 1e8, "千万": 1e7, "百万": 1e6,
}  # fmt: skip


#: The letters before a dollar sign that say whose dollar (HK$360,000, A$50).
_DOLLAR_PREFIX = re.compile(r"(?<![A-Za-z])(?:HK|NT|US|A|C|S)$")

#: A count of years (3年, 两年, 十年), not a year (2024年, 24年底) or "a year" (一年一千).
_YEARS_BEFORE = re.compile(
    r"(?<![\d零〇一二两俩三四五六七八九十百千])(?:[2-9]|[两俩三四五六七八九十]|[二三四五六七八九]?十[一二三四五六七八九]?)$"
)

_ANY_NUMBER = re.compile(
    r"[\d零〇一二两俩三四五六七八九十百千万亿半]|two|three|four|five|six|seven|eight|nine|ten|eleven"
    r"|twelve|twenty|thirty|fifty|hundred|once|twice|thrice|half"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:周|星期|礼拜)[日天]"
    r"|(?:early|mid|late|end of|beginning of|start of|middle of)[\s-]*"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
    re.I,
)
_AMOUNT_AT = re.compile(rf"(?P<num>{_NUM})(?P<pct>\s?%)?(?:\s?(?P<mult>{_MULT}))?")


_MORE_THEN = re.compile(r" ?[多来几] ?")  # ("十来块": about ten, then the unit)
#: After a lone 十 or 百: "and some" (十几, 十多) or "about" (十来), before what is counted.
_ODD_AFTER = re.compile(r"[多来几] ?")
#: "a half" or "more" between 一个 and its unit: 一个半小时, 一个多月.
_AND_SOME = re.compile(r"[半多](?:个?(?:小时|钟头|月|星期|礼拜)|天|周|年)")
#: "40多分钟", "三个多小时": more than the number (not "2个多肉", two succulents).
_MORE_THAN_INSIDE = re.compile(
    r"[\d一二两三四五六七八九十百千万]\s?(?:个多\s?(?:小时|钟头|月|星期|礼拜)|[多几]\s?(?!肉|余|少|久|长)\S)"
)
#: A score said after the word for it: 评分4.5以上, 评分在4.8, 打分 92 (in 分).
_SCORE_BEFORE = re.compile(r"(?:评分|打分|分数|得分)(?:在|是|为|要|有|达到)?\s*$")
_SCIENTIFIC = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?[eE][-+]?\d{1,3}(?![A-Za-z0-9_]|\.\d)")


class _Finder:
    """One pass over a text; spans already taken are not read twice."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found: list[Value] = []
        #: one byte per character, 1 where a value was found: asking whether a span is
        #: free reads only that span, so a text of thousands of numbers stays linear
        self.taken = bytearray(len(text) + 1)

    def free(self, start: int, end: int) -> bool:
        if start >= end:  # an empty span: free unless the characters on both sides are taken
            return start <= 0 or not (self.taken[start - 1] and self.taken[start])
        return self.taken.find(1, start, end) < 0

    def add(self, value: Value) -> None:
        self.found.append(value)
        self.taken[value.start : value.end] = b"\x01" * (value.end - value.start)

    def unit_at(self, pos: int) -> tuple[str, str, int] | None:
        return _unit_at(self.text, pos)

    def counted_after(self, pos: int) -> bool:
        """Whether a counted noun follows ("10k requests", "10k of them")."""
        return _COUNTED_AFTER.match(self.text, pos) is not None

    def raw(self, start: int, end: int) -> str:
        return self.text[start:end].strip()

    # what the whole text is about, asked once rather than once per value

    @cached_property
    def about_running(self) -> bool:
        return _RUNNING.search(self.text) is not None

    @cached_property
    def about_japan(self) -> bool:
        return JAPAN.search(self.text) is not None

    # --- dates, times, versions ----------------------------------------------------------

    # --- amounts -----------------------------------------------------------------------

    def scientific(self) -> None:
        """ "lr 2e-5", "eps=1E-8", "5e3 steps": a number written with its exponent."""
        for m in _SCIENTIFIC.finditer(self.text):
            if self.free(*m.span()):
                self.add(Value(m.group(), "number", float(m.group()), None, *m.span()))

    def halves(self) -> None:
        for m in re.finditer(r"(?<![一二两三四五六七八九十\d个])半(?:个)?(小时|钟头)", self.text):
            if self.free(*m.span()):
                self.add(Value(m.group(), "duration", 30.0, "min", *m.span()))
        for m in re.finditer(
            r"(?<![一二两三四五六七八九十\d个上下前后多大])半(?:个)?(天|年|月|星期)(?![报度才还都没也])",
            self.text,
        ):
            unit = UNIT_TABLE["个月" if m[1] == "月" else m[1]]
            if m[1] == "天" and self.text[m.start() - 1 : m.start()] == "了":
                continue  # 折腾了半天, 等了半天: "for ages"
            if self.free(*m.span()) and not (m[1] == "月" and "个" not in m.group()):
                self.add(Value(m.group(), "duration", 0.5, unit[0], *m.span()))  # 半年, 半个月
        for m in _UNIT_AND_HALF.finditer(self.text):
            n = small_int(m[1])
            if n is not None and self.free(*m.span()):  # 3岁半, 一年半: and a half
                canonical, kind = UNIT_TABLE[m[2]]
                self.add(Value(m.group(), kind, n + 0.5, canonical, *m.span()))
        for m in _EN_AND_A_HALF.finditer(self.text):
            if self.free(*m.span()):  # "an hour and a half", "a day and a half", "half an hour"
                one = (m["one"] or "").lower()
                ones = 1.0 if one in ("a", "an", "one") else float(_EN_NUMBER_WORDS.get(one, 0))
                whole = 0.0 if m["half"] else ones
                canonical, kind = UNIT_TABLE[(m["unit"] or m["unit2"]).lower()]
                self.add(Value(m.group(), kind, whole + 0.5, canonical, *m.span()))
        for m in _TIMES_A.finditer(self.text):
            if self.free(*m.span("n")):  # "3x a week", "2x/day", "twice a week"
                word = m["n"].lower()
                times = _ONCE.get(word) or float(word.rstrip("x"))
                self.add(Value(m["n"], "quantity", times, "time", *m.span("n")))
        for m in re.finditer(r"([一二两三四五六七八九\d]+)\s?分钱", self.text):
            if self.free(*m.span()):
                n = small_int(m[1])
                if n is not None:
                    self.add(Value(m.group(), "money", round(n * 0.01, 2), "CNY", *m.span()))

    def ages(self) -> None:
        """ "I'm 34", "she just turned 27", "since I was 5": a person's age, in years."""
        for m in _AGE.finditer(self.text):
            group = "n" if m["n"] else "t"
            if self.free(*m.span(group)) and 0 < int(m[group]) <= 120:
                self.add(Value(m[group], "duration", float(m[group]), "year", *m.span(group)))

    def words(self) -> None:
        """ "two reports": a number word before a plural noun counts it."""
        for m in _EN_WORD_COUNT.finditer(self.text):
            noun = m["noun"]
            if self.free(*m.span()) and noun.lower() not in NOT_NOUNS:
                value = float(_EN_NUMBER_WORDS[m["word"].lower()])
                if m["times"]:  # "two hundred dollars"
                    value *= _EN_NUMBER_WORDS[m["times"].lower()]
                unit = UNIT_TABLE.get(noun.lower())
                if unit is not None:  # "two weeks": a duration
                    self.add(Value(m.group(), unit[1], value, unit[0], *m.span()))
                else:
                    self.add(Value(m.group(), "quantity", value, singular(noun), *m.span()))

    def percents(self) -> None:
        for m in _CN_PERCENT.finditer(self.text):
            if not self.free(*m.span()):
                continue
            body = m[1]
            value = float(body) if body[0].isdigit() else parse_chinese_number(body)
            if body in CN_DIGIT:
                value = float(CN_DIGIT[body])
            if value is not None:
                self.add(Value(m.group(), "percent", value, "%", *m.span()))

        for m in _TENTHS.finditer(self.text):
            if self.free(*m.span()):
                tenths = float(small_int(m[1]) or 0)
                extra = 5.0 if m[2] == "半" else float(CN_DIGIT[m[2]]) if m[2] else 0.0
                value = tenths * 10 + extra
                self.add(Value(m.group(), "percent", value, "%", *m.span()))
        for m in _CN_FRACTION.finditer(self.text):
            whole, part = (_count(m[n]) for n in (1, 2))
            if whole and part is not None and 0 < part <= whole and self.free(*m.span()):
                value = round(100 * part / whole, 2)
                self.add(Value(m.group(), "percent", value, "%", *m.span()))
        for m in _DISCOUNT.finditer(self.text):
            if self.free(*m.span()):
                # 八折 pays 80%, 六五折 and 6.5折 65%, 75折 75%
                digits = "".join(str(CN_DIGIT.get(c, c)) for c in m[1]).replace(".", "")
                value = float(digits) * (10 if len(digits) == 1 else 1)
                self.add(Value(m.group(), "percent", value, "%", *m.span()))

    def amounts(self) -> None:
        t = self.text
        for m in _CORES_MEMORY.finditer(t):  # 8C16G: cores and memory of a machine
            if self.free(*m.span()):
                self.add(Value(m[1] + m[2], "quantity", float(m[1]), "核", m.start(1), m.end(2)))
                self.add(Value(m[3] + m[4], "quantity", float(m[3]), "GB", m.start(3), m.end(4)))
        spans: list[tuple[int, str]] = [(m.start("num"), "digits") for m in _NUMBER.finditer(t)]
        spans += [(m.start(), "chinese") for m in _CN_NUM_RUN.finditer(t)]
        for start, how in sorted(spans):
            if not self.free(start, start + 1):
                continue
            if t[max(0, start - 1) : start] in ("第", "几"):
                continue  # 第2天, 第三个: which one, not how many; 几十个: dozens
            value = self._amount(start, how)
            if value is not None:
                self.add(self._between(self._range(self._from_lone_digit(value))))

    def _from_lone_digit(self, value: Value) -> Value:
        """ "三到五天": the lower end, a lone numeral, is no value of its own (三 alone
        is not read as a number), so the range is found from its upper end."""
        m = _LONE_LOW.search(self.text, tail_start(self.text, value.start, 1, 1), value.start)
        if m is None or not isinstance(value.value, float) or not self.free(m.start(), m.end()):
            return value
        low = float(small_int(m["low"]) or 0)
        if not 0 < low < value.value:
            return value
        raw = self.text[m.start() : value.end]
        return Value(raw, value.type, low, value.unit, m.start(), value.end, value.value)

    def _tail_digits(self, value: float, mult: str, end: int) -> tuple[float, int]:
        """ "1万5" is 15,000 and "1千5" 1,500: a digit right after 万 or 千 counts the next
        place down ("1万5千" says that place; "2万零500" adds 500). Not before a unit of
        its own ("1万5个人") or another digit."""
        t = self.text
        m = _TAIL_DIGITS.match(t, end)
        if m is None:
            return value, end
        after = _unit_at(t, m.end())
        if t[m.end() : m.end() + 1] == "个" or (
            after is not None and after[1] != "money" and after[0] not in _BULK_COUNTERS
        ):
            return value, end
        if m["zero"]:
            if m["place"] or float(m["digits"]) >= _MULTIPLIERS[mult] / 10:
                return value, end
            return value + float(m["digits"]), m.end()
        if len(m["digits"]) != 1 or (m["place"] and m["place"] != _NEXT_PLACE[mult]):
            return value, end
        return value + int(m["digits"]) * _MULTIPLIERS[mult] / 10, m.end()

    def _range(self, value: Value) -> Value:
        """ "50-100元", "50 to 100", "50到100", "1小时 - 2小时", "3-5k": a range, or the value.
        "2、3个小时" (two numbers in a row, one apart, then a unit) is a range too."""
        t = self.text
        approx = _CN_APPROX.match(t, value.start)
        if approx and isinstance(value.value, float):
            first, second = (CN_DIGIT[approx[n]] for n in ("a", "b"))
            if second == first + 1:
                places = {**CN_SMALL, **CN_BIG}
                place = 1
                for ch in approx["place"] or "":  # 三四百万: hundreds of ten thousands
                    place *= places[ch]
                tens = approx["tens"]
                base = 0 if not tens else 10 * (CN_DIGIT[tens[0]] if len(tens) == 2 else 1)
                bottom, top = (base + first) * place, (base + second) * place  # 十五六万
                return replace(value, value=float(bottom), high=float(top))
        pair = _NEIGHBOURS.match(t, value.start) if value.unit is None else None
        if pair and int(pair["b"]) == int(pair["a"]) + 1 and float(pair["a"]) == value.value:
            upper = self._amount(pair.start("b"), "digits", allow_bare=True)
            if upper is not None and upper.unit and isinstance(upper.value, float):
                raw = t[value.start : upper.end]
                return Value(raw, upper.type, value.value, upper.unit, value.start, upper.end,
                             upper.value)  # fmt: skip
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
        # "3-5k", "$12-15k", "1-2万元": the upper end's multiplier is the lower end's too,
        # when the lower end has none of its own ("10k to 15k") and stays below the upper
        # one ("$500-2k" is 500 to 2,000)
        mult = _multiplier(upper.raw)
        if mult > 1 and _multiplier(value.raw) == 1 and low * mult <= upper.value:
            low *= mult
        kind = value.type if value.unit else upper.type
        raw = t[value.start : upper.end].strip()
        return Value(raw, kind, low, value.unit or upper.unit, value.start, upper.end, upper.value)

    def _between(self, value: Value) -> Value:
        """ "between 50 and 100 dollars": a range written with words."""
        t = self.text
        if value.type != "number" or not _BETWEEN.search(
            t, tail_start(t, value.start, 7), value.start
        ):
            return value
        m_and = _AND.match(t, value.end)
        if not m_and:
            return value
        upper = self._amount(m_and.end(), "digits", allow_bare=True)
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
        if j >= 0 and t[j] in CURRENCY_SIGNS:
            cur_sign = CURRENCY_SIGNS[t[j]]
            begin = j
            dollar = _DOLLAR_PREFIX.search(t, max(0, j - 3), j)
            if t[j] == "$" and dollar:
                cur_sign, begin = DOLLARS[dollar.group()], dollar.start()
        code_before = re.search(r"\b(USD|EUR|GBP|RMB|CNY)\s?$", t[max(0, start - 5) : start], re.I)
        if code_before and cur_sign is None:
            cur_sign = CURRENCY_CODES[code_before.group(1).lower()]
            begin = start - len(code_before.group())
        if how == "digits":
            m = _AMOUNT_AT.match(t, start)
            if not m or (start > 0 and (t[start - 1].isalnum() and not is_cjk(t[start - 1]))):
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
            if (
                cur_sign is None
                and not m["mult"]
                and (
                    (
                        m["num"] in ("11", "12")
                        and t[begin - 1 : begin] == "双"
                        and t[begin - 2 : begin - 1] not in _CN_DIGITS  # 一双12块: a price
                    )
                    or (
                        m["num"] == "618"
                        and not _unit_at(t, m.end())
                        and (
                            _SALE_BEFORE.search(t, max(0, begin - 3), begin)
                            or _SALE_AFTER.match(t, m.end())
                        )
                    )
                )
            ):
                return None  # "等不到618", "双11囤货": a shopping festival, no amount
            joined = _JOINED_NOUN.match(t, m.end()) if not m["mult"] and not m["pct"] else None
            if (
                joined is not None
                and cur_sign is None
                and joined[1].lower() not in NOT_NOUNS
                and not _is_verbish(joined[1])  # "0-indexed", "1-based"
            ):
                # "a 10-week-old beagle", "a 6-person tent", "a 2-bedroom flat"
                word = joined[1].lower()
                canonical, kind = UNIT_TABLE.get(word) or (singular(word), "quantity")
                value = _to_float(m["num"])
                return Value(t[begin : joined.end(1)], kind, value, canonical, begin, joined.end(1))
            value = _to_float(m["num"])
            end = m.end()
            if _DOT_THOUSANDS.fullmatch(m["num"]) and (
                cur_sign == "EUR" or _EURO_AFTER.match(t, end)
            ):
                value = float(m["num"].replace(".", ""))  # "1.800 €", "350.000 bis 400.000 €"
            if (
                m["mult"] in ("k", "K")
                and cur_sign is None
                and self.about_running
                and not _COUNTED_AFTER.match(t, end)
            ):
                # "my longest run is 10k", "training for a 5K": a distance, not thousands
                return Value(t[begin:end], "quantity", value, "km", begin, end)
            if (
                m["mult"] in ("k", "K")
                and m["num"] in ("2", "4", "5", "8")
                and (
                    _RESOLUTION_AFTER.match(t, end)
                    or _RESOLUTION_BEFORE.search(t, max(0, begin - 6), begin)
                )
            ):
                return None  # "4k的屏幕", "27寸 4k", "a 4k monitor": a resolution
            if m["mult"]:
                mult = m["mult"]
                value *= _mult_value(mult)
                if mult.lower() in _NEXT_PLACE and not m["pct"]:
                    value, end = self._tail_digits(value, mult.lower(), end)
            if m["pct"]:
                return Value(t[begin:end].strip(), "percent", value, "%", begin, end)
        else:
            m = _CN_NUM_RUN.match(t, start)
            if not m:
                return None
            body = m.group()
            half = body.endswith("半")
            body = body.rstrip("半").rstrip("个")
            if body.startswith("万") or (body == "千万" and _NOT_TEN_MILLION.match(t, m.end())):
                return None  # 万一 is "in case", 千万别 "never": no amount
            if (
                body in ("十一", "十二")
                and t[start - 1 : start] == "双"
                and (t[start - 2 : start - 1] not in _CN_DIGITS)
            ):
                return None  # 双十一: a shopping festival
            parsed = (
                parse_chinese_number(body)
                if len(body) > 1
                else (
                    float(CN_DIGIT[body])
                    if body in CN_DIGIT
                    else float(CN_SMALL.get(body, 0)) or None
                )
            )
            if parsed is None:
                return None
            value = parsed + (0.5 if half else 0)
            end = m.end()
            if (
                not half
                and len(body) == 1
                and body in CN_DIGIT
                and not _unit_at(t, end)
                and t[end : end + 1] != "个"
            ):
                return None  # a single 一/两/三 is a number only when a unit follows
            if len(body) == 1 and body in "十百千万亿" and not _unit_at(t, end):
                # 十来个人, 十几天: about ten, ten and some (a counter or a unit follows)
                odd = _ODD_AFTER.match(t, end)
                if odd is None or not (
                    t[odd.end() : odd.end() + 1] == "个" or _unit_at(t, odd.end())
                ):
                    return None
        unit = _unit_at(t, end)
        if unit is None and how == "chinese" and half and t[end : end + 1] == "月":
            unit = ("month", "duration", end + 1)  # 一个半月
        if unit is None:
            # "40多分钟", "3000 多块": "more than", then the unit
            more = _MORE_THEN.match(t, end)
            inner = _unit_at(t, more.end()) if more else None
            if inner is not None and inner[0] != "个":
                unit = inner
        # 十分 and 十二分 are "very", 一步到位 and 三轮 are words; counts of these are
        # digits, but a score in several numerals is a score ("三百四十分", "六百八十七分")
        if (
            how == "chinese"
            and unit is not None
            and unit[0] in ("分", "步", "轮")
            and not (unit[0] == "分" and len(body) >= 2 and body != "十二")
        ):
            return None
        if unit is not None and unit[0] == "个":
            unit = None
        if how == "chinese" and body == "一" and unit is not None and unit[0] in CN_ARTICLE_UNITS:
            return None  # 一家餐馆, 一间房: an article more often than a count
        counter = _COUNTER_NEXT.match(t, end) if unit is None else None
        if counter is not None:  # 三个人, 20多个人: the measure word, then what it counts
            end = counter.end() - 1
            unit = _unit_at(t, end + 1)
            if unit is not None and unit[2] == end + 2 and t[end + 1] in CN_ARTICLE_UNITS:
                unit = None  # 一个门票: no second measure word after 个, a noun's first character
            if unit is not None and t[unit[2] : unit[2] + 1] == "均":
                return None  # 一个人均…: "a per-person average of…"
            if (
                unit is None
                and how == "chinese"
                and body == "一"
                and not _AND_SOME.match(t, end + 1)
            ):
                return None  # 一个, 一家: "a", not a count (一个多月 is more than a month)
            if unit is None and t[end + 1 : end + 2] in ("半", "多"):
                # 4个半小时, 三个多小时: the half, or "more", comes between the counter and the unit
                unit = _unit_at(t, end + 2)
                if unit is None and t[end + 2 : end + 3] == "月":
                    unit = ("month", "duration", end + 3)  # 3个多月
                if unit is not None and t[end + 1] == "半":
                    value += 0.5
            size = _SIZE_LETTER.get(t[end + 1 : end + 2]) if unit is None else None
            if size is not None and not t[end + 2 : end + 3].isalnum():
                unit = (size, "quantity", end + 2)  # 2个T, 五六个G: terabytes, gigabytes
            latin = _LATIN_NOUN.match(t, end + 1) if unit is None else None
            if latin is not None and latin[1].lower() not in NOT_NOUNS:
                # 4个pod, 3个epoch: the counted noun is written in English, as it is
                # ("3个redis实例" counts 实例, and "redis" is no plural)
                unit = (latin[1].lower(), "quantity", latin.end(1))
            if unit is None:
                # 三个人, 两个大人: the counted noun follows the measure word
                noun = re.match(r"[\u3400-\u9fff]{1,2}", t[end + 1 : end + 3])
                word = noun.group() if noun else ""
                if len(word) == 2 and word[1] in CN_PARTICLES:
                    word = word[0]
                if t[end + 1 : end + 4] in _THREE_CHARACTER_NOUNS:
                    word = t[end + 1 : end + 4]  # 十来个小朋友 counts children, not 小朋
                if word[:1] == "只" and t[end + 2 : end + 3] in _ONLY_BEFORE:
                    word = ""  # 我们两个只要一间: "only"
                if word and word[0] not in CN_PARTICLES:
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
            if cur_sign == "CNY" and t[begin] in "¥" and self.about_japan:
                cur_sign = "JPY"
            return Value(t[begin:end].strip(), "money", value, cur_sign, begin, end)
        if unit is not None:
            canonical, kind, end = unit
            tail = (
                _METRE_TAIL.match(t, end) if t[end - 1 : end] == "米" and value in (1, 2) else None
            )
            if tail is not None:  # 1米63, 一米六五: the digits after 米 are its decimals
                digits = "".join(str(CN_DIGIT.get(c, c)) for c in tail.group())
                value = float(f"{int(value)}.{digits}")
                end = tail.end()
            return Value(t[begin:end].strip(), kind, value, canonical, begin, end)
        if how == "digits" and not m["mult"] and _OF_US.match(t, end):
            return Value(t[begin:end].strip(), "quantity", value, "person", begin, end)  # 6 of us
        # English counted noun: "16 workers", "3 nights", "2 people" (not the "hard" of
        # "50k hard cap")
        noun = (
            _NOUN_AFTER.match(t, end)
            if not _FIRM_AFTER.match(t, end)
            and not _LABEL_BEFORE.search(t, max(0, begin - 40), begin)
            else None
        )
        if noun and how == "digits":
            word, second = noun.group(1), noun.group(2)
            lead = word.lower()
            if (
                second
                and (lead not in NOT_NOUNS or lead in QUALIFIERS)
                and (second.lower() not in NOT_NOUNS)
            ):
                unit_word = singular(second)  # "6 uvicorn workers": the counted noun is last
                return Value(
                    t[begin : noun.end()].strip(), "quantity", value, unit_word, begin, noun.end()
                )
            if word.lower() not in NOT_NOUNS and not _is_verbish(word):
                end2 = noun.end(1)
                unit_word = singular(word)
                return Value(t[begin:end2].strip(), "quantity", value, unit_word, begin, end2)
        if how == "chinese" and not allow_bare and len(body) <= 1:
            return None
        if _SCORE_BEFORE.search(t, max(0, begin - 6), begin):
            return Value(t[begin:end].strip(), "quantity", value, "分", begin, end)  # 评分4.5以上
        return Value(t[begin:end].strip(), "number", value, None, begin, end)

    def _bound(self, value: Value) -> str | None:
        t = self.text
        before = t[max(0, value.start - 24) : value.start]
        after = t[value.end : value.end + 12]
        timely = value.type in ("date", "time")
        if _MORE_THAN_INSIDE.search(value.raw):
            return "lower"  # "40多分钟", "三个多小时"
        if _UPPER_AFTER.match(after) or _RATE_THEN_MAX.match(t, value.end):
            return "upper"  # ("4 days a week max")
        if _LOWER_AFTER.match(after) and not re.match(r"\s*多(?:少|久|长|大)", after):
            return "lower"
        if value.high is not None:
            return None  # "控制在50至100元之间": a range is its own limit, both ends
        refused = timely and _ZH_REFUSED.match(t, value.end)
        if refused:
            # "八点以前起飞的不要": what is refused before a time makes it the earliest
            return "lower" if refused["side"] in ("之前", "以前", "前") else "upper"
        if timely and re.match(r"\s*(?:之前|以前|前)", after):
            return "upper"
        if timely and re.match(r"\s*(?:之后|以后|后)", after):
            return "lower"
        if _NEGATED_LOWER.search(before):
            return "lower"
        if _NEGATED_UPPER.search(t, max(0, value.start - 40), value.start):
            # (a wider look back: "never hold a lock longer than 2 seconds")
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
        if timely:
            # what may not happen until, or after, a time turns it round: "can't start
            # till may 20" is the earliest start, "not land after 10pm" the latest
            deadline = _DEADLINE_BEFORE.search(before)
            after_word = _AFTER_BEFORE.search(before)
            said = after_word or deadline  # ("not before 9am" is the earliest)
            cue = value.start - len(before) + said.start() if said else value.start
            negated = _NEGATED_HERE.search(t[max(0, cue - 30) : cue])
            if after_word:
                until_after = re.search(r"\b(?:until|till)\s+$", t[max(0, cue - 8) : cue], re.I)
                return "upper" if negated and not until_after else "lower"
            if deadline:
                held = (
                    negated
                    and re.match(r"until|till|before", deadline.group(), re.I)
                    and not _LASTS.search(t[max(0, cue - 30) : value.start])
                )
                return "lower" if held else "upper"
        near = t[max(0, value.start - 32) : value.start]
        limit = list(_LIMIT_NOUN_UPPER.finditer(near)) + list(_LIMIT_NOUN_LOWER.finditer(near))
        if timely and limit:
            around = near[max(0, limit[-1].start() - 15) : limit[-1].start()]
            if re.search(r"\d", around + near[limit[-1].end() :]):
                return None  # "4 days a week max, tuesdays", "max 3 nights arriving june 3"
        if _LIMIT_NOUN_UPPER.search(near):
            return "upper"
        if _LIMIT_NOUN_LOWER.search(near):
            return "lower"
        return None


_WRITTEN_MULT = re.compile(rf"(?:{_NUM})\s?(?P<mult>{_MULT})")


def _multiplier(raw: str) -> float:
    """The multiplier written after the digits of ``raw`` (k, M, 万…), or 1."""
    m = _WRITTEN_MULT.search(raw)
    return 1.0 if m is None else _mult_value(m["mult"])


def _mult_value(mult: str) -> float:
    """What a multiplier as written (``k``, ``M``, ``million``, ``万``) multiplies by."""
    return _MULTIPLIERS.get(mult.lower() if mult.lower() in _MULTIPLIERS else mult, 1.0)


_VERBISH = re.compile(r"(?:ed|ing)$")


def _is_verbish(word: str) -> bool:
    w = word.lower()
    return bool(_VERBISH.search(w)) and w not in ("wedding", "building", "meeting", "listing")


#: Between two sides of a size: "2.4 by 3 meters" (not the count of "2 x 50cm shelves").
_BY = re.compile(r"\s+by\s+$", re.I)


def _dimensions(text: str, values: list[Value]) -> list[Value]:
    """A bare number before "by" and a length takes the length's unit: "2.4 by 3 meters"."""
    out = list(values)
    for n in range(len(out) - 2, -1, -1):
        a, b = out[n], out[n + 1]
        if (
            a.type == "number"
            and a.unit is None
            and b.type == "quantity"
            and b.unit in _LENGTHS
            and _BY.match(text, a.end, b.start)
        ):
            out[n] = replace(a, type="quantity", unit=b.unit)
    return out


_LENGTHS = frozenset({"m", "cm", "mm", "km"})


def find_numbers(text: str) -> list[Value]:
    """Every number in ``text``, typed, in order of position."""
    return list(_find_numbers(text))


@lru_cache(maxsize=512)
def _find_numbers(text: str) -> tuple[Value, ...]:
    if not _ANY_NUMBER.search(text):
        return ()
    f = _Finder(text)
    find_dates(f)
    find_times(f)
    find_weekdays(f, [(v.start, v.end) for v in f.found if v.type == "date"])
    find_versions(f)
    f.scientific()
    f.halves()
    f.ages()
    f.percents()
    f.amounts()
    f.words()
    out = []
    found = _dimensions(text, sorted(f.found, key=lambda v: v.start))
    for v in found:
        bound = f._bound(v) if v.type != "version" else version_bound(f.text, v)
        if bound:
            v = Value(v.raw, v.type, v.value, v.unit, v.start, v.end, v.high, bound)
        out.append(v)
    return tuple(out)
