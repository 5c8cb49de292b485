"""An answer that picks one of the options the assistant just put.

"merge" after "should it be merge or delete+insert?", "the second one then" or "2" after a
numbered list, "第二个吧" after "第一个是全包，第二个是半包": the answer is a decision, and one
that names the option by its place carries the option's words from the list as a note
(see :func:`option_by_place`). What only weighs an option, asks back or answers another
question picks nothing.
"""

from __future__ import annotations

import re

from convmem.core.text import clip
from convmem.memory import acts, subjects

_CJK = re.compile(r"[\u3400-\u9fff]")

#: Options laid out by number: "1) … 2) …", "(1) … (2) …" ...
_NUMBERED_OPTIONS = re.compile(
    r"(?:^|[\s：:，,。；;])[(（]?1[.)）、．](?!\d)\s?.{2,400}?[\s，,。；;][(（]?2[.)）、．](?!\d)\s?"
    r"|第一(?:个|种|家|套|是).{2,200}?第二(?:个|种|家|套|是)",
    re.S,
)
#: ... said to be options, not the steps of what was done ("Here's what I changed: 1. …").
_OFFERS = re.compile(
    r"\b(?:options?|ways|approaches|alternatives|choices|either|pick|choose|prefer|side by side"
    r"|vs|versus|which)\b|方案|选项|二选一|可以选|选哪|推荐|以下|供你参考|可以考虑"
    r"|有(?:两|三|几)(?:个|种|家|套|款)",
    re.I,
)


def offered_in(text: str) -> str:
    """The end of an assistant's message when it ends by asking something or lays out
    numbered options (empty otherwise)."""
    tail = text[-600:]
    if _NUMBERED_OPTIONS.search(tail) and _OFFERS.search(text):
        return tail  # "two ways: 1) Astoria … 2) Jersey City …": the choice is put
    tail = text[-300:]
    return tail if "?" in tail or "？" in tail else ""


#: An assistant's question that puts options to the person: "merge or delete+insert?",
#: "Which one?", "选哪个", a numbered list of them.
OFFERS_CHOICE = re.compile(
    r"\b(?:or|which|options?|vs)\b|还是|哪个|哪种|一是|第[一二三]个|(?:^|[\s：:，,。；;])[(（]?[1-3]"
    r"[.)）、．]\s?",
    re.I,
)
#: An option named by its place: "the second one then", "option 2", "do 1 and 2", "第二个".
_BY_PLACE = re.compile(
    r"\bthe (?:first|second|third|last|former|latter)(?: one| option)?\b|\boption \d\b"
    r"|^\W*(?:(?:let's|lets|do|go with|ok|so)\s+)?\d(?: and \d)?\W*(?:then)?\W*$"
    r"|第[一二三](?:个|种)|方案[一二三1-3]",
    re.I,
)
#: What an answer that picks an option is not: asking back, thanks, a feeling, a no.
_NOT_A_PICK = frozenset(
    {"act:question", "act:zh_question", "act:ack", "act:feeling", "act:negated",
     "act:hypothetical", "act:narration"}
)  # fmt: skip
#: A clause that weighs an option, reports on it or repeats the choice, rather than
#: picks one: "实现是对的", "bloc is too heavy", "the login page still broken".
_JUDGES = re.compile(
    r"是|太|很|挺|不错|有点|贵|报错|不行|失败|挂了|坏|还是|或者|还(?!是)"
    r"|\b(?:is|are|was|too|looks|seems|feels|sounds|still|fails?|failed|failing|broken|broke"
    r"|errors?|crash\w*|works|worked|though|tho|idk|expensive|or)\b",
    re.I,
)
#: An option's number and a word that takes it: "2 sounds good", "#3 works for me".
_NUMBER_APPROVED = re.compile(
    r"^\W*(?:(?:ok|okay|yeah|yes|so|then)[\s,]+)?(?:#|no\.?\s?|option\s*)?[1-9]\s+"
    r"(?:sounds (?:good|great|right|fine)|works for me|is (?:good|fine|better|the one)"
    r"|it is|looks (?:good|right)|pls|please|for sure)\W*$",
    re.I,
)
#: An option's number or place and nothing else: "2", "2 then", "#3 pls", "第二个吧".
_BARE_PICK = re.compile(
    r"^\W*(?:(?:ok|okay|yeah|yes|so|let's do|lets do|go with)[\s,]+)?(?:#|option\s*)?[1-9]"
    r"(?:[\s,]+(?:then|pls|please|i guess|i think))?\W*$"
    r"|^\W*(?:那就|就|选|要)?第[一二三四五1-5](?:个|种|家|套|款)?(?:吧|好了|就行|可以)?\W*$",
    re.I,
)
#: The last question of the assistant's message, and the words that ask to choose.
_LAST_QUESTION = re.compile(r"[^.!?。！？\n]*[?？][^?？]*$")
_ASKS_TO_CHOOSE = re.compile(
    r"\b(?:which|pick|choose|prefer|go with|or|option|want)\b|哪|选|还是|或者|要不要|想要|要哪",
    re.I,
)
_PARTS = re.compile(r"[_./+-]")
_PICK_WORDS = 6  # an answer that picks is short: "merge", "github hosted", "the first one"


