"""Versions, which are never quantities: "Python 3.12", "v2.3.1", "node 20", "vue2",
"numpy<2.0", "grafana is 10.4", "python 只能用 3.8".

A number is a version when it is written as one (a ``v`` prefix, three dotted parts) or
when what stands before it makes it one: the word for it (``version``, ``版本``, a pin
operator), or the name of a product, directly or through a verb. The names are a short
list written here (``_PRODUCTS``, which a whole number after makes a version) and the
products endoflife.date keeps release tables for (``data/products.txt``, see
tools/products.py), which make a dotted number after them a version.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Protocol

from convmem.core.units import Value, is_cjk


class _Finds(Protocol):
    text: str
    found: list[Value]

    def free(self, start: int, end: int) -> bool: ...

    def add(self, value: Value) -> None: ...

    def unit_at(self, pos: int) -> tuple[str, str, int] | None: ...

    def counted_after(self, pos: int) -> bool: ...


_VERSION_PREFIX = re.compile(r"(?<![\w.])[vV](\d+(?:\.\d+)+|\d+)(?![\w.]*\d)")
_DOTTED_VERSION = re.compile(r"(?<![\w.])(\d+\.\d+\.\d+(?:[-+.][\w.]+)?)(?![\w])")
#: Names that a plain number right after is the version of.
_PRODUCTS = frozenset(
    """python py node nodejs node.js npm pnpm yarn deno bun react vue angular svelte next nextjs
    next.js nuxt django flask fastapi rails ruby php perl java jdk jre kotlin scala swift go
    golang rust rustc cargo gcc clang llvm cmake typescript ts es ecmascript postgres
    postgresql pg mysql mariadb sqlite redis mongodb mongo elasticsearch kafka rabbitmq
    nginx apache tomcat kubernetes k8s docker compose helm terraform ansible ubuntu debian
    centos rhel fedora alpine windows win macos osx ios ipados android chrome firefox safari
    edge electron spring springboot boot laravel symfony dotnet .net net c# vs visual
    studio xcode numpy pandas torch pytorch tensorflow tf cuda cudnn scipy sklearn
    jquery bootstrap tailwind webpack vite babel eslint prettier jest pytest mocha junit
    gradle maven sdk api iphone ipad pixel galaxy macbook opus sonnet haiku gpt claude
    llama qwen deepseek gemini mistral html css http tls ssl ipv oauth unicode utf
    pydantic sqlalchemy celery airflow spark hadoop hive flink vitest playwright selenium
    """.split()
)
_PRODUCT_BEFORE = re.compile(
    r"(?P<name>[A-Za-z][A-Za-z0-9_.#+-]*)\s*(?:版本|version|ver\.?|v)?\s*"
    r"(?:(?P<pin>==|>=|<=|~=|<|>)\s*|(?P<en>is|was|are|stays|=|:)\s*"
    r"|(?P<zh>(?:现在|目前|本地|线上|已经|刚|只能|还是|也|都|一直|统一|就)*"
    r"(?:用|是|换成|改成|升到|升级到|降到|装的|装了))\s*)?$",
    re.I,
)
#: Products whose names are everyday words too: a whole number after them is no version.
_WORDS_TOO = frozenset(
    "go spring win net vs edge boot visual studio compose next pixel galaxy api sdk es ts tf"
    " py pg opus haiku sonnet".split()
)
#: Products that are people's (and pets') names too: "Julia is 2.5" is an age.
_ALSO_NAMES = frozenset({"julia", "ruby", "rocky", "alma", "kirby", "ember", "hugo", "django"})
#: A second version after the first, as a range or a choice: "postgres 13 to 16",
#: "python 3.9-3.13", "用3.10还是3.11".
_VERSION_NEXT = re.compile(
    r"\s*(?:-|–|~|to|through|or|/|还是|或者?|到|至|,\s*<=?)\s*(\d+(?:\.\d+)*)(?![\w.%])",
    re.I,
)
#: A version written against its name: "vue2", "webpack4", "jdk17", "python3.11" (names
#: people write so; "redis1", "kafka2", "win32", "hadoop102" are hosts and builds).
_GLUED_VERSION = re.compile(r"(?<![A-Za-z0-9_.\-/])([A-Za-z]{2,})([1-9]\d?(?:\.\d+)*)(?![\w.])")
_GLUED_NAMES = frozenset(
    """vue webpack jdk java python php gpt llama qwen vite angular ubuntu centos ios android
    jquery bootstrap swift react es""".split()
)
#: A plain number that a name or the word before it may make a version.
_BARE_VERSION = re.compile(
    r"(?<![A-Za-z0-9_.$€£¥])(\d+(?:\.\d+)*)(?![A-Za-z0-9_%]|\.\w|\s?(?:%|[kK]\b))"
)
_ANY_PATCH = re.compile(r"(?<![A-Za-z0-9_.$€£¥])(\d+(?:\.\d+)*\.[xX*])(?![\w.])")
#: "镜像版本 1.5", "version: 2": a number right after the word is a version, of anything.
_VERSION_WORD_BEFORE = re.compile(
    r"(?:版本号?|\bversion|\bver\.?|\bmsrv(?:\s+is)?|~>|==|\^)\s*(?:是|为|:|：|=)?\s*$", re.I
)


def find_versions(f: _Finds) -> None:
    """Every version in ``f.text``, added to ``f``."""
    t = f.text
    for m in _VERSION_PREFIX.finditer(t):
        if f.free(*m.span()):
            f.add(Value(m.group(), "version", m[1], None, *m.span()))
    for m in _DOTTED_VERSION.finditer(t):
        if f.free(*m.span()) and not re.match(r"\d+\.\d+\.\d+\.\d+$", m[1]):
            f.add(Value(m.group(), "version", m[1], None, *m.span()))
    for m in _BARE_VERSION.finditer(t):
        if not f.free(*m.span()) or not _names_version(t, m.start(), m[1]):
            continue
        unit = f.unit_at(m.end())
        if unit is not None and (is_cjk(t[m.end()]) or unit[1] != "duration" or t[m.end()] == " "):
            continue  # "node 20 个", "python 3 weeks": a count, not a version
        f.add(Value(m[1], "version", m[1], None, *m.span()))
    for m in _ANY_PATCH.finditer(t):  # "Python 3.12.x", "node 18.x": any patch of it
        if f.free(*m.span(1)) and _names_version(t, m.start(), m[1]):
            f.add(Value(m[1], "version", m[1], None, *m.span(1)))
    for m in _GLUED_VERSION.finditer(t):
        if m[1].lower() in _GLUED_NAMES and f.free(*m.span(2)):
            f.add(Value(m[2], "version", m[2], None, *m.span(2)))
    for v in [v for v in f.found if v.type == "version"]:
        nxt = _VERSION_NEXT.match(t, v.end)
        if (
            nxt is not None
            and ("." in nxt[1]) == ("." in str(v.value))  # "3.12 / 2 replicas": not its shape
            and f.free(*nxt.span(1))
            and f.unit_at(nxt.end(1)) is None
            and not f.counted_after(nxt.end(1))
        ):
            f.add(Value(nxt[1], "version", nxt[1], None, *nxt.span(1)))


def version_bound(text: str, value: Value) -> str | None:
    """A version's bound is only what is written against it: "3.9+", ">=3.12",
    "<2.0", "不低于 69" (not "max" somewhere before, which bounds a number)."""
    before = text[max(0, value.start - 8) : value.start]
    if _LOWER_AFTER.match(text, value.end) or _LOWER_BEFORE.search(before):
        return "lower"
    return "upper" if _UPPER_BEFORE.search(before) else None


_LOWER_AFTER = re.compile(r"\+|\s*(?:及?以上|or (?:later|newer|above))", re.I)
_LOWER_BEFORE = re.compile(r"(?:(?<!~)>=?|≥|不低于|至少|at least)\s*$", re.I)
_UPPER_BEFORE = re.compile(r"(?:<=?|≤|不高于|最多|at most)\s*$", re.I)


def _names_version(text: str, start: int, number: str) -> bool:
    """Whether the words before ``number`` (at ``start``) make it a version: "Python 3.12",
    "node 20", "python 用3.10", "版本 1.5"; a name we do not know only with a dotted number."""
    before = text[max(0, start - 30) : start]
    if _VERSION_WORD_BEFORE.search(before):
        return True
    product = _PRODUCT_BEFORE.search(before)
    if product is None:
        return False
    name = product["name"].lower()
    known = name in _PRODUCTS or name in known_products()
    if product["pin"]:  # "numpy<2.0", "pydantic <2", "django>=4.2"
        return known
    if product["en"] or product["zh"]:
        # "grafana is 10.4", "python 只能用 3.8", "node 现在本地是 16": a product we know,
        # and a whole number only a small one ("redis 就用 6379" is a port, "Price was
        # 19.99" no product, "Julia is 2.5" an age)
        if not known or (product["en"] and name in _ALSO_NAMES):
            return False
        return "." in number or (bool(product["zh"]) and int(number) <= 30)
    if name in _PRODUCTS and (name not in _WORDS_TOO or "." in number):
        return True  # "node 20", "Go 1.22"; not "let's go 2 rounds", "win 3 more games"
    if "." not in number:
        return False
    return known or (product["name"][0].isupper() and not product["name"].isupper())


@lru_cache(maxsize=1)
def known_products() -> frozenset[str]:
    """Software names a dotted number after is the version of ("grafana 10.4", "EKS
    1.29"): ``data/products.txt``, from endoflife.date (see tools/products.py)."""
    from importlib.resources import files

    return frozenset(files("convmem.data").joinpath("products.txt").read_text("utf-8").split())
