"""DSH commands: ``convmem install dsh`` (profile patch) and ``convmem serve dsh`` (plugin server).

A DSH profile is customised by ``$DSH_HOME/profiles/<name>/cordis.patch.yml``: a YAML
list of loader patches applied after the profile's bundles on every start. Installing
adds one ``insert`` entry that loads the shipped ``dsh_plugin.mjs`` by absolute path;
uninstalling removes that entry and nothing else. Other entries, custom tags such as
``!!js`` and the file's leading comment survive; other comments do not (PyYAML).
"""

from __future__ import annotations

import os
import shutil
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import click
import yaml

from convmem.errors import ConfigError

PLUGIN_ID = "convmem"
PATCH_FILE = "cordis.patch.yml"
EMPTY_PATCH_HEADER = "# Your patch layer for this dsh profile (a YAML list of loader patches).\n"


def plugin_path() -> Path:
    """The shipped plugin file (DSH loads it by absolute path, no install step)."""
    return Path(str(files("convmem.adapters") / "dsh_plugin.mjs")).resolve()


# --------------------------------------------------------------------------- YAML
class _Tagged:
    """A value under a tag we do not interpret (``!!js …``): kept as written."""

    def __init__(self, tag: str, value: Any) -> None:
        self.tag, self.value = tag, value


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


