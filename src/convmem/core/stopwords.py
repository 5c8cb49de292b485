"""Stop words: kept apart from the cue patterns so that ranking can load them cheaply."""

from __future__ import annotations

from typing import Final

#: Function words that carry no meaning of their own in a query (English).
QUERY_STOPWORDS: Final = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i
    i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
    myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's which while who who's whom why why's with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves also just
    really ever
    """.split()
)

#: Cue words and fillers: they say how something was said, not what it is about.
CUE_WORDS: Final = frozenset(
    """
    actually make please okay ok yes yeah hey hi hello thanks thank instead must never always
    decided prefer will use using used let go going need needs want like one get got still now
    well sure right think know see say said tell told much many lot lots thing things
    """.split()
)

#: Characters of Chinese question words (什么, 哪里, 谁, 吗, 呢, 怎么, 几): they frame a
#: question rather than name what it is about. A query's CJK runs are cut into every
#: two-character window, so "行李箱是什么颜色" also yields 是什, 什么 and 么颜; a window
#: holding one of these characters is the question's frame, as English stop words are,
#: and says nothing a hit must share. Only question words: 是, 的 and the pronouns are
#: frames too, but a window holding one also holds a neighbour that may be the subject
#: (狗是 in "狗是什么颜色", 目的 in "目的地在哪里").
ZH_FRAME_CHARS: Final = frozenset("什么哪谁吗呢怎几")
#: Windows of two characters that are a question word on their own (how much, how, why).
ZH_FRAME_PAIRS: Final = frozenset({"多少", "如何", "为何"})
