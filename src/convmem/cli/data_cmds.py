"""Commands that move data in and out: ingest, status, export, purge, config."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click

from convmem.cli.output import echo_json, echo_table, not_blank
from convmem.diagnostics import validation_line


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option(
    "--format",
    "fmt",
    default="auto",
    type=click.Choice(["auto", "events", "claude-code", "dsh", "openai"]),
    help="Input format; auto detects it from the file.",
)
@click.option("--session", callback=not_blank, help="Session id for lines that do not carry one.")
@click.option("--project", callback=not_blank, help="File the sessions read under this project.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def ingest(
    obj: Any,
    files: tuple[str, ...],
    fmt: str,
    session: str | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Read event files into the store (re-reading a file changes nothing).

    A file named - is standard input. Bad lines are reported with file and line
    number and skipped, and so is a file that cannot be read; the rest goes in. Exit
    status is 1 when anything was skipped or ignored, 0 otherwise.
    """
    from convmem.errors import ConvmemError, StoreError
    from convmem.ingest import IngestReport, LineProblem, ingest_file

    runtime = obj.runtime
    report = IngestReport()
    sink = runtime.on_events if project is None else runtime.project_sink(project)
    for name in files:
        path = Path(name)
        size = path.stat().st_size if path.is_file() else 0
        shown = sys.stderr.isatty() and size > 5_000_000 and not as_json
        bar = click.progressbar(length=size, label=path.name, file=sys.stderr) if shown else None
        try:
            with bar if bar is not None else nullcontext():
                progress = bar.update if bar is not None else None
                ingest_file(path, sink, fmt=fmt, session=session, progress=progress, report=report)
        except StoreError:
            raise  # the store, not the file: the next file would fail the same way
        except ConvmemError as exc:
            if len(files) == 1:
                raise  # the one file named: one sentence says it all
            # one file that cannot be read costs that file, not the others
            report.problems.append(LineProblem(name, 0, str(exc)))
    if fmt != "auto" and report.lines and not report.events and report.ignored:
        report.problems.append(
            LineProblem(
                files[0] if len(files) == 1 else "input",
                0,
                f"no line holds an event in the {fmt} format; is it another one?"
                " (--format auto detects it)",
            )
        )
    if as_json:
        echo_json(report.as_dict())
    else:
        for problem in report.problems[:50]:
            click.echo(f"skipped {problem}", err=True)
        if len(report.problems) > 50:
            click.echo(f"... and {len(report.problems) - 50} more bad lines", err=True)
        for repeat in report.conflicts[:10]:
            click.echo(f"ignored {repeat}", err=True)
        cut = report.cut()
        if cut:
            click.echo(f"note: {cut}", err=True)
        for sid in sorted(report.sessions) if project is not None else ():
            filed = runtime.store.session_project(sid)
            if filed != project:
                # a session keeps the project it was first filed under
                click.echo(
                    f"note: session {sid} was already filed under project {filed!r} and stays"
                    " there",
                    err=True,
                )
        click.echo(report.summary())
    if report.problems or report.conflicts:
        sys.exit(1)


