"""From one message to the memory items it should yield, before any storage.

:func:`candidates` is a pure function of a message's text: pasted material is set
aside, the prose is cut into clauses (:mod:`convmem.memory.segment`), each clause
is judged (:mod:`convmem.memory.acts`), and each kept clause becomes a
:class:`Candidate` holding the clause as said, its numbers with their conditions,
the paths it names, its subject key and what it says about earlier items
(:mod:`convmem.memory.subjects`). A correction ("make it 250 ms", "改用 MinIO")
and a retraction ("forget the parking thing") are candidates too, even when the
clause alone would be nothing: whether they link to something is decided against
the stored items (:mod:`convmem.memory.links`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from convmem.core.cue_match import CueText
from convmem.core.dates import in_the_afternoon
from convmem.core.numbers import Value, find_numbers
from convmem.core.text import clip, paths, with_note
from convmem.memory import acts, picks, segment, subjects
from convmem.memory.act_cues import CHANGE_ASKED, THEIR_ASK
from convmem.memory.small_talk import small_talk

MAX_ITEM_CHARS = 400
_CJK = re.compile(r"[\u3400-\u9fff]")

#: Phrases that qualify a number: percentile, load, environment, period, scope.
CONDITION = re.compile(
    r"\b[pP]\d{2,3}(?:\.\d)?\b|\b\d{2}(?:th|st|nd|rd) percentile\b"
    r"|\b(?:median|average|mean|worst[- ]case|steady[- ]state|round[- ]trip|one[- ]way|each way"
    r"|all[- ]in|before tax(?:es)?|after tax(?:es)?|pre-tax|gross|net|per head|per capita"
    r"|(?:in )?total|out the door|OTD|with (?:shipping|tax|tip|fees)"
    r"|plus (?:tax|tip|shipping|fees|vat|gst)"
    r"|(?:including|excluding|not counting|not including) (?:the )?[a-z][\w-]*)\b"
    r"|\b(?:at|during|under)\s+(?:peak(?:\s+(?:hours?|load|traffic|times?))?|load|full load)\b"
    r"|\bat\s+\d[\d.,]*\s?[kKmM]?\s?(?:rps|qps|tps|req/s|requests?(?:/s| per second)?|users"
    r"|concurrent \w+|connections|rpm)\b"
    r"|\b(?:in|on|for)\s+(?:production|prod|staging|dev|development|ci|tests?|the tests|local"
    r"|mobile|desktop|weekdays|weekends|the weekend|fridays|mondays|holidays|business days)\b"
    r"|\bper\s+[\w-]+\b|\bduring\s+(?:a|an|the|this|each|every)\s+[\w-]+\b"
    r"|\bfor\s+(?:this|each|every)\s+[\w-]+\b"
    r"|\b(?:(?:once|twice)\s+|(?<!not )(?<!than )(?<!once )(?<!twice ))(?:a|an|each|every)\s+"
    r"(?:night|month|day|year|week|hour|person|head"
    r"|weekday)\b(?!\s+(?:job|trip|pass|off|or two))"
    r"|\b(?:on )?(?:weekdays?|weekends?|weeknights?)\b|\bon school (?:days|nights)\b"
    r"|/(?:night|month|mo|day|year|yr|week|hour|hr|person|pp)\b"
    r"|[Pp]\d{2,3}|高峰期?|峰值|人均|每(?:个人|人|晚|天|日|个月|月|年|周|次|小时|秒|分钟|间|位|张|单|桌|份"
    r"|次调用|个请求|个用户)"
    r"|周末|工作日|平时|节假日|旺季|淡季|含税|税前|税后|往返|单程|平均|[月年日时]薪|月租|月费"
    r"|(?:每个|单[个张条次])\s?(?:[A-Za-z][A-Za-z0-9_-]*|(?![都最不的是要也还就能可会得别没])[\u3400-\u9fff]{2})"
    r"|(?:不含|包括|包含)[\u3400-\u9fff]{1,6}|[\u3400-\u9fff]{1,4}另算"
    r"|在[^，。,；;]{1,12}?(?<!以)(?:下|时|中|期间|环境|上)(?=[，,\s]|$|[^\u3400-\u9fff]|[\u3400-\u9fff])",
)


@dataclass
class Candidate:
    """A clause judged worth remembering (or a correction/retraction to check)."""

    kind: str | None
    content: str
    start: int
    end: int
    topic: str
    numbers: list[dict[str, Any]]
    conditions: list[str]
    scope: list[str]
    reading: subjects.Reading
    act: acts.Act
    index: int = 0
    retraction: bool = False
    correction_only: bool = False  # nothing on its own: kept only if it corrects an item
    opener: str = ""  # the words trimmed before it ("actually", "不对")
    #: another person's claim the person answers with their own disbelief, later in the
    #: message ("her coach keeps saying she's a midfielder, i dont buy it")
    pushed_back: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


#: A clause that puts a new value in the place of one named just before it.
_INSTEAD = re.compile(r"\binstead\b|换成|改用|改成")
#: A period ("一天", "一晚") qualifies another number in the clause ("一天最多变两次"), and so
#: does how long a reading lasts ("超过90%持续5分钟").
PERIOD = re.compile(
    r"(?<![\d一二两三四五六七八九十])一(?:天|日|周|个月|月|年|晚|小时|分钟)(?!以?[前后]|之[前后]|多)"
    r"|持续\s?\d+\s?(?:秒|分钟|小时|天)"
)
#: Chinese words that make a bare number an amount of money in yuan.
ZH_MONEY = re.compile(
    r"预算|人均|价格|价位|房租|租金|工资|月薪|薪资|年薪|[\u3400-\u9fff]?费|花费|成本|票价|门票|报价|消费|总价|单价"
    r"|押金|首付"
    r"|贷款|存款|块|钱|[元¥￥]|多少钱|以内的|左右的"
    r"|定投|信用卡(?:还|欠|额度|账单|分期|透支)|房贷|车贷|理财|奖金|年终奖|档次|[那这哪]档"
    r"|半包|全包|[花付]了"
)


def _money_in_yuan(
    n: dict[str, Any], money: bool, latin: bool, measured: bool = False
) -> dict[str, Any]:
    """A bare amount in Chinese everyday text is yuan: "人均100以内", "每晚800封顶".
    ``money``: the clause has a word of money (ZH_MONEY); ``latin``: it has a Latin
    letter (a technical text: "batch size降到8"); ``measured``: it names a measure that
    is no price (续航, 身高, 评分…)."""
    if n["type"] != "number" or n.get("unit") is not None:
        return n
    if not isinstance(n["value"], int | float) or n["value"] < 10:
        return n
    # what each one gets ("每个班级40左右", "单次最多5") says nothing of money
    priced = [c for c in n.get("conditions", ()) if not _EACH_ONE.match(c)]
    if measured and not money:
        return n  # 续航五百以上: a range to drive, not a price
    if money or (not latin and (n.get("bound") or priced)):
        return {**n, "type": "money", "unit": "CNY"}
    return n


_EACH_ONE = re.compile(r"每个|单[个张条次]")
#: Measures a bare Chinese amount may be of that are no price.
_MEASURED = re.compile(r"续航|里程|公里|距离|身高|体重|分数|评分|人数|温度|面积|排名|名次|楼层")


#: The zone a clock time is read in: "6am UTC", "8am local", "before 9am my time".
_ZONE_AFTER = re.compile(
    r"\s*(?P<phrase>\b(?:(?:UTC|GMT)(?:\s?[+-]\d{1,2}(?::?\d{2})?)?|CET|CEST|PST|PDT|EST|EDT|BST"
    r"|JST|KST|SGT|HKT|AEST|CST|MST|ET|PT|CT|MT|local(?: time)?|my time|your time|their time)"
    r"(?![\w+-]))"
)


def _said_after(text: str, values: list[Value]) -> list[re.Match[str]]:
    """Conditions said right after a value: a clock time's zone."""
    zones = (_ZONE_AFTER.match(text, v.end) for v in values if v.type == "time")
    return [m for m in zones if m is not None]


