"""The ``convmem`` command line: thin commands over the library.

Each command parses its options, makes one library call and prints. Library
errors become one-line messages here and nowhere else; anything unexpected is
written to the error log and reported in one sentence, never as a traceback.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

import click

from convmem.cli.output import not_blank
from convmem.config import Settings, load_settings
from convmem.errors import ConvmemError


class AppContext:
    """Settings and a lazily opened runtime, shared by the commands of one call."""

    def __init__(self, home: str | None, config: str | None, store: str | None) -> None:
        self.home, self.config_file, self.store_url = home, config, store
        self._settings: Settings | None = None
        self._runtime: Any = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            overrides = {"store": self.store_url} if self.store_url else None
            self._settings = load_settings(self.config_file, self.home, overrides)
            for warning in self._settings.warnings:
                click.echo(f"warning: {warning}", err=True)
        return self._settings

    @property
    def runtime(self) -> Any:
        if self._runtime is None:
            from convmem.runtime import MemoryRuntime

            self._runtime = MemoryRuntime.open(self.settings)
        return self._runtime

    @property
    def reader(self) -> Any:
        """The runtime for a command that reads, or changes only what the store already
        holds (retract, promote…): a SQLite store that does not exist is reported (one
        sentence, exit 1) rather than created with its folder."""
        if self._runtime is None:
            from convmem.core.store_url import backend_of, sqlite_path
            from convmem.errors import NotFoundError

            url = str(self.settings["store"] or "")
            if backend_of(url) == "sqlite":
                # absolute, so that a relative sqlite:/// URL shows where it was looked for
                path = Path(sqlite_path(url) or self.settings.db_path).absolute()
                if path.parent.exists() and not path.parent.is_dir():
                    raise ConvmemError(
                        f"the data folder {path.parent} is not a folder;"
                        " check --home / CONVMEM_HOME"
                    )
                if not path.is_file():
                    raise NotFoundError(
                        f"no convmem store at {path} yet; capture something first (convmem"
                        " ingest, or a host), or check --home / CONVMEM_HOME"
                    )
        return self.runtime

    def close(self) -> None:
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None


def _log_internal_error(ctx: AppContext | None) -> str:
    try:
        folder = ctx.settings.data_dir if ctx is not None else Path.home()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        log = folder / "convmem.log"
        from convmem.core.paths import append_private

        append_private(log, traceback.format_exc() + "\n")
        return str(log)
    except Exception:
        return "(no log could be written)"


#: The main group's options, which a user may also write after the command.
GLOBAL_OPTIONS = ("--home", "--config", "--store")


def hoist_global_options(group: click.Group, args: list[str]) -> list[str]:
    """``args`` with the global options written after the command moved before it
    (``convmem status --home X`` as ``convmem --home X status``), unless that command
    has an option of the same name. Nothing after ``--`` moves, nor anything after the
    first word of a command's free text."""
    command: click.Command = group
    at = 0
    while at < len(args) and isinstance(command, click.Group):
        word = args[at]
        if word == "--":
            return args
        if word.startswith("-"):
            at += 2 if word in GLOBAL_OPTIONS else 1
            continue
        sub = command.commands.get(word)
        if sub is None:
            return args
        command, at = sub, at + 1
    # a command of free text takes them only before its words ("search --home X query";
    # in "search why does --store fail" the words are the text)
    free_text = getattr(command, "free_text", False)
    own = {opt for param in command.params for opt in param.opts}
    front: list[str] = []
    rest: list[str] = []
    i = at
    while i < len(args):
        word = args[i]
        name = word.split("=", 1)[0]
        if word == "--" or (free_text and not word.startswith("-")):
            rest += args[i:]
            break
        if name in GLOBAL_OPTIONS and name not in own:
            if "=" not in word and i + 1 == len(args):
                raise click.UsageError(f"Option '{name}' requires an argument.")
            taken = 1 if "=" in word else 2
            front += args[i : i + taken]
            i += taken
            continue
        rest.append(word)
        i += 1
    return front + args[:at] + rest if front else args


class ConvmemGroup(click.Group):
    """Turns library errors into one-sentence messages with a non-zero exit."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None:
            args = hoist_global_options(self, args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConvmemError as exc:
            raise click.ClickException(str(exc)) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            said = "interrupted"
            if ctx.invoked_subcommand in ("ingest", "demo"):
                # re-reading stores nothing twice and extracts what the stop left behind
                said += "; committed events are kept; run the same command again to finish"
                said += " (nothing is stored twice)"
            click.echo(said, err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.exit(0)
        except Exception as exc:
            where = _log_internal_error(ctx.obj if isinstance(ctx.obj, AppContext) else None)
            raise click.ClickException(
                f"internal error ({type(exc).__name__}: {exc}); details were written to {where}"
            ) from None
        finally:
            if isinstance(ctx.obj, AppContext):
                ctx.obj.close()


@click.group(cls=ConvmemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home", envvar="CONVMEM_HOME", callback=not_blank, help="Data folder (also CONVMEM_HOME)."
)
@click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), help="Settings TOML file."
)
@click.option(
    "--store", envvar="CONVMEM_STORE", callback=not_blank, help="Storage URL (also CONVMEM_STORE)."
)
@click.version_option(package_name="convmem")
@click.pass_context
def main(ctx: click.Context, home: str | None, config_file: str | None, store: str | None) -> None:
    """Deterministic, auditable memory for long LLM agent conversations.

    --home, --config and --store may also be written after the command.
    """
    ctx.obj = AppContext(home, config_file, store)


@main.group()
def install() -> None:
    """Connect convmem to a host (writes the host's settings; --uninstall reverts)."""


@main.group()
def hook() -> None:
    """Entry points that hosts call on their events (one JSON payload on stdin)."""


#: Modules that add commands, each through a ``register(main)`` function.
COMMAND_MODULES = (
    "data_cmds",
    "memory_cmds",
    "skills_cmds",
    "claude_cmds",
    "dsh_cmds",
    "mcp_cmds",
    "migrate_cmds",
    "ui_cmds",
    "doctor_cmds",
)


def _register() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"convmem.cli.{name}").register(main)


_register()
