"""The chart's `config.max_parallel`: `auto` or a number, as joinops reads it; the schema refuses
what joinops would refuse, and what it accepts renders into a config joinops accepts."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml
from deploy_schema import SCHEMA, VALUES, validate

from joinops.settings import FileConfig


def values_with(**config: Any) -> dict[str, Any]:
    values = yaml.safe_load(VALUES.read_text())
    changed = copy.deepcopy(values)
    changed["config"].update(config)
    return changed


@pytest.mark.parametrize("value", ["auto", 1, 16, 64])
def test_auto_and_numbers_pass_and_joinops_reads_them(value: Any) -> None:
    values = values_with(max_parallel=value, join_admission=48, joins_per_worker=8)
    assert validate(values, json.loads(SCHEMA.read_text())) == []
    read = FileConfig.model_validate(values["config"])
    assert (read.max_parallel, read.join_admission, read.joins_per_worker) == (value, 48, 8)


@pytest.mark.parametrize(
    ("key", "value", "complaint"),
    [
        ("max_parallel", "fast", "does not match ^auto$"),
        ("max_parallel", 0, "is below 1"),
        ("max_parallel", 65, "is above 64"),
        ("max_parallel", True, "want integer or string"),
        ("join_admission", 0, "is below 1"),
        ("joins_per_worker", "many", "want integer"),
    ],
)
def test_the_schema_refuses_what_joinops_refuses(key: str, value: Any, complaint: str) -> None:
    errors = validate(values_with(**{key: value}), json.loads(SCHEMA.read_text()))
    assert [e for e in errors if f"/config/{key}" in e and complaint in e], errors
    with pytest.raises(ValueError, match=key):
        FileConfig.model_validate(values_with(**{key: value})["config"])
