"""Console-script entry point.

``convmem hook ...`` runs on every prompt of a host, so it skips the click
command tree and its imports; everything else goes through :mod:`convmem.cli`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"]:
        from convmem.adapters.hook_entry import run_hook

        sys.exit(run_hook(args[1:], end_when_served=True))
    from convmem.cli import main as cli_main

    cli_main(args=args, prog_name="convmem")


if __name__ == "__main__":
    main()
