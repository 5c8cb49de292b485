"""What a clause does: the dialogue act behind it, and the memory kind that follows.

A cue word says what a clause contains; what the person is *doing* with it decides
whether it is worth remembering. Each clause gets a few cheap, readable features —
mood (question, request to the assistant, imperative), modality (must, never, 必须,
不能), commitment ("let's go with", "I booked", "订了"), liking ("I prefer", "喜欢"),
an open choice ("still deciding", "还没定"), hedging and hypotheticals, feedback and
small talk, narration of a one-off event, a value with a subject ("the pool size is
50", "预算3000元") — and a short ordered list of rules turns them into a kind or
into nothing:

=====================  =====================================================
nothing                feedback, greetings, thanks, feelings; questions and
                       one-off requests to the assistant; hypotheticals;
                       narration of what just happened
open_question          an undecided choice stated by the person
decision               a commitment: chose, booked, accepted, "let's go with"
preference             a liking or soft wish
constraint             a rule from now on: modal or imperative of standing, a
                       limit (a bounded value), a requirement an option must meet
fact                   a lasting statement of a value, a version, a place, a
                       date or an amount about the person, the world or the work
=====================  =====================================================

:func:`classify` returns the kind and the features and rule that decided it, so
``convmem inspect`` can say why an item has its kind. The vocabulary is data
(the tables below); nothing here looks at earlier messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from convmem.core.cue_match import CueText
from convmem.core.dates import WEEKDAYS
from convmem.core.numbers import Value, find_numbers
from convmem.memory import act_cues as vocab
from convmem.memory.small_talk import small_talk

_WORD = re.compile(r"[a-z][a-z']*")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_ZH_LEN_UNIT = 2


@dataclass
class Act:
    """The decision for one clause: a kind (or None), why, and the features behind it."""

    kind: str | None
    rule: str
    features: list[str] = field(default_factory=list)
    numbers: list[Value] = field(default_factory=list)
    contributions: list[tuple[str, float]] = field(default_factory=list)
    confidence: float = 1.0

    @property
    def reason(self) -> str:
        if self.contributions:
            top = ", ".join(f"{name} {weight:+.2f}" for name, weight in self.contributions[:5])
            return f"{self.kind or 'nothing'} ({self.rule}, p={self.confidence:.2f}; {top})"
        return f"{self.kind or 'nothing'} ({self.rule})"


#: A limit said as what it was ("the budget was 3000, now 4000"): the old one.
_PAST_LIMIT = re.compile(r"\b(?:was|were|used to be)\b|原来", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|don't|dont|can't|won't|isn't|nothing)\b")
_ZH_NEGATION = re.compile(r"[不别没勿]")
_WORDS = re.compile(r"\w+")
#: A clause about the pasted thing itself ("this should…", "it will…").
_ABOUT_IT = re.compile(r"(?:this|that|it)(?:'s|'ll|\s+(?:is|should|will|would|might|may))\b", re.I)


def _unbound(lower: str) -> str:
    """The clause without the words of its guesses (see ``act_cues.EPISTEMIC``)."""
    return vocab.EPISTEMIC.sub(lambda m: f" {m['who'] or m['whom'] or m['whose'] or ''} ", lower)


@dataclass(frozen=True)
class Context:
    """What a clause's surroundings say about it."""

    opener: str = ""
    corrects: bool = False
    after_question: bool = False
    in_question: bool = False
    first: bool = False
    pasted_nearby: bool = False
    #: in a sentence labelled a plan ("ok plan: $600 a month into the HYSA, $300 …")
    planned: bool = False


