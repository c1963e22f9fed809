"""The Dockerfile's rules, read from the file (no Docker engine needed): multi-stage, a pinned
base, nothing to build with at run time, a non-root user, `joinops` as the entrypoint."""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field

import pytest
import yaml
from deploy_schema import ROOT, VALUES

DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"


@dataclass
class Stage:
    image: str
    name: str = ""
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def parse(text: str) -> tuple[dict[str, str], list[Stage]]:
    """Global ARG defaults and the stages, instructions joined across line continuations."""
    joined = re.sub(r"\\\n", " ", text)
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "ARG" and not stages:
            name, _, default = rest.partition("=")
            args[name] = default
        elif keyword == "FROM":
            parts = rest.split()
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], parts[0])
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else ""
            stages.append(Stage(image, name))
        else:
            stages[-1].instructions.append((keyword, rest))
    return args, stages


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse(DOCKERFILE.read_text())[1]


def test_multi_stage_from_a_pinned_base(stages: list[Stage]) -> None:
    assert len(stages) >= 2
    assert stages[0].name == "builder"
    for stage in stages:
        repository, _, tag = stage.image.partition("@")[0].rpartition(":")
        pinned_by_digest = "@sha256:" in stage.image
        assert pinned_by_digest or re.match(r"3\.11\.\d+-slim", tag), stage.image
        assert repository.endswith("python")


def test_the_final_stage_has_only_the_virtualenv(stages: list[Stage]) -> None:
    final = stages[-1]
    assert any(c.startswith("--from=builder /opt/joinops") for c in final.all("COPY"))
    assert not [c for c in final.all("COPY") if not c.startswith("--from=")], "no sources"
    runs = " ".join(final.all("RUN"))
    for tool in ("apt-get", "apk ", "gcc", "build-essential", "pip install"):
        assert tool not in runs
    assert "pip uninstall" in runs
    assert "--without-pip" in " ".join(stages[0].all("RUN"))


def test_runs_as_the_charts_non_root_user(stages: list[Stage]) -> None:
    final = stages[-1]
    uid, _, gid = final.all("USER")[-1].partition(":")
    assert uid.isdigit() and int(uid) >= 10000 and gid.isdigit()
    security = yaml.safe_load(VALUES.read_text())["podSecurityContext"]
    assert (security["runAsUser"], security["runAsGroup"]) == (int(uid), int(gid))
    env = " ".join(final.all("ENV"))
    assert "HOME=/tmp" in env and "TMPDIR=/tmp" in env  # nothing to write outside /tmp


def test_entrypoint_is_the_joinops_console_script(stages: list[Stage]) -> None:
    final = stages[-1]
    assert json.loads(final.all("ENTRYPOINT")[-1]) == ["joinops"]
    assert json.loads(final.all("CMD")[-1]) == ["serve"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "joinops" in scripts


def test_the_build_context_keeps_what_the_wheel_needs() -> None:
    patterns = [
        p.strip()
        for p in DOCKERIGNORE.read_text().splitlines()
        if p.strip() and not p.startswith("#")
    ]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = ["pyproject.toml", project["project"]["readme"]]
    needed += [p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]]
    for path in needed:
        assert not any(fnmatch.fnmatch(path, p) for p in patterns), path
    for heavy in (".venv", ".git", ".tools", "tests"):
        assert heavy in patterns


def test_what_the_image_leaves_out_is_never_loaded_by_an_entry_point(stages: list[Stage]) -> None:
    """The image uninstalls the kubernetes client's asyncio dependencies (~11 MB): every
    command, the bot, the worker and the sandbox must run without them."""
    args = [a for a in stages[0].all("ARG") if a.startswith("UNUSED=")]
    assert args, "the builder names what it leaves out"
    left_out = args[0].split("=", 1)[1].strip('"').split()
    modules = [name.replace("-", "_") for name in left_out]
    probe = (
        "import sys\n"
        "import cli, cli.sandbox_cmd, cli.live, bot.app, bot.serve, workers.main\n"
        "import kubernetes.client, kubernetes.watch, kubernetes.stream, kubernetes.config\n"
        "import slacksim.server, kubesim\n"
        f"print([m for m in {modules!r} if m in sys.modules])\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()
    assert loaded == "[]", loaded
