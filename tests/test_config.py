from __future__ import annotations

from pathlib import Path

import pytest

from convmem.config import SETTINGS, default_data_dir, load_settings, settings_table
from convmem.errors import ConfigError


def test_defaults_cover_every_section() -> None:
    sections = {s.name.split(".")[0] for s in SETTINGS if "." in s.name}
    assert sections == {
        "capture",
        "archive",
        "assembly",
        "memory",
        "retrieval",
        "skills",
        "validation",
        "diagnostics",
        "compatibility",
        "postgresql",
    }
    s = load_settings(env={})
    assert s.budget == 3000
    assert s.data_dir == default_data_dir()
    assert all(row["help"] for row in settings_table())


def test_toml_merges_and_clamps(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        "[assembly]\nsoft_budget_tokens = 5\nlocale = 'en'\n[retrieval]\nlimit = 500\n", "utf-8"
    )
    s = load_settings(cfg, env={})
    assert s["assembly.locale"] == "en"
    assert s["assembly.soft_budget_tokens"] == 50
    assert s["retrieval.limit"] == 100
    assert len(s.warnings) == 2 and "retrieval.limit" in s.warnings[1]
    assert s.budget == 600  # max(min_budget, soft_budget)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[assembly]\nsoft_budget = 5\n", "unknown setting 'assembly.soft_budget'"),
        ("[assembly]\nsoft_budget_tokens = 'many'\n", "assembly.soft_budget_tokens"),
        ("[assembly]\nskip_when_empty = 1\n", "assembly.skip_when_empty"),
        ("[assembly]\nlocale = 'fr'\n", "assembly.locale"),
        ("[nope]\nx = 1\n", "unknown setting section 'nope'"),
        ("assembly = 5\n", "'assembly' is a section of settings, not a value"),
        ("[assembly\n", "not valid TOML"),
    ],
)
def test_bad_settings_name_the_key(tmp_path: Path, body: str, message: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(body, "utf-8")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_settings(cfg, env={})


def test_home_from_env_and_argument(tmp_path: Path) -> None:
    assert load_settings(env={"CONVMEM_HOME": str(tmp_path)}).data_dir == tmp_path
    assert load_settings(home=tmp_path / "x", env={"CONVMEM_HOME": "/nope"}).data_dir == (
        tmp_path / "x"
    )
    (tmp_path / "config.toml").write_text("[assembly]\nlocale = 'en'\n", "utf-8")
    assert load_settings(env={"CONVMEM_HOME": str(tmp_path)})["assembly.locale"] == "en"