def number_conditions(text: str, values: list[Value]) -> tuple[list[dict[str, Any]], list[str]]:
    """Numbers with the conditions that qualify them; a number inside a condition
    ("at 1k rps") belongs to that condition."""
    found = [m for m in CONDITION.finditer(text)]
    # "一年1200块": a period before the one value qualifies it (not "一天" said alone)
    found += [
        m
        for m in PERIOD.finditer(text)
        if len(values) >= 2 or not any(v.start < m.end() and m.start() < v.end for v in values)
    ]
    found.sort(key=lambda m: m.start())
    conditions: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in found:
        phrase = m.group().strip()
        if phrase and phrase not in conditions:
            conditions.append(phrase)
            spans.append(m.span())
    zones: set[str] = set()  # a clock time's zone is only that time's condition
    for m in _said_after(text, values):
        phrase = m["phrase"].strip()
        start = m.start("phrase")
        # not a phrase a known condition already holds or is held by ("on weekdays")
        if phrase and not any(a <= start < b or start <= a < m.end() for a, b in spans):
            conditions.append(phrase)
            spans.append(m.span("phrase"))
            zones.add(phrase)
    order = sorted(range(len(spans)), key=lambda n: spans[n])  # in the order they are said
    conditions, spans = [conditions[n] for n in order], [spans[n] for n in order]
    out = []
    # asked once per clause, not once per number (a long clause holds thousands)
    zh = bool(values) and bool(_CJK.search(text))
    money = zh and bool(ZH_MONEY.search(text))
    latin = zh and bool(re.search("[A-Za-z]", text))
    measured = zh and bool(_MEASURED.search(text))
    for v in values:
        inside = any(a <= v.start and v.end <= b for a, b in spans)
        if inside:
            continue
        own = [
            c
            for c, (a, b) in zip(conditions, spans, strict=True)
            if (b <= v.start or a >= v.end)  # not the number itself
            and (c not in zones or (v.type == "time" and 0 <= a - v.end <= 2))
        ]
        number = {**v.as_dict(), "conditions": own}
        if v.unit == "day" and any(re.search(r"\bweek\b|\bmonth\b|周|月", c) for c in own):
            number["type"] = "quantity"  # "4 days a week" counts days
        if zh:
            number = _money_in_yuan(number, money, latin, measured)
        out.append(number)
    used = [c for c in conditions if any(c in n["conditions"] for n in out)] if out else conditions
    return out, used


