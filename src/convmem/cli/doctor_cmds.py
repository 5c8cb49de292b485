"""``convmem doctor``: check the connection to the hosts (see :mod:`convmem.doctor`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from convmem.cli.output import echo_json


@click.command()
@click.option(
    "--project",
    type=click.Path(file_okay=False),
    help="Claude Code project folder to check (default: the current folder).",
)
@click.option(
    "--dsh-home",
    envvar="DSH_HOME",
    type=click.Path(file_okay=False),
    help="DSH home whose profiles to check (also DSH_HOME).",
)
@click.option(
    "--live", is_flag=True, help="Also send one synthetic event through each installed command."
)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.pass_obj
def doctor(obj: Any, project: str | None, dsh_home: str | None, live: bool, as_json: bool) -> None:
    """Check that the hosts really reach convmem; one line per finding, with its fix.

    Looks at the `convmem` command on PATH, convmem's hooks in Claude Code's user and
    project settings (all seven, each command resolving), DSH profiles that load the
    plugin, and when each host event last reached convmem. With --live it fires a
    synthetic event through each installed command and checks the store got it (the
    probe session is deleted afterwards). Exits 1 when something is broken.
    """
    from convmem.doctor import ERROR, diagnose

    findings = diagnose(
        obj.settings,
        project=Path(project or ".").resolve(),
        dsh_home=Path(dsh_home).resolve() if dsh_home else None,
        live=live,
    )
    if as_json:
        echo_json([f.as_dict() for f in findings])
    else:
        for finding in findings:
            click.echo(finding.line())
    if any(f.level == ERROR for f in findings):
        sys.exit(1)


def register(main: click.Group) -> None:
    main.add_command(doctor)
