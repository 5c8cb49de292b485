"""Validation: configured checks over committed assistant output, and tool preconditions.

Check types (``validation.checks``, TOML tables with a ``type``): ``required_terms``
(each term at least ``min_count`` times), ``forbidden_terms``,
``numbers_with_conditions`` (wherever a configured value+unit is stated, each of its
``conditions`` occurs within ``window`` characters; ``forbidden_numbers`` are never
stated) and ``script`` (``fn(text, context)`` of a user module, run in a child
process under ``validation.script_timeout_seconds``).

Terms match case-insensitively, with word edges at Latin letters/digits and exactly
for CJK. Text splits into regions: ``quote`` (``"…"``, ``“…”``, ``「…」``, ``『…』``,
backticks, fenced code), ``path`` (file paths) and ``body``. A check sees the
regions in its ``scope`` (default all; ``explanation`` = ``body``) minus its
``except_in``, e.g. ``except_in = ["quote", "path"]``.

Blocking is conservative: only a deterministic, error-severity violation of a check
configured to block (``block`` or ``validation.block_on_violation``) blocks, and only
while fewer than ``validation.max_repair_attempts`` repair reminders were issued in
the session; only such a block issues a repair reminder (which the hosts act on, see
:meth:`convmem.runtime.MemoryRuntime.repair_block`). Every other failure is advisory:
logged and shown by ``status`` and ``explain``. Scripts are non-deterministic unless
they declare otherwise. Nothing in :meth:`Validator.validate_new` raises; problems
become ``errors`` in the log row.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convmem.core.text import NumberMention, clip, numbers, paths
from convmem.preconditions import PreconditionDecision

if TYPE_CHECKING:
    from convmem.config import Settings
    from convmem.memory.store import MemoryStore

CHECK_TYPES = ("required_terms", "forbidden_terms", "numbers_with_conditions", "script")
SEVERITIES = ("error", "warning")
REGIONS = ("body", "quote", "path")
DEFAULT_WINDOW = 80
REMINDER_MAX_CHARS = 600
REMINDER_PREFIX = "Repair reminder (convmem validation"
TARGET = "assistant/message"


@dataclass(frozen=True)
class Violation:
    """One broken check; ``blocking`` means it is eligible to block (see module doc)."""

    check: str
    type: str
    message: str
    severity: str = "error"
    deterministic: bool = True
    blocking: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ValidationRun:
    """The outcome of all checks over one text (no session state involved)."""

    ok: bool  # no error-severity violation and no error
    checked: int  # checks that reached a verdict
    skipped: int  # checks that could not be evaluated (each has an entry in errors)
    deterministic: bool  # every check that reached a verdict is deterministic
    violations: tuple[Violation, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def error_violations(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.severity == "error")

    @property
    def blocking(self) -> bool:
        return any(v.blocking for v in self.violations)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return data | {"violations": list(data["violations"]), "errors": list(self.errors)}


class _CheckError(Exception):
    """A check could not be evaluated (bad configuration, script failure)."""


# --- text scanning ---------------------------------------------------------------------

_LATIN = "A-Za-z0-9_\u00c0-\u024f"
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
_INLINE_QUOTES = re.compile(r'"[^"\n]*"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』|`[^`\n]+`')
#: Spellings of one unit; the canonical name comes first in each group.
_UNIT_ALIASES = (
    "ms millisecond milliseconds 毫秒|s sec secs second seconds 秒 秒钟|min mins minute minutes"
    " 分钟|h hr hrs hour hours 小时|day days 天|rps req/s requests/s|token tokens|% percent"
    "|byte bytes|line lines 行"
)
_UNIT = {a: group.split()[0] for group in _UNIT_ALIASES.split("|") for a in group.split()}


def _unit(unit: str | None) -> str | None:
    return None if unit is None else _UNIT.get(unit.lower(), unit.lower())


def _term_regex(term: str) -> re.Pattern[str]:
    term = unicodedata.normalize("NFC", term.strip())
    body = r"\s+".join(re.escape(part) for part in term.split())
    if re.match(f"[{_LATIN}]", term[0]):
        body = f"(?<![{_LATIN}])" + body
    if re.match(f"[{_LATIN}]", term[-1]):
        body += f"(?![{_LATIN}])"
    return re.compile(body, re.IGNORECASE)


class _Scan:
    """One text with its regions and number mentions, computed on first use."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def quotes(self) -> list[tuple[int, int]]:
        spans = [m.span() for m in _FENCE.finditer(self.text)]
        return spans + [m.span() for m in _INLINE_QUOTES.finditer(self.text)]

    @cached_property
    def paths(self) -> list[tuple[int, int]]:
        return [m.span() for p in paths(self.text) for m in re.finditer(re.escape(p), self.text)]

    @cached_property
    def mentions(self) -> list[NumberMention]:
        return numbers(self.text)

    def region(self, start: int, end: int) -> str:
        if any(a <= start and end <= b for a, b in self.quotes):
            return "quote"
        if any(a <= start and end <= b for a, b in self.paths):
            return "path"
        return "body"

    def find(self, term: str, regions: frozenset[str]) -> list[re.Match[str]]:
        return [
            m for m in _term_regex(term).finditer(self.text) if self.region(*m.span()) in regions
        ]