def _rejected_value(v: Value, numbers: list[Value], text: str) -> bool:
    """ "2000, not 3000": 3000 is the value being replaced, not a value of the clause.
    After "was" or "from" only beside another value ("it was 50, now 60", "from 10 to
    12", "跑在 3.12 上（从 3.9 升上来）"): "the offer was $92k" states its value."""
    if _SAID_BEFORE.search(text[max(0, v.start - 16) : v.start]):
        return bool(_EARLIER_AFTER.match(text, v.end))
    m = _REJECTED_BEFORE.search(text[max(0, v.start - 16) : v.start])
    if m is None:
        # "只要最近3天的 7天太多了": the old value, after the one meant, and why it goes
        return bool(_TOO_MUCH_AFTER.match(text, v.end)) and any(
            n.start < v.start and n.type == v.type for n in numbers
        )
    if m["past"] and subjects.starts_a_span(v, numbers, text):
        return False  # "from July 4 to July 7": when it starts, not what it was
    return not m["past"] or any(n.start != v.start for n in numbers)


_TOO_MUCH_AFTER = re.compile(r"\s*" + subjects.TOO_MUCH_ZH)
_REJECTED_BEFORE = re.compile(
    r"(?:(?P<past>\bfrom|\bwas|从)|\bnot|\binstead of|\brather than|\bno longer"
    r"|不是|而非|原来是|把)\s*$",
    re.I,
)
#: "i said 6k down earlier, it's 7,000": the value said before, named as such.
_SAID_BEFORE = re.compile(r"\bi (?:said|wrote|typed|put)\s*$", re.I)
_EARLIER_AFTER = re.compile(r"(?:\s+[a-z]+)?\s+(?:earlier|before|above)\b", re.I)


def _proposal(clause: segment.Clause) -> bool:
    # (not the words that open a list: "推荐以下两家：1.", "I'd suggest one of these: 1)")
    return CueText(clause.text).search(PROPOSAL) and not _OPENS_A_LIST.search(clause.text)


