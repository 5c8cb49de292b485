"""Skills: parsing SKILL.md into versioned rules, categories, scopes, overrides, selection."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, Cli, new_store
from convmem.config import Settings, load_settings
from convmem.errors import ConfigError, NotFoundError
from convmem.memory.store import MemoryStore
from convmem.skills import (
    DYNAMIC_STATE_WARNING,
    RuleView,
    SkillManager,
    classify,
    extract_scopes,
    parse_skill,
)

SKILLS = FIXTURES / "skills"
RELEASE = SKILLS / "release" / "SKILL.md"


def _manager(settings: Settings | None = None, store: MemoryStore | None = None) -> SkillManager:
    return SkillManager(store or new_store(), settings or load_settings(env={}))


def _write(folder: Path, text: str, name: str = "SKILL.md") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _by_line(views: list[RuleView]) -> dict[int, RuleView]:
    return {v.source_line: v for v in views}


SIMPLE = """---
name: {name}
description: {desc}
---

## Rules

- Never commit secrets to {name}.
- Always run the linter before pushing {name}.
"""


# --- parsing a real-looking file ------------------------------------------------------------


def test_release_skill_is_parsed_into_categorised_rules_with_lines() -> None:
    manager = _manager()
    assert not manager.store.has_skills()
    report = manager.ingest_paths([RELEASE])
    assert report.problems == [] and manager.store.has_skills()
    assert [(f.name, f.status, f.version, f.rules) for f in report.files] == [
        ("release", "new", 1, 17)
    ]
    rules = _by_line(manager.rules("release"))
    expected = {
        10: ("reference", ("body",), "This skill describes how we ship orders-api."),
        14: ("workflow", ("body",), "Run the full test suite with `make test`."),
        15: ("workflow", ("body",), "Bump the version in pyproject.toml."),
        16: ("workflow", ("body",), "Tag the commit and push the tag."),
        20: (
            "constraint",
            ("body",),
            "Always update CHANGELOG.md before tagging, including the migration notes.",
        ),
        22: ("prohibition", ("body",), "Never push directly to the main branch."),
        23: ("prohibition", ("path",), 'Do not use the word "hotfix" in file paths.'),
        24: ("preference", ("body",), "Prefer small release notes, ideally under 20 lines."),
        25: (
            "current_state",
            ("body",),
            "The service currently runs on Python 3.11 in production.",
        ),
        26: ("reference", ("body",), "See docs/release.md for the history of this process."),
        36: ("reference", ("body",), "The changelog lives in the repository root."),
        47: ("constraint", ("body",), "发布说明必须使用中文和英文两种语言。"),
        48: ("prohibition", ("body",), "禁止在周五下午发布。"),
        49: ("preference", ("explanation",), "尽量在解释中给出回滚步骤。"),
        50: ("current_state", ("body",), "目前生产环境使用 PostgreSQL 16。"),
    }
    for line, (category, scope, text) in expected.items():
        rule = rules[line]
        assert (rule.category, rule.scope, rule.text) == (category, scope, text), line
        assert rule.source_path == str(RELEASE) and rule.active
        assert rule.id.startswith("rule_release_")
    # Two sentences of one paragraph line become two rules on the same line.
    line35 = [v.text for v in manager.rules("release") if v.source_line == 35]
    assert line35 == [
        "Release notes are written in English.",
        "Customer quotes stay verbatim in code blocks and quotes.",
    ]
    texts = " ".join(v.text for v in manager.rules())
    for not_a_rule in ("make release", "code is not a rule", "platform team", "maintainers"):
        assert not_a_rule not in texts
    (skill,) = manager.list_skills()
    assert skill == {
        "name": "release",
        "path": str(RELEASE),
        "version": 1,
        "enabled": True,
        "used": True,
        "description": "Cut a release of the orders-api service and publish it.",
        "when_to_use": "Use when the user asks to release, tag or publish a new version.",
        "invocation": "/release",
        "active_rules": 17,
    }


def test_chinese_skill_and_when_to_use_with_a_hyphen() -> None:
    manager = _manager()
    manager.ingest_paths([SKILLS / "zh-writing"])
    (skill,) = manager.list_skills()
    assert skill["when_to_use"] == "用户要求撰写中文文档时使用。"
    got = [(v.source_line, v.category, v.scope) for v in manager.rules("zh-writing")]
    assert got == [
        (11, "workflow", ("body",)),
        (12, "workflow", ("body",)),
        (16, "prohibition", ("quote",)),
        (17, "preference", ("body",)),  # "除了引用以外" is an exemption, not a scope
        (18, "prohibition", ("body",)),
    ]


def test_render_and_label() -> None:
    manager = _manager()
    manager.ingest_paths([RELEASE])
    rules = _by_line(manager.rules())
    assert rules[22].render() == "Never push directly to the main branch."
    assert rules[23].render() == 'Do not use the word "hotfix" in file paths. [scope: path]'
    assert rules[25].render() == (
        "The service currently runs on Python 3.11 in production. " + DYNAMIC_STATE_WARNING
    )
    assert DYNAMIC_STATE_WARNING == (
        "[dynamic state: verify against current data; not a fixed check]"
    )
    assert rules[22].label == f"rule {RELEASE}:22"


@pytest.mark.parametrize(
    ("text", "numbered", "in_workflow", "category"),
    [
        ("You must sign every commit.", False, False, "constraint"),
        ("Always pin dependency versions.", False, False, "constraint"),
        ("A changelog entry is required.", False, False, "constraint"),
        ("Never force-push.", False, False, "prohibition"),
        ("You must not edit generated files.", False, False, "prohibition"),
        ("Don't log tokens.", False, False, "prohibition"),
        ("Do not log tokens.", False, False, "prohibition"),
        ("Prefer composition over inheritance.", False, False, "preference"),
        ("Tests should be fast.", False, False, "preference"),
        ("Ideally keep functions short.", False, False, "preference"),
        ("The API currently returns XML.", False, False, "current_state"),
        ("As of May the build uses Bazel.", False, False, "current_state"),
        ("The CLI now uses click.", False, False, "current_state"),
        ("The SDK is at version 4.2.", False, False, "current_state"),
        ("See the wiki for details.", False, False, "reference"),
        ("Open the dashboard.", True, False, "workflow"),
        ("Never skip this.", True, False, "prohibition"),
        ("Never skip this.", False, True, "workflow"),
        ("提交前必须运行测试。", False, False, "constraint"),
        ("务必备份数据。", False, False, "constraint"),
        ("禁止直接修改生产数据库。", False, False, "prohibition"),
        ("不要提交密钥。", False, False, "prohibition"),
        ("不得超过五十行。", False, False, "prohibition"),
        ("不能使用全局变量。", False, False, "prohibition"),
        ("建议使用类型注解。", False, False, "preference"),
        ("尽量保持函数简短。", False, False, "preference"),
        ("优先使用标准库。", False, False, "preference"),
        ("目前使用 Python 3.11。", False, False, "current_state"),
        ("当前版本是 2.3。", False, False, "current_state"),
        ("现在部署在 k8s 上。", False, False, "current_state"),
        ("参见设计文档。", False, False, "reference"),
    ],
)
def test_classify(text: str, numbered: bool, in_workflow: bool, category: str) -> None:
    assert classify(text, numbered=numbered, in_workflow=in_workflow) == category


@pytest.mark.parametrize(
    ("text", "scopes"),
    [
        ("Never use emoji.", ["body"]),
        ("Keep identifiers in English in code blocks.", ["quote"]),
        ("Leave quoted text unchanged.", ["quote"]),
        ("Use lowercase file names.", ["path"]),
        ("No spaces in file paths.", ["path"]),
        ("Use plain words in explanations.", ["explanation"]),
        ("Use plain words when explaining and in file names.", ["path", "explanation"]),
        ("Never write TODO in body text or code blocks.", ["body", "quote"]),
        ("Never write TODO, except in code blocks.", ["body"]),
        ("不要在代码块中翻译标识符。", ["quote"]),
        ("路径中不要使用中文。", ["path"]),
        ("解释时使用简单的词。", ["explanation"]),
        ("正文中不要使用英文缩写。", ["body"]),
        ("不要使用英文，除了引用以外。", ["body"]),
    ],
)
def test_extract_scopes(text: str, scopes: list[str]) -> None:
    assert extract_scopes(text) == scopes


def test_parse_details_fences_duplicates_and_continuations() -> None:
    text = (
        "---\nname: t\n---\n"  # lines 1-3
        "# Title\n"  # 4
        "~~~\n- not a rule inside a fence\n~~~\n"  # 5-7
        "- Same line twice.\n"  # 8
        "- Same line twice.\n"  # 9
        "1) Step with a paren.\n"  # 10
        "- [ ] Checkbox item here.\n"  # 11
        "> Quoted advice should count.\n"  # 12
        "- x\n"  # 13: too short to be a rule
    )
    skill = parse_skill(text, "fallback")
    assert skill.name == "t"
    got = [(r.line, r.text, r.category) for r in skill.rules]
    assert got == [
        (8, "Same line twice.", "reference"),
        (9, "Same line twice.", "reference"),
        (10, "Step with a paren.", "workflow"),
        (11, "Checkbox item here.", "reference"),
        (12, "Quoted advice should count.", "preference"),
    ]
    assert len({r.rule_key for r in skill.rules}) == 5
    assert skill.rules[1].rule_key == skill.rules[0].rule_key + "-2"


def test_no_frontmatter_takes_the_folder_name(tmp_path: Path) -> None:
    manager = _manager()
    _write(tmp_path / "plain-skill", "# Plain\n\n- Always say hello first.\n")
    report = manager.ingest_paths([tmp_path])
    assert report.problems == [] and report.files[0].name == "plain-skill"
    assert manager.rules()[0].category == "constraint"


# --- versioning ------------------------------------------------------------------------------


def test_versioning_keeps_ids_and_deactivates_vanished_rules(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m.sqlite")
    manager = _manager(store=store)
    path = tmp_path / "skills" / "release" / "SKILL.md"
    path.parent.mkdir(parents=True)
    shutil.copy(RELEASE, path)
    first = manager.ingest_paths([path])
    v1 = {v.text: v for v in manager.rules()}

    again = manager.ingest_paths([path])
    assert [(f.status, f.version, f.added, f.deactivated) for f in again.files] == [
        ("unchanged", 1, 0, 0)
    ]
    assert len(store.skill_versions("release")) == 1
    assert {v.text: v for v in manager.rules()} == v1

    original = path.read_text(encoding="utf-8")
    edited = original.replace("- Never push directly to the main branch.\n", "").replace(
        "## Rules\n\n", "## Rules\n\n- Never release on a Friday afternoon.\n"
    )
    path.write_text(edited, encoding="utf-8")
    second = manager.ingest_paths([path])
    assert [(f.status, f.version, f.added, f.deactivated) for f in second.files] == [
        ("updated", 2, 1, 1)
    ]
    versions = store.skill_versions("release")
    assert [(v["version"], v["supersedes"]) for v in versions] == [
        (1, None),
        (2, versions[0]["id"]),
    ]
    v2 = {v.text: v for v in manager.rules()}
    gone = v2["Never push directly to the main branch."]
    assert gone.id == v1[gone.text].id and not gone.active
    kept = v2["Always update CHANGELOG.md before tagging, including the migration notes."]
    assert kept.id == v1[kept.text].id and kept.active and kept.source_line == 21
    assert v2["Never release on a Friday afternoon."].active
    assert len(v2) == len(v1) + 1  # nothing is deleted

    path.write_text(original, encoding="utf-8")
    third = manager.ingest_paths([path])
    assert [(f.status, f.version) for f in third.files] == [("reverted", 1)]
    assert len(store.skill_versions("release")) == 2
    v3 = {v.text: v for v in manager.rules()}
    assert v3["Never push directly to the main branch."].active
    assert not v3["Never release on a Friday afternoon."].active
    assert first.files[0].version == 1
    assert store.integrity_check() == []


def test_edited_rule_text_is_found_by_search_and_the_old_text_is_not(tmp_path: Path) -> None:
    manager = _manager()
    path = _write(tmp_path / "s", SIMPLE.format(name="alpha", desc="Alpha things."))
    manager.ingest_paths([path])
    assert manager.select_rules("secrets", 5)[0].text == "Never commit secrets to alpha."
    path.write_text(path.read_text().replace("secrets", "credentials"), encoding="utf-8")
    manager.ingest_paths([path])
    assert manager.select_rules("secrets", 5) == []
    assert manager.select_rules("credentials", 5)[0].text == "Never commit credentials to alpha."


def test_moved_file_updates_paths_without_a_new_version(tmp_path: Path) -> None:
    manager = _manager()
    a = _write(tmp_path / "a" / "alpha", SIMPLE.format(name="alpha", desc="A."))
    manager.ingest_paths([a])
    b = tmp_path / "b" / "alpha" / "SKILL.md"
    b.parent.mkdir(parents=True)
    a.rename(b)
    report = manager.ingest_paths([b])
    assert [(f.status, f.version) for f in report.files] == [("moved", 1)]
    assert {v.source_path for v in manager.rules()} == {str(b)}


# --- include / exclude / enabled ---------------------------------------------------------------


def _two_skills(tmp_path: Path, settings: Settings) -> SkillManager:
    manager = _manager(settings)
    _write(tmp_path / "alpha", SIMPLE.format(name="alpha", desc="Alpha things."))
    _write(tmp_path / "beta", SIMPLE.format(name="beta", desc="Beta things."))
    _write(
        tmp_path / "gamma",
        "---\nname: gamma\ndescription: Off.\nenabled: false\n---\n- Never commit secrets.\n",
    )
    assert manager.ingest_paths([tmp_path]).problems == []
    return manager


@pytest.mark.parametrize(
    ("values", "used"),
    [
        ({}, {"alpha", "beta"}),
        ({"skills__include": ("alpha",)}, {"alpha"}),
        ({"skills__exclude": ("alpha",)}, {"beta"}),
        ({"skills__include": ("alpha", "gamma"), "skills__exclude": ("alpha",)}, set()),
    ],
)
def test_include_exclude_and_enabled_filter_what_is_used(
    tmp_path: Path, values: dict[str, Any], used: set[str]
) -> None:
    manager = _two_skills(tmp_path, load_settings(env={}).with_values(**values))
    assert {s["name"] for s in manager.list_skills() if s["used"]} == used
    assert [s["name"] for s in manager.list_skills()] == ["alpha", "beta", "gamma"]
    assert {name for name, _ in manager.resident_core()} == used
    assert {r.skill_name for r in manager.select_rules("commit secrets", 10)} == used
    assert len(manager.rules()) == 5  # listing shows every skill


# --- overrides ----------------------------------------------------------------------------------


def test_overrides_change_the_effective_rule_and_survive_reingest(tmp_path: Path) -> None:
    manager = _manager()
    path = tmp_path / "release" / "SKILL.md"
    path.parent.mkdir()
    shutil.copy(RELEASE, path)
    manager.ingest_paths([path])
    rule = _by_line(manager.rules())[22]

    view = manager.override(rule.id, category="constraint", scope=["path", "body", "path"])
    assert (view.category, view.scope, view.active) == ("constraint", ("body", "path"), True)
    assert view.overridden == ("category", "scope")
    view = manager.override(rule.id, active=False)
    assert (view.category, view.active) == ("constraint", False)  # earlier fields kept
    assert rule.id not in {r.id for r in manager.select_rules("push main branch", 10)}

    path.write_text(path.read_text(encoding="utf-8") + "\n- One more rule at the end.\n")
    manager.ingest_paths([path])
    after = {r.id: r for r in manager.rules()}[rule.id]
    assert (after.category, after.active, after.scope) == ("constraint", False, ("body", "path"))

    cleared = manager.clear_override(rule.id)
    assert (cleared.category, cleared.active, cleared.scope) == ("prohibition", True, ("body",))
    assert cleared.overridden == ()


def test_override_to_workflow_moves_a_rule_into_the_resident_core() -> None:
    manager = _manager()
    manager.ingest_paths([RELEASE])
    rule = _by_line(manager.rules())[22]
    manager.override(rule.id, category="workflow")
    assert ("release", rule.text) in manager.resident_core()
    assert rule.id not in {r.id for r in manager.select_rules("push main branch", 10)}


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"category": "law"}, ConfigError, "unknown rule category 'law'; use one of constraint"),
        ({"scope": ["everywhere"]}, ConfigError, "unknown rule scope 'everywhere'"),
        ({"scope": []}, ConfigError, "unknown rule scope ''"),
        ({}, ConfigError, "nothing to override"),
    ],
)
def test_bad_overrides_are_one_sentence_errors(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    manager = _manager()
    manager.ingest_paths([RELEASE])
    rule_id = manager.rules()[0].id
    with pytest.raises(error) as info:
        manager.override(rule_id, **kwargs)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_unknown_rule_or_skill_is_not_found() -> None:
    manager = _manager()
    with pytest.raises(NotFoundError, match="no rule 'rule_x'"):
        manager.override("rule_x", category="constraint")
    with pytest.raises(NotFoundError, match="no rule 'rule_x'"):
        manager.clear_override("rule_x")
    with pytest.raises(NotFoundError, match="no skill named 'nope'"):
        manager.rules("nope")


def test_a_vanished_rule_stays_inactive_even_if_overridden_active(tmp_path: Path) -> None:
    manager = _manager()
    path = _write(tmp_path / "alpha", SIMPLE.format(name="alpha", desc="A."))
    manager.ingest_paths([path])
    rule = manager.rules()[0]
    manager.override(rule.id, active=True)
    path.write_text(path.read_text().replace("- Never commit secrets to alpha.\n", ""))
    manager.ingest_paths([path])
    assert not {r.id: r for r in manager.rules()}[rule.id].active


# --- resident core and selection -------------------------------------------------------------


def test_resident_core_is_descriptions_then_workflow_lines_by_skill_name() -> None:
    manager = _manager()
    manager.ingest_paths([SKILLS])
    assert manager.resident_core() == [
        ("release", "Cut a release of the orders-api service and publish it."),
        ("release", "Run the full test suite with `make test`."),
        ("release", "Bump the version in pyproject.toml."),
        ("release", "Tag the commit and push the tag."),
        ("zh-writing", "中文技术写作规范。"),
        ("zh-writing", "先列出提纲。"),
        ("zh-writing", "再逐节撰写正文。"),
    ]


def test_select_rules_ranks_by_overlap_and_skips_workflow() -> None:
    manager = _manager()
    manager.ingest_paths([SKILLS])
    top = manager.select_rules("Can I push the fix straight to the main branch?", 3)
    assert top[0].text == "Never push directly to the main branch."
    assert all(r.category != "workflow" for r in manager.select_rules("test tag push", 50))
    zh = manager.select_rules("周五下午可以发布吗", 2)
    assert zh[0].text == "禁止在周五下午发布。"
    assert manager.select_rules("kubernetes helm chart", 5) == []
    assert manager.select_rules("", 5) == [] and manager.select_rules("push", 0) == []
    assert len(manager.select_rules("release notes changelog", 2)) == 2


def test_a_clearly_matching_skill_contributes_its_rules() -> None:
    manager = _manager()
    manager.ingest_paths([SKILLS])
    picked = manager.select_rules("publish a new release", 50)
    assert {r.skill_name for r in picked} == {"release"}
    assert any("周五" in r.text for r in picked)  # no shared word, but the skill matches
    # Rules sharing a term of their own ("release") come before skill-only matches.
    assert [r.source_line for r in picked] == [
        24,
        26,
        35,
        10,
        20,
        22,
        23,
        25,
        35,
        36,
        47,
        48,
        49,
        50,
    ]


def test_select_rules_is_deterministic_across_stores(tmp_path: Path) -> None:
    query = "release notes: push the tag, update the changelog, python version 目前 发布"
    a, b = _manager(), _manager(store=new_store(tmp_path / "b.sqlite"))
    a.ingest_paths([SKILLS])
    b.ingest_paths([SKILLS / "zh-writing", RELEASE])
    first = [r.id for r in a.select_rules(query, 8)]
    assert first == [r.id for r in b.select_rules(query, 8)]
    assert first == [r.id for r in a.select_rules(query, 8)]
    assert [(r.source_line, r.skill_name) for r in a.select_rules(query, 8)] == [
        (20, "release"),  # update, changelog, notes
        (24, "release"),  # release, notes (ties by line)
        (35, "release"),
        (22, "release"),  # push
        (25, "release"),  # python
        (26, "release"),  # release
        (36, "release"),  # changelog
        (47, "release"),  # 发布
    ]


# --- bad inputs ---------------------------------------------------------------------------------


BAD_FILES: list[tuple[str, bytes, str]] = [
    ("bad-yaml", b"---\nname: [unclosed\n---\n- Always x y.\n", "is not valid YAML"),
    ("list-yaml", b"---\n- a\n- b\n---\n- Always x y.\n", "must be a mapping of keys, not a list"),
    ("scalar-yaml", b"---\njust text\n---\n", "must be a mapping of keys, not a str"),
    ("unclosed", b"---\nname: x\n- Always x y.\n", "opened by '---' on line 1 is never closed"),
    ("bad-date", b"---\nname: d\nsince: 2020-13-45\n---\n", "YAML (month must be in 1..12)"),
    ("deep-yaml", b"---\nx: " + b"[" * 5000 + b"\n---\n", "is not valid YAML"),
    ("alias", b"---\nname: *nope\n---\n", "uses a YAML alias"),
    ("binary", b"---\nname: b\n---\n\x00\x01\x02", "is binary"),
    ("latin1", b"---\nname: l\n---\n- caf\xe9 always\n", "is not valid UTF-8"),
    ("empty", b"  \n\n", "the file is empty"),
    ("name-type", b"---\nname: [1, 2]\n---\n", "'name' must be a one-line, non-empty string"),
    ("enabled-type", b"---\nenabled: maybe\n---\n", "'enabled' must be true or false"),
    ("desc-type", b"---\ndescription: {a: 1}\n---\n", "'description' must be text"),
]


@pytest.mark.parametrize(("folder", "data", "words"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_file_is_one_problem_and_the_others_still_ingest(
    tmp_path: Path, folder: str, data: bytes, words: str
) -> None:
    bad = tmp_path / folder / "SKILL.md"
    bad.parent.mkdir()
    bad.write_bytes(data)
    _write(tmp_path / "zgood", SIMPLE.format(name="good", desc="Fine."))
    manager = _manager()
    report = manager.ingest_paths([tmp_path])
    (problem,) = report.problems
    assert problem.startswith(f"{bad}: ") and words in problem, problem
    assert problem.endswith("the file was skipped") and "\n" not in problem
    assert [f.name for f in report.files] == ["good"]
    assert [s["name"] for s in manager.list_skills()] == ["good"]


def test_missing_paths_empty_folders_and_huge_files(tmp_path: Path) -> None:
    settings = load_settings(env={}).with_values(skills__max_file_bytes=1000)
    manager = _manager(settings)
    huge = _write(tmp_path / "huge", "---\nname: huge\n---\n" + "- Always do it.\n" * 200)
    (tmp_path / "empty").mkdir()
    good = _write(tmp_path / "good", SIMPLE.format(name="good", desc="Fine."))
    report = manager.ingest_paths([tmp_path / "missing", tmp_path / "empty", huge, good])
    assert report.problems == [
        f"{tmp_path / 'missing'}: no such file or folder",
        f"{tmp_path / 'empty'}: no SKILL.md file was found in it",
        f"{huge}: the file is {huge.stat().st_size} bytes, over skills.max_file_bytes (1000);"
        " the file was skipped",
    ]
    assert [f.name for f in report.files] == ["good"]


def test_two_files_with_one_skill_name(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", SIMPLE.format(name="same", desc="A."))
    b = _write(tmp_path / "b", SIMPLE.format(name="same", desc="B."))
    report = _manager().ingest_paths([tmp_path, a])  # a twice: ingested once
    assert [f.path for f in report.files] == [str(a)]
    assert report.problems == [f"{b}: skill 'same' is already defined by {a}; the file was skipped"]


# --- CLI ----------------------------------------------------------------------------------------


def test_cli_ingest_list_show_override(cli: Cli, tmp_path: Path) -> None:
    first = cli("skills", "ingest", str(SKILLS))
    assert first.code == 0, first
    assert first.out.splitlines()[-1] == (
        "2 skill files (2 new); 22 rules added, 0 deactivated; 0 problems"
    )
    again = cli("skills", "ingest", str(SKILLS))
    assert "2 skill files (2 unchanged)" in again.out
    listed = cli("skills", "list", "--json")
    assert [s["name"] for s in listed.json()] == ["release", "zh-writing"]
    assert listed.out == cli("skills", "list", "--json").out
    table = cli("skills", "list")
    assert table.code == 0 and "release" in table.out and "zh-writing" in table.out

    rules = cli("rules", "show", "--skill", "release", "--json").json()
    assert len(rules) == 17 and list(rules[0]) == sorted(rules[0])
    never = next(r for r in rules if r["text"].startswith("Never push"))
    assert never["label"] == f"rule {SKILLS / 'release' / 'SKILL.md'}:22"

    done = cli("rules", "override", never["id"], "--category", "constraint", "--inactive")
    assert done.code == 0, done
    assert done.out.startswith(f"{never['id']} [constraint, inactive] Never push")
    shown = cli("rules", "show", "--json").json()
    changed = next(r for r in shown if r["id"] == never["id"])
    assert (changed["category"], changed["active"]) == ("constraint", False)
    assert "constraint*" in cli("rules", "show", "--skill", "release").out
    scoped = cli("rules", "override", never["id"], "--scope", "quote", "--scope", "path", "--json")
    assert scoped.json()["scope"] == ["quote", "path"]
    cleared = cli("rules", "override", never["id"], "--clear", "--json").json()
    assert (cleared["category"], cleared["active"], cleared["overridden"]) == (
        "prohibition",
        True,
        [],
    )


def test_cli_errors_are_one_line(cli: Cli, tmp_path: Path) -> None:
    bad = _write(tmp_path / "bad", "---\nname: [x\n---\n")
    result = cli("skills", "ingest", str(bad.parent), str(RELEASE))
    assert result.code == 1
    assert f"problem: {bad}: the frontmatter is not valid YAML" in result.err
    assert "1 skill files (1 new)" in result.out
    unknown = cli("rules", "override", "rule_nope", "--category", "constraint")
    assert unknown.code == 1
    assert unknown.err.strip() == (
        "Error: no rule 'rule_nope'; `convmem rules show` lists rule ids"
    )
    rule_id = cli("rules", "show", "--json").json()[0]["id"]
    wrong = cli("rules", "override", rule_id, "--category", "law")
    assert wrong.code == 1 and wrong.err.startswith("Error: unknown rule category 'law'")
    both = cli("rules", "override", rule_id, "--clear", "--inactive")
    assert both.code == 2 and "--clear cannot be combined" in both.err
    missing = cli("rules", "show", "--skill", "nope")
    assert missing.code == 1 and "no skill named 'nope'" in missing.err


def test_cli_ingest_without_paths_uses_settings(cli: Cli, home: Path, tmp_path: Path) -> None:
    nothing = cli("skills", "ingest")
    assert nothing.code == 2 and "set skills.paths" in nothing.err
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[skills]\npaths = ["{SKILLS / "zh-writing"}"]\n', encoding="utf-8"
    )
    result = cli("skills", "ingest", "--json")
    assert result.code == 0, result
    assert [f["name"] for f in result.json()["files"]] == ["zh-writing"]


@pytest.mark.parametrize(
    "args",
    [
        ("skills",),
        ("skills", "ingest"),
        ("skills", "list"),
        ("rules",),
        ("rules", "show"),
        ("rules", "override"),
    ],
)
def test_every_skills_command_has_help(cli: Cli, args: tuple[str, ...]) -> None:
    result = cli(*args, "--help")
    assert result.code == 0
    body = result.out.split("\n\n")[1].strip()
    assert body and not body.startswith("Options")
