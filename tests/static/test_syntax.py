"""Syntax checks: parse errors with their line, critical only for the types an artifact kind owns."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.static import scan_artifact

BROKEN = {
    "mod.py": ("def f(:\n    return 1\n", 1, "Python syntax error"),
    "late.py": ("x = 1\ny = 2\nif x\n    pass\n", 3, "Python syntax error"),
    "data.json": ('{\n  "a": 1,\n  "b": \n}\n', 4, "invalid JSON"),
    "rows.jsonl": ('{"a": 1}\n{"b": 2}\n{oops}\n', 3, "invalid JSON line"),
    "conf.yaml": ("a: 1\nb: [1, 2\nc: 3\n", 3, "invalid YAML"),
    "conf.yml": ("a: 1\n  b: 2\n", 2, "invalid YAML"),
    "pyproject.toml": ('[tool]\nname = "x"\nbad = \n', 3, "invalid TOML"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_parse_error_with_line(tmp_path: Path, name: str) -> None:
    text, line, message = BROKEN[name]
    (tmp_path / name).write_text(text)
    kind = "code" if name.endswith(".py") else "config"
    report = scan_artifact(tmp_path, [name], kind, security=False)
    [finding] = report.findings
    assert (finding.severity, finding.rule, finding.file, finding.line) == ("critical", "syntax", name, line)
    assert finding.message.startswith(message)
    assert not report.passed


def test_valid_files_pass(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f(x):\n    return '\\d'  # invalid escape is only a warning\n")
    (tmp_path / "b.json").write_text('{"a": [1, 2]}')
    (tmp_path / "c.yaml").write_text("---\na: 1\n---\nb: 2\n")
    (tmp_path / "d.toml").write_text('[x]\ny = "z"\n')
    (tmp_path / "e.jsonl").write_text('{"a": 1}\n\n{"b": 2}\n')
    assert scan_artifact(tmp_path, ["*"], "config").findings == []
    assert scan_artifact(tmp_path, ["*"], "code").findings == []


def test_types_the_kind_does_not_own_are_warnings(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text("{broken")
    (tmp_path / "helper.py").write_text("def (:\n")
    code = scan_artifact(tmp_path, ["*"], "code", security=False)
    assert {(f.file, f.severity) for f in code.findings} == {
        ("settings.json", "warning"),
        ("helper.py", "critical"),
    }
    config = scan_artifact(tmp_path, ["*"], "config", security=False)
    assert {(f.file, f.severity) for f in config.findings} == {
        ("settings.json", "critical"),
        ("helper.py", "warning"),
    }
    prompt = scan_artifact(tmp_path, ["*"], "prompt", security=False)
    assert {f.severity for f in prompt.findings} == {"warning"}
    assert prompt.passed
