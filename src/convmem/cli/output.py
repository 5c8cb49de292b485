"""Small printing helpers shared by the commands."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click


def not_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An option's value typed empty or all spaces is refused: left as it is it would
    quietly mean something else (the default folder, no project)."""
    source = ctx.get_parameter_source(param.name or "")
    typed = source is not click.core.ParameterSource.ENVIRONMENT
    if value is not None and not value.strip() and typed:
        raise click.BadParameter("is empty; give a value, or leave the option out")
    return value


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str))


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Left-aligned columns, widths from the content."""
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            click.echo("  ".join("-" * w for w in widths))