# --- checks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Check:
    id: str
    type: str
    severity: str
    deterministic: bool
    block: bool
    regions: frozenset[str]
    config: Mapping[str, Any]

    def violation(self, message: str) -> Violation:
        blocking = self.deterministic and self.block and self.severity == "error"
        return Violation(self.id, self.type, message, self.severity, self.deterministic, blocking)


def _str_list(config: Mapping[str, Any], key: str, *, required: bool = True) -> list[str]:
    value = config.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, str) and v.strip() for v in value
    ):
        raise _CheckError(f"`{key}` must be a list of non-empty strings")
    if required and not value:
        raise _CheckError(f"`{key}` must not be empty")
    return list(value)


def _regions(config: Mapping[str, Any]) -> frozenset[str]:
    scope = {s.replace("explanation", "body") for s in _str_list(config, "scope", required=False)}
    excepted = set(_str_list(config, "except_in", required=False))
    unknown = sorted((scope | excepted) - set(REGIONS))
    if unknown:
        raise _CheckError(f"unknown scope {', '.join(unknown)} (use body, quote, path)")
    return frozenset((scope or set(REGIONS)) - excepted)


def _check_id(index: int, raw: Mapping[str, Any]) -> str:
    return str(raw.get("id") or f"{raw.get('type')}#{index + 1}")


def _parse_check(index: int, raw: Mapping[str, Any], default_block: bool) -> _Check:
    ctype = raw.get("type")
    if ctype not in CHECK_TYPES:
        raise _CheckError(f"unknown type {ctype!r} (expected one of {', '.join(CHECK_TYPES)})")
    severity = raw.get("severity", "error")
    if severity not in SEVERITIES:
        raise _CheckError("`severity` must be error or warning")
    declared = raw.get("deterministic")  # built-ins are, scripts must say so
    deterministic = bool(declared) if ctype == "script" else declared is not False
    block = bool(raw.get("block", default_block))
    return _Check(_check_id(index, raw), ctype, severity, deterministic, block, _regions(raw), raw)


def _terms(check: _Check, scan: _Scan) -> list[Violation]:
    """``required_terms`` (each at least ``min_count`` times) and ``forbidden_terms``."""
    forbidden = check.type == "forbidden_terms"
    need = 1 if forbidden else check.config.get("min_count", 1)
    if isinstance(need, bool) or not isinstance(need, int) or need < 1:
        raise _CheckError("`min_count` must be a whole number ≥ 1")
    out = []
    for term in _str_list(check.config, "terms"):
        hits = scan.find(term, check.regions)
        if forbidden and hits:
            msg = f'forbidden term "{term}" appears {len(hits)} time(s)'
            out.append(check.violation(f"{msg}, first at character {hits[0].start()}"))
        elif not forbidden and len(hits) < need:
            more = "" if need == 1 else f" (needs {need})"
            out.append(check.violation(f'required term "{term}" appears {len(hits)} time(s){more}'))
    return out


