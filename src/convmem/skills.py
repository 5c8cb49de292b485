"""Skills: ``SKILL.md`` files turned into versioned, categorised, scoped rules.

A skill file is YAML frontmatter between ``---`` lines followed by a markdown body.
Each distinct content becomes a ``skill_versions`` row; every rule-like line of the
body (a bullet, a numbered step, a sentence of a paragraph) becomes a ``rules`` row
whose id depends only on the skill name, its heading path and its normalised text,
so unchanged rules keep their ids across edits and overrides stay attached. Rules
that vanish from a newer version are marked inactive, never deleted.

Classification is keyword-based (English and Chinese) and documented in
:func:`classify`; scopes come from :func:`extract_scopes`. :class:`SkillManager`
is what the assembler, the CLI and validation call; it writes only through the store.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from convmem.config import Settings
from convmem.core.constants import RULE_CATEGORIES, RULE_SCOPES
from convmem.core.text import (
    canonical_json,
    clip,
    collapse_spaces,
    fix_surrogates,
    sha256_hex,
    tokens,
)
from convmem.errors import ConfigError, ConvmemError, NotFoundError
from convmem.memory.store import MemoryStore
from convmem.memory.store_skills import RuleRecord, SkillRecord

SKILL_FILE_NAME = "SKILL.md"
DYNAMIC_STATE_WARNING = "[dynamic state: verify against current data; not a fixed check]"

# --- classification ------------------------------------------------------------------


def _cues(english: str, chinese: str = "") -> re.Pattern[str]:
    """Whole English words/phrases (comma-separated, any spacing) or Chinese substrings."""
    words = "|".join(w.strip().replace(" ", r"\s+") for w in english.split(","))
    return re.compile(
        rf"\b(?:{words})\b" + (f"|{chinese.replace(',', '|')}" if chinese else ""), re.I
    )


_WORKFLOW_HEADING = _cues("workflows?, steps?, procedures?", "流程,步骤,工作流")
_PROHIBITION = _cues(
    "never, must not, mustn't, do not, don't, does not, doesn't, shall not, may not, cannot,"
    " can't, forbidden, prohibited, not allowed",
    "禁止,不要,不得,不能,不可以,切勿,严禁,别再",
)
_CONSTRAINT = _cues(
    "must, always, required?, requires, mandatory, shall, have to, has to",
    "必须,务必,一定要,总是,始终",
)
_CURRENT_STATE = _cues(
    "currently, current version, as of, at the moment, these days, (?:is|are) (?:at|on) version,"
    " now (?:uses?|runs?|is|are|has|have|points?|lives?|defaults?)",
    "目前,当前,现在,如今,截至",
)
_PREFERENCE = _cues(
    "prefer(?:red|ably|s)?, should, ideally, recommended, avoid, try to",
    "建议,尽量,优先,最好,推荐,应该,应当",
)


def classify(text: str, *, numbered: bool = False, in_workflow: bool = False) -> str:
    """The rule category of one line.

    Precedence: anything under a Workflow/Steps/流程/步骤 heading is ``workflow``;
    then prohibition ("never", "do not", 禁止, 不要 …) before constraint ("must",
    "always", 必须 …) because "must not" contains "must"; an explicit obligation
    wins over a state cue ("currently", "as of", 目前, 当前 …), which wins over a
    preference ("prefer", "should", 建议, 尽量 …). A numbered step with none of
    these cues is ``workflow``; anything else is ``reference``.
    """
    if in_workflow:
        return "workflow"
    for category, pattern in (
        ("prohibition", _PROHIBITION),
        ("constraint", _CONSTRAINT),
        ("current_state", _CURRENT_STATE),
        ("preference", _PREFERENCE),
    ):
        if pattern.search(text):
            return category
    return "workflow" if numbered else "reference"


_SCOPE_CUES = {
    "quote": _cues(
        "code blocks?, codeblocks?, inline code, backticks?, quot(?:ed|es?|ations?), citations?",
        "代码块,代码中,引用,引号",
    ),
    "path": _cues(
        "file paths?, filepaths?, file names?, filenames?, in (?:the )?paths?, directory names?",
        "路径,文件名,目录名",
    ),
    "explanation": _cues("explanations?, when explaining, explanatory", "解释,讲解,说明中"),
    "body": _cues("body text, prose, main text", "正文"),
}
_EXCEPT = re.compile(
    r"(except|excluding|outside(\s+of)?|other\s+than|but\s+not|unless|apart\s+from"
    r"|除了|除|以外|之外)[^.;。；]{0,24}$",
    re.I,
)


def extract_scopes(text: str) -> list[str]:
    """Where a rule applies, in :data:`RULE_SCOPES` order; ``["body"]`` by default.

    A scope is named by a cue ("in code blocks"/"quotes"/代码块 → ``quote``, "file
    paths"/"file names"/路径 → ``path``, "explanations"/解释 → ``explanation``,
    "body text"/"prose"/正文 → ``body``). A cue introduced by an exception word
    ("except in code blocks", 除了引用) is an exemption, not a scope, so it is skipped.
    """
    found: set[str] = set()
    for scope, pattern in _SCOPE_CUES.items():
        for match in pattern.finditer(text):
            if not _EXCEPT.search(text[: match.start()]):
                found.add(scope)
                break
    return [s for s in RULE_SCOPES if s in found] or ["body"]


rule_scopes = extract_scopes

# --- parsing -------------------------------------------------------------------------


class _Problem(ConvmemError):
    """One sentence about a bad skill file; ingestion turns it into a report line."""


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|(?P<num>\d{1,3}[.)、]))\s+(?:\[[ xX]\]\s+)?(?P<text>.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“(\[`*_\u4e00-\u9fff])|(?<=[。！？；])")


def _field(meta: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = meta.get(key)
        if value is None:
            continue
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            return collapse_spaces(" ".join(str(v) for v in value))
        if isinstance(value, dict | list):
            raise _Problem(f"the frontmatter field {key!r} must be text")
        return collapse_spaces(str(value))
    return ""


class _NoAliasLoader(yaml.SafeLoader):
    """No aliases (a 400-byte bomb expands to gigabytes) and no lone surrogate ("\\ud800")."""

    def construct_yaml_str(self, node: Any) -> str:
        return fix_surrogates(str(super().construct_yaml_str(node)))

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            line = self.peek_event().start_mark.line + 2  # type: ignore[no-untyped-call]
            raise _Problem(f"the frontmatter uses a YAML alias at line {line}; write it out")
        return super().compose_node(parent, index)


_NoAliasLoader.add_constructor("tag:yaml.org,2002:str", _NoAliasLoader.construct_yaml_str)


def _frontmatter(lines: list[str]) -> tuple[dict[str, Any], int]:
    """The frontmatter mapping and the 0-based index of the first body line."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        raise _Problem("the frontmatter opened by '---' on line 1 is never closed")
    try:
        meta = yaml.load("\n".join(lines[1:end]), Loader=_NoAliasLoader)
    except _Problem:
        raise
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        # ValueError: a date like 2020-13-45; RecursionError: absurdly deep nesting.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _Problem(f"the frontmatter is not valid YAML ({reason}{where})") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise _Problem(f"the frontmatter must be a mapping of keys, not a {type(meta).__name__}")
    return meta, end + 1


