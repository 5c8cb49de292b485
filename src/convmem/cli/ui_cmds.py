"""The ``ui`` command: serve the inspector (a local web page) for this store."""

from __future__ import annotations

from typing import Any

import click


@click.command("ui")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but a loopback address lets other machines"
    " reach the page (their requests still need the token); a warning says so.",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="Port (default: a free one)."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the web browser.")
@click.pass_obj
def ui(obj: Any, host: str, port: int, open_browser: bool) -> None:
    """Serve the inspector: a local web page to see and steer what the agent remembers.

    Prints the address to open, with its random token; every request needs that
    token. Needs the ui extra: pip install 'convmem[ui]'.
    """
    from convmem.ui import missing_packages

    missing = missing_packages()
    if missing:
        raise click.ClickException(
            f"the inspector needs the ui extra ({', '.join(missing)} not installed):"
            " pip install 'convmem[ui]'"
        )
    from convmem.ui.server import serve

    serve(
        obj.runtime,
        host=host,
        port=port,
        open_browser=open_browser,
        echo=click.echo,
        warn=lambda text: click.echo(text, err=True),
    )


def register(group: click.Group) -> None:
    group.add_command(ui)