_OPENS_A_LIST = re.compile(r"[:：]\s*\(?\d?[.)]?\s*$")


PROPOSAL = re.compile(
    r"\b(?:i suggest|i'd suggest|i propose|i recommend|i'd recommend|we could|we should|"
    r"you could|you might|consider|how about|what about|my suggestion|let's|let me suggest|"
    r"it would be better|a better option)\b"
    r"|我建议|建议|可以考虑|不妨|推荐|或许可以|我们可以",
    re.I,
)


_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|can|could|will|would|should|must"
    r"|need|needs|want|use|keep|make|set|go|get|got|take|let's)\b|'s\b|'re\b|\b\w+ed\b",
    re.I,
)


#: What is left of a Chinese clause without its negation, modals and particles.
_ZH_FUNCTION = re.compile(r"[不要别先了吧啊呢也再就都还请务必须能可以会]")


def _limits_the_value_before(clause: segment.Clause, previous: Candidate, act: acts.Act) -> bool:
    """A short Chinese clause with no value or subject of its own ("不要超过", "不能更低")
    right after a clause of the same sentence that states a value."""
    if previous.correction_only or previous.retraction or not previous.numbers:
        return False
    if clause.sentence.start > previous.start or act.numbers or not _CJK.search(clause.text):
        return False
    rest = _ZH_FUNCTION.sub("", "".join(_CJK.findall(clause.text)))
    return len(rest) <= 3 and not re.search(r"[A-Za-z0-9]", clause.text)


def _continues(clause: segment.Clause, previous: Candidate, act: acts.Act) -> bool:
    """A verbless clause holding a value, right after a kept clause of the same sentence."""
    if previous.kind not in ("constraint", "decision", "preference") or previous.correction_only:
        return False
    if clause.sentence.start > previous.start or _CJK.search(clause.text):
        return False
    return bool(act.numbers) and not _VERB.search(clause.text)


#: A sentence's label that what follows is a plan ("ok plan:", "the plan:").
_PLAN_LABEL = re.compile(r"\b(?:plan|decision)\s*[:：]", re.I)


def clause_contexts(
    text: str, after_question: bool = False
) -> list[tuple[segment.Clause, acts.Context]]:
    """Every clause of a message with what its surroundings say about it."""
    out: list[tuple[segment.Clause, acts.Context]] = []
    pasted = len(segment.prose_lines(text)) < sum(1 for x in text.split("\n") if x.strip())
    first = True
    carry = ""  # a sentence that only says a correction follows ("不对", "Wait.") opens the next
    carry_slip = False  # ...or a slip owned up to before the value it puts right
    for sentence in segment.sentences(text):
        in_question = sentence.text.rstrip().endswith(("?", "？"))
        found = segment.clauses(sentence)
        if not found and segment.only_correction(sentence.text):
            if _SLIP.match(sentence.text) and _owns_slip(out, sentence):
                # "复查是下周四 我记错了": a slip owned up to after what it puts right
                out[-1] = _owned_slip(out[-1], sentence.text.strip())
            else:
                carry = f"{carry} {sentence.text.strip()}".strip()
                carry_slip = False
            continue
        planned = bool(found) and bool(_PLAN_LABEL.search(found[0].opener))
        for clause in found:
            slipped = False
            if carry:
                clause = dataclasses.replace(clause, opener=f"{carry} {clause.opener}".strip())
                slipped, carry = carry_slip, ""
            ctx = acts.Context(
                opener=clause.opener,
                corrects=clause.corrects or slipped,
                after_question=after_question,
                in_question=in_question,
                first=first,
                pasted_nearby=pasted,
                planned=planned,
            )
            first = False
            remark = _SLIP.match(clause.text)
            if remark and _owns_slip(out, sentence):
                # "对了是21号入住，我刚刚说错了": the remark makes the clause before it a
                # correction, as an opener would have
                out[-1] = _owned_slip(out[-1], clause.text.strip())
            elif (remark or _SLIP_OPENER.match(clause.opener)) and not find_numbers(clause.text):
                # "sorry, I misread the portal — it's May 16th": owned up to first, the
                # slip puts right the value said next
                carry, carry_slip = f"{clause.opener} {clause.text}".strip(), True
            out.append((clause, ctx))
    return out


