"""Settings: one declarative table of name, default, bounds and help.

Values come from the defaults, then a TOML file (``--config FILE``, or
``config.toml`` in the data dir), then ``CONVMEM_HOME`` / ``--home`` for the data
dir. Numbers outside their bounds are clamped with a warning; an unknown key or a
value of the wrong type is a :class:`ConfigError` that names the key.

This module deliberately avoids heavy validation libraries: the Claude Code hook
starts a new process on every prompt and loads settings each time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from convmem.core.constants import COMPACTION_POLICIES, MAX_EVENT_TEXT_CHARS
from convmem.core.paths import ENV_HOME as ENV_HOME
from convmem.core.paths import platform_data_dir
from convmem.errors import ConfigError

ENV_STORE = "CONVMEM_STORE"
CONFIG_FILE_NAME = "config.toml"
DB_FILE_NAME = "memory.sqlite"


@dataclass(frozen=True)
class Setting:
    """One row of the settings table."""

    name: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    items: type | None = None  # element type for list settings


S = Setting
SETTINGS: tuple[Setting, ...] = (
    S("data_dir", "", "Folder for the database and logs; empty means the platform default."),
    S("store", "", "Storage URL; empty means the SQLite file in the data dir."),
    S(
        "postgresql.connect_timeout_seconds",
        10,
        "Give up connecting to a PostgreSQL store after this long (a hook then fails open).",
        1,
        600,
    ),
    S(
        "postgresql.statement_timeout_seconds",
        30.0,
        "Cancel a PostgreSQL statement that runs longer than this (0: never).",
        0,
        3600,
    ),
    # capture
    S("capture.enabled", True, "Record host events at all."),
    S("capture.max_text_chars", MAX_EVENT_TEXT_CHARS, "Characters kept per event.", 1000, 1e6),
    S("capture.redact_secrets", True, "Replace API keys, tokens and private keys before storage."),
    S("capture.drop_private", True, "Never store text inside <private>…</private>."),
    # archive
    S("archive.enabled", True, "Keep the full text of selected events beside the capped copy."),
    S(
        "archive.event_types",
        ("compaction/summary",),
        "Event types always archived (plus any event whose text was truncated).",
        items=str,
    ),
    S("archive.max_chars_per_event", 200_000, "Characters kept per archived event.", 1000, 5e6),
    # assembly
    S("assembly.soft_budget_tokens", 3000, "Token budget of the injected block.", 50, 200_000),
    S(
        "assembly.min_budget_tokens",
        600,
        "The budget never drops below this, not even a --budget or a host's budget.",
        0,
        200_000,
    ),
    S("assembly.skip_when_empty", True, "Inject nothing when there is nothing to say."),
    S(
        "assembly.evidence_types",
        ("user/message",),
        'Event types quoted verbatim as evidence; ["*"] quotes every type.',
        items=str,
    ),
    S(
        "assembly.locale",
        "auto",
        "Language of headers and notices: auto follows the person's recent messages.",
        choices=("auto", "zh", "en"),
    ),
    S(
        "assembly.max_context_share",
        0.10,
        "Share of what a host still shows that convmem's blocks may take (0: off); below 15%"
        " because a compaction can shrink the conversation around blocks it keeps.",
        0,
        0.9,
    ),
    S("assembly.max_evidence_chars", 600, "Characters quoted per evidence snippet.", 80, 20_000),
    S("assembly.max_evidence", 100, "Evidence snippets considered per block.", 0, 500),
    # memory
    S(
        "memory.scope",
        "project",
        "What a session remembers: its own events (session), or every session of its"
        " project when it has one (project).",
        choices=("session", "project"),
    ),
    # retrieval
    S("retrieval.min_score", 0.5, "Items scoring below this are omitted (with the reason).", 0, 10),
    S("retrieval.limit", 24, "Items selected per step.", 1, 100),
    S("retrieval.exact_match_boost", 0.5, "Weight of exact term, number and path hits.", 0, 5),
    S("retrieval.recency_boost", 0.1, "Bonus for evidence near the latest checkpoint.", 0, 2),
    S("retrieval.max_query_tokens", 160, "Query tokens used for ranking.", 8, 1000),
    S(
        "retrieval.standing_limit",
        12,
        "Newest user constraints and decisions always considered, even when unmatched.",
        0,
        100,
    ),
    # skills
    S(
        "skills.paths",
        (),
        "SKILL.md files or folders ingested by `skills ingest` with no args.",
        items=str,
    ),
    S("skills.include", (), "Only these skill names (empty: all).", items=str),
    S("skills.exclude", (), "Skill names never used.", items=str),
    S("skills.max_rules", 12, "Task-relevant rules per block.", 0, 200),
    S("skills.max_file_bytes", 1_000_000, "Larger SKILL.md files are refused.", 1000, 1e8),
    # validation
    S("validation.enabled", False, "Run the configured checks over assistant output."),
    S("validation.checks", (), "Check definitions (tables with a `type`).", items=dict),
    S("validation.preconditions", (), "File-operation preconditions.", items=dict),
    S(
        "validation.block_on_violation",
        False,
        "Checks block by default: a deterministic error keeps the host on a repair.",
    ),
    S(
        "validation.max_repair_attempts",
        2,
        "Repairs (blocks with a reminder) per conversation.",
        0,
        20,
    ),
    S("validation.script_timeout_seconds", 5.0, "Time limit of a script check.", 0.1, 120),
    # diagnostics
    S("diagnostics.assembly_log_retention", 500, "Assembly log rows kept per session.", 1, 1e6),
    S("diagnostics.log_file", "convmem.log", "Error log, relative to the data dir."),
    # compatibility
    S(
        "compatibility.compaction_policy",
        "auto",
        "What compaction to expect: auto and compaction-basic (a block at each step with"
        " input, back after a compaction), billion-context (one block after each"
        " compaction), none (nothing counts as visible).",
        choices=COMPACTION_POLICIES,
    ),
    S(
        "compatibility.reinject_after_compaction",
        True,
        "Bring back what a compaction hid (false: it counts as still visible).",
    ),
)
SETTINGS_BY_NAME = {s.name: s for s in SETTINGS}


@dataclass(frozen=True)
class Settings:
    """Resolved settings: ``settings["assembly.soft_budget_tokens"]`` or ``.get(...)``."""

    values: Mapping[str, Any]
    warnings: tuple[str, ...] = ()
    source: str = "defaults"
    data_dir: Path = field(default_factory=Path)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def with_values(self, **overrides: Any) -> Settings:
        """A copy with some values replaced (keys use ``__`` for dots)."""
        merged = dict(self.values)
        warnings = list(self.warnings)
        for key, value in overrides.items():
            name = key.replace("__", ".")
            merged[name] = _check(name, value, warnings)
        return replace(self, values=merged, warnings=tuple(warnings))

    @property
    def db_path(self) -> Path:
        return self.data_dir / DB_FILE_NAME

    @property
    def budget(self) -> int:
        return max(
            int(self["assembly.min_budget_tokens"]), int(self["assembly.soft_budget_tokens"])
        )


def default_data_dir() -> Path:
    """The platform's usual place for an application's data."""
    return Path(platform_data_dir())


def _show(value: Any) -> str:
    """A value for an error message, never longer than a line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(value: Any) -> str:
    return {bool: "true/false", int: "an integer", float: "a number", str: "a string"}.get(
        type(value), "a list"
    )