def _construct_tagged(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> _Tagged:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        assert isinstance(node, yaml.MappingNode)
        value = loader.construct_mapping(node, deep=True)
    return _Tagged(node.tag, value)


def _represent_tagged(dumper: yaml.SafeDumper, data: _Tagged) -> yaml.Node:
    if isinstance(data.value, list):
        return dumper.represent_sequence(data.tag, data.value)
    if isinstance(data.value, dict):
        return dumper.represent_mapping(data.tag, data.value)
    return dumper.represent_scalar(data.tag, str(data.value))


_Loader.add_multi_constructor("", _construct_tagged)
_Dumper.add_representer(_Tagged, _represent_tagged)


def _is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("id") == PLUGIN_ID


def _without_ours(patches: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for patch in patches:
        if isinstance(patch, dict) and isinstance(patch.get("insert"), list):
            inserts = [e for e in patch["insert"] if not _is_ours(e)]
            if not inserts and len(patch) == 1:
                continue
            patch = {**patch, "insert": inserts}
        kept.append(patch)
    return kept


def read_patch(path: Path) -> tuple[str, list[Any]]:
    """The file's leading comment block and its list of patches."""
    if not path.exists():
        return EMPTY_PATCH_HEADER, []
    text = path.read_text("utf-8")
    header_lines = []
    for line in text.splitlines(keepends=True):
        if line.strip() and not line.lstrip().startswith("#"):
            break
        header_lines.append(line)
    try:
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML ({exc}); fix or move it first") from exc
    if data is None:
        data = []
    if not isinstance(data, list):
        raise ConfigError(f"{path} is not a YAML list of patches; fix or move it first")
    return "".join(header_lines), data


def write_patch(path: Path, header: str, patches: list[Any]) -> None:
    body = (
        yaml.dump(patches, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
        if patches
        else "[]\n"
    )
    tmp = path.with_name(path.name + ".convmem-tmp")
    tmp.write_text(header + body, "utf-8")
    os.replace(tmp, path)


#: The plugin's copy inside the profile: DSH loads it from there, so moving or replacing
#: the Python environment convmem came from never breaks the profile.
PLUGIN_COPY = "convmem-plugin.mjs"


def plugin_entry(plugin: Path, command: list[str], home: str) -> dict[str, Any]:
    return {
        "id": PLUGIN_ID,
        "name": str(plugin),
        "config": {"command": command, "home": home},
    }


def install_dsh_profile(
    profile_dir: Path, command: list[str], home: str, *, uninstall: bool = False
) -> tuple[Path, bool]:
    """Add (or remove) our insert patch and the plugin's copy; the file, and whether
    anything changed."""
    path = profile_dir / PATCH_FILE
    copy = profile_dir / PLUGIN_COPY
    header, patches = read_patch(path)
    new = _without_ours(patches)
    if uninstall:
        copied = copy.exists()
        copy.unlink(missing_ok=True)
    else:
        shipped = plugin_path().read_bytes()
        copied = not copy.exists() or copy.read_bytes() != shipped
        if copied:
            tmp = copy.with_name(copy.name + ".convmem-tmp")
            tmp.write_bytes(shipped)
            os.replace(tmp, copy)
        new.append({"insert": [plugin_entry(copy, command, home)]})
    if new == patches and (path.exists() or uninstall):
        return path, copied
    write_patch(path, header, new)
    return path, True


# --------------------------------------------------------------------------- commands
@click.command("dsh")
@click.option("--profile", required=True, help="DSH profile name (under $DSH_HOME/profiles).")
@click.option(
    "--dsh-home",
    envvar="DSH_HOME",
    type=click.Path(file_okay=False),
    help="DSH home folder (also DSH_HOME).",
)
@click.option("--uninstall", is_flag=True, help="Remove convmem's entry, keep everything else.")
@click.pass_obj
def install_dsh(obj: Any, profile: str, dsh_home: str | None, uninstall: bool) -> None:
    """Load convmem into a DSH profile (writes the profile's cordis.patch.yml).

    The profile must exist: create it with `dsh NAME --from-default-profile headless`
    (or `sdk` for the Python SDK). The plugin file is copied into the profile and
    starts `convmem serve dsh` by name, so `convmem` must be on PATH for DSH. Running
    install again changes nothing.
    """
    if not dsh_home:
        raise click.ClickException("DSH_HOME is not set; pass --dsh-home DIR")
    if not profile or "/" in profile or profile.startswith("."):
        raise click.ClickException(f"{profile!r} is not a profile name")
    profile_dir = Path(dsh_home).resolve() / "profiles" / profile
    if not profile_dir.is_dir():
        raise click.ClickException(
            f"DSH profile {profile!r} does not exist in {dsh_home}; create it with "
            f"`dsh {profile} --from-default-profile headless` (or `sdk`) and run this again"
        )
    settings = obj.settings
    # by name, as Claude Code's hooks: a moved install only needs `convmem` on PATH again
    command = ["convmem"]
    if shutil.which("convmem") is None:
        click.echo(
            "warning: `convmem` is not on PATH here, so DSH cannot start convmem; install "
            "it as a tool (`uv tool install convmem` or `pipx install convmem`)",
            err=True,
        )
    if obj.config_file:
        command += ["--config", str(Path(obj.config_file).resolve())]
    command += ["serve", "dsh"]
    home = str(settings.data_dir.resolve())
    try:
        path, changed = install_dsh_profile(profile_dir, command, home, uninstall=uninstall)
    except OSError as exc:
        raise click.ClickException(f"cannot update {profile_dir / PATCH_FILE}: {exc}") from exc
    verb = "removed from" if uninstall else "installed in"
    click.echo(f"convmem {verb} {path}" + ("" if changed else " (already so; unchanged)"))


@click.group()
def serve() -> None:
    """Long-lived servers that a host starts and talks to over stdin/stdout."""


@click.command("dsh")
@click.option(
    "--dsh-home",
    envvar="DSH_HOME",
    type=click.Path(file_okay=False),
    help="DSH home, for re-reading session logs (also DSH_HOME).",
)
@click.pass_obj
def serve_dsh(obj: Any, dsh_home: str | None) -> None:
    """Answer the DSH plugin's JSON Lines requests on stdin/stdout (the plugin starts this)."""
    from convmem.adapters.dsh import serve as serve_loop

    channel = sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries the protocol; stray output must not corrupt it
    settings = obj.settings
    log_path = settings.data_dir / str(settings["diagnostics.log_file"])
    serve_loop(sys.stdin.buffer, channel, obj.runtime, dsh_home=dsh_home, log_path=log_path)


def register(main: click.Group) -> None:
    install_group = main.commands["install"]
    assert isinstance(install_group, click.Group)
    install_group.add_command(install_dsh)
    serve_group = main.commands.get("serve")
    if not isinstance(serve_group, click.Group):
        serve_group = serve
        main.add_command(serve_group)
    serve_group.add_command(serve_dsh)
