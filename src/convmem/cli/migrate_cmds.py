"""``convmem migrate``: copy a store between SQLite and PostgreSQL, verified."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from convmem.cli.output import echo_json, echo_table


@click.command()
@click.option(
    "--from", "source", required=True, help="Store to copy: a SQLite file or postgresql:// URL."
)
@click.option(
    "--to", "target", required=True, help="Empty store to fill: a SQLite path or postgresql:// URL."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def migrate(obj: Any, source: str, target: str, as_json: bool) -> None:
    """Copy every table from one store into an empty one, then verify the copy.

    Either side may be a SQLite file or a postgresql:// URL, so this moves a
    store onto a shared PostgreSQL server and back. The copy is checked by
    comparing the export of every session, and every skill and rule row, on
    both sides. Exit status is 1 when anything differs.
    """
    from convmem.core.store_url import backend_of, sqlite_path
    from convmem.memory.migrate import copy_store
    from convmem.runtime import open_store

    if backend_of(source) == "sqlite" and not Path(sqlite_path(source)).is_file():
        raise click.ClickException(f"no SQLite store at {source}; give an existing file or a URL")
    # copying a large table is one long statement: no statement timeout here
    settings = obj.settings.with_values(postgresql__statement_timeout_seconds=0.0)
    src = open_store(settings.with_values(store=source))
    try:
        dst = open_store(settings.with_values(store=target))
        try:
            report = copy_store(src, dst)
        finally:
            dst.close()
    finally:
        src.close()
    if as_json:
        echo_json(report.as_dict())
    else:
        echo_table(["table", "rows copied"], list(report.copied.items()))
        click.echo(f"verified {report.sessions} sessions: " + ("identical" if report.ok else ""))
        for problem in report.problems:
            click.echo(f"mismatch: {problem}", err=True)
    if not report.ok:
        sys.exit(1)


def register(group: click.Group) -> None:
    group.add_command(migrate)
