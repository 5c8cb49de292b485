"""Commands for skills and their rules: ``skills ingest|list``, ``rules show|override``."""

from __future__ import annotations

import sys
from typing import Any

import click

from convmem.cli.output import echo_json, echo_table


def _manager(obj: Any, writes: bool = False) -> Any:
    """The skill manager over the store; a command that only reads never creates one."""
    from convmem.skills import SkillManager

    return SkillManager((obj.runtime if writes else obj.reader).store, obj.settings)


@click.group()
def skills() -> None:
    """Ingest SKILL.md files and list the skills convmem knows."""


@skills.command("ingest")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def skills_ingest(obj: Any, paths: tuple[str, ...], as_json: bool) -> None:
    """Read SKILL.md files or folders (default: the skills.paths setting) into versioned rules.

    Re-reading an unchanged file changes nothing; an edited file becomes a new
    version. A bad file is reported and skipped while the others still go in.
    Exit status is 1 when any file had a problem, 0 otherwise.
    """
    targets = list(paths) or list(obj.settings["skills.paths"])
    if not targets:
        raise click.UsageError("give a PATH, or set skills.paths in the settings file")
    report = _manager(obj, writes=True).ingest_paths(targets)
    if as_json:
        echo_json(report.as_dict())
    else:
        for problem in report.problems:
            click.echo(f"problem: {problem}", err=True)
        for f in report.files:
            click.echo(f"{f.status:<9} {f.name} v{f.version} ({f.rules} rules)  {f.path}")
        click.echo(report.summary())
    if report.problems:
        sys.exit(1)


@skills.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def skills_list(obj: Any, as_json: bool) -> None:
    """List the current skills with version, flags and active rule count."""
    rows = _manager(obj).list_skills()
    if as_json:
        echo_json(rows)
        return
    echo_table(
        ["name", "version", "enabled", "used", "rules", "path", "description"],
        [
            [
                r["name"],
                r["version"],
                "yes" if r["enabled"] else "no",
                "yes" if r["used"] else "no",
                r["active_rules"],
                r["path"],
                r["description"][:60],
            ]
            for r in rows
        ],
    )


@click.group()
def rules() -> None:
    """Show the rules parsed from skills and adjust them with overrides."""


@rules.command("show")
@click.option("--skill", help="Only this skill's rules.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def rules_show(obj: Any, skill: str | None, as_json: bool) -> None:
    """Show every rule as it applies now (overrides applied), inactive ones included."""
    views = _manager(obj).rules(skill)
    if as_json:
        echo_json([v.as_dict() for v in views])
        return
    echo_table(
        ["id", "category", "active", "scope", "source", "text"],
        [
            [
                v.id,
                v.category + ("*" if v.overridden else ""),
                "yes" if v.active else "no",
                ",".join(v.scope),
                f"{v.source_path}:{v.source_line}",
                v.text[:70],
            ]
            for v in views
        ],
    )


@rules.command("override")
@click.argument("rule_id")
@click.option("--category", help="New category (constraint, prohibition, workflow, ...).")
@click.option("--active/--inactive", default=None, help="Switch the rule on or off.")
@click.option("--scope", multiple=True, help="Where it applies (body, quote, path, explanation).")
@click.option("--clear", is_flag=True, help="Drop the override: use the rule as parsed.")
@click.option("--json", "as_json", is_flag=True, help="Print the effective rule as JSON.")
@click.pass_obj
def rules_override(
    obj: Any,
    rule_id: str,
    category: str | None,
    active: bool | None,
    scope: tuple[str, ...],
    clear: bool,
    as_json: bool,
) -> None:
    """Change a rule's category, active flag or scope without editing its SKILL.md."""
    manager = _manager(obj, writes=True)
    if clear:
        if category is not None or active is not None or scope:
            raise click.UsageError("--clear cannot be combined with other changes")
        view = manager.clear_override(rule_id)
    else:
        view = manager.override(
            rule_id, category=category, active=active, scope=list(scope) if scope else None
        )
    if as_json:
        echo_json(view.as_dict())
        return
    state = "active" if view.active else "inactive"
    click.echo(f"{view.id} [{view.category}, {state}] {view.render()}  ({view.label})")


def register(group: click.Group) -> None:
    for command in (skills, rules):
        group.add_command(command)