@click.command()
@click.option("--session", help="Only this session.")
@click.option("--check", is_flag=True, help="Also run SQLite's integrity check (never repairs).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def status(obj: Any, session: str | None, check: bool, as_json: bool) -> None:
    """Show what the store holds and how memory is configured."""
    from convmem.diagnostics import status as build_status
    from convmem.errors import NotFoundError

    try:
        obj.reader  # noqa: B018 - a missing store is one sentence, not a new folder
    except NotFoundError as exc:
        from pathlib import Path

        from convmem.doctor import quiet_hosts

        # a host set up to use convmem that never reached it is why there is no store yet
        warnings = quiet_hosts(obj.settings, Path.cwd())
        raise NotFoundError("; ".join([str(exc), *(f"warning: {w}" for w in warnings)])) from None
    if session is not None and not obj.reader.store.session_exists(session):
        from convmem.errors import NotFoundError

        raise NotFoundError(f"no session {session!r}; `convmem status` lists the sessions")
    data = build_status(obj.reader.store, obj.settings, session, check)
    for warning in data.get("host_warnings", ()):
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        echo_json(data)
        if "error" in data or not data.get("integrity", {"ok": True})["ok"]:
            sys.exit(1)
        return
    if "error" in data:  # too damaged to count; the integrity check says what is wrong
        click.echo(f"store: {data['store']['backend']} {data['store']['location']}")
        click.echo(f"error: {data['error']}")
        _echo_integrity(data["integrity"])
        sys.exit(1)
    st = data["store"]
    click.echo(
        f"store: {st['backend']} {st['location']} (schema v{st['schema_version']}"
        + (
            f", SQLite {st['sqlite_version']}, FTS5 trigram {'yes' if st['fts5_trigram'] else 'no'}"
            if "sqlite_version" in st
            else ""
        )
        + ")"
    )
    echo_table(["table", "rows"], sorted(data["counts"].items()))
    if data["projects"]:
        echo_table(
            ["project", "sessions"],
            [[p["project"], ", ".join(p["sessions"])] for p in data["projects"]],
        )
    click.echo(f"pending extractions: {data['pending_extractions']}")
    click.echo(f"budget: {data['budget']['tokens']} tokens (estimated)")
    if data["sessions"]:
        echo_table(
            ["session", "events", "last event", "last extract", "last assembly"],
            [
                [
                    s["session_id"],
                    s["events"],
                    *(
                        "-" if seq < 0 else seq  # -1: nothing yet
                        for seq in (
                            s["checkpoints"]["last_event_seq"],
                            s["checkpoints"]["last_extract_seq"],
                            s["checkpoints"]["last_assembly_seq"],
                        )
                    ),
                ]
                for s in data["sessions"]
            ],
        )
    _echo_not_extracted(data["sessions"])
    la = data["latest_assembly"]
    if la:
        click.echo(
            f"latest assembly: #{la['id']} session {la['session_id']}, {la['used_tokens']}/"
            f"{la['budget']} tokens ({la['token_source']}), "
            f"{'injected' if la['injected'] else 'not injected'}"
        )
    if data["latest_validation"]:
        click.echo(validation_line(data["latest_validation"]))
    comp = data["compatibility"]
    click.echo(f"compaction policy: {comp['policy']} (detected: {comp['detected']})")
    for note in comp["notes"]:
        click.echo(f"  {note}")
    if "integrity" in data:
        _echo_integrity(data["integrity"])
        if not data["integrity"]["ok"]:
            sys.exit(1)


def _echo_not_extracted(sessions: list[dict[str, Any]]) -> None:
    """Say how many messages wait for extraction (an interrupted ingest leaves some)."""
    behind = [s for s in sessions if s["not_extracted"]]
    if not behind:
        return
    total = sum(s["not_extracted"] for s in behind)
    names = ", ".join(s["session_id"] for s in behind[:5]) + (", ..." if len(behind) > 5 else "")
    click.echo(
        f"not yet extracted: {total} message{'s' if total != 1 else ''} in {len(behind)}"
        f" session{'s' if len(behind) != 1 else ''} ({names}); run the same `convmem ingest`"
        " again to catch up (nothing is stored twice); a host's session catches up with its"
        " next events"
    )


def _echo_integrity(integ: dict[str, Any]) -> None:
    click.echo("integrity: ok" if integ["ok"] else "integrity: PROBLEMS FOUND")
    for problem in integ["problems"]:
        click.echo(f"  {problem}")


@click.command()
@click.option("--session", help="Session to export.")
@click.option("--project", help="Project to export: every session of it.")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), help="Write here instead of stdout."
)
@click.pass_obj
def export(obj: Any, session: str | None, project: str | None, output: str | None) -> None:
    """Write every row of one session, or of every session of a project, as JSON."""
    from convmem.cli.memory_cmds import _need_project, _need_session

    store = obj.reader.store
    if (session is None) == (project is None):
        raise click.UsageError("name either a --session or a --project")
    data: dict[str, Any]
    if session is not None:
        _need_session(store, session)
        data = {
            "session_id": session,
            "schema": store.schema_version(),
            "tables": store.export_session(session),
        }
    else:
        sessions = _need_project(store, project or "")
        data = {
            "project": project,
            "schema": store.schema_version(),
            "sessions": {sid: store.export_session(sid) for sid in sorted(sessions)},
        }
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)
    if output:
        from convmem.core.paths import write_private

        write_private(output, text + "\n")
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text)