def features(text: str, ctx: Context = Context()) -> tuple[list[str], list[Value]]:
    """The named features of a clause (sorted), and its numbers."""
    zh = bool(vocab.CJK.search(text))
    low = text.strip()
    lower = low.lower()
    said = CueText(low)
    # a guess ("that must have been the cache") binds no one: its modal is not counted
    binding = _unbound(lower) if "must" in lower or "can" in lower else lower
    bound = CueText(binding)
    numbers = find_numbers(low)
    # a day of the week is no feature: the model learned dates from calendar dates, and
    # "周三有大促" or "it goes out Monday" is most often narration
    counted = [n for n in numbers if n.value not in WEEKDAYS]
    values = [n for n in counted if n.type != "version"]
    on: set[str] = set()

    def flag(name: str, value: bool | object) -> None:
        if value:
            on.add(name)

    flag("act:question", low.endswith(("?", "？")) or (not zh and said.match(vocab.QUESTION_START)))
    flag("act:zh_question", zh and said.search(vocab.ZH_QUESTION))
    flag("act:ack", said.match(vocab.ACK) or (zh and said.match(vocab.ZH_ACK)))
    flag("act:feeling", said.search(vocab.FEELING) or (zh and said.search(vocab.ZH_FEELING)))
    flag("act:request", said.search(vocab.REQUEST) or (zh and said.search(vocab.ZH_REQUEST)))
    flag("act:standing_imperative", said.match(vocab.STANDING_IMPERATIVE))
    flag("act:standing", said.search(vocab.STANDING) or (zh and said.search(vocab.ZH_STANDING)))
    flag("act:modal", bound.search(vocab.MODAL) or (zh and said.search(vocab.ZH_MODAL)))
    flag("act:you_rule", bound.match(vocab.SECOND_PERSON_RULE))
    flag("act:needs", bound.search(vocab.NEEDS))
    flag("act:zh_named_choice", zh and said.search(vocab.ZH_NAMED_CHOICE))
    flag("act:zh_subject_value", zh and len(low) <= 18 and said.match(vocab.ZH_SUBJECT_VALUE))
    flag("act:commit", said.search(vocab.COMMIT) or (zh and said.search(vocab.ZH_COMMIT)))
    flag(
        "act:commit_more",
        said.search(vocab.COMMIT_MORE) or (zh and said.search(vocab.ZH_COMMIT_MORE)),
    )
    flag("act:settles", said.search(vocab.SETTLES) or (zh and said.search(vocab.ZH_SETTLES)))
    flag(
        "act:third_party",
        said.search(vocab.THIRD_PARTY) or (zh and said.search(vocab.ZH_THIRD_PARTY)),
    )
    flag(
        "act:negated",
        _NEGATION.search(binding) or (zh and _ZH_NEGATION.search(low)),
    )
    flag("act:prefer", said.search(vocab.PREFER) or (zh and said.search(vocab.ZH_PREFER)))
    flag("act:open_choice", said.search(vocab.OPEN) or (zh and said.search(vocab.ZH_OPEN)))
    flag(
        "act:hypothetical",
        said.search(vocab.HYPOTHETICAL) or (zh and said.match(vocab.ZH_HYPOTHETICAL)),
    )
    flag("act:narration", said.search(vocab.NARRATION) or (zh and said.search(vocab.ZH_NARRATION)))
    flag("act:fact_shape", said.search(vocab.LASTING_FACT) or (zh and said.search(vocab.ZH_FACT)))
    flag("act:self", said.match(vocab.SELF_SUBJECT) or low.startswith(("我", "咱们")))
    flag("act:requirement_noun", said.search(vocab.REQUIREMENT_NOUN))
    for n in counted:
        on.add(f"num:{n.type}")
    flag("num:none", not counted)
    flag("num:bounded", any(n.bound for n in counted))  # ">=4.2" bounds a version too
    flag("num:range", any(n.high is not None for n in values))
    flag("num:many", len(values) >= 3)
    if zh:
        on.add("lang:zh")
        for cue in vocab.ZH_CUES:
            if cue in low:
                on.add(f"zh:{cue}")
        for run in _CJK_RUN.findall(low):
            for i in range(max(1, len(run) - 1)):
                on.add(f"zb:{run[i : i + 2]}")
        for word in _WORD.findall(lower):
            on.add(f"w:{word}")
        head = low[:2]
        for cue in (
            "我",
            "我们",
            "你",
            "帮",
            "请",
            "不",
            "别",
            "要",
            "就",
            "先",
            "还",
            "那",
            "这",
            "改",
            "用",
        ):
            if head.startswith(cue):
                on.add(f"zhstart:{cue}")
        size = len(low) // _ZH_LEN_UNIT
    else:
        words = _WORD.findall(binding)
        for w in set(words):
            on.add(f"w:{w}")
        if words:
            first = words[0]
            if first in vocab.START_VERBS_RULE:
                on.add(f"start:{first}")
                on.add("start:rule_verb")
            elif first in vocab.START_VERBS_TASK:
                on.add("start:task_verb")
            elif first in vocab.EN_CUES:
                on.add(f"start:{first}")
            elif first.isdigit():
                on.add("start:number")
            else:
                on.add("start:other")
        size = len(words)
    on.add(
        "len:" + ("1-3" if size <= 3 else "4-8" if size <= 8 else "9-16" if size <= 16 else "17+")
    )
    flag("punct:!", "!" in low or "！" in low)
    flag("punct:colon", ":" in low or "：" in low)
    flag("punct:paren", "(" in low or "（" in low)
    flag("ctx:corrects", ctx.corrects)
    flag("ctx:opener", ctx.opener and not ctx.corrects)
    flag("ctx:after_question", ctx.after_question)
    flag("ctx:in_question", ctx.in_question)
    # (the clause's position is not a feature: openers and greetings made it a proxy for "none")
    flag("ctx:pasted_nearby", ctx.pasted_nearby)
    return sorted(on), numbers