def _owns_slip(out: list[tuple[segment.Clause, acts.Context]], sentence: segment.Span) -> bool:
    """Whether a slip remark belongs to the clause just before it: one close by that
    holds a value ("复查是下周四 我记错了"); "I had it wrong, it's every 7,500 miles"
    puts right what comes next."""
    if not out or out[-1][0].sentence.end < sentence.start - 2:
        return False
    return bool(find_numbers(out[-1][0].text))


def _owned_slip(
    before: tuple[segment.Clause, acts.Context], remark: str
) -> tuple[segment.Clause, acts.Context]:
    """The clause before a remark that it was a slip, read as a correction."""
    clause, ctx = before
    opener = f"{clause.opener} {remark}".strip()
    return dataclasses.replace(clause, opener=opener), dataclasses.replace(
        ctx, opener=opener, corrects=True
    )


#: An opener that owns up to a slip: "sorry, I misread", "I misheard".
_SLIP_OPENER = re.compile(rf".*\b(?:{segment.MISSPOKE})\W*$", re.I)

#: A remark that what was just said puts a slip right: "我刚刚说错了", "记错了", "my bad".
_SLIP = re.compile(
    # (not a warning or someone else's: "别算错了", "你记错了", "怕记错了")
    r"^\W*(?:我|刚刚|刚才|之前|前面|上面)*(?![别你怕]|不要|小心|千万)[\u4e00-\u9fff]{0,3}?"
    r"(?:说错了?|记错了?|写错了?|打错了?|看错了?|搞错了?|弄错了?|算错了?)[了啊哈吧。!！\s]*$"
    r"|^\W*(?:my bad|(?:sorry,?\s*)?typo|i misspoke|i mis-typed|i misread|i misheard"
    r"|i (?:had|got) (?:it|that|this) wrong|i was wrong)\W*$",
    re.I,
)


#: Words that name what a requirement inside a request limits ("评分4.5分以上", "人均100以内").
REQUIREMENT_SUBJECT = re.compile(
    r"(?:评分|人均消费|人均|价格|价位|预算|门票|票价|游玩时间|游玩时长|时长|房价|租金|月租|距离|车程|步行|面积|排量"
    r"|续航|内存|容量|电池|尺寸|配送费|起送价|年龄|(?:能|可以|可)游?玩(?:上|个)?|游玩(?:上|个)?)"
    r"(?:总共|一共|总|)(?:是|在|为|要|大概|差不多|控制在|不超过|不低于|最多|至少|最好|)?\s*$"
)
_EN_REQUIREMENT = re.compile(
    r"\b(?:under|below|less than|at most|no more than"
    r"|up to|within|max(?:imum)?|at least|over|more than"
    r"|minimum|between)\s*$",
    re.I,
)


#: A message that asks the assistant for something (find, recommend, a question).
ASKING = re.compile(
    r"[?？]|帮我|给我|请(?!假|客)|推荐|有没有|找(?:个|一)|能不能"
    r"|\b(?:can|could|would) you\b|\bplease\b|\brecommend\b|\bfind me\b",
    re.I,
)


def requirements(
    text: str, numbers: list[Value], named_only: bool = False
) -> list[tuple[int, int]]:
    """Spans of the requirements a request carries: "帮我找评分4.5分以上的酒店" holds the
    requirement "评分4.5分以上"; "find a hotel under $200 a night" holds "under $200"
    (not when ``named_only``: then only a limit of something :data:`REQUIREMENT_SUBJECT`
    names counts)."""
    spans = []
    for n in numbers:
        if n.type in ("version", "date", "time"):
            continue
        head = text[max(0, n.start - 12) : n.start]
        m = REQUIREMENT_SUBJECT.search(head)
        start = None
        if m:
            start = n.start - len(head) + m.start()
        elif (n.bound or n.high is not None) and not named_only:
            en = _EN_REQUIREMENT.search(text[max(0, n.start - 16) : n.start])
            start = (
                n.start - len(text[max(0, n.start - 16) : n.start]) + en.start() if en else n.start
            )
        if start is None or (start == n.start and not n.unit):
            continue  # a bare number with nothing it limits ("有没有超过 50？"): no requirement
        end = n.end
        tail = re.match(r"\s*(?:以上|以下|以内|之内|左右|上下|封顶|起)", text[end:])
        if tail:
            end += tail.end()
        spans.append((start, end))
    return spans


