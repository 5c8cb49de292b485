"""Commands over derived memory: assemble, search, explain, inspect, lifecycle."""

from __future__ import annotations

from typing import Any

import click

from convmem.cli.output import echo_json, echo_table
from convmem.core.constants import STATUSES
from convmem.diagnostics import validation_line
from convmem.errors import NotFoundError


def _need_session(store: Any, session: str) -> None:
    if not store.session_exists(session):
        raise NotFoundError(f"no session {session!r}; `convmem status` lists the sessions")


def _need_project(store: Any, project: str) -> list[str]:
    """The project's sessions; a project nobody filed a session under is an error."""
    sessions: list[str] = store.project_sessions(project)
    if not sessions:
        raise NotFoundError(f"no project {project!r}; `convmem status` lists the projects")
    return sessions


#: The session id a block is assembled for when only ``--project`` is given.
NEW_SESSION = "(new session)"


@click.command()
@click.option("--session", help="Session to assemble for.")
@click.option(
    "--project", help="Project: without --session, the block a new session of it would get."
)
@click.option("--query", help="Task text; defaults to the latest real user message.")
@click.option(
    "--budget",
    type=click.IntRange(1, 1_000_000),
    help="Token budget for this block (raised to assembly.min_budget_tokens, 600 by default).",
)
@click.option(
    "--as-host",
    is_flag=True,
    help="Leave out what the host still shows (events since the last compaction).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result with its provenance.")
@click.pass_obj
def assemble(
    obj: Any,
    session: str | None,
    project: str | None,
    query: str | None,
    budget: int | None,
    as_host: bool,
    as_json: bool,
) -> None:
    """Print the memory block a host would inject now (or say there is none).

    By default nothing counts as visible, as for a fresh or compacted context. With
    --project alone, the block is the one a new session of the project would start
    with (nothing is logged).
    """
    if session is None and project is None:
        raise click.UsageError("name a --session, or a --project")
    runtime = obj.reader  # a block of a store that does not exist is an error, not a new store
    store = runtime.store
    if project is not None:
        _need_project(store, project or "")
    if session is not None:
        _need_session(store, session)
        if project is not None and store.session_project(session) != project:
            raise click.UsageError(f"session {session!r} is not a session of project {project!r}")
    result = runtime.assemble(
        session or NEW_SESSION,
        None if as_host else [],
        query=query,
        budget=budget,
        trigger="cli",
        log=session is not None,
        project=project,
    )
    if as_json:
        echo_json(result.as_dict())
        if result.errors:
            raise click.exceptions.Exit(1)
        return
    raised = _raised_budget(obj.settings, budget)
    if raised:
        click.echo(f"note: {raised}", err=True)
    if result.injected:
        click.echo(result.text)
    else:
        reasons = [r for r in result.reasons + result.errors if r != raised]
        click.echo(
            f"nothing would be injected: {'; '.join(reasons) or 'nothing to inject'}", err=True
        )
    if result.errors:
        raise click.exceptions.Exit(1)  # the block could not be built: not "nothing to say"


def _raised_budget(settings: Any, budget: int | None) -> str | None:
    """Why the block got more tokens than --budget asked for, if it did."""
    from convmem.delivery import effective_budget

    return effective_budget(settings, budget)[1]


class _TextCommand(click.Command):
    """A command whose argument is free text: a word that starts with "-" and is not
    one of the command's options (``-timeout``, ``--verbose flag``) is text, not an
    unknown option, so any text is safe to type without ``--`` in front."""

    #: The global options are not taken out of its text (see ``hoist_global_options``).
    free_text = True

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        names = {n for p in self.get_params(ctx) for n in (*p.opts, *p.secondary_opts)}
        takes_value = {
            n
            for p in self.get_params(ctx)
            if isinstance(p, click.Option) and not p.is_flag
            for n in p.opts
        }
        options: list[str] = []
        text: list[str] = []
        rest = iter(args)
        for arg in rest:
            if arg == "--":
                text += rest
            elif arg in takes_value:
                options += [arg, next(rest, "")]
            elif arg in names or arg.split("=", 1)[0] in takes_value:
                options.append(arg)
            else:
                text.append(arg)
        return super().parse_args(ctx, [*options, "--", *text])