def _check(name: str, value: Any, warnings: list[str]) -> Any:
    spec = SETTINGS_BY_NAME.get(name)
    if spec is None:
        raise ConfigError(f"unknown setting {name!r}; see `convmem config --list` for valid names")
    default = spec.default
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"setting {name!r} must be true or false, not {_show(value)}")
        return value
    if isinstance(default, int | float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"setting {name!r} must be {_type_name(default)}, not {_show(value)}")
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            raise ConfigError(f"setting {name!r} must be a finite number, not {value!r}")
        if isinstance(default, int) and isinstance(value, float):
            if not value.is_integer():
                raise ConfigError(f"setting {name!r} must be an integer, not {_show(value)}")
            value = int(value)
        clamped = value
        if spec.low is not None and value < spec.low:
            clamped = type(default)(spec.low)
        if spec.high is not None and value > spec.high:
            clamped = type(default)(spec.high)
        if clamped != value:
            warnings.append(
                f"setting {name!r} = {_show(value)} is out of bounds; using {clamped!r}"
            )
        return type(default)(clamped)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ConfigError(f"setting {name!r} must be a string, not {_show(value)}")
        if spec.choices and value not in spec.choices:
            raise ConfigError(f"setting {name!r} must be one of {', '.join(spec.choices)}")
        return value
    if not isinstance(value, list | tuple):
        raise ConfigError(f"setting {name!r} must be a list, not {_show(value)}")
    item_type = spec.items or str
    for item in value:
        if not isinstance(item, item_type):
            raise ConfigError(f"setting {name!r} must be a list of {item_type.__name__} values")
    return tuple(value)


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name not in SETTINGS_BY_NAME:
            if not any(s.startswith(name + ".") for s in SETTINGS_BY_NAME):
                raise ConfigError(f"unknown setting section {name!r}")
            flat.update(_flatten(value, name + "."))
        elif name not in SETTINGS_BY_NAME and any(
            s.startswith(name + ".") for s in SETTINGS_BY_NAME
        ):
            raise ConfigError(
                f"{name!r} is a section of settings, not a value: write [{name}] and its"
                " settings below it (`convmem config --list` shows them)"
            )
        else:
            flat[name] = value
    return flat


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ConfigError(f"settings file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"settings file {path} is not valid TOML: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"settings file {path} is nested too deeply") from None


def load_settings(
    config_file: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve settings: defaults < TOML file < environment < ``home`` < ``overrides``."""
    env = os.environ if env is None else env
    warnings: list[str] = []
    values = {s.name: s.default for s in SETTINGS}
    home_dir = Path(home) if home else (Path(env[ENV_HOME]) if env.get(ENV_HOME) else None)
    source = "defaults"
    path = Path(config_file) if config_file else None
    if path is None:
        candidate = (home_dir or default_data_dir()) / CONFIG_FILE_NAME
        path = candidate if candidate.is_file() else None
    if path is not None:
        for name, value in _flatten(_read_toml(path)).items():
            values[name] = _check(name, value, warnings)
        source = str(path)
    for name, value in (overrides or {}).items():
        values[name] = _check(name, value, warnings)
    if env.get(ENV_STORE) and not (overrides and "store" in overrides):
        values["store"] = env[ENV_STORE]
    if home_dir is not None:
        data_dir = home_dir
    elif values["data_dir"]:
        data_dir = Path(values["data_dir"]).expanduser()
    else:
        data_dir = default_data_dir()
    values["data_dir"] = str(data_dir)
    return Settings(values=values, warnings=tuple(warnings), source=source, data_dir=data_dir)


def settings_table() -> list[dict[str, Any]]:
    """The table as data, for `convmem config --list` and the generated docs."""
    rows = []
    for s in SETTINGS:
        bounds = ""
        if s.low is not None or s.high is not None:
            bounds = f"{s.low:g} .. {s.high:g}"
        elif s.choices:
            bounds = " | ".join(s.choices)
        default = list(s.default) if isinstance(s.default, tuple) else s.default
        rows.append({"name": s.name, "default": default, "bounds": bounds, "help": s.help})
    return rows