def _blocks(lines: list[str], start: int) -> list[tuple[int, str, tuple[str, ...], bool]]:
    """(line, text, heading path, numbered) for every list item and paragraph sentence."""
    out: list[tuple[int, str, tuple[str, ...], bool]] = []
    headings: list[tuple[int, str]] = []
    para: list[tuple[int, str]] = []
    item: list[Any] | None = None  # [line, text, numbered]
    in_fence = in_comment = False

    def flush() -> None:
        nonlocal item, para
        path = tuple(h for _, h in headings)
        if item is not None:
            out.append((item[0], item[1], path, item[2]))
        if para:
            joined, starts = "", []
            for _, text in para:
                starts.append(len(joined))
                joined += text + " "
            pos = 0
            for piece in [*_SENTENCE_END.split(joined)]:
                at = joined.find(piece, pos) if piece else pos
                pos = at + len(piece)
                if piece.strip():
                    lineno = para[bisect.bisect_right(starts, at) - 1][0]
                    out.append((lineno, piece, path, False))
        item, para = None, []

    for index in range(start, len(lines)):
        lineno, raw = index + 1, lines[index]
        if in_comment:
            in_comment = "-->" not in raw
            continue
        if _FENCE.match(raw):
            flush()
            in_fence = not in_fence
            continue
        stripped = raw.strip()
        if in_fence or stripped.startswith("|"):
            continue
        if stripped.startswith("<!--"):
            flush()
            in_comment = "-->" not in stripped
            continue
        if not stripped:
            flush()
            continue
        heading = _HEADING.match(stripped)
        if heading:
            flush()
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
            continue
        bullet = _BULLET.match(raw)
        if bullet:
            flush()
            item = [lineno, bullet.group("text"), bullet.group("num") is not None]
        elif item is not None and not stripped.startswith(">"):
            item[1] += " " + stripped
        else:
            if item is not None:
                flush()
            para.append((lineno, stripped.lstrip("> ").strip()))
    flush()
    return out


