"""Choosing the cases: ``cases.dev_files`` adds dev cases without moving the split of ``cases.files``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.config import load_config
from assay.errors import ConfigError
from assay.evaluation.answer_key import answer_key
from assay.evaluation.confine import candidate_jail
from assay.evaluation.session import select_cases
from assay.model import Split


def project(tmp_path: Path, dev_files: str = "", *, extra_ids: range = range(100, 130)) -> Path:
    root = tmp_path / "p"
    root.mkdir(parents=True)
    (root / "prompt.txt").write_text("hello\n")
    case = "- {{id: c{i}, input: q{i}, checks: [{{type: contains, value: a{i}}}]}}\n"
    (root / "cases.yaml").write_text("".join(case.format(i=i) for i in range(20)))
    (root / "more.yaml").write_text("".join(case.format(i=i) for i in extra_ids))
    (root / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.txt]}\n"
        f"cases: {{files: [cases.yaml]{dev_files}}}\n"
        "runner: {type: command, command: 'cat prompt.txt', sandbox: none}\n"
    )
    return root


def splits(root: Path) -> dict[str, Split]:
    return {case.id: split for case, split in select_cases(load_config(root / "assay.yaml")).cases}


def test_dev_files_are_dev_cases_and_leave_the_split_of_files_as_it_was(tmp_path: Path) -> None:
    plain = project(tmp_path / "a")
    with_more = project(tmp_path / "b", ", dev_files: more.yaml")
    before, after = splits(plain), splits(with_more)
    assert {Split.HOLDOUT, Split.REGRESSION} <= set(before.values())
    assert {k: v for k, v in after.items() if k in before} == before
    added = {k: v for k, v in after.items() if k not in before}
    assert len(added) == 30 and set(added.values()) == {Split.DEV}
    written = json.loads((with_more / ".assay" / "split.json").read_text())["splits"]
    assert set(written) == set(before)  # dev-only cases never enter the split file
    dev = select_cases(load_config(with_more / "assay.yaml"), "dev").cases
    assert len(dev) == sum(1 for s in before.values() if s is Split.DEV) + 30


def test_a_case_in_both_lists_is_refused_naming_the_field(tmp_path: Path) -> None:
    root = project(tmp_path, ", dev_files: [more.yaml]", extra_ids=range(15, 25))
    with pytest.raises(ConfigError) as raised:
        select_cases(load_config(root / "assay.yaml"))
    message = str(raised.value)
    assert message.startswith(f"{root / 'assay.yaml'}: cases.dev_files: case id 'c15'")
    assert "\n" not in message


def test_a_missing_dev_file_is_named_by_its_field(tmp_path: Path) -> None:
    root = project(tmp_path, ", dev_files: [more.yaml, gone.yaml]")
    with pytest.raises(ConfigError) as raised:
        select_cases(load_config(root / "assay.yaml"))
    assert "cases.dev_files[1]" in str(raised.value) and "gone.yaml" in str(raised.value)


def test_a_dev_file_is_part_of_the_answer_key(tmp_path: Path) -> None:
    root = project(tmp_path, ", dev_files: more.yaml")
    config = load_config(root / "assay.yaml")
    keys = {key.path.name: key.what for key in answer_key(config, [])}
    assert keys["more.yaml"] == "a case file" and keys["cases.yaml"] == "a case file"
    (root / "assay.yaml").write_text(
        (root / "assay.yaml").read_text().replace("paths: [prompt.txt]", "paths: [prompt.txt, more.yaml]")
    )
    with pytest.raises(ConfigError, match=r"more\.yaml is a case file"):
        select_cases(load_config(root / "assay.yaml"))


def test_the_candidates_jail_hides_a_dev_file(tmp_path: Path) -> None:
    root = project(tmp_path, ", dev_files: more.yaml")
    config = load_config(root / "assay.yaml")
    jail = candidate_jail(config, [case for case, _ in select_cases(config).everything])
    assert {"cases.yaml", "more.yaml"} <= set(jail.hidden)
    assert "prompt.txt" not in jail.hidden
