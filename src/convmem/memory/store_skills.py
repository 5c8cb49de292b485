"""Store methods for skill versions, current skill files, rules and rule overrides.

All SQL over ``skill_versions``, ``skill_files``, ``rules``, ``rule_overrides`` and
``rules_fts`` lives here; :mod:`convmem.skills` decides what to write. Rows are
returned as plain dicts, every list in a fixed order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convmem.core.text import canonical_json, sha256_hex, stable_id

if TYPE_CHECKING:
    from convmem.core.db import MemoryDatabase


@dataclass(frozen=True)
class RuleRecord:
    """One parsed rule: ``rule_key`` is stable per skill, ``line`` is 1-based in the file."""

    rule_key: str
    text: str
    category: str
    scope: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class SkillRecord:
    """One parsed skill file: frontmatter fields, the whole content and its rules."""

    name: str
    description: str
    when_to_use: str
    invocation: str
    enabled: bool
    content: str
    rules: tuple[RuleRecord, ...]


#: Columns a caller passes to :meth:`SkillStoreMixin.upsert_rule`.
RULE_COLUMNS = (
    "id",
    "skill_name",
    "rule_key",
    "text",
    "category",
    "scope_json",
    "source_path",
    "source_line",
    "active",
    "content_hash",
    "version_id",
)

#: The effective view: an override's non-null fields replace the parsed ones, except
#: that a rule which vanished from its file stays inactive (the file owns the text).
#: Flags are spelled as CASE so that both backends return 0/1 integers.
_RULE_SELECT = (
    "SELECT r.id, r.skill_name, r.rule_key, r.text, r.source_path, r.source_line,"
    " coalesce(o.category, r.category) AS category,"
    " coalesce(o.scope_json, r.scope_json) AS scope_json,"
    " CASE WHEN r.active <> 0 AND coalesce(o.active, 1) <> 0 THEN 1 ELSE 0 END AS active,"
    " CASE WHEN o.category IS NULL THEN 0 ELSE 1 END AS o_category,"
    " CASE WHEN o.active IS NULL THEN 0 ELSE 1 END AS o_active,"
    " CASE WHEN o.scope_json IS NULL THEN 0 ELSE 1 END AS o_scope"
    " FROM rules r LEFT JOIN rule_overrides o ON o.rule_id = r.id"
)
_RULE_ORDER = " ORDER BY r.skill_name, r.source_line, r.rule_key"


class SkillStoreMixin:
    db: MemoryDatabase
    now: Callable[[], str]

    # --- skill versions ----------------------------------------------------------------

    def skill_version_by_hash(self, name: str, content_hash: str) -> dict[str, Any] | None:
        row = self.db.one(
            "SELECT * FROM skill_versions WHERE name = ? AND content_hash = ?", (name, content_hash)
        )
        return None if row is None else dict(row)

    def latest_skill_version(self, name: str) -> dict[str, Any] | None:
        row = self.db.one(
            "SELECT * FROM skill_versions WHERE name = ? ORDER BY version DESC LIMIT 1", (name,)
        )
        return None if row is None else dict(row)

    def skill_versions(self, name: str) -> list[dict[str, Any]]:
        """Every stored version of a skill, oldest first (content included)."""
        rows = self.db.query(
            "SELECT * FROM skill_versions WHERE name = ? ORDER BY version", (name,)
        )
        return [dict(r) for r in rows]

    def insert_skill_version(
        self,
        *,
        name: str,
        source: str,
        path: str,
        content: str,
        content_hash: str,
        version: int,
        supersedes: int | None,
    ) -> int:
        cur = self.db.execute(
            "INSERT INTO skill_versions (name, source, path, content, content_hash, version,"
            " supersedes, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (name, source, path, content, content_hash, version, supersedes, self.now()),
        )
        return int(cur.lastrowid or 0)

    def save_skill(self, skill: SkillRecord, path: str) -> dict[str, Any]:
        """Record a parsed skill file: a new version if its content is new, then its rules.

        Returns ``status`` (new, updated, reverted, moved or unchanged), ``version``,
        ``added`` and ``deactivated`` rule counts. Call inside a transaction.
        """
        digest = sha256_hex(skill.content)
        current = self.skill_file(skill.name)
        version = self.skill_version_by_hash(skill.name, digest)
        if version is not None:
            if current is None or current["version_id"] != version["id"]:
                status = "reverted"
            else:
                status = "unchanged" if current["path"] == path else "moved"
        else:
            latest = self.latest_skill_version(skill.name)
            number = latest["version"] + 1 if latest else 1
            version_id = self.insert_skill_version(
                name=skill.name,
                source="file",
                path=path,
                content=skill.content,
                content_hash=digest,
                version=number,
                supersedes=latest["id"] if latest else None,
            )
            version = {"id": version_id, "version": number}
            status = "updated" if latest else "new"
        result = {"status": status, "version": version["version"], "added": 0, "deactivated": 0}
        if status == "unchanged":
            return result
        self.upsert_skill_file(
            name=skill.name,
            version_id=version["id"],
            path=path,
            enabled=skill.enabled,
            description=skill.description,
            when_to_use=skill.when_to_use,
            invocation=skill.invocation,
        )
        before = set(self.active_rule_ids(skill.name))
        keep = []
        for rule in skill.rules:
            rule_id = stable_id("rule", skill.name, rule.rule_key)
            keep.append(rule_id)
            self.upsert_rule(
                {
                    "id": rule_id,
                    "skill_name": skill.name,
                    "rule_key": rule.rule_key,
                    "text": rule.text,
                    "category": rule.category,
                    "scope_json": canonical_json(list(rule.scope)),
                    "source_path": path,
                    "source_line": rule.line,
                    "active": 1,
                    "content_hash": sha256_hex(rule.text),
                    "version_id": version["id"],
                }
            )
        result["added"] = len(set(keep) - before)
        result["deactivated"] = self.deactivate_rules(skill.name, keep)
        return result

    # --- current skill files -----------------------------------------------------------

    def skill_file(self, name: str) -> dict[str, Any] | None:
        row = self.db.one(
            "SELECT f.*, v.version FROM skill_files f JOIN skill_versions v ON v.id = f.version_id"
            " WHERE f.name = ?",
            (name,),
        )
        return None if row is None else dict(row)

    def skill_files(self) -> list[dict[str, Any]]:
        """Current skill files with their version number and active rule count, by name."""
        rows = self.db.query(
            "SELECT f.*, v.version,"
            " (SELECT count(*) FROM rules r WHERE r.skill_name = f.name AND r.active = 1)"
            " AS active_rules"
            " FROM skill_files f JOIN skill_versions v ON v.id = f.version_id ORDER BY f.name"
        )
        return [dict(r) for r in rows]

    def upsert_skill_file(
        self,
        *,
        name: str,
        version_id: int,
        path: str,
        enabled: bool,
        description: str,
        when_to_use: str,
        invocation: str,
    ) -> None:
        self.db.execute(
            "INSERT INTO skill_files (name, version_id, path, enabled, description, when_to_use,"
            " invocation, updated_at) VALUES (?,?,?,?,?,?,?,?)"
            " ON CONFLICT(name) DO UPDATE SET version_id = excluded.version_id,"
            " path = excluded.path, enabled = excluded.enabled,"
            " description = excluded.description, when_to_use = excluded.when_to_use,"
            " invocation = excluded.invocation, updated_at = excluded.updated_at",
            (
                name,
                version_id,
                path,
                int(enabled),
                description,
                when_to_use,
                invocation,
                self.now(),
            ),
        )

    # --- rules -------------------------------------------------------------------------

    def active_rule_ids(self, skill_name: str) -> list[str]:
        rows = self.db.query(
            "SELECT id FROM rules WHERE skill_name = ? AND active = 1 ORDER BY id", (skill_name,)
        )
        return [str(r["id"]) for r in rows]

    def upsert_rule(self, rule: dict[str, Any]) -> None:
        """Insert a rule or refresh the stored one with the same id (never REPLACE: FTS)."""
        values = [rule[c] for c in RULE_COLUMNS]
        updates = ", ".join(f"{c} = excluded.{c}" for c in RULE_COLUMNS[1:])
        self.db.execute(
            f"INSERT INTO rules ({', '.join(RULE_COLUMNS)}) VALUES"
            f" ({','.join('?' * len(RULE_COLUMNS))}) ON CONFLICT(id) DO UPDATE SET {updates}",
            values,
        )

    def deactivate_rules(self, skill_name: str, keep: Iterable[str]) -> int:
        """Mark the skill's active rules not in ``keep`` inactive; return how many."""
        kept = sorted(set(keep))
        sql = "UPDATE rules SET active = 0 WHERE skill_name = ? AND active = 1"
        if kept:
            sql += f" AND id NOT IN ({','.join('?' * len(kept))})"
        cur = self.db.execute(sql, [skill_name, *kept])
        return max(cur.rowcount, 0)

    def rule_rows(self, skill_name: str | None = None) -> list[dict[str, Any]]:
        """Effective rules (``o_*``: which fields an override set), by skill, line, key."""
        if skill_name is None:
            rows = self.db.query(_RULE_SELECT + _RULE_ORDER)
        else:
            rows = self.db.query(
                _RULE_SELECT + " WHERE r.skill_name = ?" + _RULE_ORDER, (skill_name,)
            )
        return [dict(r) for r in rows]

    def rule_row(self, rule_id: str) -> dict[str, Any] | None:
        row = self.db.one(_RULE_SELECT + " WHERE r.id = ?", (rule_id,))
        return None if row is None else dict(row)

    def search_rule_ids(self, terms: Sequence[str]) -> list[str]:
        """Ids of active rules containing any term: FTS for ≥ 3 chars, LIKE for shorter."""
        long_terms = [t for t in terms if len(t) >= 3]
        short_terms = [t for t in terms if 0 < len(t) < 3]
        found: set[str] = set()
        if long_terms:
            match = " OR ".join('"' + t.replace('"', '""') + '"' for t in long_terms)
            rows = self.db.query(
                "SELECT r.id FROM rules_fts JOIN rules r ON r.rowid = rules_fts.rowid"
                " WHERE rules_fts MATCH ? AND r.active = 1",
                (match,),
            )
            found.update(str(r["id"]) for r in rows)
        if short_terms:
            cond = " OR ".join("text LIKE ? ESCAPE '\\'" for _ in short_terms)
            likes = [
                "%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                for t in short_terms
            ]
            rows = self.db.query(f"SELECT id FROM rules WHERE active = 1 AND ({cond})", likes)
            found.update(str(r["id"]) for r in rows)
        return sorted(found)

    # --- overrides ---------------------------------------------------------------------

    def rule_override(self, rule_id: str) -> dict[str, Any] | None:
        row = self.db.one("SELECT * FROM rule_overrides WHERE rule_id = ?", (rule_id,))
        return None if row is None else dict(row)

    def set_rule_override(
        self, rule_id: str, *, category: str | None, active: bool | None, scope_json: str | None
    ) -> None:
        """Set the given override fields of a rule; None keeps what an earlier override set."""
        self.db.execute(
            "INSERT INTO rule_overrides (rule_id, category, active, scope_json, updated_at)"
            " VALUES (?,?,?,?,?) ON CONFLICT(rule_id) DO UPDATE SET"
            " category = coalesce(excluded.category, rule_overrides.category),"
            " active = coalesce(excluded.active, rule_overrides.active),"
            " scope_json = coalesce(excluded.scope_json, rule_overrides.scope_json),"
            " updated_at = excluded.updated_at",
            (rule_id, category, None if active is None else int(active), scope_json, self.now()),
        )

    def delete_rule_override(self, rule_id: str) -> bool:
        cur = self.db.execute("DELETE FROM rule_overrides WHERE rule_id = ?", (rule_id,))
        return cur.rowcount > 0

    def has_skills(self) -> bool:
        """Whether any skill was ever ingested (lets assembly skip the skills layer)."""
        return bool(self.db.scalar("SELECT 1 FROM skill_files LIMIT 1"))
