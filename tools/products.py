"""Write src/convmem/data/products.txt: software names that a version number follows.

    python tools/products.py PATH/TO/endoflife.date   # a checkout of that project

The names come from endoflife.date (MIT licence, ``data/products.LICENSE``), which
keeps one page per product with a release table: each page's name and the other
addresses it answers to (``apache-airflow``, ``airflow``; ``amazon-eks``, ``eks``).
A handful of those names are everyday words that a plain decimal often follows
("salt 1.5 tsp", "surface 2.5 m2"); they are left out (``EVERYDAY``). The file is
sorted, one lower-case name a line, so a refresh shows as a readable diff.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "convmem" / "data" / "products.txt"

#: Names of products that are also words a measurement follows.
EVERYDAY = frozenset(
    """boundary cake camel coder concrete contour craft express hop idl lam mn mx office pci pixel
    ps robo salt squid surface tails team twig""".split()
)

_ALTERNATE = re.compile(r"^\s+-\s+/([\w.+-]+)\s*$", re.M)


def product_names(repo: Path) -> list[str]:
    """Every page name and alternate address of the products, minus EVERYDAY."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        ).stdout

    names: set[str] = set()
    for path in git("ls-tree", "--name-only", "HEAD", "products/").split():
        names.add(path.rsplit("/", 1)[1].removesuffix(".md").lower())
        text = git("show", f"HEAD:{path}")
        if "alternate_urls:" in text:
            block = text.split("alternate_urls:", 1)[1].split("\n\n", 1)[0]
            block = re.split(r"^\S", block, maxsplit=1, flags=re.M)[0]
            names.update(n.lower() for n in _ALTERNATE.findall(block))
    return sorted(n for n in names if n not in EVERYDAY and len(n) >= 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a git checkout of endoflife.date")
    args = parser.parse_args()
    names = product_names(args.repo)
    OUT.write_text("\n".join(names) + "\n", encoding="utf-8")
    print(f"{len(names)} names written to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