def parse_skill(raw: str, default_name: str) -> SkillRecord:
    """Parse one skill file's text; a bad file raises a one-sentence :class:`ConvmemError`."""
    content = raw.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not content.strip():
        raise _Problem("the file is empty")
    lines = content.split("\n")
    meta, body_start = _frontmatter(lines)
    name = meta.get("name", default_name)
    if not isinstance(name, str) or not name.strip() or "\n" in name.strip():
        raise _Problem("the frontmatter field 'name' must be a one-line, non-empty string")
    enabled = meta.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _Problem("the frontmatter field 'enabled' must be true or false")
    rules: list[RuleRecord] = []
    seen: dict[str, int] = {}
    for lineno, text, path, numbered in _blocks(lines, body_start):
        text = collapse_spaces(text)
        if len(tokens(text, limit=2)) < 2:
            continue
        digest = sha256_hex(
            canonical_json([[collapse_spaces(h).casefold() for h in path], text.casefold()])
        )[:16]
        seen[digest] = seen.get(digest, 0) + 1
        key = digest if seen[digest] == 1 else f"{digest}-{seen[digest]}"
        in_workflow = any(_WORKFLOW_HEADING.search(h) for h in path)
        category = classify(text, numbered=numbered, in_workflow=in_workflow)
        rules.append(RuleRecord(key, text, category, tuple(extract_scopes(text)), lineno))
    return SkillRecord(
        name=name.strip(),
        description=_field(meta, "description"),
        when_to_use=_field(meta, "when_to_use", "when-to-use", "whenToUse"),
        invocation=_field(meta, "invocation"),
        enabled=enabled,
        content=content,
        rules=tuple(rules),
    )