# --- the model -------------------------------------------------------------------------------

_MODEL: dict[str, object] | None = None


def _model() -> dict[str, object]:
    global _MODEL
    if _MODEL is None:
        import json
        from importlib.resources import files

        _MODEL = json.loads(files("convmem.data").joinpath("acts-model.json").read_text("utf-8"))
    return _MODEL


def score(names: list[str]) -> tuple[str, float, list[tuple[str, float]]]:
    """The most probable class under the shipped model, its probability, and each active
    feature's weight for it (largest first)."""
    import math

    model = _model()
    classes: list[str] = model["classes"]  # type: ignore[assignment]
    weights: dict[str, list[float]] = model["weights"]  # type: ignore[assignment]
    bias: list[float] = model["bias"]  # type: ignore[assignment]
    logits = list(bias)
    rows = [(name, row) for name in names if (row := weights.get(name)) is not None]
    for _, row in rows:
        for k, w in enumerate(row):
            logits[k] += w
    top = max(logits)
    exp = [math.exp(v - top) for v in logits]
    total = sum(exp)
    best = max(range(len(classes)), key=lambda k: (exp[k] / total, classes[k]))
    parts = sorted(((name, row[best]) for name, row in rows), key=lambda p: (-abs(p[1]), p[0]))
    return classes[best], exp[best] / total, parts


def classify(text: str, ctx: Context = Context()) -> Act:
    """The memory kind of one clause of the person's own words, or None, with the reason."""
    names, numbers = features(text, ctx)
    stripped = text.strip()
    if len(stripped) < 2 or (
        not vocab.CJK.search(stripped) and len(_WORDS.findall(stripped)) < 2 and not numbers
    ):
        return Act(None, "too short", names, numbers)
    if "act:ack" in names and len(stripped) < 40:
        return Act(None, "feedback or small talk", names, numbers)
    if vocab.GO_AHEAD.match(stripped) or vocab.ZH_GO_AHEAD.match(stripped):
        return Act(None, "a go-ahead with nothing of its own", names, numbers)
    if vocab.NOW_AT.match(stripped):
        return Act(None, "where the person is right now", names, numbers)
    if vocab.BARE_NO.match(stripped):
        return Act(None, "a bare no: nothing of its own", names, numbers)
    best, p, parts = score(names)
    floor = float(_model().get("min_probability", 0.0))  # type: ignore[arg-type]
    kind = None if best == "none" else best
    if kind is not None and p < floor:
        kind = None
    if ctx.planned and kind in (None, "fact") and numbers and "act:question" not in names:
        return Act(
            "decision",
            "a part of a plan said as one (plan: $600 a month into…)",
            names,
            numbers,
            parts,
            p,
        )
    ruled = guide_rule(kind, set(names), stripped, numbers)
    if ruled is not None:
        return Act(ruled[0], ruled[1], names, numbers, parts, p)
    return Act(kind, "model", names, numbers, parts, p)


#: Who it is not: "过敏的是我表弟不是我" (a mix-up put right, nothing to keep).
_NOT_ME = re.compile(r"不是我|\bnot (?:me|mine|us)\b", re.I)


#: The rule of a choice settled as "X it is" (see :func:`settled_choice`).
SETTLED = "a choice settled: 'X it is'"


def settled_choice(act: Act, text: str) -> int:
    """Where the choice of a clause settled as "X it is" starts (0: at the start, or
    not such a clause): "that's way over, mom's house it is" keeps "mom's house it is"."""
    found = vocab.SETTLED_CHOICE.search(text) if act.kind == "decision" else None
    return found.start("choice") if found else 0


#: The rule of a value set for a setting (see :func:`_sets_a_value`).
SETS_A_VALUE = "a value set for a setting (调到0.92吧, batch size降到8)"