def _number_spec(entry: Any) -> tuple[float, str | None] | None:
    """``(value, canonical unit or None)`` for a number, ``{value, unit}`` or "3000 tokens"."""
    if isinstance(entry, bool):
        return None
    if isinstance(entry, int | float):
        return float(entry), None
    if isinstance(entry, Mapping) and isinstance(entry.get("value"), int | float):
        unit = entry.get("unit")
        return float(entry["value"]), _unit(unit) if isinstance(unit, str) else None
    if isinstance(entry, str):
        found = numbers(entry.strip())
        if len(found) == 1 and found[0].start == 0 and found[0].end == len(entry.strip()):
            return found[0].value, _unit(found[0].unit)
    return None


def _matches(mention: NumberMention, spec: tuple[float, str | None]) -> bool:
    value, unit = spec
    return mention.value == value and (unit is None or _unit(mention.unit) == unit)


def _numbers_with_conditions(check: _Check, scan: _Scan) -> list[Violation]:
    cfg = check.config
    window = cfg.get("window", DEFAULT_WINDOW)
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise _CheckError("`window` must be a whole number ≥ 0")
    entries, forbidden = cfg.get("numbers", []), cfg.get("forbidden_numbers", [])
    if not isinstance(entries, list | tuple) or not isinstance(forbidden, list | tuple):
        raise _CheckError("`numbers` and `forbidden_numbers` must be lists")
    if not entries and not forbidden:
        raise _CheckError("needs `numbers` or `forbidden_numbers`")
    mentions = [m for m in scan.mentions if scan.region(m.start, m.end) in check.regions]
    out = []
    for entry in entries:
        spec = _number_spec(entry)
        if spec is None or not isinstance(entry, Mapping):
            raise _CheckError(f"`numbers` entry {entry!r} needs a numeric `value`")
        cond_specs = {c: _number_spec(c) for c in _str_list(entry, "conditions")}
        for m in mentions:
            if not _matches(m, spec):
                continue
            lo, hi = max(0, m.start - window), m.end + window
            near = [n for n in scan.mentions if n is not m and lo <= n.start and n.end <= hi]
            # a condition is met by its words or, if it is a number, by an equal number
            missing = [
                f'"{c}"'
                for c, cs in cond_specs.items()
                if not _term_regex(c).search(scan.text, lo, hi)
                and not (cs and any(_matches(n, cs) for n in near))
            ]
            if missing:
                msg = f'number "{m.raw}" at character {m.start} is stated without'
                out.append(
                    check.violation(f"{msg} {', '.join(missing)} within {window} characters")
                )
    for entry in forbidden:
        spec = _number_spec(entry)
        if spec is not None:
            hits = [m.raw for m in mentions if _matches(m, spec)]
        elif isinstance(entry, str) and entry.strip():
            hits = [h.group() for h in scan.find(entry, check.regions)]
        else:
            raise _CheckError(f"`forbidden_numbers` entry {entry!r} is not a number or string")
        if hits:
            label = entry if isinstance(entry, str) else json.dumps(entry, sort_keys=True)
            msg = f'forbidden number "{label}" is stated {len(hits)} time(s)'
            out.append(check.violation(f'{msg}, first as "{hits[0]}"'))
    return out


# The child process that runs a script check: no convmem import, JSON in and out; the
# script's own prints go to stderr so they cannot corrupt the result.
_RUNNER = r"""
import importlib, importlib.util, json, os, sys
payload = json.loads(sys.stdin.read())
out, sys.stdout = sys.stdout, sys.stderr
sys.path[:0] = [p for p in payload["sys_path"] if p not in sys.path]
try:
    target = payload["module"]
    if payload["is_file"]:
        sys.path.insert(0, os.path.dirname(target))
        spec = importlib.util.spec_from_file_location("convmem_user_check", target)
        if spec is None or spec.loader is None:
            raise ImportError("cannot load " + target)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    fn = getattr(module, payload["function"])
    result = json.dumps({"result": fn(payload["text"], payload["context"])}, default=str)
except BaseException as exc:
    result = json.dumps({"error": type(exc).__name__ + ": " + str(exc)})
out.write(result)
out.flush()
"""


