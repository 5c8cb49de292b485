"""Numbers as people write them: typed, with unit, range and bound, English and Chinese."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convmem.core.numbers import find_numbers, parse_chinese_number

# (text, [(raw, type, value, high, unit, bound), ...])
CASES: list[tuple[str, list[tuple[Any, ...]]]] = [
    # a lower-case "may 1" is the month after a word no modal follows
    ("move in is may 1", [("may 1", "date", "05-01", None, None, None)]),
    ("pushed back to may 8", [("may 8", "date", "05-08", None, None, None)]),
    ("we may 5 more people", [("5 more people", "quantity", 5, None, "person", None)]),
    # 多 between a number and its unit: more than that much
    ("跑完要 40 多分钟", [("40 多分钟", "duration", 40, None, "min", "lower")]),
    ("花了3000多块", [("3000多块", "money", 3000, None, "CNY", "lower")]),
    # a requirement's operator bounds the number it is written onto (the bound is what
    # makes "pin django>=4.2" a rule)
    (
        "numpy>=1.26,<2.0",
        [
            ("1.26", "version", "1.26", None, None, "lower"),
            ("2.0", "version", "2.0", None, None, "upper"),
        ],
    ),
    ("买了2个多肉", [("2个多肉", "quantity", 2, None, "多肉", None)]),  # succulents, not "more"
    # a number with its exponent, as training configs write them; not inside a hash
    ("学习率用1e-4吧", [("1e-4", "number", 0.0001, None, None, None)]),
    (
        "weight decay 1E-2, warmup 5e3 steps",
        [("1E-2", "number", 0.01, None, None, None), ("5e3", "number", 5000, None, None, None)],
    ),
    ("commit 1e5a9f2", []),
    ("make it 5e-5.", [("5e-5", "number", 5e-05, None, None, None)]),  # the full stop ends it
    ("1e5.3", []),
    # each side named before its own value
    (
        "hpa min 2 max 8",
        [("2", "number", 2.0, None, None, "lower"), ("8", "number", 8.0, None, None, "upper")],
    ),
    # Chinese written normally, no spaces
    ("上限是3000元", [("3000元", "money", 3000, None, "CNY", "upper")]),
    ("低于200毫秒", [("200毫秒", "duration", 200, None, "ms", "upper")]),
    ("命中率95%", [("95%", "percent", 95, None, "%", None)]),
    ("覆盖率不能低于80%", [("80%", "percent", 80, None, "%", "lower")]),
    ("预算不超过两千块", [("两千块", "money", 2000, None, "CNY", "upper")]),
    ("评分4.5分以上", [("4.5分", "quantity", 4.5, None, "分", "lower")]),
    ("人均50-100元", [("50-100元", "money", 50, 100, "CNY", None)]),
    ("游玩时间3小时 - 4小时", [("3小时 - 4小时", "duration", 3, 4, "h", None)]),
    ("500到600元", [("500到600元", "money", 500, 600, "CNY", None)]),
    ("离地铁500米以内", [("500米", "quantity", 500, None, "m", "upper")]),
    # a range is its own limit: "控制在" before it bounds neither end
    ("人均控制在50至100元之间", [("50至100元", "money", 50, 100, "CNY", None)]),
    # two whole numbers one apart before a unit: a range; before anything else, two numbers
    ("能玩2、3个小时的景点", [("2、3个小时", "duration", 2, 3, "h", None)]),
    ("我们5、6个人", [("5、6个人", "quantity", 5, 6, "人", None)]),
    ("坐1、2号线", [("1", "number", 1, None, None, None), ("2", "number", 2, None, None, None)]),
    ("住3、5天", [("3", "number", 3, None, None, None), ("5天", "duration", 5, None, "day", None)]),
    # the upper end's multiplier is the lower end's too, unless the lower end has its
    # own or would pass the upper end
    ("Budget is $12-15k", [("$12-15k", "money", 12000, 15000, "USD", None)]),
    ("预算1-2万元", [("1-2万元", "money", 10000, 20000, "CNY", None)]),
    ("between $1.5-2M", [("$1.5-2M", "money", 1500000, 2000000, "USD", None)]),
    ("somewhere 10k to 15k", [("10k to 15k", "number", 10000, 15000, None, None)]),
    ("3k-5k", [("3k-5k", "number", 3000, 5000, None, None)]),
    ("$500-2k", [("$500-2k", "money", 500, 2000, "USD", None)]),
    # two numerals one apart are a range, in their place; a real number stays one
    ("三四天", [("三四天", "duration", 3, 4, "day", None)]),
    ("五六个人", [("五六个人", "quantity", 5, 6, "人", None)]),
    ("大概两三百块", [("两三百块", "money", 200, 300, "CNY", None)]),
    ("一两个小时", [("一两个小时", "duration", 1, 2, "h", None)]),
    ("五六万块", [("五六万块", "money", 50000, 60000, "CNY", None)]),
    ("三十四个人", [("三十四个人", "quantity", 34, None, "人", None)]),
    # the end of a range of clock times keeps the part of the day of its start
    (
        "晚上7点到9点",
        [
            ("晚上7点", "time", "19:00", None, None, None),
            ("9点", "time", "21:00", None, None, None),
        ],
    ),
    ("two hundred dollars", [("two hundred dollars", "money", 200, None, "USD", None)]),
    # a quarter after the hour, a zero before the minutes; one digit after 点 is a decimal
    ("七点一刻", [("七点一刻", "time", "07:15", None, None, None)]),
    ("十点零五", [("十点零五", "time", "10:05", None, None, None)]),
    ("三点五分", [("三点五分", "time", "03:05", None, None, None)]),
    ("涨到两点五倍", []),
    # a verb after a number is no counted noun
    ("MAX_WORKERS=8 works better", [("8", "number", 8, None, None, None)]),
    ("十五六个人", [("十五六个人", "quantity", 15, 16, "人", None)]),
    ("三到五天", [("三到五天", "duration", 3, 5, "day", None)]),
    # the half, or "more", between the counter and the unit; an ordinal counts nothing
    ("4个半小时", [("4个半小时", "duration", 4.5, None, "h", None)]),
    ("三个多小时", [("三个多小时", "duration", 3, None, "h", "lower")]),
    ("第2天去故宫", []),
    # a digit right after 万 or 千 counts the next place down
    ("预算1万5左右", [("1万5", "number", 15000, None, None, None)]),
    ("每晚1千2以内", [("1千2", "number", 1200, None, None, "upper")]),
    ("2万零500", [("2万零500", "number", 20500, None, None, None)]),
    (
        "1万5个人",
        [("1万", "number", 10000, None, None, None), ("5个人", "quantity", 5, None, "人", None)],
    ),
    # Chinese numerals
    ("两百毫秒", [("两百毫秒", "duration", 200, None, "ms", None)]),
    # calories: never yuan, and 千 before 卡 is part of the unit
    ("每天最多吃1500大卡", [("1500大卡", "quantity", 1500, None, "kcal", "upper")]),
    ("每天1500千卡", [("1500千卡", "quantity", 1500, None, "kcal", None)]),
    ("我有3卡车的书", [("3", "number", 3, None, None, None)]),
    ("一万五", [("一万五", "number", 15000, None, None, None)]),
    ("三千五百块", [("三千五百块", "money", 3500, None, "CNY", None)]),
    ("百分之二十", [("百分之二十", "percent", 20, None, "%", None)]),
    ("两个半小时", [("两个半小时", "duration", 2.5, None, "h", None)]),
    ("下载链接不能超过半小时", [("半小时", "duration", 30, None, "min", "upper")]),
    (
        "8个大人2个小孩",
        [
            ("8个大人", "quantity", 8, None, "大人", None),
            ("2个小孩", "quantity", 2, None, "小孩", None),
        ],
    ),
    # words that look like numbers but are not
    ("十分好", []),
    ("一起去吃饭", []),
    ("帮我推荐一家店", []),
    # times and dates
    ("8:30 PM", [("8:30 PM", "time", "20:30", None, None, None)]),
    ("晚上8点半", [("晚上8点半", "time", "20:30", None, None, None)]),
    ("早上7:40", [("早上7:40", "time", "07:40", None, None, None)]),
    ("by May 5", [("May 5", "date", "05-05", None, None, "upper")]),
    ("2024-03-15", [("2024-03-15", "date", "2024-03-15", None, None, None)]),
    ("2024年3月15日", [("2024年3月15日", "date", "2024-03-15", None, None, None)]),
    ("5月31号前", [("5月31号", "date", "05-31", None, None, "upper")]),
    # a day of the month alone: of the month said before it, else of no month said
    ("出发改成2号", [("2号", "date", "---02", None, None, None)]),
    # the day a thing is on, said with "is the …th" and nothing after it
    ("no wait its the 14th", [("14th", "date", "---14", None, None, None)]),
    ("it's the 2nd largest city", []),
    ("this is the 3rd time", []),
    # the day in digits with nothing after it, as chat writes it
    ("cofounder说应该6月15 太赶了", [("6月15", "date", "06-15", None, None, None)]),
    ("6月15前交", [("6月15", "date", "06-15", None, None, "upper")]),
    # a space beside the digits, as typed between Latin and Chinese; not 第 3 号
    ("flight 改到 7 月 12 号", [("7 月 12 号", "date", "07-12", None, None, None)]),
    ("机票出的是 13 号的", [("13 号", "date", "---13", None, None, None)]),
    ("排第 3 号", [("3", "number", 3.0, None, None, None)]),
    ("坐 2 号 线", [("2", "number", 2.0, None, None, None)]),
    # a score in several Chinese numerals; 十分 and 十二分 are "very"
    ("复试线是三百四十分", [("三百四十分", "quantity", 340.0, None, "分", None)]),
    ("十分好吃", []),
    # a 一 that starts a period after a short form is not the form's digit
    (
        "两千五一晚",
        [
            ("两千五", "number", 2500.0, None, None, None),
            ("一晚", "quantity", 1.0, None, "晚", None),
        ],
    ),
    ("二十一天", [("二十一天", "duration", 21.0, None, "day", None)]),
    # 来 after a number is "about", then the unit
    ("一百来块", [("一百来块", "money", 100.0, None, "CNY", None)]),
    ("三十来分钟", [("三十来分钟", "duration", 30.0, None, "min", None)]),
    ("十二分的热情", []),
    # a lone 十 before 来 / 几 / 多 and what is counted: about ten, or ten and some
    ("来了十来个人", [("十来个人", "quantity", 10.0, None, "人", None)]),
    ("大概十来个小朋友", [("十来个小朋友", "quantity", 10.0, None, "小朋友", None)]),
    # a price for one of something after a sum: 230 a box, not 201
    ("杯子两百三一箱", [("两百三", "number", 230.0, None, None, None)]),
    # a bottom line is a floor
    ("底线是两万四", [("两万四", "number", 24000.0, None, None, "lower")]),
    # a day of the month after "back" or "to" (not "to the 5th step")
    (
        "we leave on the 12th and come back the 19th",
        [("12th", "date", "---12", None, None, None), ("19th", "date", "---19", None, None, None)],
    ),
    ("skip to the 5th step", []),
    # a lower-case "may" and a day, closed by a comma or "instead", is the month
    (
        "flying out of boston may 12, back may 19",
        [
            ("may 12", "date", "05-12", None, None, None),
            ("may 19", "date", "05-19", None, None, None),
        ],
    ),
    ("it may 5x the load", []),
    ("git may 3-way merge those files", [("3-way", "quantity", 3.0, None, "way", None)]),
    ("房租5w/年", [("5w", "number", 50000.0, None, None, None)]),
    ("20 hard drives", [("20 hard drives", "quantity", 20.0, None, "drive", None)]),
    # which one, not how many
    ("type 2 diabetes", [("2", "number", 2.0, None, None, None)]),
    ("stage 3 cancer", [("3", "number", 3.0, None, None, None)]),
    ("I bought a $25 cap at the game", [("$25", "money", 25.0, None, "USD", None)]),
    ("10+ years", [("10", "number", 10.0, None, None, "lower")]),
    ("rent is $2,000 + utilities", [("$2,000", "money", 2000.0, None, "USD", None)]),
    ("my budget goes up to $1,500", [("$1,500", "money", 1500.0, None, "USD", "upper")]),
    # "w" after a space is no 万; a word after an amount is no unit; a sum is no bound
    ("should be 5 w/ exponential backoff", [("5", "number", 5.0, None, None, None)]),
    ("make it 3 actually", [("3", "number", 3.0, None, None, None)]),
    ("total budget is 50k hard cap", [("50k", "number", 50000.0, None, None, "upper")]),
    (
        "base is 145k + 10% bonus",
        [("145k", "number", 145000.0, None, None, None), ("10%", "percent", 10.0, None, "%", None)],
    ),
    ("budget is 3k plus tips", [("3k", "number", 3000.0, None, None, None)]),
    (
        "cost went up to $7.80 from $6.50",
        [("$7.80", "money", 7.8, None, "USD", None), ("$6.50", "money", 6.5, None, "USD", None)],
    ),
    ("十几个", [("十几个", "quantity", 10.0, None, "个", "lower")]),
    ("等了十多天", [("十多天", "duration", 10.0, None, "day", "lower")]),
    ("几十个", []),  # dozens: no number said
    ("几百块钱", []),
    # 一个 is "a", except before a half or "more" and a unit
    ("一个半月", [("一个半月", "duration", 1.5, None, "month", None)]),
    ("一个多月", [("一个多月", "duration", 1.0, None, "month", "lower")]),
    ("一个多余的字段", []),
    # shares: tenths (成) and fractions (分之), as percents
    ("预算砍三成", [("三成", "percent", 30.0, None, "%", None)]),
    ("3成的人", [("3成", "percent", 30.0, None, "%", None)]),
    ("两成半", [("两成半", "percent", 25.0, None, "%", None)]),
    ("九成九的把握", [("九成九", "percent", 99.0, None, "%", None)]),
    ("一成不变", []),
    ("他八成忘了", []),  # most likely
    ("他八成不来了", []),
    ("他一成家就搬走了", []),
    # both sides of a size are lengths; quid are pounds
    (
        "the room is 2.4 by 3 meters",
        [
            ("2.4", "quantity", 2.4, None, "m", None),
            ("3 meters", "quantity", 3.0, None, "m", None),
        ],
    ),
    (
        "order 2 x 50cm shelves",
        [("2", "number", 2.0, None, None, None), ("50cm", "quantity", 50.0, None, "cm", None)],
    ),
    (
        "5 x 3 servers",
        [
            ("5", "number", 5.0, None, None, None),
            ("3 servers", "quantity", 3.0, None, "server", None),
        ],
    ),
    ("around 400 quid", [("400 quid", "money", 400.0, None, "GBP", None)]),
    ("八成是堵车了", []),
    ("日期那列统一成年-月-日", []),
    ("成本三成来自人力", [("三成", "percent", 30.0, None, "%", None)]),
    ("三分之一的预算", [("三分之一", "percent", 33.33, None, "%", None)]),
    ("千分之五的误差", [("千分之五", "percent", 0.5, None, "%", None)]),
    # a score after the word for it is in 分; 一个 before a noun that starts like a
    # measure word (门票) counts nothing
    ("评分4.5以上的景点", [("4.5", "quantity", 4.5, None, "分", "lower")]),
    ("再帮我找一个门票价格150-200元", [("150-200元", "money", 150.0, 200.0, "CNY", None)]),
    ("三个门票", [("三个门票", "quantity", 3.0, None, "门票", None)]),
    ("每月十五号发工资", [("十五号", "date", "---15", None, None, None)]),
    (
        "3月12号去，19号回",
        [
            ("3月12号", "date", "03-12", None, None, None),
            ("19号", "date", "03-19", None, None, None),
        ],
    ),
    # but a number with 号 in an address or a name is no day
    ("东长安街16号", [("16", "number", 16, None, None, None)]),
    ("换5号电池", [("5", "number", 5, None, None, None)]),
    (
        "if it's not merged by Thursday 5pm",
        [
            ("Thursday", "date", "thursday", None, None, "upper"),
            ("5pm", "time", "17:00", None, None, "upper"),
        ],
    ),
    # versions are never quantities
    ("Python 3.12", [("3.12", "version", "3.12", None, None, None)]),
    ("PostgreSQL 16", [("16", "version", "16", None, None, None)]),
    ("v2.3.1", [("v2.3.1", "version", "2.3.1", None, None, None)]),
    # English amounts
    ("budget is $2,000", [("$2,000", "money", 2000, None, "USD", None)]),
    ("$1.2M", [("$1.2M", "money", 1_200_000, None, "USD", None)]),
    ("between 50 and 100 dollars", [("50 and 100 dollars", "money", 50, 100, "USD", None)]),
    ("$50-100", [("$50-100", "money", 50, 100, "USD", None)]),
    ("at least 3 bedrooms", [("3 bedrooms", "quantity", 3, None, "bedroom", "lower")]),
    ("3-5 days", [("3-5 days", "duration", 3, 5, "day", None)]),
    ("no more than 5 replicas", [("5 replicas", "quantity", 5, None, "replica", "upper")]),
    ("running 6 uvicorn workers", [("6 uvicorn workers", "quantity", 6, None, "worker", None)]),
    ("we can't spend more than $2,000", [("$2,000", "money", 2000, None, "USD", "upper")]),
    ("max upload size is 25 MB", [("25 MB", "quantity", 25, None, "MB", "upper")]),
    ("we use cursors in two reports", [("two reports", "quantity", 2, None, "report", None)]),
    ("the workers have a 1Gi memory limit", [("1Gi", "quantity", 1, None, "GiB", None)]),
    ("Stay under ¥30,000 per night in Tokyo", [("¥30,000", "money", 30000, None, "JPY", "upper")]),
    # a "not" a few words before "less than" makes it a floor
    ("I'm not taking less than $120k", [("$120k", "money", 120000, None, "USD", "lower")]),
    ("no less than 3 replicas", [("3 replicas", "quantity", 3, None, "replica", "lower")]),
    ("we're not going above $14k", [("$14k", "money", 14000, None, "USD", "upper")]),
    # counts of years; a year, a grade and "a year" are none
    ("我做了3年新媒体运营", [("3年", "duration", 3, None, "year", None)]),
    ("我不想签两年的", [("两年", "duration", 2, None, "year", None)]),
    ("2024年的计划", [("2024", "number", 2024, None, None, None)]),
    ("3年级", [("3", "number", 3, None, None, None)]),
    ("一年1200块", [("1200块", "money", 1200, None, "CNY", None)]),
    # measure words and units of Chinese chat
    ("每天盐不超过5克", [("5克", "quantity", 5, None, "g", "upper")]),
    ("家里两只猫", [("两只", "quantity", 2, None, "只", None)]),
    ("我家住6楼没电梯", [("6楼", "quantity", 6, None, "楼", None)]),
    ("改成18桌", [("18桌", "quantity", 18, None, "桌", None)]),
    ("新房90平", [("90平", "quantity", 90, None, "m2", None)]),
    ("大概180ml", [("180ml", "quantity", 180, None, "ml", None)]),
    ("结婚10周年", [("10周年", "quantity", 10, None, "周年", None)]),
    ("存款还不到5万", [("5万", "number", 50000, None, None, "upper")]),
    # not a measure word where the character starts another word, nor 一 as "a" or "per"
    ("每晚800封顶", [("800", "number", 800, None, None, "upper")]),
    ("一桌标准有三档", []),
    # whose dollar, and currencies named in Chinese
    ("总学费HK$360,000左右", [("HK$360,000", "money", 360000, None, "HKD", None)]),
    ("A$50 a night", [("A$50", "money", 50, None, "AUD", None)]),
    ("每个月最多给我2000澳币", [("2000澳币", "money", 2000, None, "AUD", "upper")]),
    ("costs $20", [("$20", "money", 20, None, "USD", None)]),
    # a day of the week is a date named by the day; 一点 alone is "a little"
    (
        "订上了 周五晚上7点半",
        [
            ("周五", "date", "friday", None, None, None),
            ("晚上7点半", "time", "19:30", None, None, None),
        ],
    ),
    ("the deadline is friday", [("friday", "date", "friday", None, None, "upper")]),
    ("standup moved to next Monday", [("next Monday", "date", "monday", None, None, None)]),
    ("星期天休息", [("星期天", "date", "sunday", None, None, None)]),
    ("It's Saturday May 17", [("May 17", "date", "05-17", None, None, None)]),
    (
        "一周五天",
        [("一周", "duration", 1, None, "week", None), ("五天", "duration", 5, None, "day", None)],
    ),
    ("每周一次", [("一次", "quantity", 1, None, "次", None)]),
    ("这周一直在加班", []),
    ("能便宜一点吗", []),
    ("一点钟开会", [("一点", "time", "01:00", None, None, None)]),
    # clock times written with spaces; the night's small hours; 点 counting points made
    (
        "夜里 0 点到 8 点只有 P0 才打电话",
        [
            ("夜里 0 点", "time", "00:00", None, None, None),
            ("8 点", "time", "08:00", None, None, None),
        ],
    ),
    ("下午 3 点开会", [("下午 3 点", "time", "15:00", None, None, None)]),
    # not across a sentence, a day, or more than two hours
    (
        "晚上十一点睡，七点起床",
        [
            ("晚上十一点", "time", "23:00", None, None, None),
            ("七点", "time", "07:00", None, None, None),
        ],
    ),
    (
        "晚上9点到酒店，明天8点退房",
        [
            ("晚上9点", "time", "21:00", None, None, None),
            ("8点", "time", "08:00", None, None, None),
        ],
    ),
    # 起床 is getting up, not "from"
    ("早上九点起床", [("早上九点", "time", "09:00", None, None, None)]),
    (
        "周一9点起",
        [
            ("周一", "date", "monday", None, None, None),
            ("9点", "time", "09:00", None, None, "lower"),
        ],
    ),
    # an hour near one the text put in the afternoon or evening is in it too
    (
        "下午三点开始，两点半集合",
        [
            ("下午三点", "time", "15:00", None, None, None),
            ("两点半", "time", "14:30", None, None, None),
        ],
    ),
    (
        "晚上八点吃饭 九点散",
        [
            ("晚上八点", "time", "20:00", None, None, None),
            ("九点", "time", "21:00", None, None, None),
        ],
    ),
    (
        "下午三点开会 早上九点吃早饭",
        [
            ("下午三点", "time", "15:00", None, None, None),
            ("早上九点", "time", "09:00", None, None, None),
        ],
    ),
    ("晚上12点前睡", [("晚上12点", "time", "00:00", None, None, "upper")]),
    ("我有三点建议", []),
    ("有两点要注意", []),
    # units and measure words
    ("回答控制在 200 字以内", [("200 字", "quantity", 200, None, "char", "upper")]),
    (
        "1 积分就是 1 分钱",
        [
            ("1 积分", "quantity", 1, None, "积分", None),
            ("1 分钱", "money", 0.01, None, "CNY", None),
        ],
    ),
    ("冰箱位只有70cm宽", [("70cm", "quantity", 70, None, "cm", None)]),
    ("宠物医院说要打三针", [("三针", "quantity", 3, None, "针", None)]),
    ("家里4口人", [("4口人", "quantity", 4, None, "人", None)]),
    ("一口气做完", []),
    ("身高1米63", [("1米63", "quantity", 1.63, None, "m", None)]),
    ("一米六五的个子", [("一米六五", "quantity", 1.65, None, "m", None)]),
    ("100米跑", [("100米", "quantity", 100, None, "m", None)]),
    # 内存 is memory, not "within"
    ("机器是 64G 内存的", [("64G", "quantity", 64, None, "GB", None)]),
    ("30 内完成", [("30", "number", 30, None, None, "upper")]),
    # the May Day holiday and discounts
    ("五一带爸妈自驾去黄山", [("五一", "date", "05-01", None, None, None)]),
    ("五一二", [("五一二", "number", 512, None, None, None)]),
    ("会员打八折", [("八折", "percent", 80, None, "%", None)]),
    ("6.5折", [("6.5折", "percent", 65, None, "%", None)]),
    ("折叠屏", []),
    # a version after the word for it, or after a known name and a verb
    ("镜像版本 1.5", [("1.5", "version", "1.5", None, None, None)]),
    (
        "python 用3.10还是3.11",
        [
            ("3.10", "version", "3.10", None, None, None),
            ("3.11", "version", "3.11", None, None, None),
        ],
    ),
    # a product's version after a verb, an alternative, a range or glued to its name
    ("grafana is 10.4", [("10.4", "version", "10.4", None, None, None)]),
    ("min supported python is 3.10 now", [("3.10", "version", "3.10", None, None, None)]),
    ("我们airflow是2.7的", [("2.7", "version", "2.7", None, None, None)]),
    ("MSRV is 1.74", [("1.74", "version", "1.74", None, None, None)]),
    ("pin the provider to ~> 5.30", [("5.30", "version", "5.30", None, None, None)]),
    (
        "upgrading postgres 13 to 16",
        [("13", "version", "13", None, None, None), ("16", "version", "16", None, None, None)],
    ),
    (
        "node 18 and 2 workers",
        [
            ("18", "version", "18", None, None, None),
            ("2 workers", "quantity", 2, None, "worker", None),
        ],
    ),
    (
        "老项目 vue2 + webpack4",
        [("2", "version", "2", None, None, None), ("4", "version", "4", None, None, None)],
    ),
    ("iOS 17+ only", [("17", "version", "17", None, None, "lower")]),
    ("node1 and node2 are the hosts", []),
    ("the ratio is 1.5", [("1.5", "number", 1.5, None, None, None)]),
    # what a second read found: prices, scores, people, hosts, ports and counts stay numbers
    ("Price was 19.99 all week", [("19.99", "number", 19.99, None, None, None)]),
    ("Julia is 2.5", [("2.5", "number", 2.5, None, None, None)]),
    ("Ruby is 4 and starts preschool", [("4", "number", 4, None, None, None)]),
    ("kafka1, kafka2 and kafka3", []),
    ("let's go 2 rounds", [("2 rounds", "quantity", 2, None, "round", None)]),
    ("net 30", [("30", "number", 30, None, None, None)]),
    ("Go 1.22", [("1.22", "version", "1.22", None, None, None)]),
    ("win32 binaries", []),
    ("redis 就用 6379 端口", [("6379", "number", 6379, None, None, None)]),
    ("node 现在本地是 16 的", [("16", "version", "16", None, None, None)]),
    (
        "postgres 16 and 4 people",
        [
            ("16", "version", "16", None, None, None),
            ("4 people", "quantity", 4, None, "person", None),
        ],
    ),
    ("numpy<2.0", [("2.0", "version", "2.0", None, None, "upper")]),
    ("python3.11 装好了", [("3.11", "version", "3.11", None, None, None)]),
    (
        "Python 3.12 with a max of 200 ms",
        [
            ("3.12", "version", "3.12", None, None, None),
            ("200 ms", "duration", 200, None, "ms", "upper"),
        ],
    ),
    ("python 3天", [("3天", "duration", 3, None, "day", None)]),
    # a bare day closing a span of days keeps the month it opened with
    (
        "dates are may 22 to 27",
        [("may 22", "date", "05-22", None, None, None), ("27", "date", "05-27", None, None, None)],
    ),
    (
        "May 5 to 10 people",
        [
            ("May 5", "date", "05-05", None, None, None),
            ("10 people", "quantity", 10, None, "person", None),
        ],
    ),
    # a person's age is a number of years; a hyphenated unit describes a thing
    ("I'm 34", [("34", "duration", 34, None, "year", None)]),
    ("since I was 5, contemporary mostly", [("5", "duration", 5, None, "year", None)]),
    ("I'm 5 minutes away", [("5 minutes", "duration", 5, None, "min", None)]),
    ("I'm 5 in the queue", [("5", "number", 5, None, None, None)]),
    ("my little sister is 12 and loves it", [("12", "duration", 12, None, "year", None)]),
    ("the limit is 12", [("12", "number", 12, None, None, "upper")]),
    ("融资拿了2M美元", [("2M美元", "money", 2_000_000, None, "USD", None)]),
    ("Python 3.12.x", [("3.12.x", "version", "3.12.x", None, None, None)]),
    ("she's 5'4\"", [("5", "number", 5, None, None, None), ("4", "number", 4, None, None, None)]),
    ("set the cookie max age 30 in prod", [("30", "number", 30, None, None, "upper")]),
    ("turned 50 in January", [("50", "duration", 50, None, "year", None)]),
    ("0-indexed", [("0", "number", 0, None, None, None)]),
    ("He's a 10-week-old beagle", [("10-week", "duration", 10, None, "week", None)]),
    ("a 6-person tent", [("6-person", "quantity", 6, None, "person", None)]),
    ("COVID-19 rules", []),
    # Chinese: big places, a digit after 万 before what comes in thousands, halves,
    # more than a count, a count of something named in English, a size in M
    ("每天大概3千万行", [("3千万行", "quantity", 30_000_000, None, "line", None)]),
    ("数据刚数了是3万2条", [("3万2条", "quantity", 32000, None, "条", None)]),
    (
        "预算1万5天",
        [("1万", "number", 10000, None, None, None), ("5天", "duration", 5, None, "day", None)],
    ),
    ("三四百万条", [("三四百万条", "quantity", 3_000_000, 4_000_000, "条", None)]),
    ("健身半年了", [("半年", "duration", 0.5, None, "year", None)]),
    ("折腾了半天还是不行", []),
    # 千万 and 万一 as words, sizes after 个, more than some months, and a half
    ("千万别动生产库", []),
    ("Google Play 要求8月底前必须升", [("8月底", "date", "08-31", None, None, "upper")]),
    ("2024年底", [("2024年底", "date", "2024-12-31", None, None, None)]),
    ("到底行不行", []),
    ("晚上我一般9点多才下班", [("9点", "time", "21:00", None, None, "lower")]),
    ("昨天晚上说明天9点开会", [("9点", "time", "09:00", None, None, None)]),
    (
        "节点是 8C16G 的",
        [("8C", "quantity", 8, None, "核", None), ("16G", "quantity", 16, None, "GB", None)],
    ),
    ("万一挂了怎么办", []),
    ("一千万用户", [("一千万", "number", 10_000_000, None, None, None)]),
    ("4个H100", [("4个", "quantity", 4, None, "个", None)]),
    ("五六个G", [("五六个G", "quantity", 5, 6, "GB", None)]),
    ("3个多月", [("3个多月", "duration", 3, None, "month", "lower")]),
    ("小孩3岁半", [("3岁半", "quantity", 3.5, None, "岁", None)]),
    ("一年半之后", [("一年半", "duration", 1.5, None, "year", None)]),
    ("这个需求多半年底才能上", []),
    ("公司半年报下周出", []),
    (
        "replicas 从2升到4",
        [("2", "number", 2, None, None, None), ("4", "number", 4, None, None, None)],
    ),
    ("每天喝水至少2升", [("2升", "quantity", 2, None, "升", "lower")]),
    ("一步到位，直接买顶配", []),
    (
        "私教课6千5次",
        [("6千", "number", 6000, None, None, None), ("5次", "quantity", 5, None, "次", None)],
    ),
    ("3个redis实例", [("3个", "quantity", 3, None, "个", None)]),
    ("等了半个月", [("半个月", "duration", 0.5, None, "month", None)]),
    ("舞蹈队有20多个人", [("20多个人", "quantity", 20, None, "人", "lower")]),
    ("最多留3个checkpoint", [("3个checkpoint", "quantity", 3, None, "checkpoint", "upper")]),
    ("镜像最好能压到300M以内", [("300M", "quantity", 300, None, "MB", "upper")]),
    ("历史对话最多留10轮", [("10轮", "quantity", 10, None, "轮", "upper")]),
    # a day of the month by its ordinal, the end of a year
    ("all bridesmaids there by the 20th", [("20th", "date", "---20", None, None, "upper")]),
    ("on the 20th floor", []),
    (
        "debt free by the end of 2026",
        [("end of 2026", "date", "2026-12-31", None, None, "upper")],
    ),
    # "10k" beside running is a distance
    ("my longest run ever is 10k", [("10k", "quantity", 10, None, "km", None)]),
    ("ran a 5K this morning", [("5K", "quantity", 5, None, "km", None)]),
    (
        "we run 10k requests a day",
        [("10k requests", "quantity", 10000, None, "request", None)],
    ),
    ("salary is 90k", [("90k", "number", 90000, None, None, None)]),
    # a lower-case g is grams, unless what follows is memory or storage
    ("at least 160g protein", [("160g", "quantity", 160, None, "g", "lower")]),
    ("16g ram minimum", [("16g", "quantity", 16, None, "GB", None)]),
    ("8g内存", [("8g", "quantity", 8, None, "GB", None)]),
    ("节点只剩8G可分配", [("8G", "quantity", 8, None, "GB", None)]),
    (
        "taking 2 scoops of whey a day, 30g per scoop",
        [
            ("2 scoops", "quantity", 2, None, "scoop", None),
            ("30g", "quantity", 30, None, "g", None),
        ],
    ),
    ("鸡胸肉大概 200g", [("200g", "quantity", 200, None, "g", None)]),
    ("我上传了食谱 面粉200g", [("200g", "quantity", 200, None, "g", None)]),
    ("这包薯片 150g", [("150g", "quantity", 150, None, "g", None)]),
    ("daily sugar limit is 25g", [("25g", "quantity", 25, None, "g", "upper")]),
    ("handful of almonds 30g", [("30g", "quantity", 30, None, "g", None)]),
    (
        "云主机 8g 4核",
        [("8g", "quantity", 8, None, "GB", None), ("4核", "quantity", 4, None, "核", None)],
    ),
    ("going nuts, 16g isn't enough", [("16g", "quantity", 16, None, "GB", None)]),
    ("我的电脑16g够用吗", [("16g", "quantity", 16, None, "GB", None)]),
    ("JVM 堆给 4g", [("4g", "quantity", 4, None, "GB", None)]),
    ("iphone要256g的", [("256g", "quantity", 256, None, "GB", None)]),
    ("low hanging fruit is bumping the heap to 8g", [("8g", "quantity", 8, None, "GB", None)]),
    ("the vegas trip laptop has 16g", [("16g", "quantity", 16, None, "GB", None)]),
    ("数据集大概 200g", [("200g", "quantity", 200, None, "GB", None)]),
    ("显存 24g 够吗", [("24g", "quantity", 24, None, "GB", None)]),
    # how often, and an hour and a half
    (
        "currently training 3x a week, about an hour and a half each",
        [
            ("3x", "quantity", 3, None, "time", None),
            ("an hour and a half", "duration", 1.5, None, "h", None),
        ],
    ),
    ("twice a week", [("twice", "quantity", 2, None, "time", None)]),
    ("take it 2x daily", [("2x", "quantity", 2, None, "time", None)]),
    ("half an hour", [("half an hour", "duration", 0.5, None, "h", None)]),
    ("3x faster", []),
    ("it happened once", []),
    ("half the team", []),
    # a part of a month: the month (its end: the last day); "late may" as a verb is none
    ("early October", [("early October", "date", "--10", None, None, None)]),
    ("moving mid-august", [("mid-august", "date", "--08", None, None, None)]),
    ("late May 2026", [("late May 2026", "date", "2026-05", None, None, None)]),
    ("by the end of June", [("end of June", "date", "06-30", None, None, "upper")]),
    ("改成十月初去", [("十月初", "date", "--10", None, None, None)]),
    ("5月中旬出结果", [("5月中旬", "date", "--05", None, None, None)]),
    ("running late may cause trouble", []),
    # a lunar day, a name, the noun
    ("五月初五 奶奶生日", []),
    ("at the end of Jan's talk", []),
    ("the late march was long", []),
    ("the mid-june deadline", [("mid-june", "date", "--06", None, None, None)]),
    ("mid-level engineer, late fee", []),
    # 字 inside another word, 一次性 (at once): no count
    ("只要 timestamp, level, msg 三个字段", [("三个字段", "quantity", 3, None, "字段", None)]),
    ("别一次性读进内存", []),
    # 行 asking "will that do" after an amount is no line of text; lines of code are
    ("改成三千五行吗", [("三千五", "number", 3500, None, None, None)]),
    ("就八千行不行", [("八千", "number", 8000, None, None, None)]),
    ("每个文件最多五百行吧", [("五百行", "quantity", 500, None, "line", "upper")]),
    # thousands typed short with the next place ("1k2", "2k5", "1w2"), its bound kept
    ("预算那就1k2吧", [("1k2", "number", 1200, None, None, None)]),
    ("预算1w2以内", [("1w2", "number", 12000, None, None, "upper")]),
    ("budget 2K5", [("2K5", "number", 2500, None, None, None)]),
    ("2k50", [("2k", "number", 2000, None, None, None)]),
    # the week after next; shopping festivals, a dealership, "only", a refused side of a time
    ("下下周三就得搬", [("下下周三", "date", "wednesday", None, None, None)]),
    ("热死了等不到618", []),
    ("618的时候买", []),
    ("双11囤货", []),
    ("双十一", []),
    ("还有618块", [("618块", "money", 618, None, "CNY", None)]),
    ("4S店销售说", []),
    ("但我们俩只想请关系近的", []),
    (
        "我们两个只要一间房",
        [("两个", "quantity", 2, None, "个", None), ("一间", "quantity", 1, None, "间", None)],
    ),
    ("两只猫", [("两只", "quantity", 2, None, "只", None)]),
    ("八点以前起飞的不要", [("八点", "time", "08:00", None, None, "lower")]),
    ("十点以后到的都不行", [("十点", "time", "10:00", None, None, "upper")]),
    ("8点前到", [("8点", "time", "08:00", None, None, "upper")]),
    ("晚上十点以后的就算了", [("晚上十点", "time", "22:00", None, None, "upper")]),
    ("早上十点以前入园的不要门票", [("早上十点", "time", "10:00", None, None, "upper")]),
    (
        "一双12块",
        [("一双", "quantity", 1, None, "双", None), ("12块", "money", 12, None, "CNY", None)],
    ),
    ("200行不到", [("200行", "quantity", 200, None, "line", None)]),
    ("两只要打疫苗", [("两只", "quantity", 2, None, "只", None)]),
    # a time that may not come after, or not before: the limit turns round
    ("I'd rather not land after 10pm", [("10pm", "time", "22:00", None, None, "upper")]),
    ("#1 cant start till may 20", [("may 20", "date", "05-20", None, None, "lower")]),
    ("don't book anything before 9am", [("9am", "time", "09:00", None, None, "lower")]),
    ("not before 9am", [("9am", "time", "09:00", None, None, "lower")]),
    ("dont want to wait until may 3", [("may 3", "date", "05-03", None, None, "upper")]),
    ("must finish before 5pm", [("5pm", "time", "17:00", None, None, "upper")]),
    # a negation of another clause, or of forgetting, turns nothing round
    ("no rush, after 2pm is fine", [("2pm", "time", "14:00", None, None, "lower")]),
    ("I don't mind arriving after 10pm", [("10pm", "time", "22:00", None, None, "lower")]),
    ("not until after 5pm", [("5pm", "time", "17:00", None, None, "lower")]),
    ("don't forget to submit before friday", [("friday", "date", "friday", None, None, "upper")]),
    ("I can't stay till 10pm", [("10pm", "time", "22:00", None, None, "upper")]),
    ("I can't check in until 3pm", [("3pm", "time", "15:00", None, None, "lower")]),
    ("the shop isn't open until 10am", [("10am", "time", "10:00", None, None, "lower")]),
    ("no calls before 9am", [("9am", "time", "09:00", None, None, "lower")]),
    (
        "max 3 nights arriving june 3",
        [
            ("3 nights", "quantity", 3, None, "night", "upper"),
            ("june 3", "date", "06-03", None, None, None),
        ],
    ),
    ("not due until may 20", [("may 20", "date", "05-20", None, None, "upper")]),
    ("最多住到8月15号", [("8月15号", "date", "08-15", None, None, "upper")]),
    ("the cap is june 30", [("june 30", "date", "06-30", None, None, "upper")]),
    # "max" after a rate is the rate's, not the day's after it
    (
        "4 days a week max, tuesdays",
        [
            ("4 days", "duration", 4, None, "day", "upper"),
            ("tuesdays", "date", "tuesday", None, None, None),
        ],
    ),
    # thousands written with dots beside euros
    ("1.800 €", [("1.800 €", "money", 1800, None, "EUR", None)]),
    ("Miete 1.400 Euro warm", [("1.400 Euro", "money", 1400, None, "EUR", None)]),
    ("we pay 2.5 € per item", [("2.5 €", "money", 2.5, None, "EUR", None)]),
    ("1.500 was what the bank said", [("1.500", "number", 1.5, None, None, None)]),
    ("€0.325/kWh is what we pay", [("€0.325", "money", 0.325, None, "EUR", None)]),
    # micrograms, glued or not
    ("levothyroxine 50mcg", [("50mcg", "quantity", 50, None, "mcg", None)]),
    ("200 µg of B12", [("200 µg", "quantity", 200, None, "mcg", None)]),
    # words after an amount that count nothing: a reason, a kind of pay, a verb
    ("28k bc his parents are paying", [("28k", "number", 28000, None, None, None)]),
    ("accepted initech at 90k remote!!", [("90k", "number", 90000, None, None, None)]),
    ("the 2000 cal stays", [("2000 cal", "quantity", 2000, None, "cal", None)]),
    ("contractor 1 says no", [("1", "number", 1, None, None, None)]),
    # … but may say which kind of the noun after them is counted
    ("3 remote workers", [("3 remote workers", "quantity", 3, None, "worker", None)]),
    # a meal names the part of the day; a budget that can go to a value is capped by it
    ("晚饭七点前吃完", [("七点", "time", "19:00", None, None, "upper")]),
    ("午饭一点半", [("一点半", "time", "13:30", None, None, None)]),
    ("早饭七点", [("七点", "time", "07:00", None, None, None)]),
    ("预算可以到四千", [("四千", "number", 4000, None, None, "upper")]),
    # people counted as "of us" or "ppl"; a count reached is no ceiling
    ("there are only 8 of us, so", [("8", "quantity", 8, None, "person", None)]),
    ("we're up to 17 ppl now", [("17 ppl", "quantity", 17, None, "person", None)]),
    ("2 of them are broken", [("2", "number", 2, None, None, None)]),
    # words after a number that count nothing; HTTP statuses in the plural; a resolution
    ("500 everybody", [("500", "number", 500, None, None, None)]),
    ("page size is 50 right now", [("50", "number", 50, None, None, None)]),
    ("backoff on 429s", []),
    ("set the job timeout to 500s", [("500s", "duration", 500, None, "s", None)]),
    ("memory limit is 2g per container", [("2g", "quantity", 2, None, "GB", "upper")]),
    ("他赚了三兆日元", []),
    (
        "office hours are 10-12pm",
        [("10", "number", 10, None, None, None), ("12pm", "time", "12:00", None, None, None)],
    ),
    ("timeout 300s", [("300s", "duration", 300, None, "s", None)]),
    ("要4k的屏幕", []),
    (
        "27寸 4k 一千五以内",
        [
            ("27寸", "quantity", 27, None, "寸", None),
            ("一千五", "number", 1500, None, None, "upper"),
        ],
    ),
    ("4k steps a day", [("4k steps", "quantity", 4000, None, "step", None)]),
    ("300兆的就行", [("300兆", "quantity", 300, None, "MB", None)]),
    # a span of hours takes its half of the day from its end; a ceiling said as never more
    (
        "the party is 2-5pm",
        [("2", "time", "14:00", None, None, None), ("5pm", "time", "17:00", None, None, None)],
    ),
    (
        "never hold a lock longer than 2 seconds",
        [("2 seconds", "duration", 2, None, "s", "upper")],
    ),
    ("卡片圆角统一 8px", [("8px", "quantity", 8, None, "px", None)]),
    # a limit's word is no counted noun, nor is a word cut by an apostrophe
    ("he thinks 750 minimum", [("750", "number", 750, None, None, "lower")]),
    (
        "48 breaks the 450 limit.",
        [("48", "number", 48, None, None, None), ("450", "number", 450, None, None, "upper")],
    ),
    ("375 won't do", [("375", "number", 375, None, None, None)]),
]


@pytest.mark.parametrize(("text", "want"), CASES)
def test_numbers_as_written(text: str, want: list[tuple[Any, ...]]) -> None:
    got = [(v.raw, v.type, v.value, v.high, v.unit, v.bound) for v in find_numbers(text)]
    assert got == [tuple(float(x) if isinstance(x, int) else x for x in w) for w in want]


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("三千", 3000),
        ("两百", 200),
        ("一万五", 15000),
        ("三千五", 3500),
        ("十五", 15),
        ("二〇二四", 2024),
    ],
)
def test_chinese_numerals(written: str, value: int) -> None:
    assert parse_chinese_number(written) == value


def test_as_dict_is_plain_json() -> None:
    (v,) = find_numbers("Keep the pool under 50 connections")
    assert v.as_dict() == {
        "raw": "50 connections",
        "type": "quantity",
        "value": 50,
        "unit": "connection",
        "bound": "upper",
    }


def test_any_text_is_safe() -> None:
    for text in ("", "9" * 5000, "¥" * 100, "1-" * 2000, "十" * 3000, "\ud800 12"):
        find_numbers(text)


# --- the tail before a value is read, not the whole text before it ----------------------

_TAIL_PIECES = ["between", "through", "on", "may", "is", "到", "至", "~", "三", "五", "5", "and"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*_TAIL_PIECES, " ", "  ", "\t", "\n", "x", "7", "-"]), max_size=30),
    st.data(),
)
def test_searching_from_the_tail_finds_what_searching_all_before_it_finds(
    pieces: list[str], data: st.DataObject
) -> None:
    from convmem.core import dates, numbers

    text = "".join(pieces)
    end = data.draw(st.integers(0, len(text)))
    for pattern, steps in (
        (dates._DATE_LEAD, (7,)),
        (numbers._BETWEEN, (7,)),
        (numbers._LONE_LOW, (1, 1)),
    ):
        whole = pattern.search(text[:end])
        tail = pattern.search(text, dates.tail_start(text, end, *steps), end)
        assert (whole is None) == (tail is None), (pattern.pattern, text, end)
        if whole is not None and tail is not None:
            assert whole.span() == tail.span()


@pytest.mark.parametrize("piece", ["3 days, ", "between 5 and 6 dollars, ", "三到五天 ", "may 5 "])
def test_a_text_of_many_values_finds_each_of_them(piece: str) -> None:
    # thousands of values in one text: each found once, in order (each check for a free
    # span, and each look back for a range's lower end, reads a bounded part of the text)
    values = find_numbers(piece * 2000)
    assert len(values) == len(find_numbers(piece)) * 2000
    assert [v.start for v in values] == sorted(v.start for v in values)


def test_a_unit_matched_by_case_folding_is_read_not_raised() -> None:
    # "ſ" (long s) matches the unit pattern's "s" under IGNORECASE but is not in the
    # unit table as written: it is read as seconds instead of raising KeyError
    (value,) = find_numbers("5ſ")
    assert (value.type, value.value, value.unit) == ("duration", 5.0, "s")


@pytest.mark.parametrize(
    "text", ["she doesnt want to spend more than €180 a night", "i dont pay more than $50"]
)
def test_a_negation_typed_without_its_apostrophe_makes_more_than_a_ceiling(text: str) -> None:
    (value,) = find_numbers(text)
    assert value.bound == "upper"


def test_a_lower_case_may_after_are_is_the_month() -> None:
    first = find_numbers("dates are may 22 to 27")[0]
    assert (first.type, first.value) == ("date", "05-22")


def test_a_run_of_numerals_too_long_to_be_a_number_is_read_without_error() -> None:
    # 1,000 一 once overflowed the float a value is converted to
    (value, *_) = find_numbers("一" * 1000)
    assert value.end - value.start <= 24