def candidates(
    text: str, from_user: bool = True, after_question: bool = False, offered: str = ""
) -> list[Candidate]:
    """The candidates of one message, in order; the person's words or an assistant's.

    ``after_question``: the assistant's message before this one asked something (an
    answer such as "TTL 60s is fine" then settles a choice). ``offered``: the end of
    that message, where a question that puts options makes a short answer naming one
    of them a decision ("merge" after "merge or delete+insert?").
    """
    offered = offered if from_user and picks.OFFERS_CHOICE.search(offered) else ""
    out: list[Candidate] = []
    index = 0
    if not from_user and not CueText(text).search(PROPOSAL):
        return out  # an assistant message yields proposals only: none here
    # a message that asks for something: the limits its other clauses state are what it
    # asks for ("帮我找个酒店住宿，价格在600-700元之间")
    asking = from_user and CueText(text).search(ASKING)
    said_before: list[Value] = []  # the values of the clause before, in this message
    for clause, ctx in clause_contexts(text, after_question):
        index += 1
        body = clause.text
        if len(body) < 2 and not (offered and body.isdigit()):  # "2" after "1) … 2) …?"
            continue
        if not from_user and (not _proposal(clause) or small_talk(body.strip())):
            continue  # "let's never give up" proposes nothing
        act = acts.classify(body, ctx) if from_user else acts.Act("proposal", "assistant")
        lead = acts.settled_choice(act, body) if from_user else 0
        if lead:
            # what comes before the choice is another remark ("that blows the 15 min.")
            clause = dataclasses.replace(clause, text=body[lead:], start=clause.start + lead)
            body = clause.text
            act = acts.classify(body, ctx)
        if said_before and act.numbers:
            act.numbers = in_the_afternoon(act.numbers, said_before)
        before, said_before = said_before, act.numbers
        if from_user and out and out[-1].index == index - 1 and _continues(clause, out[-1], act):
            # "Keep p95 under 200 ms and the timeout at 30 s": the second value has no verb of
            # its own and is ruled by the first one's
            act = acts.Act(out[-1].kind, "a value under the previous clause's verb", act.features,
                           act.numbers)  # fmt: skip
        if (
            offered
            and picks.picks_an_option(body, act, offered)
            and not picks.BUT_NOT.search(
                text, max(0, clause.start - 14), clause.start
            )  # anything but
        ):
            act = acts.Act("decision", "picks an option the assistant's question put",
                           act.features, act.numbers)  # fmt: skip
        picked = picks.option_by_place(body, offered) if offered and act.kind == "decision" else ""
        if picked and picks.by_place_only(body):
            act.numbers = []  # (the "2" of "2 sounds good" is a place, not a value)
        kind = act.kind
        # a clause of nothing is kept only as a correction or a retraction: read its
        # subject and rejected values when it has a cue of one (most have none)
        reading = (
            subjects.read(body, clause.opener)
            if kind is not None
            or not from_user
            or clause.corrects
            or subjects.says_about_earlier(body, clause.opener)
            else None
        )
        if not from_user:
            act.numbers = find_numbers(body)
        retraction = bool(from_user and reading is not None and reading.retract_target)
        asks = (
            "act:request" in act.features
            or "act:question" in act.features
            or "act:zh_question" in act.features
        )
        spans = []
        # (said as a choice or a want, "可以游玩3到5小时的景点吧", "我想找一个评分4.5分以上的景点",
        # it is still what the request asks for; "评分最好在4.5分以上" stays a liking)
        told = kind in (None, "fact", "decision") or (
            kind == "preference" and "act:prefer" not in act.features
        )
        if from_user and act.numbers and (asks or (asking and told)):
            # beside the asking clause, only a limit of a thing such requests name
            # ("价格在600-700元之间"): "my company reimburses up to $5,250" stays a fact
            spans = requirements(body, act.numbers, named_only=not asks)
        if spans and not retraction and told:
            for a, b in spans:
                sub = body[a:b]
                nums, conditions = number_conditions(sub, find_numbers(sub))
                out.append(
                    Candidate(
                        kind="constraint",
                        content=sub,
                        start=clause.start + a,
                        end=clause.start + b,
                        topic=subjects.subject_key(sub),
                        numbers=nums,
                        conditions=conditions,
                        scope=[],
                        reading=subjects.read(sub),
                        act=acts.Act("constraint", "a requirement inside a request", act.features),
                        index=index * 100 + a,
                    )
                )
            continue
        correction_only = False
        if from_user and kind is None and not retraction:
            values = [n for n in act.numbers if n.type != "version"]
            if (
                reading is None
                or not (
                    (reading.correction or reading.change or clause.corrects)
                    and (values or reading.names or reading.rejected)
                )
                or (  # "now how do I tell my boss…?" asks; "can we do 5 days instead?" changes
                    "act:question" in act.features and not CueText(body).search(CHANGE_ASKED)
                )
            ):
                continue
            correction_only = True
        assert reading is not None  # a clause kept so far has a kind or a cue, and was read
        if (
            from_user
            and kind == "constraint"
            and out
            and _limits_the_value_before(clause, out[-1], act)
        ):
            # "连接池大小必须是 50，不要超过": the clause says how the value before it holds
            prev = out[-1]
            out[-1] = dataclasses.replace(
                prev,
                kind="constraint",
                content=clip(text[prev.start : clause.end], MAX_ITEM_CHARS),
                end=clause.end,
                act=acts.Act(
                    "constraint",
                    "a limit on the value of the clause before",
                    prev.act.features,
                    prev.act.numbers,
                ),
            )
            continue
        values = [n for n in act.numbers if not _rejected_value(n, act.numbers, body)]
        nums, conditions = number_conditions(body, values)
        if (
            reading.correction
            and not reading.rejected
            and not reading.subject  # "and lr 2e-4 instead" after "batch 32": its own
            and _INSTEAD.search(body)
        ):
            # "8080 is taken, use 3000 instead": the value the clause before names is the
            # one this one replaces, if it is in the same unit ("改成两千条一批 重试改成5次吧"
            # changes two things, "去年调过一次 每个月存钱改成四千吧" counts no money)
            units = {v.unit for v in values}
            rejected = [
                v.raw
                for v in before
                if v.raw not in body and v.type != "version" and v.unit in units
            ]
            reading = dataclasses.replace(reading, rejected=tuple(rejected))
        if reading.correction or clause.corrects:
            reading = dataclasses.replace(
                reading,
                correction=True,
                scratch=reading.scratch
                or "scratch" in clause.opener.lower()
                or "算了" in clause.opener,
            )
        out.append(
            Candidate(
                kind=kind,
                content=with_note(clip(body, MAX_ITEM_CHARS), picked)
                if picked
                else clip(body, MAX_ITEM_CHARS),
                start=clause.start,
                end=clause.end,
                topic=reading.subject,
                numbers=nums,
                conditions=conditions,
                scope=paths(body),
                reading=reading,
                act=act,
                index=index,
                retraction=retraction,
                correction_only=correction_only,
                opener=clause.opener,
            )
        )
    heard: Candidate | None = None
    for cand in out:
        if heard is not None and not cand.reading.hearsay and _report_goes_on(heard, cand, text):
            cand.reading = dataclasses.replace(cand.reading, hearsay=True)
        heard = cand if cand.reading.hearsay else None
        if cand.reading.hearsay and _PUSHBACK.search(
            text, _answer_from(cand, text), cand.end + PUSHBACK_REACH
        ):
            cand.pushed_back = True
            if cand.kind in ("constraint", "decision", "preference"):
                # what another person wants, said and not believed, is no rule of the
                # person's ("contractor 1 says the island has to go, i dont believe him")
                cand.kind = "fact"
                cand.act = dataclasses.replace(
                    cand.act, kind="fact", rule="another person's word the person doubts"
                )
    return out


