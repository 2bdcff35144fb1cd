"""The L1 scan's cache: the same findings as a fresh scan, read back for unchanged files only, and a broken
or unwritable cache costs only a scan."""

from __future__ import annotations

import json
from pathlib import Path

from assay.static import Finding, scan_artifact
from assay.static.cache import ScanCache
from tests.static.fakes import FakeSecrets

PATHS = ["*.py", "*.json", "*.md"]


def artifact(root: Path, fake: FakeSecrets) -> Path:
    (root / "ok.py").write_text("def f():\n    return 1\n")
    (root / "broken.py").write_text("def f(:\n")
    (root / "settings.json").write_text(json.dumps({"key": fake.aws_key}) + "\n")
    (root / "notes.md").write_text("eval(input())\n")
    return root


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.json"))


def test_a_cached_scan_finds_what_a_fresh_one_finds(tmp_path: Path, fake: FakeSecrets) -> None:
    root = tmp_path / "a"
    root.mkdir()
    artifact(root, fake)
    cache = ScanCache(tmp_path / "cache")
    fresh = scan_artifact(root, PATHS, "code")
    assert {(f.file, f.rule) for f in fresh.findings} >= {
        ("broken.py", "syntax"),
        ("settings.json", "aws-access-key"),
    }
    first = scan_artifact(root, PATHS, "code", cache=cache)
    second = scan_artifact(root, PATHS, "code", cache=cache)
    assert first.findings == second.findings == fresh.findings
    assert first.files == second.files == fresh.files
    assert len(entries(tmp_path / "cache")) == 4  # one per file, those without findings included


def test_only_an_unchanged_file_is_read_from_the_cache(tmp_path: Path, fake: FakeSecrets) -> None:
    root = tmp_path / "a"
    root.mkdir()
    artifact(root, fake)
    cache = ScanCache(tmp_path / "cache")
    scan_artifact(root, PATHS, "code", cache=cache)
    key = cache.key(kind="code", security=True, rel="ok.py", text=(root / "ok.py").read_text())
    planted = Finding(severity="warning", rule="planted", file="ok.py", message="from the cache")
    cache.put(key, [planted])
    assert planted in scan_artifact(root, PATHS, "code", cache=cache).findings
    (root / "ok.py").write_text("def f():\n    return 2\n")
    assert all(f.rule != "planted" for f in scan_artifact(root, PATHS, "code", cache=cache).findings)
    # Another kind or security setting is another entry.
    assert all(f.rule != "planted" for f in scan_artifact(root, PATHS, "config", cache=cache).findings)
    assert key != cache.key(kind="code", security=False, rel="ok.py", text=(root / "ok.py").read_text())


def test_a_broken_entry_is_a_miss_and_is_rewritten(tmp_path: Path, fake: FakeSecrets) -> None:
    root = tmp_path / "a"
    root.mkdir()
    artifact(root, fake)
    cache = ScanCache(tmp_path / "cache")
    fresh = scan_artifact(root, PATHS, "code", cache=cache)
    for number, entry in enumerate(entries(tmp_path / "cache")):
        entry.write_text(["{not json", '[{"severity": "fatal"}]', '{"a": 1}', ""][number])
    again = scan_artifact(root, PATHS, "code", cache=cache)
    assert again.findings == fresh.findings
    assert all(isinstance(json.loads(e.read_text()), list) for e in entries(tmp_path / "cache"))


def test_an_unwritable_cache_only_costs_the_scan(tmp_path: Path, fake: FakeSecrets) -> None:
    root = tmp_path / "a"
    root.mkdir()
    artifact(root, fake)
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the folder would be\n")
    report = scan_artifact(root, PATHS, "code", cache=ScanCache(blocked / "static"))
    assert report.findings == scan_artifact(root, PATHS, "code").findings
    assert blocked.read_text() == "a file where the folder would be\n"
