"""Cue words and sentence patterns, English and Chinese, used by extraction.

Kept apart from the extraction logic so that the vocabulary can be read (and
extended) as data. Every pattern is case-insensitive and matched per sentence.
"""

from __future__ import annotations

import re
from typing import Final

from .stopwords import CUE_WORDS, QUERY_STOPWORDS

_I = re.IGNORECASE

#: Markers that a sentence corrects something said earlier.
CORRECTION: Final = re.compile(
    r"^(?:actually|correction|scratch that|wait|sorry|oops|no|nope|not quite)\b[\s,:;—–-]*"
    r"|\bmake it\s+(?:\S+\s+){0,3}?\d"
    r"|\b(?:change it to|change that to|instead of|rather than|not \S+ but|"
    r"should be \S+ instead|use \S+ instead|instead)\b"
    r"|改成|改为|换成|更正|纠正|不是.{1,30}?而是|应该是|改一下",
    _I,
)

CONSTRAINT: Final = re.compile(
    # imperative rules: "Never touch prod", "Always run the tests", "Don't use X"
    r"^(?:please\s+)?(?:never|always|don't|do not|avoid|only use|make sure|ensure)\b"
    r"(?! forget\b| worry\b| mind\b)"
    # modal rules with an agent or a thing as subject
    r"|\b(?:we|you|it|this|that|they|everything|every \w+|all \w+|the \w+|[a-z_]+s?)\s+"
    r"(?:must(?! have\b| be so\b| be really\b| be such\b| be a\b| be an\b| feel\b|'ve\b)"
    r"|must not|mustn't|should(?! have\b)|shouldn't|shall|has to|have to|needs? to|cannot|can't"
    r"(?! wait\b| believe\b| help\b| imagine\b| beat\b| stop\b)|may not|is required to|"
    r"are required to|is not allowed to|are not allowed to)\b"
    r"|\b(?:required|mandatory|forbidden|not allowed|under no circumstances)\b"
    r"|必须|务必|一定要|不要|不能|不得|不可以|禁止|不准|只能|只用",
    _I,
)

#: Limits and budgets stated with a number ("budget 3000 tokens", "at most 3 retries").
LIMIT: Final = re.compile(
    r"\b(?:at most|at least|no more than|no less than|not exceed|stay under|stay below|"
    r"keep it under|limit(?:ed)? to|budget|deadline|maximum|minimum|under|below|within)\b"
    r"(?=[^.!?]*\d)"
    r"|至少|最多|不超过|不低于|上限|下限|预算|截止",
    _I,
)

DECISION: Final = re.compile(
    r"\b(?:we(?:'ve| have)? decided|i(?:'ve| have)? decided|the decision is|decision:|"
    r"we(?:'ll| will) go with|let's go with|lets go with|go with|let's use|we(?:'ll| will) use|"
    r"we chose|we picked|"
    r"settled on|we agreed|agreed on|final answer|we are going with|we're going with|"
    r"we(?:'ll| will) stick with|stick with)\b"
    r"|决定|定了|就用|采用|选用|确定用|商定|就这么定",
    _I,
)

PREFERENCE: Final = re.compile(
    r"\b(?:i prefer|i'd prefer|i would prefer|i'd rather|i would rather|i like|i love|i hate|"
    r"i dislike|prefer(?:ably)?|my preference|i want|i'd like|i would like|please always|"
    r"please never|ideally)\b"
    r"|我更喜欢|我喜欢|我偏好|我倾向|偏好|最好|我希望|我想要|我不喜欢",
    _I,
)

#: A question that asks for a decision (not small talk).
OPEN_QUESTION: Final = re.compile(
    r"^(?:should|shall)\b"
    r"|\b(?:should|shall|do|can|could|would|must|will) (?:we|i|you|they)\b"
    r"|\bwhether\b|\bis it (?:better|worth|ok|okay|fine)\b|\bwhich\b.*\b(?:should|do we|would)\b"
    r"|\b\w+ or \w+.*\?\s*$"
    r"|是否|要不要|该不该|需不需要|能不能|可不可以|用不用|还是|我们.*吗[？?]\s*$",
    _I,
)

#: Words just before a number that mark it as the rejected (old) value.
REJECTED_NUMBER: Final = re.compile(
    r"(?:\bnot|\binstead of|\brather than|\bfrom|\bwas|不是|而非|原来是|从)\s*$", _I
)

#: An assistant sentence that proposes something (stored as a proposal, never promoted).
PROPOSAL: Final = re.compile(
    r"\b(?:i suggest|i'd suggest|i propose|i recommend|i'd recommend|we could|we should|"
    r"you could|you might|consider|how about|what about|my suggestion|let's|let me suggest|"
    r"it would be better|a better option)\b"
    r"|我建议|建议|可以考虑|不妨|推荐|或许可以|我们可以",
    _I,
)

FACT: Final = re.compile(
    r"\b(?:is|are|was|were|has|have|uses|runs|lives|works|contains|equals|"
    r"we use|we're using|we are using|our|my|the)\b"
    r"|是|有|在|用|叫",
    _I,
)

GOAL: Final = re.compile(
    r"\b(?:the goal is|our goal is|my goal is|goal:|the task is|we need to build|"
    r"we are building|we're building|i want to build|objective:)\s*(.+)"
    r"|(?:目标是|任务是|我们要做|我们在做)(.+)",
    _I,
)
PROGRESS: Final = re.compile(
    r"\b(?:is|are|was|were|now|just|have|has|'ve|been)\s+(?:done|finished|completed|shipped|"
    r"merged|fixed|working|passing)\b|\bdone with\b|\bworks now\b|^(?:finished|done|fixed)\b"
    r"|完成了|做完了|已完成|搞定了|修好了",
    _I,
)
BLOCKER: Final = re.compile(
    r"\b(?:blocked (?:on|by)|is blocking|stuck on|can't proceed|cannot proceed|waiting (?:on|for)|"
    r"keeps failing|is broken)\b"
    r"|卡在|阻塞|被.{1,10}挡住|一直失败",
    _I,
)
OPEN_ITEM: Final = re.compile(
    r"^(?:todo|to do|next|still need to|remaining|later)\b[:\s]"
    r"|\b(?:still need to|we still have to)\b"
    r"|还需要|待办|接下来要|后面再",
    _I,
)

#: Qualifiers that are conditions of a number (percentiles, load, environment, rate).
CONDITION: Final = re.compile(
    r"\b(?:p\d{2,3}(?:\.\d)?|median|average|mean|peak|worst[- ]case|steady[- ]state)\b"
    r"|\b(?:at|per|during|under|over|in|on|for|with|when|within)\s+"
    r"(?:\d[\d.,]*\s?[a-z%/]*(?:\s(?:rps|qps|users|requests|concurrent \w+|connections))?"
    r"|peak(?: \w+)?|production|prod|staging|load|the \w+ (?:tier|region|environment)|"
    r"each \w+|every \w+|a \w+)"
    r"|在[^，。,；;]{1,12}?(?:下|时|中)|峰值|高峰期?|每(?:秒|分钟|小时|天|次|个)|P\d{2,3}|平均|最坏情况",
    _I,
)

#: Words that carry no topic (function words plus cue words and fillers), English.
STOPWORDS: Final = QUERY_STOPWORDS | CUE_WORDS