def picks_an_option(body: str, act: acts.Act, offered: str) -> bool:
    """A short answer that picks one of the options the assistant's question put: "merge"
    after "should it be merge or delete+insert?", "the second one then" after a list."""
    if _NUMBER_APPROVED.match(body) or _BARE_PICK.match(body):
        # "2 sounds good", "#3 works", "2 then", "第二个吧" after a numbered list, unless
        # the list ends by asking something else ("…你们几位？", "How many are joining?")
        asked = _LAST_QUESTION.search(offered)
        return asked is None or bool(_ASKS_TO_CHOOSE.search(asked.group()))
    if act.kind not in (None, "fact") or _NOT_A_PICK.intersection(act.features):
        return False
    body = _PICK_FILLER.sub(" ", body).strip() or body  # "parquet pls", "topo i guess"
    cjk = len(_CJK.findall(body))
    if cjk > 2 * _PICK_WORDS or len(re.findall(r"[A-Za-z0-9]+", body)) > _PICK_WORDS:
        return False
    if _JUDGES.search(body):
        # "bloc 样板代码太多了", "the last one failed though", "npm or pnpm, idk": weighs
        # an option, reports on it or names them all; it does not pick one
        return False
    if _BY_PLACE.search(body):
        return True
    # mostly the option's own words: "github hosted" (GitHub-hosted), not "write a
    # migration test with…"; the parts of a compound name count as words
    words = subjects.content_words(_PARTS.sub(" ", _POINTS_AT.sub(" ", body)))
    return 2 * len(words & subjects.content_words(_PARTS.sub(" ", offered))) > len(words)


_PLACES = {"first": 1, "second": 2, "third": 3, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5}
_PLACE_SAID = re.compile(
    r"\b(?:the\s+)?(first|second|third)\b|第([一二三四五1-5])|(?<![\w.])([1-9])(?!\d|\.\d)", re.I
)
_OPTION_MARK = re.compile(r"(?:^|(?<=[\s：:，,。；;(（]))[(（]?([1-9])[.)）、．](?!\d)\s?")
_OPTION_END = re.compile(r"[?？。！]|[.!]\s|!$|\n")


def by_place_only(body: str) -> bool:
    """An answer that is only an option's number or place ("2", "2 sounds good"): its
    digit is the place, not a value."""
    return bool(_BARE_PICK.match(body) or _NUMBER_APPROVED.match(body))


def option_by_place(body: str, offered: str) -> str:
    """The words of the option an answer picks by its place ("2", "the second one",
    "第二个") in the assistant's list, as the list says it ("" when it cannot be read):
    "keyset pagination on (created_at, id)" for "2" after "1) OFFSET/LIMIT 2) keyset
    pagination on (created_at, id) 3) …", "半包" for "第二个" after "第二个是半包"."""
    bare = by_place_only(body)
    if not (bare or _BY_PLACE.search(body)):
        return ""  # ("v2 for sure" names no place)
    places = list(_PLACE_SAID.finditer(body))
    if not bare and any(m[1] or m[2] for m in places):
        # "the first one, 2 nights": the place word names it, the digit is a value
        places = [m for m in places if m[1] or m[2] or _OPTION_NUMBER.search(body)]
    named = [_option_at(_place(m), offered) for m in places]
    return "; ".join(dict.fromkeys(o for o in named if o))  # "do 1 and 2": both


def _place(said: re.Match[str]) -> int:
    word = next(g for g in said.groups() if g)
    return int(word) if word.isdigit() else _PLACES[word.lower()]


def _option_at(place: int, offered: str) -> str:
    marks = list(_OPTION_MARK.finditer(offered))
    for i, m in enumerate(marks):
        if int(m[1]) == place:
            stop = marks[i + 1].start() if i + 1 < len(marks) else len(offered)
            text = offered[m.end() : stop]
            end = _OPTION_END.search(text)
            text = clip(text[: end.start()] if end else text, 80).strip(" ,，;；:：")
            return _JOINER_END.sub("", text)  # ("1) a cron job, or 2) …")
    ordinal = "一二三四五"[place - 1] if place <= 5 else ""
    zh = re.search(
        rf"第{ordinal}(?:个|种|家|套|款)?(?:是|：|:)\s*([^，,。；;！!？?\n]{{1,40}})", offered
    )
    return zh[1].strip() if zh and ordinal else ""


_JOINER_END = re.compile(r"[\s,，]*(?:\bor|\band|或者|或|还是)$", re.I)
_OPTION_NUMBER = re.compile(r"\b(?:option|#)\s*\d|\b\d\s+and\s+\d\b", re.I)


#: What leaves an option out rather than picks it: "anything but polars pls".
BUT_NOT = re.compile(r"\b(?:anything but|except|other than|besides|not)[\s,]*$", re.I)
#: Words around an option's name that only say it is the one: "parquet pls", "topo i
#: guess", "fossil dig for sure", "tapas sounds fun actually", "ok getting the topos".
_PICK_FILLER = re.compile(
    r"^\W*(?:(?:ok|okay|yeah|yes|so|hmm|um|then|getting|get|let's do|lets do|i'll take|i'll go"
    r" with|go with|going with)\b[\s,]*)+"
    r"|[\s,]+(?:(?:pls|plz|please|i guess|i think|for sure|probably|prob|actually|i'd say"
    r"|sounds (?:good|great|fun|nice|perfect|best|right)|it is|works for me)\b[\s,.!]*)+$",
    re.I,
)
#: The words that point at an option rather than name it: "民宿那个吧" names 民宿.
_POINTS_AT = re.compile(r"的?[那这](?:个|家|种|间|款|套|条)(?=吧)|吧\W*$")
