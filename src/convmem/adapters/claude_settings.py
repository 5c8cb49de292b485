"""Claude Code's settings: convmem's hook entries and its ``/convmem`` slash command.

``convmem install claude-code`` writes these; ``convmem doctor`` reads them back. The
entries are recognised by their command (``… hook claude-code …``), so an install by
any path, with any options, is found, updated or removed, and nothing else is touched.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from convmem.errors import ConvmemError

# --- hook settings (``convmem install claude-code``) -------------------------------------

#: The hook events convmem handles, and whether the entry takes a tool matcher.
HOOK_EVENTS: tuple[tuple[str, bool], ...] = (
    ("SessionStart", False),
    ("UserPromptSubmit", False),
    ("PreToolUse", True),
    ("PostToolUse", True),
    ("PreCompact", False),
    ("Stop", False),
    ("SessionEnd", False),
)


def is_convmem_hook(command: Any) -> bool:
    """A hook command convmem installed: any path to it, any options after the host."""
    return isinstance(command, str) and bool(re.search(r"\bhook claude-code\b", command))


def merge_hooks(settings: dict[str, Any], command: str, *, uninstall: bool = False) -> bool:
    """Add (or remove) convmem's hook entries in a settings object; True if it changed.

    Other hooks, matchers and keys are left as they are; installing twice is a no-op.
    """
    before = json.dumps(settings, sort_keys=True)
    hooks = settings.get("hooks")
    if hooks is None:
        if uninstall:
            return False
        hooks = settings["hooks"] = {}
    if not isinstance(hooks, dict):
        raise ConvmemError('the settings file\'s "hooks" is not an object; fix it by hand first')
    for event, with_matcher in HOOK_EVENTS:
        groups = hooks.get(event)
        groups = groups if isinstance(groups, list) else ([] if groups is None else None)
        if groups is None:
            raise ConvmemError(
                f'the settings file\'s "hooks.{event}" is not a list; fix it by hand'
            )
        ours = [
            (g, h)
            for g in groups
            if isinstance(g, dict)
            for h in g.get("hooks") or []
            if isinstance(h, dict) and is_convmem_hook(h.get("command"))
        ]
        if not uninstall and len(ours) == 1 and ours[0][1].get("command") == command:
            continue
        for group, entry in ours:
            group["hooks"].remove(entry)
        groups = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        if not uninstall:
            group = {"matcher": "*"} if with_matcher else {}
            group["hooks"] = [{"type": "command", "command": command}]
            groups.append(group)
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if not hooks:
        settings.pop("hooks")
    return json.dumps(settings, sort_keys=True) != before


def find_convmem_hooks(settings_path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """convmem's hook commands in a settings file, by event (empty: none or unreadable)."""
    try:
        data = json.loads(Path(settings_path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    hooks = data.get("hooks") if isinstance(data, dict) else None
    found: dict[str, list[str]] = {}
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                command = entry.get("command") if isinstance(entry, dict) else None
                if is_convmem_hook(command):
                    found.setdefault(event, []).append(str(command))
    return found


def install_hooks(
    settings_path: str | os.PathLike[str], command: str, *, uninstall: bool = False
) -> bool:
    """Update a Claude Code settings file in place; True if the file changed."""
    path = Path(settings_path)
    settings: Any = {}
    if path.exists():
        try:
            text = path.read_text("utf-8")
            settings = json.loads(text) if text.strip() else {}
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ConvmemError(f"cannot read {path} as JSON ({exc}); fix or move it first") from exc
        if not isinstance(settings, dict):
            raise ConvmemError(f"{path} does not hold a JSON object; fix or move it first")
    elif uninstall:
        return False
    if not merge_hooks(settings, command, uninstall=uninstall):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".convmem-tmp")
    tmp.write_text(json.dumps(settings, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, path)
    return True


_COMMAND_SIGNATURE = "description: convmem memory for this session"


def command_markdown(executable: str = "convmem") -> str:
    """The ``/convmem`` slash command (from the plugin), calling ``executable``."""
    from importlib.resources import files

    text = (
        files("convmem.adapters").joinpath("claude_plugin/commands/convmem.md").read_text("utf-8")
    )
    if executable != "convmem":
        text = text.replace("!`convmem ", f"!`{executable} ").replace(
            "Bash(convmem ", f"Bash({executable} "
        )
    return text


def install_command(path: str | os.PathLike[str], text: str, *, uninstall: bool = False) -> bool:
    """Write (or remove) the slash command file; a file someone else wrote is left alone."""
    target = Path(path)
    current = target.read_text("utf-8") if target.is_file() else None
    ours = current is not None and _COMMAND_SIGNATURE in current
    if uninstall:
        if ours:
            target.unlink()
        return ours
    if current == text or (current is not None and not ours):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, "utf-8")
    return True
