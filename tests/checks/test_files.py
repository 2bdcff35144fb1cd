from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.checks import CheckContext, CheckSpecError, build_check
from assay.model import Case, CheckResult, CheckSpec, Output


async def judge(workdir: Path | None, value: Any, output: Output | None = None, **kw: Any) -> CheckResult:
    check = build_check(CheckSpec(type="file_exists", value=value, **kw))
    return await check.run(output or Output(text=""), CheckContext(case=Case(id="c1"), workdir=workdir))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "out" / "nested").mkdir(parents=True)
    (root / "out" / "report.md").write_text("# report\n")
    (root / "out" / "nested" / "data.csv").write_text("a,b\n")
    (root / "empty.txt").write_text("")
    (root / "emptydir").mkdir()
    return root


async def test_plain_path_pass_and_fail(workdir: Path) -> None:
    found = await judge(workdir, "out/report.md")
    assert found.passed and "out/report.md" in found.evidence
    missing = await judge(workdir, "out/summary.md")
    assert not missing.passed and "no match for 'out/summary.md'" in missing.evidence


async def test_globs(workdir: Path) -> None:
    assert (await judge(workdir, "out/*.md")).passed
    deep = await judge(workdir, "**/*.csv")
    assert deep.passed and "out/nested/data.csv" in deep.evidence
    assert not (await judge(workdir, "**/*.json")).passed


async def test_non_empty_option(workdir: Path) -> None:
    assert (await judge(workdir, "empty.txt")).passed
    empty = await judge(workdir, "empty.txt", options={"non_empty": True})
    assert not empty.passed and "empty: empty.txt" in empty.evidence
    assert not (await judge(workdir, "emptydir", options={"non_empty": True})).passed
    assert (await judge(workdir, "out", options={"non_empty": True})).passed
    assert (await judge(workdir, "*.txt", negate=True, options={"non_empty": True})).passed


async def test_negated(workdir: Path) -> None:
    assert (await judge(workdir, "core.dump", negate=True)).passed
    assert not (await judge(workdir, "out/report.md", negate=True)).passed


async def test_falls_back_to_output_workdir(workdir: Path) -> None:
    assert (await judge(None, "out/report.md", Output(text="", workdir=str(workdir)))).passed
    nowhere = await judge(None, "out/report.md")
    assert not nowhere.passed and "no working directory" in nowhere.evidence


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("../x", "file_exists: path '../x' must not contain '..'"),
        ("out/../../x", "file_exists: path 'out/../../x' must not contain '..'"),
        ("..\\x", "file_exists: path '..\\\\x' must not contain '..'"),
        ("/etc/passwd", "file_exists: path '/etc/passwd' must be relative to the workdir"),
        ("~/.ssh/id_rsa", "file_exists: path '~/.ssh/id_rsa' must be relative to the workdir"),
        ("C:\\Windows", "file_exists: path 'C:\\\\Windows' must be relative to the workdir"),
        ("a**b", "file_exists: invalid glob 'a**b': '**' can only be an entire path component"),
        (None, "file_exists: value is required"),
        ("", "file_exists: value is required"),
    ],
)
def test_escaping_specs_are_refused_at_load(value: Any, message: str) -> None:
    with pytest.raises(CheckSpecError) as info:
        build_check(CheckSpec(type="file_exists", value=value))
    assert str(info.value) == message or str(info.value).startswith(message)


def test_bad_option_is_refused() -> None:
    with pytest.raises(CheckSpecError, match="option non_empty must be true or false"):
        build_check(CheckSpec(type="file_exists", value="x", options={"non_empty": "yes"}))


async def test_symlink_pointing_outside_is_refused(workdir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    (workdir / "link.txt").symlink_to(secret)
    refused = await judge(workdir, "link.txt")
    assert not refused.passed and "refused (resolves outside the workdir): link.txt" in refused.evidence
    (workdir / "escape").symlink_to(tmp_path)
    through_dir = await judge(workdir, "escape/secret.txt")
    assert not through_dir.passed and "refused" in through_dir.evidence
    by_glob = await judge(workdir, "*.txt")
    assert by_glob.passed and "link.txt" not in by_glob.evidence  # empty.txt counts, the link does not
    assert not (await judge(workdir, "link*")).passed


async def test_symlink_inside_the_workdir_is_fine(workdir: Path) -> None:
    (workdir / "latest.md").symlink_to(workdir / "out" / "report.md")
    assert (await judge(workdir, "latest.md")).passed
    (workdir / "dangling").symlink_to(workdir / "gone")
    assert not (await judge(workdir, "dangling")).passed


async def test_workdir_given_through_a_symlink(workdir: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workdir)
    assert (await judge(alias, "out/report.md")).passed
