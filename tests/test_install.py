"""Install hints follow how assay was installed (PEP 610 ``direct_url.json``), and every hint uses them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay import install
from assay.install import hint_for, install_hint


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        (None, "pip install 'assay[llm]'"),
        (
            {"url": "file:///home/me/assay", "dir_info": {"editable": True}},
            "pip install -e '/home/me/assay[llm]'",
        ),
        ({"url": "file:///home/me/assay", "dir_info": {}}, "pip install '/home/me/assay[llm]'"),
        (
            {
                "url": "file:///home/me/My%20Code/mono",
                "dir_info": {"editable": True},
                "subdirectory": "assay",
            },
            "pip install -e '/home/me/My Code/mono/assay[llm]'",
        ),
        (
            {
                "url": "https://github.com/acme/assay.git",
                "vcs_info": {"vcs": "git", "requested_revision": "main", "commit_id": "0" * 40},
            },
            "pip install 'assay[llm] @ git+https://github.com/acme/assay.git@main'",
        ),
        (
            {"url": "ssh://git@github.com/acme/assay.git", "vcs_info": {"vcs": "git", "commit_id": "ab12"}},
            "pip install 'assay[llm] @ git+ssh://git@github.com/acme/assay.git@ab12'",
        ),
        (
            {
                "url": "https://github.com/acme/mono.git",
                "vcs_info": {"vcs": "git", "commit_id": "ab12"},
                "subdirectory": "py/assay",
            },
            "pip install 'assay[llm] @ git+https://github.com/acme/mono.git@ab12#subdirectory=py/assay'",
        ),
        (
            {"url": "https://example.org/assay-0.1.0.tar.gz", "archive_info": {"hashes": {}}},
            "pip install 'assay[llm] @ https://example.org/assay-0.1.0.tar.gz'",
        ),
        (
            {"url": "file:///tmp/dist/assay-0.1.0-py3-none-any.whl", "archive_info": {}},
            "pip install 'assay[llm] @ file:///tmp/dist/assay-0.1.0-py3-none-any.whl'",
        ),
    ],
)
def test_hint_for_each_kind_of_install(direct_url: dict[str, Any] | None, expected: str) -> None:
    assert hint_for("llm", direct_url) == expected


def test_a_source_tree_without_metadata_is_named() -> None:
    assert hint_for("local", None, Path("/src/assay")) == "pip install -e '/src/assay[local]'"
    # a path that needs quoting stays one shell word
    assert hint_for("local", None, Path("/it's/here")) == "pip install -e '/it'\"'\"'s/here[local]'"


class FakeDistribution:
    def __init__(self, direct_url: str | None) -> None:
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        return self.direct_url if name == "direct_url.json" else None


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [
        (
            json.dumps({"url": "file:///opt/assay", "dir_info": {"editable": True}}),
            "pip install -e '/opt/assay[embed]'",
        ),
        (None, "pip install 'assay[embed]'"),  # from an index: pip writes no direct_url.json
        ("{not json", "pip install 'assay[embed]'"),
    ],
)
def test_install_hint_reads_the_installed_distribution(
    monkeypatch: pytest.MonkeyPatch, recorded: str | None, expected: str
) -> None:
    monkeypatch.setattr(install.metadata, "distribution", lambda name: FakeDistribution(recorded))
    install_hint.cache_clear()
    try:
        assert install_hint("embed") == expected
    finally:
        install_hint.cache_clear()


def test_the_prompt_starter_renders_the_hints(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from assay.starters import write_starter

    recorded = json.dumps({"url": "file:///opt/clone", "dir_info": {"editable": True}})
    monkeypatch.setattr(install.metadata, "distribution", lambda name: FakeDistribution(recorded))
    install_hint.cache_clear()
    try:
        (tmp_path / "support.md").write_text("You answer politely.\n")
        write_starter(tmp_path)
    finally:
        install_hint.cache_clear()
    text = (tmp_path / "assay.yaml").read_text()
    assert "(OPENAI_API_KEY; pip install -e '/opt/clone[llm]')" in text
    assert "(offline on the CPU; pip install -e '/opt/clone[local]', see docs/local.md)" in text
    assert "pip install 'assay[" not in text


def test_no_hint_is_written_by_hand() -> None:
    # Every hint goes through install_hint: a literal `pip install 'assay[...]'` is wrong after a clone install.
    package = Path(install.__file__).parent
    literal = "pip install 'assay["
    found = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*"))
        if path.suffix in (".py", ".yaml")
        and path.name != "install.py"
        and literal in path.read_text(encoding="utf-8")
    ]
    assert found == []