@click.command(cls=_TextCommand)
@click.argument("words", nargs=-1, required=True)
@click.option("--session", help="Only this session (default: every session).")
@click.option("--project", help="Only this project's sessions.")
@click.option(
    "--limit",
    type=click.IntRange(1, 100),
    default=10,
    show_default=True,
    help="At most this many items, and this many events.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def search(
    obj: Any,
    words: tuple[str, ...],
    session: str | None,
    project: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Search memory items and raw user evidence (any text is safe to type, quoted or
    not, even text that starts with "-")."""
    query = " ".join(words)
    if session is not None:
        _need_session(obj.reader.store, session)
    if project is not None:
        _need_project(obj.reader.store, project)
    data = obj.reader.search(query, session, limit, project)
    items, evidence = data["items"], data["evidence"]
    if as_json:
        echo_json(data)
        return
    if not items and not evidence:
        click.echo("no matches")
        return
    from convmem.assembly import one_line

    if items:
        echo_table(
            ["score", "item", "kind", "status", "session", "content"],
            [
                [
                    f"{r['score']:.2f}",
                    r["id"],
                    r["kind"],
                    r["status"],
                    r["session_id"],
                    one_line(r["content"][:70]),
                ]
                for r in items
            ],
        )
    if evidence:
        if items:
            click.echo("")
        echo_table(
            ["score", "session", "seq", "text"],
            [
                [f"{r['score']:.2f}", r["session_id"], r["seq"], one_line(r["text"][:70])]
                for r in evidence
            ],
        )


@click.command()
@click.option("--session", help="Session (default: the latest assembly of any session).")
@click.option("--project", help="The latest assembly of any session of this project.")
@click.option("--json", "as_json", is_flag=True, help="Print the logged row as JSON.")
@click.pass_obj
def explain(obj: Any, session: str | None, project: str | None, as_json: bool) -> None:
    """Replay the latest assembly (sections, included ids, omissions and why) and show
    the latest validation run of its session."""
    store = obj.reader.store
    if project is not None and session is not None:
        raise click.UsageError("use either --session or --project, not both")
    if session is not None:
        _need_session(store, session)
    sessions = _need_project(store, project) if project is not None else None
    log = obj.reader.explain(session, sessions)
    if log is None:
        raise NotFoundError("no assembly has been logged yet; run `convmem assemble` or a host")
    if as_json:
        echo_json(log)
        return
    print_explain(log)


def print_explain(log: dict[str, Any]) -> None:
    """Human-readable replay of one assembly log row."""
    used, budget = int(log["used_tokens"]), int(log["budget"])
    width = 40
    filled = min(width, round(width * used / budget)) if budget else 0
    click.echo(f"assembly #{log['id']} session {log['session_id']} ({log['trigger']}, {log['at']})")
    click.echo(f"query: {log['query'][:100]!r}")
    click.echo(
        f"budget [{'#' * filled}{'.' * (width - filled)}] {used}/{budget} tokens "
        f"({log['token_source']}), {'injected' if log['injected'] else 'not injected'}"
    )
    if log["sections"]:
        echo_table(
            ["section", "lines", "tokens" if log["token_source"] == "exact" else "est. tokens"],
            [[s["name"], s["lines"], s["tokens"]] for s in log["sections"]],
        )
    if log["items"]:
        click.echo("included: " + ", ".join(log["items"]))
    for reason in log["reasons"] + log["errors"]:
        click.echo(f"note: {reason}")
    if log["omitted"]:
        click.echo("")
        echo_table(
            ["omitted", "section", "reason"],
            [[o["id"], o["section"], o["reason"]] for o in log["omitted"]],
        )
    if "latest_validation" in log:
        click.echo("")
        click.echo(validation_line(log["latest_validation"]))
        for message in (log["latest_validation"] or {}).get("messages", []):
            click.echo(f"  {message}")


@click.command()
@click.argument("item_id")
@click.option("--query", help="Score the item against this query (default: latest user text).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def inspect(obj: Any, item_id: str, query: str | None, as_json: bool) -> None:
    """Show an item, its lifecycle, its quoted sources and its score breakdown."""
    data = obj.reader.inspect(item_id, query)
    if data is None:
        raise NotFoundError(f"no memory item {item_id!r}; `convmem search` finds item ids")
    if as_json:
        echo_json(data)
        return
    it = data["item"]
    click.echo(f"{it['id']}  {it['kind']}  {it['status']}  ({it['evidence_type']})")
    where = f"project {data['project']}, " if data["project"] else ""
    click.echo(f"  {where}session {it['session_id']}")
    click.echo(f"  {it['content']}")
    if it["conditions"]:
        click.echo(f"  conditions: {', '.join(it['conditions'])}")
    for n in it["numbers"]:
        click.echo(
            f"  number: {n['raw']} (conditions: {', '.join(n.get('conditions', [])) or '-'})"
        )
    if it["superseded_by"]:
        click.echo(f"  superseded by {it['superseded_by']}")
    if it["supersedes"]:
        click.echo(f"  supersedes {', '.join(it['supersedes'])}")
    click.echo("sources:")
    for src in data["sources"]:
        click.echo(f"  [ev seq:{src['seq']}] {src['text'][:200]}")
    for other in data["linked"]:
        click.echo(f"linked {other['id']} ({other['status']}): {other['content'][:120]}")
        for ref in other["source_refs"]:
            click.echo(f"  source {ref}")
    if len(data["history"]) > 1:
        click.echo("history:")
        for step in data["history"]:
            mark = "*" if step["id"] == it["id"] else " "
            click.echo(
                f" {mark}{step['day'] or '-':<10}  session {step['session_id']}  {step['id']}"
                f"  ({step['status']}) {step['content'][:80]}"
            )
    click.echo("lifecycle:")
    for row in data["lifecycle"]:
        click.echo(
            f"  {row['at']}  {row['event']:<11} by {row['actor']}  session {row['session_id']}"
            f"  {row['detail']}"
        )
    sc = data["score"]
    parts = ", ".join(f"{k} {v}" for k, v in sc["breakdown"].items())
    click.echo(f"score {sc['score']} for query {sc['query'][:60]!r}: {parts}")


def _lifecycle_result(item: Any) -> None:
    click.echo(f"{item.id}: {item.status} ({item.kind}, {item.evidence_type})")


@click.command()
@click.argument("item_id")
@click.option("--reason", default="", help="Why (kept in the audit trail).")
@click.pass_obj
def retract(obj: Any, item_id: str, reason: str) -> None:
    """Withdraw a memory item (it stays in the audit trail)."""
    from convmem.memory import lifecycle

    _lifecycle_result(lifecycle.retract(obj.reader.store, item_id, reason=reason))


@click.command()
@click.argument("item_id")
@click.option("--reason", default="", help="Why (kept in the audit trail).")
@click.pass_obj
def forget(obj: Any, item_id: str, reason: str) -> None:
    """Retract an item with a reason, and the same clause in its project's other sessions."""
    from convmem.memory import lifecycle

    for item in lifecycle.forget(obj.reader.store, item_id, reason=reason):
        _lifecycle_result(item)


@click.command()
@click.argument("item_id")
@click.option(
    "--kind",
    default="decision",
    show_default=True,
    type=click.Choice(["decision", "constraint", "fact", "preference"]),
)
@click.pass_obj
def promote(obj: Any, item_id: str, kind: str) -> None:
    """Accept an assistant proposal as the user's own."""
    from convmem.memory import lifecycle

    _lifecycle_result(lifecycle.promote(obj.reader.store, item_id, kind=kind))


@click.command()
@click.argument("keep_id")
@click.pass_obj
def resolve(obj: Any, keep_id: str) -> None:
    """Settle a dispute by keeping KEEP_ID; the items it disputed are superseded."""
    from convmem.memory import lifecycle

    for item in lifecycle.resolve(obj.reader.store, keep_id):
        _lifecycle_result(item)


@click.command()
@click.argument("item_id")
@click.pass_obj
def reactivate(obj: Any, item_id: str) -> None:
    """Bring a retracted or superseded item back."""
    from convmem.memory import lifecycle

    _lifecycle_result(lifecycle.reactivate(obj.reader.store, item_id))


@click.command("items")
@click.option("--session", help="Session.")
@click.option("--project", help="Every session of this project.")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(STATUSES),
    default=("active", "disputed"),
    show_default=True,
    help="Statuses to list (repeatable).",
)
@click.option(
    "--all", "every", is_flag=True, help="Every status: also what was replaced or withdrawn."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def items_cmd(
    obj: Any,
    session: str | None,
    project: str | None,
    statuses: tuple[str, ...],
    every: bool,
    as_json: bool,
) -> None:
    """List a session's memory items, or a project's (its sessions, most recent first)."""
    store = obj.reader.store
    statuses = tuple(STATUSES) if every else statuses
    if (session is None) == (project is None):
        raise click.UsageError("name either a --session or a --project")
    if session is not None:
        _need_session(store, session)
    sessions = [session] if session is not None else _need_project(store, project or "")
    found = [item for sid in sessions for item in store.items(sid, statuses)]
    disputes = {i.id: _disputed_with(store, i.id) for i in found if i.status == "disputed"}
    if as_json:
        rows = [i.as_dict() for i in found]
        for row in rows:
            if row["id"] in disputes:
                row["disputed_with"] = disputes[row["id"]]
        echo_json(rows)
        return
    echo_table(
        ["item", "kind", "status", "link", "evidence", "session", "content"],
        [
            [
                i.id,
                i.kind,
                i.status,
                _link(i, disputes.get(i.id, [])),
                i.evidence_type,
                i.session_id,
                i.content[:60],
            ]
            for i in found
        ],
    )


def _disputed_with(store: Any, item_id: str) -> list[str]:
    """The items a disputed item stands against, as its lifecycle recorded them."""
    found = [
        e["detail"].get("with") for e in store.memory_events(item_id) if e["event"] == "disputed"
    ]
    return sorted({w for w in found if isinstance(w, str)})


def _link(item: Any, disputed_with: list[str]) -> str:
    """What an item's status points at: the item that replaced it, or its other sides."""
    if item.status == "superseded" and item.superseded_by:
        return f"-> {item.superseded_by}"
    if disputed_with:
        return "<> " + ", ".join(disputed_with)
    return ""


def register(group: click.Group) -> None:
    for command in (
        assemble,
        search,
        explain,
        inspect,
        retract,
        forget,
        promote,
        resolve,
        reactivate,
        items_cmd,
    ):
        group.add_command(command)
