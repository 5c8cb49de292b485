"""``convmem install claude-code`` and ``convmem hook claude-code``.

:func:`register` adds them to the ``install`` and ``hook`` groups. The hook
normally runs through the fast path in :mod:`convmem._entry` (no click); the
click command here gives it ``--help`` and serves ``convmem --home X hook ...``.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

#: Installed beside ``convmem``: ``convmem hook`` without the launcher's imports.
HOOK_SCRIPT = "convmem-hook"


def default_hook_command(extra: list[str] | None = None) -> str:
    """``convmem-hook claude-code``: the command by name, so a moved install still works."""
    return shlex.join([HOOK_SCRIPT, "claude-code", *(extra or [])])


def cli_executable(command: str) -> str:
    """The ``convmem`` a hook command belongs to (the /convmem slash command calls it)."""
    words = shlex.split(command)
    if words and Path(words[0]).name == HOOK_SCRIPT:
        return shlex.quote(words[0][: -len(HOOK_SCRIPT)] + "convmem")
    return command.split(" hook claude-code", 1)[0]


def _explicit(ctx: click.Context, name: str) -> Any:
    root = ctx.find_root()
    if root.get_parameter_source(name) == ParameterSource.COMMANDLINE:
        return root.params.get(name)
    return None


@click.command("claude-code")
@click.option(
    "--project",
    type=click.Path(file_okay=False, exists=True),
    help="Project folder (default: the current folder): writes <DIR>/.claude/settings.local.json.",
)
@click.option(
    "--shared",
    is_flag=True,
    help="Write the project's committed .claude/settings.json instead (the whole team).",
)
@click.option("--user", is_flag=True, help="Write ~/.claude/settings.json instead (all projects).")
@click.option("--uninstall", is_flag=True, help="Remove convmem's hook entries only.")
@click.option(
    "--command",
    "command",
    help="Hook command to write (default: 'convmem-hook claude-code', found on PATH).",
)
@click.pass_context
def install_claude_code(
    ctx: click.Context,
    project: str | None,
    shared: bool,
    user: bool,
    uninstall: bool,
    command: str | None,
) -> None:
    """Register convmem's hooks in Claude Code's settings (idempotent).

    Adds one command hook for each of SessionStart, UserPromptSubmit, PreToolUse,
    PostToolUse, PreCompact, Stop and SessionEnd to the project's own, uncommitted
    .claude/settings.local.json (--shared: the committed settings.json; --user: every
    project). The hook calls `convmem-hook` (installed beside `convmem`, the same
    as `convmem hook`, started faster) by name, so install convmem where Claude Code
    finds it on PATH (`uv tool install` or `pipx install`). Other hooks and settings
    are kept; running it twice changes nothing; --uninstall removes only convmem's
    entries. It also adds the /convmem slash command (status, explain) to the same
    .claude folder. A --home or --config given before `install` is passed on to the
    hook.
    """
    from convmem.adapters.claude_settings import (
        command_markdown,
        find_convmem_hooks,
        install_command,
        install_hooks,
    )

    if user and (project or shared):
        raise click.UsageError("use either --user or --project/--shared, not both")
    base = Path.home() if user else Path(project or ".").resolve()
    name = "settings.json" if (user or shared) else "settings.local.json"
    path = base / ".claude" / name
    if command is None:
        extra: list[str] = []
        for option, flag in (("home", "--home"), ("config_file", "--config")):
            value = _explicit(ctx, option)
            if value:
                extra += [flag, str(Path(value).expanduser().resolve())]
        command = default_hook_command(extra)
    try:
        executable = cli_executable(command)
    except ValueError as exc:  # unbalanced quotes
        raise click.BadParameter(
            f"{command!r} is not a shell command: {exc}", param_hint="--command"
        ) from None
    changed = install_hooks(path, command, uninstall=uninstall)
    slash = base / ".claude" / "commands" / "convmem.md"
    slash_changed = install_command(slash, command_markdown(executable), uninstall=uninstall)
    if uninstall:
        click.echo(
            f"removed convmem's hooks from {path}" if changed else f"no convmem hooks in {path}"
        )
        if slash_changed:
            click.echo(f"removed the /convmem command {slash}")
        return
    if changed or slash_changed:
        click.echo(f"installed convmem's hooks in {path}\n  command: {command}")
        click.echo(f"  slash command /convmem: {slash}")
    else:
        click.echo(f"already installed in {path}; nothing changed")
    if not user:
        other = base / ".claude" / ("settings.local.json" if shared else "settings.json")
        if find_convmem_hooks(other):
            fix = "--uninstall" if shared else "--shared --uninstall"
            click.echo(
                f"warning: {other} has convmem hooks too, so each event would run twice; "
                f"remove them with `convmem install claude-code --project {base} {fix}`",
                err=True,
            )
    word = shlex.split(command)[0] if command.strip() else ""  # checked above
    if word and shutil.which(word) is None:
        click.echo(
            f"warning: {word!r} is not on PATH here, so Claude Code cannot run the hooks; "
            "install convmem as a tool (`uv tool install convmem` or `pipx install convmem`, "
            "from the wheel or the source folder) or pass --command",
            err=True,
        )


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
