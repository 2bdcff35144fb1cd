"""Nothing a check reads is readable by a proposer or a candidate: every way a readable path (an agent
proposer's ``home_ro`` entry, a ``runner.read_only`` entry, the runner's own command) could show a case file, a
check script or a check's data file is refused in one line, or masked (case files under ``read_only``).

The ways in, each tried against a case file, a check script, a check's data file and promptfoo ``python`` and
``javascript`` check files: an entry that is a hard link; a folder holding one, inside and outside the
project; a glob matching one (``read_only`` only: ``home_ro`` entries are mounted as written); a symlink to one,
or to the folder above one."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.cases import load_cases
from assay.config import AssayConfig, load_config
from assay.errors import ConfigError
from assay.evaluation.answer_key import answer_key
from assay.evaluation.confine import candidate_jail
from assay.evaluation.key_links import links_under
from assay.evaluation.key_reach import masked_links, refuse_exposed_key
from assay.model import Case

KEYS = {
    "case file": "cases/evals.yaml",
    "check script": "checks/check_key.py",
    "check data file": "data/key.json",
    "promptfoo python check file": "pf/grade.py",
    "promptfoo javascript check file": "pf/grade.js",
}
CASES = "cases:\n" + "".join(
    f"  - {{id: c{i}, input: q{i}, checks: [{{type: contains, value: ok}}]}}\n" for i in range(3)
)
PROMPTFOO = (
    "prompts: ['{{question}}']\nproviders: [echo]\ntests:\n"
    "  - vars: {question: hi}\n    assert:\n      - {type: python, value: file://grade.py}\n"
    "      - {type: javascript, value: file://grade.js}\n"
)


def project(tmp_path: Path, runner: str = "{type: command, command: 'python3 run.py {input}'}") -> Path:
    root = tmp_path / "proj"
    files = {
        "params.json": '{"style": "terse"}\n',
        "run.py": "import sys; print(open('params.json').read(), sys.argv[1])\n",
        KEYS["case file"]: CASES,
        KEYS["check script"]: "import json, sys; sys.exit(0)\n",
        KEYS["check data file"]: '{"answer": "amber kestrel"}\n',
        KEYS["promptfoo python check file"]: "def get_assert(output, context):\n    return True\n",
        KEYS["promptfoo javascript check file"]: "module.exports = () => true;\n",
        "pf/promptfooconfig.yaml": PROMPTFOO,
        "assay.yaml": (
            "artifact: {kind: config, paths: [params.json]}\n"
            "cases: {files: [cases/evals.yaml, pf/promptfooconfig.yaml]}\n"
            f"runner: {runner}\n"
            "checks:\n  - {type: script, value: 'python3 checks/check_key.py data/key.json'}\n"
        ),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "outside").mkdir()
    return root


def loaded(root: Path) -> tuple[AssayConfig, list[Case]]:
    config = load_config(root / "assay.yaml")
    cases = load_cases([root / f for f in config.cases.files], default_checks=list(config.checks))
    return config, cases


def _hard_link_entry(root: Path, key: Path, outside: bool) -> tuple[str, Path]:
    link = (root.parent / "outside" if outside else root) / f"copy{key.suffix}"
    os.link(key, link)
    return str(link) if outside else link.name, link


def _folder(root: Path, key: Path, outside: bool) -> tuple[str, Path]:
    folder = root.parent / "outside" / "shelf" if outside else root / "shelf"
    (folder / "deep").mkdir(parents=True)
    link = folder / "deep" / f"copy{key.suffix}"
    os.link(key, link)
    return str(folder) if outside else "shelf", link


def _glob(root: Path, key: Path, outside: bool) -> tuple[str, Path]:
    folder = root / "shelf"
    folder.mkdir()
    link = folder / f"copy{key.suffix}"
    os.link(key, link)
    return "shelf/*", link


def _symlink(root: Path, key: Path, outside: bool) -> tuple[str, Path]:
    link = root.parent / "outside" / f"link{key.suffix}"
    link.symlink_to(key)
    return str(link), key


def _symlink_above(root: Path, key: Path, outside: bool) -> tuple[str, Path]:
    link = root.parent / "outside" / "above"
    link.symlink_to(key.parent)
    return str(link), key


WAYS: dict[str, Callable[[Path, Path, bool], tuple[str, Path]]] = {
    "a hard link": _hard_link_entry,
    "a folder inside the project holding a hard link": _folder,
    "a folder outside the project holding a hard link": _folder,
    "a glob matching a hard link": _glob,
    "a symlink to it": _symlink,
    "a symlink to the folder above it": _symlink_above,
}


def make_way(root: Path, kind: str, way: str, *, absolute: bool) -> tuple[str, Path]:
    outside = absolute or "outside" in way
    return WAYS[way](root, root / KEYS[kind], outside)


@pytest.mark.parametrize("kind", list(KEYS))
@pytest.mark.parametrize("way", [w for w in WAYS if "glob" not in w])
def test_an_agent_proposer_reads_no_key_file(tmp_path: Path, kind: str, way: str) -> None:
    root = project(tmp_path)
    entry, _ = make_way(root, kind, way, absolute=True)
    config, cases = loaded(root)
    config.evolve.proposer.type = "agent"
    config.evolve.proposer.command = "true"
    config.evolve.proposer.home_ro = [str(tmp_path / "tools"), entry]
    with pytest.raises(ConfigError) as raised:
        refuse_exposed_key(config, cases)
    message = str(raised.value)
    assert "\n" not in message and f"evolve.proposer.home_ro[1]: {entry} " in message
    assert "the agent proposer would read the answer key" in message
    if "hard link" in way:
        assert "a hard link to" in message and KEYS[kind] in message


@pytest.mark.parametrize("kind", [k for k in KEYS if k != "case file"])
@pytest.mark.parametrize("way", list(WAYS))
def test_a_candidate_is_shown_no_check_file(tmp_path: Path, kind: str, way: str) -> None:
    root = project(tmp_path)
    entry, _ = make_way(root, kind, way, absolute=False)
    config, cases = loaded(root)
    config.runner.read_only = ["params.json", entry]  # type: ignore[union-attr]
    with pytest.raises(ConfigError) as raised:
        refuse_exposed_key(config, cases)
    message = str(raised.value)
    assert "\n" not in message and ": runner.read_only[1]: " in message
    assert "candidates would read the answer key" in message
    # The folder above a promptfoo check file holds its sibling too: either may be named.
    assert (KEYS[kind] if "above" not in way else os.path.dirname(KEYS[kind]) + "/") in message


@pytest.mark.parametrize("way", list(WAYS))
def test_a_case_file_under_read_only_is_masked(tmp_path: Path, way: str) -> None:
    root = project(tmp_path)
    entry, link = make_way(root, "case file", way, absolute=False)
    config, cases = loaded(root)
    config.runner.read_only = [entry]  # type: ignore[union-attr]
    refuse_exposed_key(config, cases)  # not refused: masked, as the case files always are
    keys = answer_key(config, cases)
    masked = masked_links(config, keys)
    jail = candidate_jail(config, cases)
    if "hard link" in way:
        assert masked == [link]
        shown = os.path.relpath(link, root) if root in link.parents else str(link)
        assert shown in jail.hidden
    else:  # a symlink shows what stands at its target: the case file itself, hidden
        assert masked == [] and "cases/evals.yaml" in jail.hidden


def test_the_runner_command_naming_a_check_file(tmp_path: Path) -> None:
    root = project(tmp_path, runner="{type: command, command: 'python3 run.py data/key.json {input}'}")
    config, cases = loaded(root)
    with pytest.raises(ConfigError) as raised:
        refuse_exposed_key(config, cases)
    message = str(raised.value)
    assert (
        ": runner.command: names data/key.json, which is a file a check runs or reads, data/key.json: "
        in (message)
    )
    assert "give the runner a file of its own with only what it needs" in message


def test_a_hard_link_the_runner_command_names(tmp_path: Path) -> None:
    root = project(tmp_path, runner="{type: command, command: 'python3 run.py inputs.json {input}'}")
    os.link(root / KEYS["check data file"], root / "inputs.json")
    config, cases = loaded(root)
    with pytest.raises(ConfigError, match=r"runner\.command: names inputs\.json, which is a hard link to"):
        refuse_exposed_key(config, cases)


def test_what_is_not_refused(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "lib").mkdir()
    (root / "lib" / "helper.py").write_text("X = 1\n")
    (tmp_path / "tools" / "bin").mkdir(parents=True)
    config, cases = loaded(root)
    config.runner.read_only = ["lib/**", "params.json", str(tmp_path / "tools")]  # type: ignore[union-attr]
    config.evolve.proposer.type = "agent"
    config.evolve.proposer.command = "true"
    # Above the project: the agent's jail hides the project, its key files with it.
    config.evolve.proposer.home_ro = [str(tmp_path / "tools"), str(tmp_path)]
    refuse_exposed_key(config, cases)
    assert masked_links(config, answer_key(config, cases)) == []


def test_links_are_found_on_the_keys_filesystem_only(tmp_path: Path) -> None:
    key = tmp_path / "key.json"
    key.write_text("{}")
    info = key.stat()
    (tmp_path / "a" / "b").mkdir(parents=True)
    os.link(key, tmp_path / "a" / "b" / "twin.json")
    (tmp_path / "a" / "sym.json").symlink_to(key)
    ids = {(info.st_dev, info.st_ino): "KEY"}
    assert sorted(p.name for p, _ in links_under(tmp_path / "a", ids)) == ["twin.json"]
    assert list(links_under(tmp_path / "a", ids, skip=[tmp_path / "a" / "b"])) == []
    assert list(links_under(tmp_path / "a", {(info.st_dev + 1, info.st_ino): "KEY"})) == []
    # A directory changed since the last walk is read again; the others come from the cache.
    os.link(key, tmp_path / "a" / "third.json")
    assert sorted(p.name for p, _ in links_under(tmp_path / "a", ids)) == ["third.json", "twin.json"]
