"""File-operation preconditions: refuse a tool call that would touch a path it must not.

A rule (``validation.preconditions``, a TOML table) names a glob and a mode:
``must_exist`` (the path must already exist) or ``must_not_exist``, optionally only
for some ``tools`` and with a ``reason`` shown to the model. The paths a tool call
touches are its path-like arguments and the paths named in a shell command; a
relative one is resolved against the call's ``cwd`` (the host's project folder).
Globs: ``**`` spans folders, ``*`` and ``?`` stay inside one, and a bare name matches
in any folder, as in ``.gitignore``.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convmem.core.text import paths

PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "notebookPath")
_GLOB = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
_MODES = (("must_exist", "must already exist"), ("must_not_exist", "must not exist"))


@dataclass(frozen=True)
class PreconditionDecision:
    """Whether a tool call may run; ``reason`` explains a denial."""

    allowed: bool
    reason: str | None = None


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``**`` spans folders, ``*`` and ``?`` stay inside one; anything else is literal."""
    parts = re.findall(r"\*\*/|\*\*|\*|\?|[^*?]+", pattern)
    return re.compile("".join(_GLOB.get(part) or re.escape(part) for part in parts) + r"\Z")


def _path_matches(pattern: str, candidates: Iterable[str]) -> bool:
    pattern = pattern.replace("\\", "/")
    if "/" not in pattern:  # like .gitignore: a bare name matches in any folder
        return any(fnmatch.fnmatchcase(c.rsplit("/", 1)[-1], pattern) for c in candidates)
    regex = _glob_regex(pattern.removeprefix("./"))
    return any(regex.match(c) for c in candidates)


def _tool_paths(tool_input: Mapping[str, Any]) -> list[str]:
    """Paths a tool call touches: path-like keys, and paths named in a shell command."""
    found = [v.strip() for k in PATH_KEYS if isinstance(v := tool_input.get(k), str) and v.strip()]
    command = tool_input.get("command")
    return list(dict.fromkeys(found + (paths(command) if isinstance(command, str) else [])))


def check(
    rules: Sequence[Mapping[str, Any]], tool_name: str, tool_input: Mapping[str, Any]
) -> PreconditionDecision:
    """The first rule a tool call breaks, as a denial with its reason; else allowed."""
    targets = _tool_paths(tool_input) if rules else []
    cwd_value = tool_input.get("cwd")
    cwd = Path(cwd_value) if isinstance(cwd_value, str) and cwd_value else Path.cwd()
    for rule, (mode, need), target in itertools.product(rules, _MODES, targets):
        named = rule.get("tools") or ()
        tools = {str(t).casefold() for t in ([named] if isinstance(named, str) else named)}
        if (tools and tool_name.casefold() not in tools) or not isinstance(rule.get(mode), str):
            continue
        path = Path(target).expanduser()
        full = path if path.is_absolute() else cwd / path
        candidates = {target.replace("\\", "/"), full.as_posix()}
        if full.is_relative_to(cwd):
            candidates.add(full.relative_to(cwd).as_posix())
        exists = os.path.lexists(full)
        if exists == (mode == "must_exist") or not _path_matches(rule[mode], candidates):
            continue
        why = f" Reason: {rule['reason']}" if rule.get("reason") else ""
        return PreconditionDecision(
            False,
            f'convmem precondition: {tool_name} on "{target}" denied because the path'
            f" {'already exists' if exists else 'does not exist'}; paths matching"
            f' "{rule[mode]}" {need} ({mode}).{why}',
        )
    return PreconditionDecision(True)
