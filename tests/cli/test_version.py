"""`joinops --version`: the installed version, as the image's label and the chart's appVersion."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_version_prints_the_projects_version_and_exits_0() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cli", "--version"], capture_output=True, text=True, check=False
    )
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (done.returncode, done.stdout.strip()) == (0, f"joinops {version}")
