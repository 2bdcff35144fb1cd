"""scan_artifact end to end on real directories, including its speed on a 200-file artifact."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from assay.static import format_report, scan_artifact
from tests.static.fakes import FakeSecrets

SKILL = "---\nname: csv-report\ndescription: Summarise a CSV file as a report.\n---\n\n# CSV report\n"


def make(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    ("kind", "files", "paths"),
    [
        ("prompt", {"prompt.md": "You are concise.\n"}, ["prompt.md"]),
        ("skill", {"SKILL.md": SKILL, "scripts/run.py": "print(1)\n"}, ["SKILL.md", "scripts/*.py"]),
        ("code", {"pkg/__init__.py": "", "pkg/core.py": "def f():\n    return 1\n"}, ["pkg"]),
        ("config", {"app.yaml": "retries: 3\n", "app.toml": "a = 1\n", "app.json": "{}"}, ["app.*"]),
        ("document", {"README.md": "# Guide\n\nHello.\n"}, ["README.md"]),
        ("custom", {"data.txt": "anything\n"}, ["data.txt"]),
    ],
)
def test_clean_artifacts_pass(tmp_path: Path, kind: str, files: dict[str, str], paths: list[str]) -> None:
    report = scan_artifact(make(tmp_path, files), paths, kind)
    assert report.findings == []
    assert report.passed
    assert sorted(report.files) == sorted(p for p in files)


def test_findings_ordered_and_rendered(tmp_path: Path, fake: FakeSecrets) -> None:
    make(
        tmp_path,
        {
            "tool.py": "import os\nos.system('sudo reboot')\n",
            "notes.md": f"deploy key: {fake.aws_key}\n",
        },
    )
    report = scan_artifact(tmp_path, ["tool.py", "notes.md", "missing.md"], "document")
    assert format_report(report).splitlines() == [
        "critical missing.md missing-path: no existing file matches this editable path",
        "critical notes.md:1 aws-access-key: AWS access key ID",
        "warning tool.py:2 sudo: sudo (root privileges)",
    ]
    assert fake.aws_key not in report.model_dump_json()
    assert not report.passed


def test_security_can_be_turned_off(tmp_path: Path) -> None:
    make(tmp_path, {"run.sh": "sudo rm -rf /\n"})
    assert not scan_artifact(tmp_path, ["run.sh"], "custom").passed
    off = scan_artifact(tmp_path, ["run.sh"], "custom", security=False)
    assert off.findings == [] and off.passed


def test_only_editable_files_are_scanned(tmp_path: Path) -> None:
    make(tmp_path, {"prompt.md": "Be kind.\n", "cases/evil.sh": "rm -rf /\n"})
    assert scan_artifact(tmp_path, ["prompt.md"], "prompt").findings == []


def test_unknown_kind(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown artifact kind 'spreadsheet'; known: code, config"):
        scan_artifact(tmp_path, ["x"], "spreadsheet")


def test_two_hundred_files_scan_fast(tmp_path: Path) -> None:
    body = "\n".join(
        [
            '"""A module."""',
            "import os",
            "",
            "def handler_{i}(event, context):",
            "    value = event.get('value_{i}', 0)",
            "    token_count = len(str(value)) * {i}",
            "    return {{'id': '{i}', 'count': token_count, 'path': os.path.join('data', 'x.json')}}",
            "",
        ]
        * 8
    )
    for i in range(200):
        (tmp_path / f"mod_{i:03}.py").write_text(body.format(i=i))
    start = time.perf_counter()
    report = scan_artifact(tmp_path, ["*.py"], "code")
    elapsed = time.perf_counter() - start
    assert len(report.files) == 200
    assert report.findings == []
    assert elapsed < 3.0, f"scan took {elapsed:.2f}s"
