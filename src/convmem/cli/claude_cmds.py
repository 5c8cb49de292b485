"""``convmem install claude-code`` and ``convmem hook claude-code``.

:func:`register` adds them to the ``install`` and ``hook`` groups. The hook
normally runs through the fast path in :mod:`convmem._entry` (no click); the
click command here gives it ``--help`` and serves ``convmem --home X hook ...``.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource


def default_hook_command(extra: list[str] | None = None) -> str:
    """This convmem executable by absolute path, so the hook works without PATH."""
    argv0 = Path(sys.argv[0])
    if argv0.name in ("convmem", "convmem.exe") and argv0.is_file():
        base = [str(argv0.resolve())]
    else:
        base = [sys.executable, "-m", "convmem"]
    return shlex.join([*base, "hook", "claude-code", *(extra or [])])


def _explicit(ctx: click.Context, name: str) -> Any:
    root = ctx.find_root()
    if root.get_parameter_source(name) == ParameterSource.COMMANDLINE:
        return root.params.get(name)
    return None


@click.command("claude-code")
@click.option(
    "--project",
    type=click.Path(file_okay=False),
    help="Project folder: writes <DIR>/.claude/settings.json (default: the current folder).",
)
@click.option("--user", is_flag=True, help="Write ~/.claude/settings.json instead (all projects).")
@click.option("--uninstall", is_flag=True, help="Remove convmem's hook entries only.")
@click.option(
    "--command",
    "command",
    help="Hook command to write (default: this convmem by absolute path + 'hook claude-code').",
)
@click.pass_context
def install_claude_code(
    ctx: click.Context, project: str | None, user: bool, uninstall: bool, command: str | None
) -> None:
    """Register convmem's hooks in Claude Code's settings (idempotent).

    Adds one command hook for each of SessionStart, UserPromptSubmit, PreToolUse,
    PostToolUse, PreCompact, Stop and SessionEnd. Other hooks and settings are
    kept; running it twice changes nothing; --uninstall removes only convmem's
    entries. It also adds the /convmem slash command (status, explain) to the same
    .claude folder. A --home or --config given before `install` is passed on to
    the hook.
    """
    from convmem.adapters.claude_code import command_markdown, install_command, install_hooks

    if project and user:
        raise click.UsageError("use either --project or --user, not both")
    base = Path.home() if user else Path(project or ".").resolve()
    path = base / ".claude" / "settings.json"
    if command is None:
        extra: list[str] = []
        for name, flag in (("home", "--home"), ("config_file", "--config")):
            value = _explicit(ctx, name)
            if value:
                extra += [flag, str(Path(value).expanduser().resolve())]
        command = default_hook_command(extra)
    changed = install_hooks(path, command, uninstall=uninstall)
    slash = base / ".claude" / "commands" / "convmem.md"
    executable = command.split(" hook claude-code", 1)[0]
    slash_changed = install_command(slash, command_markdown(executable), uninstall=uninstall)
    if uninstall:
        click.echo(
            f"removed convmem's hooks from {path}" if changed else f"no convmem hooks in {path}"
        )
        if slash_changed:
            click.echo(f"removed the /convmem command {slash}")
    elif changed or slash_changed:
        click.echo(f"installed convmem's hooks in {path}\n  command: {command}")
        click.echo(f"  slash command /convmem: {slash}")
    else:
        click.echo(f"already installed in {path}; nothing changed")


@click.command("claude-code")
@click.option("--home", help="Data folder (overrides CONVMEM_HOME).")
@click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), help="Settings TOML file."
)
@click.pass_obj
def hook_claude_code(obj: Any, home: str | None, config_file: str | None) -> None:
    """Handle one Claude Code hook event: its JSON payload on stdin.

    Claude Code runs this for the events `convmem install claude-code` registers.
    It prints the memory block as additionalContext (UserPromptSubmit, and
    SessionStart after a compaction) or a PreToolUse deny, and nothing else. It
    never fails the host: errors go to convmem.log in the data dir, exit status 0.
    """
    from convmem.adapters.hook_entry import run_claude_code

    sys.exit(run_claude_code(home=home or obj.home, config=config_file or obj.config_file))


def register(main: click.Group) -> None:
    for group, command in (("install", install_claude_code), ("hook", hook_claude_code)):
        target = main.commands[group]
        assert isinstance(target, click.Group)
        target.add_command(command)
