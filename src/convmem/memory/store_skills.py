"""Store methods for skill versions, current skill files, rules and rule overrides."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from convmem.core.db import MemoryDatabase


class SkillStoreMixin:
    db: MemoryDatabase
    now: Callable[[], str]