def read_skill_file(path: Path, max_bytes: int) -> str:
    """The file's text; a :class:`ConvmemError` for unreadable, huge, binary or non-UTF-8."""
    if not path.is_file():
        raise _Problem("it is not a regular file")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise _Problem(f"the file is {size} bytes, over skills.max_file_bytes ({max_bytes})")
        data = path.read_bytes()
    except OSError as exc:
        raise _Problem(f"the file cannot be read ({exc.strerror or exc})") from None
    if b"\x00" in data:
        raise _Problem("the file is binary (it contains NUL bytes), not a markdown text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Problem(f"the file is not valid UTF-8 (bad byte at offset {exc.start})") from None


def find_skill_files(path: Path) -> list[Path]:
    """``path`` itself if it is a file, else every ``SKILL.md`` below it, sorted."""
    if path.is_file():
        return [path]
    found: list[Path] = []
    for root, dirs, files in os.walk(path):  # does not follow symlinked folders
        dirs[:] = sorted(d for d in dirs if d not in (".git", "node_modules", "__pycache__"))
        if SKILL_FILE_NAME in files:
            found.append(Path(root) / SKILL_FILE_NAME)
    return sorted(found)


# --- the effective view ---------------------------------------------------------------


@dataclass(frozen=True)
class RuleView:
    """A rule as it applies now: the parsed row with its override, if any, applied."""

    id: str
    skill_name: str
    rule_key: str
    text: str
    category: str
    scope: tuple[str, ...]
    source_path: str
    source_line: int
    active: bool
    overridden: tuple[str, ...] = ()  # which fields an override changed

    @property
    def label(self) -> str:
        return f"rule {self.source_path}:{self.source_line}"

    def render(self) -> str:
        """One line: the text, a scope note unless body-only, the current_state warning."""
        parts = [self.text]
        if self.scope != ("body",):
            parts.append(f"[scope: {', '.join(self.scope)}]")
        if self.category == "current_state":
            parts.append(DYNAMIC_STATE_WARNING)
        return " ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["scope"], data["overridden"] = list(self.scope), list(self.overridden)
        data["label"] = self.label
        return data


def _view(row: dict[str, Any]) -> RuleView:
    keys = ("id", "skill_name", "rule_key", "text", "category", "source_path", "source_line")
    return RuleView(
        **{k: row[k] for k in keys},
        scope=tuple(json.loads(row["scope_json"])),
        active=bool(row["active"]),
        overridden=tuple(f for f in ("category", "active", "scope") if row[f"o_{f}"]),
    )


@dataclass
class SkillIngestResult:
    """What ingesting one file did: status is new, updated, reverted, moved or unchanged."""

    path: str
    name: str
    status: str
    version: int
    rules: int
    added: int
    deactivated: int


@dataclass
class IngestSkillsReport:
    """Per-file results and one-sentence problems (each naming its file) of one ingest."""

    files: list[SkillIngestResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        counts = {s: sum(f.status == s for f in self.files) for s in _STATUSES}
        parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        return (
            f"{len(self.files)} skill files ({parts or 'none'}); "
            f"{sum(f.added for f in self.files)} rules added, "
            f"{sum(f.deactivated for f in self.files)} deactivated; "
            f"{len(self.problems)} problems"
        )

    def as_dict(self) -> dict[str, Any]:
        return {"files": [asdict(f) for f in self.files], "problems": list(self.problems)}


_STATUSES = ("new", "updated", "reverted", "moved", "unchanged")
_STOPWORD_TEXT = (
    "the an and or to of in on for with is are be it this that as at by from do does not no"
    " we you use when if all any can will should must always never please into than then so"
    " but our your its was were has have been each every only also more most 必须 不要 不得"
    " 不能 禁止 务必 建议 尽量 优先 目前 当前 现在"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _terms(text: str) -> set[str]:
    """Tokens for relevance: no stopwords, a plural "s" dropped from Latin words."""
    out: set[str] = set()
    for tok in tokens(text):
        if tok in _STOPWORDS:
            continue
        if tok.isascii() and len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss"):
            tok = tok[:-1]
        out.add(tok)
    return out


# --- the manager ----------------------------------------------------------------------


class SkillManager:
    """Ingests skill files and answers the assembler's, validation's and CLI's questions."""

    def __init__(self, store: MemoryStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings

    def is_used(self, name: str, enabled: bool = True) -> bool:
        """Enabled, and allowed by ``skills.include`` / ``skills.exclude``."""
        include, exclude = self.settings["skills.include"], self.settings["skills.exclude"]
        return enabled and (not include or name in include) and name not in exclude

    def ingest_paths(self, paths: Sequence[str | Path]) -> IngestSkillsReport:
        """Ingest files and folders; a bad file is a problem in the report, not an error."""
        report = IngestSkillsReport()
        files: dict[str, Path] = {}
        for given in paths:
            path = Path(given).expanduser()
            if not path.exists():
                report.problems.append(f"{path}: no such file or folder")
                continue
            found = find_skill_files(path)
            if not found:
                report.problems.append(f"{path}: no {SKILL_FILE_NAME} file was found in it")
            for file in found:
                files.setdefault(os.path.realpath(file), file)
        owners: dict[str, str] = {}
        for file in files.values():
            try:
                raw = read_skill_file(file, int(self.settings["skills.max_file_bytes"]))
                parsed = parse_skill(raw, file.parent.name or file.stem)
                if parsed.name in owners:
                    raise _Problem(
                        f"skill {parsed.name!r} is already defined by {owners[parsed.name]}"
                    )
            except _Problem as exc:
                report.problems.append(f"{file}: {exc}; the file was skipped")
                continue
            owners[parsed.name] = str(file)
            with self.store.transaction():
                saved = self.store.save_skill(parsed, str(file))
            report.files.append(
                SkillIngestResult(str(file), parsed.name, rules=len(parsed.rules), **saved)
            )
        return report

    def list_skills(self) -> list[dict[str, Any]]:
        """Current skills by name, with version, flags and active rule count."""
        keys = ("name", "path", "version", "description", "when_to_use", "invocation")
        return [
            {
                **{k: row[k] for k in keys},
                "enabled": bool(row["enabled"]),
                "used": self.is_used(row["name"], bool(row["enabled"])),
                "active_rules": int(row["active_rules"]),
            }
            for row in self.store.skill_files()
        ]

    def rules(self, skill: str | None = None) -> list[RuleView]:
        """Every rule (active or not) with overrides applied, by skill, line and key."""
        if skill is not None and self.store.skill_file(skill) is None:
            raise NotFoundError(f"no skill named {skill!r}; `convmem skills list` shows them")
        return [_view(r) for r in self.store.rule_rows(skill)]

    def _used_rules(self) -> list[RuleView]:
        used = {s["name"] for s in self.list_skills() if s["used"]}
        return [r for r in self.rules() if r.active and r.skill_name in used]

    def resident_core(self) -> list[tuple[str, str]]:
        """Per used skill (by name): its description, then its workflow lines in file order."""
        steps = [r for r in self._used_rules() if r.category == "workflow"]
        core: list[tuple[str, str]] = []
        for skill in (s for s in self.list_skills() if s["used"]):
            if skill["description"]:
                core.append((skill["name"], clip(skill["description"], 300)))
            core += [(r.skill_name, r.render()) for r in steps if r.skill_name == skill["name"]]
        return core

    def select_rules(self, query: str, limit: int) -> list[RuleView]:
        """Active non-workflow rules relevant to ``query``, best first.

        Score = 3 × (distinct query terms in the rule) + min(query terms in the
        skill's name/description/when-to-use, 2); a rule needs a score of 2: one
        shared term of its own, or a skill that clearly matches the task (then its
        rules follow every rule with a term of its own). Terms are
        :func:`~convmem.core.text.tokens` minus stopwords, with a plural "s" dropped;
        ``rules_fts`` finds the candidates. Ties go by skill name, then line, then key.
        """
        wanted = _terms(query)
        if limit <= 0 or not wanted:
            return []
        hits = set(self.store.search_rule_ids(sorted(wanted)))
        skill_match = {}
        for s in self.list_skills():
            about = _terms(
                " ".join((s["name"].replace("-", " "), s["description"], s["when_to_use"]))
            )
            skill_match[s["name"]] = min(len(wanted & about), 2)
        ranked = []
        for rule in self._used_rules():
            if rule.category == "workflow":
                continue
            own = len(wanted & _terms(rule.text)) if rule.id in hits else 0
            score = 3 * own + skill_match.get(rule.skill_name, 0)
            if score >= 2:
                ranked.append((-score, rule.skill_name, rule.source_line, rule.rule_key, rule))
        ranked.sort(key=lambda t: t[:4])
        return [t[4] for t in ranked[:limit]]

    def _rule(self, rule_id: str) -> dict[str, Any]:
        row = self.store.rule_row(rule_id)
        if row is None:
            raise NotFoundError(f"no rule {rule_id!r}; `convmem rules show` lists rule ids")
        return row

    def override(
        self,
        rule_id: str,
        *,
        category: str | None = None,
        active: bool | None = None,
        scope: Sequence[str] | None = None,
    ) -> RuleView:
        """Change a rule's category, active flag or scope without editing its file."""
        self._rule(rule_id)
        if category is None and active is None and scope is None:
            raise ConfigError("nothing to override; give a category, an active flag or a scope")
        if category is not None and category not in RULE_CATEGORIES:
            raise ConfigError(
                f"unknown rule category {category!r}; use one of {', '.join(RULE_CATEGORIES)}"
            )
        if scope is not None:
            bad = [s for s in scope if s not in RULE_SCOPES]
            if bad or not scope:
                raise ConfigError(
                    f"unknown rule scope {(bad or [''])[0]!r}; use one or more of "
                    f"{', '.join(RULE_SCOPES)}"
                )
        scope_json = (
            None if scope is None else canonical_json([s for s in RULE_SCOPES if s in scope])
        )
        self.store.set_rule_override(
            rule_id, category=category, active=active, scope_json=scope_json
        )
        return _view(self._rule(rule_id))

    def clear_override(self, rule_id: str) -> RuleView:
        """Drop a rule's override, so it applies as parsed from its file."""
        self._rule(rule_id)
        self.store.delete_rule_override(rule_id)
        return _view(self._rule(rule_id))
