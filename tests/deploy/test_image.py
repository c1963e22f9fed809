"""The image `make image` builds (scripts/build-image.sh) and the chart that deploys it agree, and
the build says what to install when its tools are missing. Neither needs podman: the labels are read
from the Dockerfile, the tag from the chart, as the build script reads them."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import yaml
from deploy_schema import CHART, ROOT, VALUES
from test_dockerfile import DOCKERFILE, parse


def _labels() -> dict[str, str]:
    args, stages = parse(DOCKERFILE.read_text())
    labels: dict[str, str] = {}
    for line in stages[-1].all("LABEL"):
        for key, value in re.findall(r'([\w.]+)="([^"]*)"', line):
            labels[key] = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], value)
    return labels


def test_the_images_labels_are_the_charts_default_image() -> None:
    image = yaml.safe_load(VALUES.read_text())["image"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    labels = _labels()
    repository = image["repository"].rpartition("/")[2]
    tag = image["tag"] or chart["appVersion"]
    assert labels["org.opencontainers.image.title"] == repository == project["name"]
    assert labels["org.opencontainers.image.version"] == tag == project["version"]


def test_missing_tools_are_named_with_their_package(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").symlink_to("/usr/bin/id")  # a PATH with no buildah and no podman
    done = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "image-tools.sh")],
        env={**os.environ, "PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "buildah (apt-get install buildah)" in done.stderr
    assert "podman (apt-get install podman)" in done.stderr