@dataclass(frozen=True)
class _ScriptRunner:
    """Runs ``script`` checks in a child Python with a hard time limit."""

    timeout: float
    base_dirs: tuple[Path, ...]  # where a relative module path is looked up, in order

    def _locate(self, module: str) -> tuple[str, bool]:
        path = Path(module).expanduser()
        looks_like_file = module.endswith(".py") or "/" in module or "\\" in module
        candidates = [path] if path.is_absolute() else [d / path for d in self.base_dirs]
        for candidate in candidates:
            if candidate.is_file():
                return str(candidate.resolve()), True
        if looks_like_file:
            raise _CheckError(f"script module file {module!r} not found")
        return module, False

    def run(self, check: _Check, text: str, context: Mapping[str, Any]) -> list[Violation]:
        module = check.config.get("module")
        function = check.config.get("function", "check")
        if not isinstance(module, str) or not module.strip() or not isinstance(function, str):
            raise _CheckError("`module` (file path or dotted name) must be a string")
        target, is_file = self._locate(module.strip())
        payload = {
            "module": target,
            "is_file": is_file,
            "function": function,
            "text": text,
            "context": {**context, "check": dict(check.config)},
            "sys_path": [p for p in sys.path if p],
        }
        env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
        try:  # on timeout subprocess.run kills the child before raising
            proc = subprocess.run(
                [sys.executable or "python3", "-c", _RUNNER],
                input=json.dumps(payload, default=str),
                capture_output=True,
                encoding="utf-8",
                errors="replace",
                env=env,
                timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            raise _CheckError(
                f"script timed out after {self.timeout:g} s and was stopped"
            ) from None
        try:
            reply = json.loads(proc.stdout)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            reply = {"error": f"exit code {proc.returncode}: {clip(proc.stderr.strip(), 300)}"}
        if "error" in reply:
            raise _CheckError(f"script raised {clip(str(reply['error']), 300)}")
        return self._violations(check, reply.get("result"))

    @staticmethod
    def _violations(check: _Check, result: Any) -> list[Violation]:
        if isinstance(result, bool):
            return [] if result else [check.violation("script check failed")]
        if not isinstance(result, list):
            raise _CheckError(f"script returned {type(result).__name__}; expected bool or list")
        out = []
        for item in result:
            item = item if isinstance(item, Mapping) else {"message": str(item)}
            message = clip(str(item.get("message") or json.dumps(item, sort_keys=True)), 300)
            severity = item.get("severity")
            own = replace(check, severity=severity) if severity in SEVERITIES else check
            out.append(own.violation(message))
        return out


# --- the validator -----------------------------------------------------------------------


class Validator:
    """Runs the configured checks and preconditions and keeps the audit trail."""

    def __init__(self, store: MemoryStore, settings: Settings) -> None:
        self.store = store
        self.enabled = bool(settings["validation.enabled"])
        self.raw_checks: tuple[Mapping[str, Any], ...] = tuple(settings["validation.checks"])
        self.preconditions: tuple[Mapping[str, Any], ...] = settings["validation.preconditions"]
        self.block_default = bool(settings["validation.block_on_violation"])
        self.max_attempts = int(settings["validation.max_repair_attempts"])
        base_dirs = [Path(os.getcwd())] if os.path.isdir(".") else []
        if settings.source not in ("defaults", ""):
            base_dirs.append(Path(settings.source).parent)
        base_dirs.append(settings.data_dir)
        timeout = float(settings["validation.script_timeout_seconds"])
        self.scripts = _ScriptRunner(timeout, tuple(base_dirs))

    # --- checks ------------------------------------------------------------------------

    def validate_text(self, text: str, context: Mapping[str, Any] | None = None) -> ValidationRun:
        """Every configured check over one text; pure apart from running script checks."""
        scan = _Scan(text)
        violations: list[Violation] = []
        errors: list[str] = []
        checked, deterministic = 0, True
        for index, raw in enumerate(self.raw_checks):
            check_id = _check_id(index, raw)
            try:
                check = _parse_check(index, raw, self.block_default)
                if check.type == "script":
                    found = self.scripts.run(check, text, context or {})
                else:
                    found = _RUNNERS[check.type](check, scan)
            except _CheckError as exc:
                errors.append(f"check {check_id}: {exc}")
                continue
            except Exception as exc:  # a bug must not cost the host its turn
                errors.append(f"check {check_id}: internal error {type(exc).__name__}: {exc}")
                continue
            checked += 1
            deterministic = deterministic and check.deterministic
            violations.extend(found)
        ok = not errors and not any(v.severity == "error" for v in violations)
        skipped = len(self.raw_checks) - checked
        return ValidationRun(ok, checked, skipped, deterministic, tuple(violations), tuple(errors))

    def validate_new(self, session_id: str) -> list[dict[str, Any]]:
        """Validate assistant messages after the checkpoint; one log row per message."""
        try:
            return self._validate_new(session_id)
        except Exception as exc:
            error = f"validation failed: {type(exc).__name__}: {exc}"
            run = ValidationRun(False, 0, len(self.raw_checks), True, errors=(error,))
            try:
                return [self._log(session_id, None, run, False, None)]
            except Exception:
                return []

    def _log(
        self, session_id: str, seq: int | None, run: ValidationRun, blocked: bool, reminder: Any
    ) -> dict[str, Any]:
        log = {"session_id": session_id, "event_seq": seq, "target": TARGET, **run.as_dict()}
        log |= {"blocked": blocked, "repair_reminder": reminder}
        log["id"] = self.store.insert_validation_log(log)
        return log

    def _validate_new(self, session_id: str) -> list[dict[str, Any]]:
        cp = self.store.checkpoint(session_id)
        until = cp.last_event_seq
        if until <= cp.last_validate_seq:
            return []
        if not self.enabled or not self.raw_checks:
            self.store.advance_checkpoint(session_id, "last_validate_seq", until)
            return []
        events = self.store.events(
            session_id, after=cp.last_validate_seq, until=until, types=[TARGET]
        )
        runs = [
            (e, self.validate_text(e.text, {"session_id": session_id, "event_seq": e.seq}))
            for e in events
            if e.text.strip()
        ]
        logs: list[dict[str, Any]] = []
        with self.store.transaction():
            # another process may have validated the same messages meanwhile
            done = self.store.checkpoint(session_id).last_validate_seq
            runs = [(e, run) for e, run in runs if e.seq > done]
            used = self.store.count_repair_reminders(session_id) if runs else 0
            for i, (event, run) in enumerate(runs):
                # only the newest message can still be repaired; older ones are history.
                # Only a blocking failure (deterministic, configured to block, an
                # error) is repaired: a script's judgement or a warning stays advisory.
                blocked = i == len(runs) - 1 and used < self.max_attempts and run.blocking
                reminder = self._reminder(run, used + 1, event.seq) if blocked else None
                logs.append(self._log(session_id, event.seq, run, blocked, reminder))
            self.store.advance_checkpoint(session_id, "last_validate_seq", until)
        return logs

    def _reminder(self, run: ValidationRun, attempt: int, seq: int) -> str:
        head = (
            f"{REMINDER_PREFIX}, attempt {attempt} of {self.max_attempts}): the assistant"
            f" reply at seq {seq} failed configured checks; correct it in the next reply."
        )
        lines = [f"- [{v.check}] {clip(v.message, 160)}" for v in run.violations if v.blocking]

        def render(shown: int) -> str:
            more = f"\n- … and {len(lines) - shown} more" if shown < len(lines) else ""
            return "\n".join([head, *lines[:shown]]) + more

        shown = len(lines)
        while shown and len(render(shown)) > REMINDER_MAX_CHARS:
            shown -= 1
        return clip(render(shown), REMINDER_MAX_CHARS)

    def repair_reminder(self, session_id: str) -> str | None:
        """The reminder issued for the latest run, while it is still the latest."""
        if not self.enabled:
            return None
        try:
            latest = self.store.latest_validation_log(session_id)
        except Exception:
            return None
        return str(latest["repair_reminder"]) if latest and latest["repair_reminder"] else None

    # --- preconditions -------------------------------------------------------------------

    def check_preconditions(
        self, session_id: str, tool_name: str, tool_input: Mapping[str, Any]
    ) -> PreconditionDecision:
        """Deny a tool call that breaks a configured precondition; fail open on errors."""
        from convmem.preconditions import check

        try:
            return check(self.preconditions, tool_name, tool_input)
        except Exception:
            return PreconditionDecision(True)


_RUNNERS = {
    "required_terms": _terms,
    "forbidden_terms": _terms,
    "numbers_with_conditions": _numbers_with_conditions,
}
