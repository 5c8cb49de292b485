"""Task-state patterns: the goal, progress, blockers and open items a person states.

Kept apart from the extraction logic so that the vocabulary can be read (and
extended) as data. Every pattern is case-insensitive and matched per sentence.
"""

from __future__ import annotations

import re
from typing import Final

_I = re.IGNORECASE

GOAL: Final = re.compile(
    r"\b(?:the goal is|our goal is|my goal is|goal:|the task is|we need to build|"
    r"we are building|we're building|i want to build|objective:)\s*(.+)"
    r"|(?:目标是|任务是|我们要做|我们在做)(.+)",
    _I,
)
#: (not after could, would or must: "I couldn't have done it without you" is thanks, "we
#: would have shipped it" did not happen; "that should have fixed it" is still news)
PROGRESS: Final = re.compile(
    r"\b(?:is|are|was|were|now|just|has|(?<!could have )(?<!would have )(?<!must have )been"
    r"|(?<!could )(?<!couldn't )(?<!would )(?<!wouldn't )(?<!must )have"
    r"|(?<!could)(?<!would)(?<!must)'ve)"
    r"\s+(?:done|finished|completed|shipped|"
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
