"""Findings, the report's verdict and its rendering."""

from __future__ import annotations

from assay.static import Finding, StaticReport, format_report


def test_render_with_and_without_line() -> None:
    with_line = Finding(severity="critical", rule="syntax", file="a.py", line=3, message="bad")
    without = Finding(severity="warning", rule="large-file", file="b.bin", message="big")
    assert with_line.render() == "critical a.py:3 syntax: bad"
    assert without.render() == "warning b.bin large-file: big"


def test_passed_means_no_critical_finding() -> None:
    warning = Finding(severity="warning", rule="sudo", file="run.sh", line=1, message="sudo")
    critical = Finding(severity="critical", rule="sql-drop", file="q.sql", line=2, message="SQL DROP")
    assert StaticReport().passed
    assert StaticReport(findings=[warning]).passed
    report = StaticReport(findings=[critical, warning])
    assert not report.passed
    assert report.critical == [critical] and report.warnings == [warning]
    assert report.model_dump()["passed"] is False


def test_format_report_one_line_per_finding() -> None:
    findings = [
        Finding(severity="critical", rule="missing-path", file="x.md", message="no file"),
        Finding(severity="warning", rule="eval", file="a.py", line=9, message="eval"),
    ]
    assert format_report(StaticReport(findings=findings)).splitlines() == [
        "critical x.md missing-path: no file",
        "warning a.py:9 eval: eval",
    ]
    assert format_report(StaticReport()) == ""
