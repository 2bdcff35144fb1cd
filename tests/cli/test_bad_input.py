"""Bad input through the real ``assay`` command: exit status 2 and one line naming the file and the field,
never a traceback, an "internal error", a hang or a silent pass.

Each entry writes a small project (the slugify example, with some files replaced) and runs the command in a
subprocess with a timeout, so a hang fails the test rather than the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "slugify"
TIMEOUT_S = 60

FIFO = "<fifo>"  # file content: make a named pipe instead


@dataclass(frozen=True)
class Sparse:
    """File content: a file of ``size`` bytes that takes no disk space."""

    size: int


def config(
    *,
    cases: str = "cases.yaml",
    runner: str = "type: command\n  command: python slugify.py {input}\n  timeout: 10",
    extra: str = "",
) -> str:
    # No L1 static tier: every error here must come from loading the project, not from a scan.
    return (
        f"artifact:\n  paths: [slugify.py]\ncases:\n  files: [{cases}]\nrunner:\n  {runner}\n"
        "tiers: {static: false}\n" + extra
    )


def case(extra: str = "", check: str = "{type: equals, value: hello-world}") -> str:
    return f"cases:\n  - id: simple\n    input: Hello World\n{extra}    checks:\n      - {check}\n"


def nested_block(depth: int) -> str:
    return "".join(f"\n      {' ' * i}a:" for i in range(depth)) + " 1"


@dataclass(frozen=True)
class Bad:
    """A project with ``files`` replaced, the command to run, and what its one error line must say: ``file``
    then ``field`` (as ``<file>: <field>: ``) and the ``problem``."""

    id: str
    files: dict[str, str | bytes | Sparse]
    file: str
    field: str | None
    problem: str
    args: tuple[str, ...] = ("eval",)


DEEP = "[" * 5000 + "]" * 5000

BAD = [
    # 1. Deep nesting, before the parser can crash (libyaml) or recurse too far (Python, json).
    Bad(
        "deep-flow-seq-config",
        {"assay.yaml": config(extra=f"cache: {DEEP}\n")},
        "assay.yaml",
        "cache",
        "nested deeper than 100 levels",
    ),
    Bad(
        "deep-flow-map-config",
        {"assay.yaml": config(extra="cache: " + "{a: " * 5000 + "1" + "}" * 5000)},
        "assay.yaml",
        "cache.a.a.a.a...",
        "nested deeper than 100 levels",
    ),
    Bad(
        "deep-block-cases",
        {"cases.yaml": case("    vars:" + nested_block(5000) + "\n")},
        "cases.yaml",
        "cases[0].vars.a.a...",
        "nested deeper than 100 levels",
    ),
    Bad(
        "deep-evals-json",
        {
            "cases.json": '{"evals": [{"id": 1, "prompt": "x", "expectations": ' + DEEP + "}]}",
            "assay.yaml": config(cases="cases.json"),
        },
        "cases.json",
        "evals[0].expectations[0][0]...",
        "nested deeper than 100 levels",
    ),
    Bad(
        "deep-jsonl-line",
        {
            "cases.jsonl": '{"id": "a", "input": "x"}\n{"id": "b", "vars": {"v": ' + DEEP + "}}\n",
            "assay.yaml": config(cases="cases.jsonl"),
        },
        "cases.jsonl",
        "line 2: vars.v[0][0][0]...",
        "nested deeper than 100 levels",
    ),
    Bad(
        "deep-promptfoo",
        {"pf.yaml": "tests:\n  - vars: {q: " + DEEP + "}\n", "assay.yaml": config(cases="pf.yaml")},
        "pf.yaml",
        "tests[0].vars.q",
        "nested deeper than 100 levels",
    ),
    Bad(
        "alias-bomb",
        {
            "cases.yaml": case(
                "    vars:\n      a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                + "".join(
                    f"      {n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n"
                    for p, n in zip("abcdefg", "bcdefgh", strict=True)
                )
            )
        },
        "cases.yaml",
        "cases[0].vars.f[7]",
        "aliases expand to more than 1,000,000 nodes",
    ),
    Bad(
        "recursive-alias",
        {"cases.yaml": case("    vars: &v {self: *v}\n")},
        "cases.yaml",
        "cases[0].vars.self",
        "alias *v is inside the node it names",
    ),
    # 2. data_dir that cannot be a directory.
    Bad(
        "data-dir-is-a-file",
        {"assay.yaml": config(extra="data_dir: cases.yaml\n")},
        "assay.yaml",
        "data_dir",
        "'cases.yaml' is a file",
    ),
    Bad(
        "data-dir-under-a-file",
        {"assay.yaml": config(extra="data_dir: slugify.py/state\n")},
        "assay.yaml",
        "data_dir",
        "is under the file",
    ),
    Bad(
        "data-dir-impossible",
        {"assay.yaml": config(extra="data_dir: /proc/assay-state\n")},
        "assay.yaml",
        "data_dir",
        "cannot create directory '/proc/assay-state'",
    ),
    # 3. Files that are not regular, or too large.
    Bad(
        "cases-dev-zero",
        {"assay.yaml": config(cases="/dev/zero")},
        "assay.yaml",
        "cases.files[0]",
        "/dev/zero: not a regular file",
    ),
    Bad(
        "cases-fifo",
        {"fifo.yaml": FIFO, "assay.yaml": config(cases="fifo.yaml")},
        "assay.yaml",
        "cases.files[0]",
        "fifo.yaml: not a regular file",
    ),
    Bad(
        "cases-too-large",
        {"big.yaml": Sparse(50 * 2**20 + 1), "assay.yaml": config(cases="big.yaml")},
        "assay.yaml",
        "cases.files[0]",
        "larger than 50 MB (assay's limit for case and config files)",
    ),
    Bad(
        "cases-directory",
        {"dir.yaml/x": "", "assay.yaml": config(cases="dir.yaml")},
        "assay.yaml",
        "cases.files[0]",
        "expected a file, found a directory",
    ),
    Bad("cases-binary", {"cases.yaml": bytes(range(256)) * 8}, "assay.yaml", "cases.files[0]", "not UTF-8"),
    Bad(
        "promptfoo-var-dev-zero",
        {"pf.yaml": "tests:\n  - vars: {doc: 'file:///dev/zero'}\n", "assay.yaml": config(cases="pf.yaml")},
        "pf.yaml",
        "tests[0].vars.doc",
        "/dev/zero: not a regular file",
    ),
    Bad(
        "promptfoo-var-fifo",
        {
            "pipe.txt": FIFO,
            "pf.yaml": "tests:\n  - vars: {doc: 'file://pipe.txt'}\n",
            "assay.yaml": config(cases="pf.yaml"),
        },
        "pf.yaml",
        "tests[0].vars.doc",
        "pipe.txt: not a regular file",
    ),
    Bad(
        "promptfoo-var-too-large",
        {
            "doc.txt": Sparse(10 * 2**20 + 1),
            "pf.yaml": "tests:\n  - vars: {doc: 'file://doc.txt'}\n",
            "assay.yaml": config(cases="pf.yaml"),
        },
        "pf.yaml",
        "tests[0].vars.doc",
        "larger than 10 MB (assay's limit for file:// vars)",
    ),
    Bad("config-dev-zero", {}, "/dev/zero", None, "not a regular file", args=("eval", "-c", "/dev/zero")),
    # 4. Weights that are not finite numbers.
    Bad(
        "case-weight-nan",
        {"cases.yaml": case("    weight: .nan\n")},
        "cases.yaml",
        "cases[0].weight",
        "must be a finite number",
    ),
    Bad(
        "check-weight-inf",
        {"cases.yaml": case(check="{type: equals, value: x, weight: .inf}")},
        "cases.yaml",
        "cases[0].checks[0].weight",
        "must be a finite number",
    ),
    Bad(
        "default-check-weight-nan",
        {"assay.yaml": config(extra="checks:\n  - {type: contains, value: a, weight: .nan}\n")},
        "assay.yaml",
        "checks[0].weight",
        "must be a finite number",
    ),
    Bad(
        "case-weight-huge-int",
        {"cases.yaml": case("    weight: 1" + "0" * 400 + "\n")},
        "cases.yaml",
        "cases[0].weight",
        "must be a finite number",
    ),
    # 5. Durations that are infinite or absurd.
    Bad(
        "timeout-inf",
        {"assay.yaml": config(runner="type: command\n  command: sleep 9\n  timeout: .inf")},
        "assay.yaml",
        "runner.timeout",
        "must be a finite number",
    ),
    Bad(
        "timeout-1e300",
        {"assay.yaml": config(runner="type: command\n  command: sleep 9\n  timeout: 1e300")},
        "assay.yaml",
        "runner.timeout",
        "at most 604800 seconds",
    ),
    Bad(
        "llm-timeout-huge",
        {
            "assay.yaml": config(
                runner="type: llm\n  model: 'openai:gpt-4o-mini'\n  prompt: slugify.py\n  timeout: 1.0e+9"
            )
        },
        "assay.yaml",
        "runner.timeout",
        "at most 604800 seconds",
    ),
    # 6. Concurrency.
    Bad(
        "concurrency-negative",
        {"assay.yaml": config(extra="concurrency: -3\n")},
        "assay.yaml",
        "concurrency",
        "greater than 0",
    ),
    Bad(
        "concurrency-zero",
        {"assay.yaml": config(extra="concurrency: 0\n")},
        "assay.yaml",
        "concurrency",
        "greater than 0",
    ),
    Bad(
        "concurrency-huge",
        {"assay.yaml": config(extra="concurrency: 1000000000\n")},
        "assay.yaml",
        "concurrency",
        "less than or equal to 1024",
    ),
    # 7. An unbalanced placeholder brace.
    Bad(
        "command-unclosed-brace",
        {"assay.yaml": config(runner="type: command\n  command: 'echo {input'")},
        "assay.yaml",
        "runner.command",
        "unclosed placeholder '{input'",
    ),
    Bad(
        "agent-unclosed-brace",
        {"assay.yaml": config(runner="type: agent\n  command: 'echo {vars.x'")},
        "assay.yaml",
        "runner.command",
        "unclosed placeholder '{vars.x'",
    ),
    Bad(
        "proposer-unclosed-brace",
        {"assay.yaml": config(extra="evolve:\n  proposer: {type: agent, command: 'x {view_file'}\n")},
        "assay.yaml",
        "evolve.proposer.command",
        "write {view_file}",
    ),
    # 8. Duplicate keys.
    Bad(
        "duplicate-key-config",
        {"assay.yaml": config(extra="runner:\n  type: command\n  command: x\n")},
        "assay.yaml",
        "runner",
        "line 10, column 1: duplicate key 'runner' (first at line 5)",
    ),
    Bad(
        "duplicate-key-case",
        {"cases.yaml": case("    input: again\n")},
        "cases.yaml",
        "cases[0].input",
        "duplicate key 'input' (first at line 3)",
    ),
    # 9, 10. A misspelt assertion type (promptfoo CSV) or expectation prefix (skill-creator).
    Bad(
        "csv-misspelt-type",
        {"t.csv": "input,__expected\nHello World,containz: hello\n", "assay.yaml": config(cases="t.csv")},
        "t.csv",
        "row 2: __expected",
        "unknown assertion type 'containz'; did you mean 'contains'?",
    ),
    Bad(
        "evals-unknown-prefix",
        {
            "evals.json": '{"evals": [{"id": 1, "prompt": "x", "expectations": ["[containz] x"]}]}',
            "assay.yaml": config(cases="evals.json"),
        },
        "evals.json",
        "evals[0].expectations[0]",
        "unknown expectation prefix '[containz]'; known: contains",
    ),
    # 11. A missing prompt file is reported before a missing API key.
    Bad(
        "llm-missing-prompt",
        {"assay.yaml": config(runner="type: llm\n  model: 'openai:gpt-4o-mini'\n  prompt: missing.md")},
        "assay.yaml",
        "runner.prompt",
        "missing.md': file not found",
    ),
    # More: what an attacker would try.
    Bad(
        "config-top-level-list",
        {"assay.yaml": "- artifact\n- cases\n"},
        "assay.yaml",
        None,
        "expected a mapping at the top level",
    ),
    Bad(
        "unknown-check-type",
        {"cases.yaml": case(check="{type: equalz, value: x}")},
        "cases.yaml",
        "cases[0].checks[0]",
        "unknown check type 'equalz'",
    ),
    Bad(
        "invalid-regex",
        {"cases.yaml": case(check="{type: regex, value: '(['}")},
        "cases.yaml",
        "cases[0].checks[0]",
        "invalid pattern",
    ),
    Bad(
        "negative-weight",
        {"cases.yaml": case(check="{type: equals, value: x, weight: -1}")},
        "cases.yaml",
        "cases[0].checks[0].weight",
        "greater than or equal to 0",
    ),
    Bad(
        "check-value-wrong-type",
        {"cases.yaml": case(check="{type: contains, value: {a: 1}}")},
        "cases.yaml",
        "cases[0].checks[0]",
        "value must be text",
    ),
    Bad(
        "bad-date-scalar",
        {"cases.yaml": case("    description: 2001-13-01\n")},
        "cases.yaml",
        None,
        "month must be in 1..12",
    ),
    Bad(
        "markup-in-message",
        {"cases.yaml": "cases:\n  - {id: '[red]x', input: a}\n  - {id: '[red]x', input: b}\n"},
        "cases.yaml",
        "cases[1].id",
        "duplicate case id '[red]x'",
    ),
    Bad(
        "evolve-layer-99",
        {"assay.yaml": config(extra="evolve: {layers: [99]}\n")},
        "assay.yaml",
        "evolve.layers[0]",
        "1, 2 or 3",
    ),
    Bad(
        "gate-option-nan",
        {"assay.yaml": config(extra="evolve: {gate_options: {min_delta: .nan}}\n")},
        "assay.yaml",
        "evolve.gate_options.min_delta",
        "must be a finite number",
    ),
    Bad(
        "init-config-outside",
        {},
        "outside.yaml",
        None,
        "--config must name a file inside",
        args=("init", "-c", "../outside.yaml"),
    ),
    # Misconfiguration named at once (issue 68): an editable path that is not there, named by `eval` and `init`
    # before anything runs (it was an L1 finding of the artifact); a case file both editable and forbidden.
    Bad(
        "missing-artifact-path-eval",
        {"assay.yaml": config().replace("paths: [slugify.py]", "paths: [slugfy.py]")},
        "assay.yaml",
        "artifact.paths[0]",
        "no file matches 'slugfy.py' in",
    ),
    Bad(
        "missing-artifact-path-init",
        {"assay.yaml": config().replace("paths: [slugify.py]", "paths: [slugify.py, prompts/]")},
        "assay.yaml",
        "artifact.paths[1]",
        "no file matches 'prompts/' in",
        ("init",),
    ),
    Bad(
        "missing-artifact-path-suggests",
        {"assay.yaml": config().replace("paths: [slugify.py]", "paths: [slugfy.py]")},
        "assay.yaml",
        "artifact.paths[0]",
        "did you mean 'slugify.py'?",
        ("init",),
    ),
    Bad(
        "case-file-editable-and-forbidden",
        {
            "assay.yaml": config().replace(
                "paths: [slugify.py]", "paths: [slugify.py, cases.yaml]\n  forbid: [cases.yaml]"
            )
        },
        "assay.yaml",
        "artifact.paths[1]",
        "'cases.yaml' names the case file cases.yaml, which artifact.forbid lists too",
    ),
]


def write_project(root: Path, files: dict[str, str | bytes | Sparse]) -> None:
    root.mkdir(parents=True)
    for name in ("slugify.py", "cases.yaml"):
        shutil.copy(EXAMPLE / name, root / name)
    (root / "assay.yaml").write_text(config())
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content == FIFO:
            os.mkfifo(path)
        elif isinstance(content, Sparse):
            with path.open("wb") as handle:
                handle.truncate(content.size)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def run_assay(root: Path, args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        # No API keys: the llm runner must report its missing prompt file, not a missing key.
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "COLUMNS": "300",
            **{name: os.environ[name] for name in ("ASSAY_BWRAP",) if name in os.environ},  # no_bwrap's
        },
    )


@pytest.mark.parametrize("bad", BAD, ids=[bad.id for bad in BAD])
def test_bad_input_is_one_line_naming_file_and_field(tmp_path: Path, bad: Bad) -> None:
    if "/proc/" in bad.problem and not Path("/proc/self").exists():
        pytest.skip("needs /proc")
    root = tmp_path / "project"
    write_project(root, bad.files)
    done = run_assay(root, bad.args)
    stderr = done.stderr.strip()
    assert done.returncode == 2, (done.stdout[-2000:], stderr[-2000:])
    assert "Traceback" not in stderr and "internal error" not in stderr
    assert stderr.startswith("error: ") and "\n" not in stderr, stderr
    where = f"{bad.file}: {bad.field}: " if bad.field else f"{bad.file}: "
    assert where in stderr, stderr
    assert bad.problem in stderr, stderr


@pytest.mark.usefixtures("no_bwrap")  # the jail is not what this tests
def test_candidate_output_with_markup_is_printed_verbatim(tmp_path: Path) -> None:
    """An output such as ``[/x]`` is text, not rich markup (which raised an error after every case ran)."""
    root = tmp_path / "project"
    write_project(root, {"assay.yaml": config(runner="type: command\n  command: echo '[/x] [bold]'")})
    done = run_assay(root, ("eval",))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "got '[/x] [bold]'" in done.stdout