def _sets_a_value(text: str, values: list[Value]) -> bool:
    """ "利用率调到0.92吧", "batch size降到8": a setting given a value that is no date or
    time (出发改成2号 moves a plan), said as an instruction, not told as what happened
    (loss降到0.3了, AGP 刚升到 8.2, 他们把价格降到199)."""
    m = vocab.ZH_SETS_VALUE.search(text)
    if m is None:
        return False
    landed = [v for v in values if v.start <= m.start("set") < v.end]
    if not landed or landed[0].type in ("date", "time") or landed[0].value in WEEKDAYS:
        return False
    told = "了" in text[landed[0].end : landed[0].end + 3] or "刚" in text[: m.start()]
    if told or "已经" in text[: m.start()]:
        return False
    return bool(
        m.group().startswith("设")  # 设成, 设为: "set to" says it is an instruction
        or vocab.ZH_SETS_SAID.search(text)
        or vocab.ZH_SETTING_NAME.search(text, max(0, m.start() - 64), m.start())
    )


#: The rule of a clause of small talk (see :mod:`convmem.memory.small_talk`).
SMALL_TALK = "small talk: a verdict, a cheer or a guess at a feeling"


def guide_rule(
    kind: str | None, names: set[str], text: str, numbers: list[Value]
) -> tuple[str | None, str] | None:
    """The labelling guide's firm rules, where the model's choice departs from them.

    Returns (kind, rule) to use instead, or None to keep the model's choice.
    """
    asks = names & {"act:question", "act:zh_question", "act:request", "act:hypothetical"}
    values = [n for n in numbers if n.type != "version"]
    if not values and small_talk(text):
        return None, SMALL_TALK  # (also when the model kept nothing: no rule below may)
    if kind not in (None, "open_question") and vocab.UNSURE_CHOICE.match(text):
        return "open_question", "a choice of the person's own, not made yet (not sure if we should)"
    if kind is not None and (vocab.DELEGATES.match(text) or vocab.WAIT_A_MOMENT.match(text)):
        return None, "the choice left to the assistant, or a moment asked for"
    if kind == "constraint" and (
        vocab.USED_TO.match(text)
        or (vocab.PAST_VALUE.search(text) and ("act:requirement_noun" in names or len(values) == 1))
    ):
        return None, "a limit said as what it was (the budget was 3000, it used to be 20)"
    if kind == "decision" and vocab.ANYWAY.match(text):
        return None, "a reason said in passing (we'll call it later anyway)"
    if kind == "decision" and not values and vocab.ZH_SEARCH_ASKED.match(text):
        return None, "a search asked of the assistant (给推荐一家吧)"
    if kind == "decision" and vocab.PASSIVE_STEP.match(text):
        return "fact", "how something is done, in the passive (logs are rotated and signed)"
    if kind == "constraint" and not values and vocab.WE_NEED_MORE.match(text):
        return None, "more of something, asked for now"
    if (
        kind == "constraint"
        and any(v.type == "money" for v in values)
        and vocab.OTHERS_SAID.match(text)
        and vocab.SHARE_OF_COST.search(text)
    ):
        return "fact", "another person's share of a cost"
    if kind is not None and vocab.TOO_MUCH.match(text):
        return None, "a verdict on a value (100 is too strict)"
    if kind == "decision" and vocab.WHIM.search(text):
        return None, "a choice of the moment, told"
    if kind is None and not asks and vocab.LIFE_FACT.match(text):
        return "fact", "a lasting change in a life, told (just turned 12, 健身半年了)"
    if kind is None and values and not asks and vocab.OTHERS_SAID.match(text):
        return "fact", "what another person said, with a value"
    if kind is None and values and not asks and vocab.ZH_OTHERS_VERDICT.search(text):
        return "fact", "another person's verdict on a value (DBA 说 50 太多了)"
    if (
        kind in ("constraint", "preference")
        and not values
        and vocab.OTHERS_SAID.match(text)
        and vocab.REASSURES.search(text)
    ):
        return "fact", "another person's reassurance, told"
    if kind == "preference" and vocab.THEIR_LIKING.search(text):
        return "fact", "another person's liking, told (she likes gardening)"
    if kind is None and not asks and vocab.DIET.search(text) and not _NOT_ME.search(text):
        return "fact", "a diet, an allergy or an intolerance, told"
    if kind in (None, "fact") and not asks and vocab.SETTING_VALUE.match(text):
        return "constraint", "a setting and its value"
    if kind in (None, "fact") and not asks and vocab.ZH_DUE.search(text):
        return "constraint", "a deadline to hand something in (8月15号之前交)"
    if kind is not None and vocab.WORRY.search(text):
        return None, "a worry, not a wish"
    if kind is not None and vocab.ZH_ENDS_ASKING.search(text):
        return None, "a question to the assistant"
    if kind != "fact" and vocab.OTHERS_VIEW.match(text):
        return "fact", "another person's view, told"
    if kind == "fact" and vocab.ONGOING.search(text) and all(n.type == "duration" for n in values):
        return None, "an ongoing situation, told"
    if (
        kind in (None, "fact")
        and "act:requirement_noun" in names
        and values
        and not asks
        and "act:narration" not in names
        and (kind == "fact" or not _PAST_LIMIT.search(text))
    ):
        return "constraint", "a limit (budget, cap, deadline)"  # however it is phrased
    if (
        kind == "constraint"
        and "act:request" in names
        and not names & {"act:standing", "act:standing_imperative", "act:modal", "act:negated"}
        and not vocab.CJK.search(text)
        and not values
        and not vocab.TO_VERSION.search(text)
    ):
        return None, "a one-off task for the assistant"
    if kind in (None, "fact") and vocab.SETTLED_CHOICE.search(text):
        return "decision", SETTLED
    if kind in (None, "fact") and not asks and vocab.DECIDED.match(text):
        return "decision", "a decision said in so many words (we decided to, 我们决定用)"
    if kind in (None, "fact") and not asks and vocab.ZH_MUST.search(text):
        return "constraint", "a must (必须, 不得, 禁止)"
    if kind in (None, "fact") and not asks and vocab.ZH_MUST_HAVE.match(text):
        return "constraint", "a requirement: it must have (要有阳台)"
    # the person's own words, not what another says ("my wife thinks parking is a must")
    own = kind in (None, "fact") and not asks and not vocab.REPORTED.search(text)
    if own and vocab.ZH_REQUIRES.search(text):
        return "constraint", "a requirement: where or what it must be (要靠近地铁站)"
    if own and vocab.ZH_WANTS.match(text):
        return "constraint", "a requirement said bare: what it must be (要独卫, 蛋糕要无麸质的)"
    if own and values and vocab.ZH_ENOUGH.search(text):
        return "constraint", "an amount said to be enough (两间房就够了)"
    if (
        kind is None
        and not asks
        and (
            vocab.STANDING_INSTRUCTION.match(text)
            or ("act:modal" in names and vocab.THIS_MUST.match(text))
        )
    ):
        return "constraint", "a standing instruction (always use, keep answers in)"
    if kind is None and not asks and vocab.SWITCH.match(text) and len(text) < 60:
        return "constraint", "a setting turned on or off (turn on bf16, HPA on)"
    if kind != "constraint" and not asks and vocab.ZH_SWITCH.match(text):
        return "constraint", "a setting turned on or off (开gradient checkpointing)"
    if own and "act:narration" not in names:
        if vocab.MUST_BE.search(text) and not vocab.LOG_LINE.match(text):
            return "constraint", "a must (is a must, a dealbreaker, non-negotiable)"
        if values and vocab.WE_NEED.match(text):
            return "constraint", "a requirement: what we need"
        if kind in (None, "fact") and vocab.NEEDS_SUPPORT.match(text):
            return "constraint", "a requirement: what must keep working (we need IE11 support)"
        if kind is None and vocab.WANTS_IT_SO.match(text):
            return "constraint", "a want of how a thing must be (I want the hotel near…)"
    if (
        kind == "fact"
        and "act:needs" in names
        and not asks
        and "act:narration" not in names
        and not text.lower().startswith(("i ", "we ", "my "))
        and not vocab.NEEDS_NOTHING_NAMED.search(text)
    ):
        return "constraint", "a requirement: it needs"
    if kind != "constraint" and not asks and _sets_a_value(text, values):
        return "constraint", SETS_A_VALUE
    if kind is None and not asks and "act:narration" not in names:
        if "act:negated" not in names and any(
            n.bound == "upper" and n.type in ("date", "time") for n in numbers
        ):
            return "constraint", "a deadline (by Friday, 周五之前)"
        if (
            "act:needs" in names
            and not text.lower().startswith(("i ", "we "))
            and not vocab.NEEDS_NOTHING_NAMED.search(text)
        ):
            return "constraint", "a requirement: it needs"
        if "act:zh_named_choice" in names:
            return "decision", "a named tool chosen for a role"
        if vocab.USE_NAMED.match(text):
            return "decision", "a short instruction naming what to use"
        if "act:zh_subject_value" in names and values and vocab.ZH_SETTING.search(text):
            return "constraint", "a setting and its value"
        if (
            "ctx:pasted_nearby" in names
            and "act:modal" in names
            and values
            and "act:hypothetical" not in names
            and not _ABOUT_IT.match(text)  # "This should only take 2 seconds.": a guess
        ):
            # what is said beside a paste is mostly about it, but a rule with a value
            # is a rule wherever it stands ("The redis call should time out after 200ms."
            # after a traceback)
            return "constraint", "a rule with a value, beside a paste"
    return None