def _report_goes_on(heard: Candidate, cand: Candidate, text: str) -> bool:
    """Whether ``cand`` goes on with the other person's words ``heard`` reported: after
    "and" ("one of the moms says the nut thing is overblown and a little peanut butter is
    fine"), or in Chinese after a space when the person then dismisses it ("男朋友说两万不够
    至少要三万 我觉得他就是想住好酒店"; "医生说不是3天 要住5天" is the doctor's news, taken)."""
    if _OWN_SUBJECT.match(cand.content):
        return False
    if _GOES_ON.fullmatch(text, heard.end, cand.start):
        # ("… looks great and the budget is now $35k": the person's)
        return not cand.numbers and not heard.content.endswith((".", "!", "?", "。", "！", "？"))
    return bool(
        _ZH_GOES_ON.fullmatch(text, heard.end, cand.start)
        and _CJK.match(cand.content)
        and len(cand.content) <= 12
        and (
            _PUSHBACK.search(text, cand.end, cand.end + PUSHBACK_REACH)
            or THEIR_ASK.match(cand.content)
        )
    )


#: The person's own disbelief in what someone else claims: "i dont buy it", 我明明.
_PUSHBACK = re.compile(
    r"\bi (?:really )?(?:don['’]?t|do not) (?:buy|believe)"
    r" (?:it|that|this|him|her|them|a word|any)\b"
    r"|\bwhich i (?:really )?(?:don['’]?t|do not) (?:buy|believe)\b"
    r"|\b(?:that['’]?s|that is|it['’]?s) not"
    r" (?:true|right|what)|\bi (?:really )?(?:don['’]?t|do not) think (?:(?:that['’]?s|thats"
    r"|that is) (?:true|right|correct|the case)|(?:it['’]?s|its|it is) (?:true|the case))\b"
    r"(?!\s+(?:to|for|that)\b)"
    r"|\b(?:pretty|fairly) sure (?:it['’]?s|it was|its|that)\b"
    r"|\bi (?:really |kinda |kind of )?doubt\b|\bi haven['’]?t seen (?:that|it|this|the|any)\b"
    r"|\bbs\b|\bnonsense\b|\bi(?:'m| am) not convinced\b|\b(?:i count|i counted|by my count)\b"
    # (not "no way around it", "no way we can afford more": agreeing)
    r"|\bno way\b(?!\s+(?:around|we|i|to|out|of|you)\b)|\b(?:absolutely not|not happening"
    r"|yeah right)\b"
    r"|\b(?:that['’]?s|thats) (?:way |much |far )?too (?:low|high|much|little|many|few)\b"
    r"|不信|不太信(?=$|[\s，,。！!]|他|她)|有点怀疑|我怀疑|明明|我记得(?:就)?是|印象里(?:就)?是"
    r"|懒得理|胡说|瞎说|没看到(?:邮件|通知|消息|文件|那个|这个)"
    # "想得美", "我觉得他就是想住好酒店": dismissed (不可能 is as often the other's firm
    # word: "客户说周五之前必须上线，不可能改期的")
    r"|想得美|得了吧|我觉得(?:他|她|他们)就是想",
    re.I,
)
#: What joins two clauses of one person's report: "… is overblown and a little … is fine"
#: (a comma may start the person's own: 产品那边说可以放弃，minSdk 直接提到24).
_GOES_ON = re.compile(r"\s*,?\s*and\s+", re.I)
#: In Chinese, a report goes on after a space: "男朋友说两万不够 至少要三万".
_ZH_GOES_ON = re.compile(r"[ \u3000]+")
#: A clause the person says of themselves, after someone else's report.
_OWN_SUBJECT = re.compile(r"(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|we'll|my|our)\b|我", re.I)
#: Where, inside a report, the person's own answer may start: after the first comma,
#: "but" or "which" that follows who said it ("she said 98k is top of band, which i
#: dont buy"; "my wife says no way to 14 weeks" is all hers).
_ANSWER_STARTS = re.compile(r",|，|\bbut\b|\bwhich\b|\btbh\b|不过|但是?")


def _answer_from(cand: Candidate, text: str) -> int:
    """Where the person's answer to a report may begin (see ``_ANSWER_STARTS``)."""
    frame = subjects.THIRD_PARTY.search(cand.content)
    if frame is None:
        return cand.end
    found = _ANSWER_STARTS.search(cand.content, frame.end())
    return cand.start + found.start() if found else cand.end


#: How far after the claim (in characters) the person's disbelief still answers it.
PUSHBACK_REACH = 120