@click.command()
@click.option("--session", help="Session to delete.")
@click.option("--project", help="Project to delete: every session of it.")
@click.option("--yes", is_flag=True, help="Confirm: purging cannot be undone.")
@click.pass_obj
def purge(obj: Any, session: str | None, project: str | None, yes: bool) -> None:
    """Delete every row of one session, or of a project's sessions (others are untouched)."""
    from convmem.cli.memory_cmds import _need_project, _need_session

    if (session is None) == (project is None):
        raise click.UsageError("name either a --session or a --project")
    what = f"session {session}" if session is not None else f"project {project}"
    store = obj.reader.store  # what does not exist is said before --yes is asked for
    if session is not None:
        _need_session(store, session)
    else:
        sessions = _need_project(store, project or "")
    if not yes:
        raise click.UsageError(f"purge deletes the {what} for good; add --yes to confirm")
    if session is not None:
        removed = store.purge_session(session)
    else:
        removed = store.purge_sessions(sessions)
        what += f" ({len(sessions)} sessions)"
    click.echo(f"purged {what}: {sum(removed.values())} rows")


@click.command("config")
@click.option(
    "--list", "list_all", is_flag=True, help="List every setting with default and bounds."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def config_cmd(obj: Any, list_all: bool, as_json: bool) -> None:
    """Show the resolved settings (or, with --list, the settings table)."""
    from convmem.config import settings_table

    if list_all:
        rows = settings_table()
        if as_json:
            echo_json(rows)
        else:
            echo_table(["name", "default", "bounds", "help"], [list(r.values()) for r in rows])
        return
    from convmem.core.store_url import mask_url

    settings = obj.settings
    data = {k: list(v) if isinstance(v, tuple) else v for k, v in settings.values.items()}
    data["store"] = mask_url(str(data["store"]))
    if as_json:
        echo_json({"source": settings.source, "values": data})
    else:
        click.echo(f"# from {settings.source}")
        for key, value in sorted(data.items()):
            click.echo(f"{key} = {json.dumps(value, ensure_ascii=False)}")


@click.command()
@click.pass_obj
def demo(obj: Any) -> None:
    """Replay the shipped conversation like a host, show the block after its compaction."""
    from convmem.cli.memory_cmds import print_explain
    from convmem.demo import replay

    runtime = obj.runtime
    click.echo(f"convmem demo: replaying a shipped conversation into {obj.settings.db_path}")
    result = replay(runtime)
    if result.replaced:
        click.echo(f"(the session {result.session_id!r} of an earlier demo was replaced)")
    store = runtime.store
    items = store.items(result.session_id, ("active", "superseded", "disputed"))
    superseded = sum(1 for i in items if i.status == "superseded")
    click.echo(
        f"{result.events} events ({result.inserted} new), {len(items)} memory items "
        f"({superseded} superseded), compaction at seq "
        f"{min(result.compaction_seqs, default=0)}-{max(result.compaction_seqs, default=0)}"
    )
    if not result.block:
        click.echo("no block was injected after the compaction")
        return
    click.echo(f"\nAfter the compaction the user asks (seq {result.question_seq}):")
    click.echo(f"  {result.question}")
    click.echo("The host injects this block before that step:\n")
    click.echo("-" * 78)
    click.echo(result.block)
    click.echo("-" * 78 + "\n")
    click.get_current_context().invoke(status, session=result.session_id)
    log = store.assembly_log(result.log_id) if result.log_id else None
    if log is not None:
        click.echo("")
        print_explain(log)


def register(group: click.Group) -> None:
    for command in (ingest, status, export, purge, config_cmd, demo):
        group.add_command(command)
