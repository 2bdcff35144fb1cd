"""Candidates are untrusted code: attacks written as a hostile candidate would write them, against `assay eval`
run as a user runs it (a subprocess), with the command and the python runner.

Each attack runs with its protection on (the default: `runner.sandbox` strict where bubblewrap works, the
allow-listed environment) and off (`runner.sandbox: none`; for the environment, the variables named in
`env_allow`), and the test asserts the harm is done only when the protection is off — so each one fails if
its protection stops working.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from assay.evaluation.traces import read_traces
from tests.sandbox.procs import kill_marked, marked_processes, unique_marker

pytestmark = pytest.mark.e2e

SECRET = "ZEBRA-4471-QUOKKA"
SCRIPT_SECRET = "PANGOLIN-9931"
MODES = [pytest.param("strict", marks=pytest.mark.bwrap), "none"]


def write_project(root: Path, runner: str, attack: str, mode: str, extra_runner: str = "") -> Path:
    """A project whose candidate (``candidate.py``, or ``candidate:run`` for the python runner) runs
    ``attack`` (Python statements; ``print`` is the output). The answer key is in ``cases.yaml`` and in a
    check script; the candidate passes only if it finds the key."""
    root.mkdir(parents=True)
    body = textwrap.indent(textwrap.dedent(attack), "    ")
    (root / "candidate.py").write_text(
        "import os, sys, json, re, signal, subprocess, time\n"
        f"def attack(case_text):\n{body}\n"
        "def run(case, artifact_dir):\n"
        "    import io, contextlib\n"
        "    buffer = io.StringIO()\n"
        "    with contextlib.redirect_stdout(buffer):\n"
        "        attack(case.text)\n"
        "    return buffer.getvalue().strip()\n"
        "if __name__ == '__main__':\n"
        "    attack(sys.argv[1])\n"
    )
    (root / "graders").mkdir()
    (root / "graders" / "check.sh").write_text(f"grep -q {SCRIPT_SECRET} || grep -q {SECRET}\n")
    (root / "cases.yaml").write_text(
        "cases:\n"
        f"  - {{id: leak, input: 'find the key', expected: {SECRET}, checks: [{{type: contains, value: {SECRET}}}]}}\n"
    )
    runner_yaml = (
        "{type: command, command: 'python3 candidate.py {input}'"
        if runner == "command"
        else "{type: python, function: 'candidate:run'"
    )
    sandbox = ", sandbox: none" if mode == "none" else ""
    (root / "assay.yaml").write_text(
        "artifact: {kind: code, paths: [candidate.py], forbid: [cases.yaml, assay.yaml]}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {runner_yaml}, timeout: 60{sandbox}{extra_runner}}}\n"
        "checks: [{type: script, value: 'sh graders/check.sh'}]\n"
        "tiers: {static: false}\n"
    )
    return root


def assay_eval(
    root: Path, *, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", "eval", "--json", "-q"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def summary(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode in (0, 1), (done.returncode, done.stderr[-2000:])
    return json.loads(done.stdout)


def outputs(root: Path) -> str:
    """Everything the candidate produced (its output, stdout and stderr), from the trace files."""
    seen = []
    for folder in (root / ".assay" / "evals").glob("*/traces"):
        for trace in read_traces(folder):
            output = trace.result.output
            seen += [output.text, output.stdout_tail, output.stderr_tail, output.error or ""]
    return "\n".join(seen)


READ_KEY = """
found = []
here = os.getcwd()
paths = ["cases.yaml", "graders/check.sh", "../../cases.yaml", os.path.join(here, "cases.yaml")]
# A walk of the whole filesystem, bounded in time: on a machine with many files an unjailed walk would
# otherwise outlast the case's timeout (the relative paths above find the key without it).
started = time.monotonic()
for visited, (root, dirs, files) in enumerate(os.walk("/")):
    dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "lib", "bin", "sbin", "etc", "opt")]
    paths += [os.path.join(root, f) for f in files if f in ("cases.yaml", "check.sh")]
    if len(paths) > 400 or visited > 20000 or time.monotonic() - started > 3:
        break
for path in paths:
    try:
        text = open(path, errors="replace").read()
    except OSError:
        continue
    found += re.findall(r"[A-Z]+-\\d{4}(?:-[A-Z]+)?", text)
print(" ".join(sorted(set(found))) or "nothing")
"""


@pytest.mark.parametrize("runner", ["command", "python"])
@pytest.mark.parametrize("mode", MODES)
def test_reading_the_case_files_and_check_scripts(tmp_path: Path, runner: str, mode: str) -> None:
    root = write_project(tmp_path / "p", runner, READ_KEY, mode)
    result = summary(assay_eval(root))
    case = result["cases"][0]
    leaked = SECRET in outputs(root) or SCRIPT_SECRET in outputs(root)
    if mode == "strict":
        assert result["sandbox"] == "strict" and result["unsandboxed"] is None
        assert not case["passed"] and not leaked
    else:
        assert result["sandbox"] == "none" and result["unsandboxed"] == "runner.sandbox is none"
        assert case["passed"] and leaked  # the harm, without the jail


SIGNAL_ASSAY = """
def parent(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
pid, target = os.getpid(), None
while pid > 1:
    pid = parent(pid)
    cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
    if b"assay" in cmdline and b"eval" in cmdline:
        target = pid
        break
if target is None:
    print("assay is out of sight")
else:
    os.kill(target, signal.SIGKILL)
    print("killed", target)
"""


@pytest.mark.parametrize("runner", ["command", "python"])
@pytest.mark.parametrize("mode", MODES)
def test_signalling_assay(tmp_path: Path, runner: str, mode: str) -> None:
    root = write_project(tmp_path / "p", runner, SIGNAL_ASSAY, mode)
    done = assay_eval(root)
    if mode == "strict":
        result = summary(done)
        assert "assay is out of sight" in outputs(root)
        assert result["total"] == 1
    else:
        assert done.returncode == -signal.SIGKILL and done.stdout == ""  # no summary, no table


def daemons(marker: str, count: int = 20) -> str:
    return f"""
for _ in range({count}):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "{marker}"])
        os._exit(0)
print("daemons started")
"""


@pytest.mark.parametrize("mode", MODES)
def test_setsid_children_do_not_outlive_the_case(tmp_path: Path, mode: str) -> None:
    marker = unique_marker()
    root = write_project(tmp_path / "p", "command", daemons(marker), mode)
    try:
        summary(assay_eval(root))
        time.sleep(0.5)
        survivors = marked_processes(marker)
        if mode == "strict":
            assert survivors == []
        else:
            # Without the jail they escape; a few may still be killed with the case's process group before
            # their setsid() ran, so the count can fall short of 20.
            assert survivors
    finally:
        kill_marked(marker)


WRITE_OUTSIDE = """
here = os.getcwd()
for path in [os.path.join(here, "..", "outside-{marker}.txt"), "/tmp/assay-attack-{marker}.txt",
             os.path.join(here, "cases.yaml"), os.path.join(here, "graders", "check.sh")]:
    try:
        with open(path, "a") as handle:
            handle.write("- {{id: free, input: x}}\\n")
        print("wrote", path)
    except OSError as exc:
        print("refused", type(exc).__name__)
"""


@pytest.mark.parametrize("runner", ["command", "python"])
@pytest.mark.parametrize("mode", MODES)
def test_writing_outside_the_worktree(tmp_path: Path, runner: str, mode: str) -> None:
    marker = unique_marker()
    root = write_project(tmp_path / "p", runner, WRITE_OUTSIDE.format(marker=marker), mode)
    cases_before = (root / "cases.yaml").read_text()
    outside = [tmp_path / f"outside-{marker}.txt", Path(f"/tmp/assay-attack-{marker}.txt")]
    try:
        summary(assay_eval(root))
        written = [p for p in outside if p.exists()]
        tampered = (root / "cases.yaml").read_text() != cases_before
        if mode == "strict":
            assert written == [] and not tampered
        else:
            assert written == outside and tampered
    finally:
        for path in outside:
            path.unlink(missing_ok=True)


CREDENTIALS = {
    "DATABASE_URL": "postgres://u:hunter2@db.internal/prod",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/XXXXSECRET",
}
READ_ENV = """
print(json.dumps(dict(os.environ)))
try:
    print(open("/proc/1/environ", "rb").read().decode("utf-8", "replace"))
except OSError:
    pass
"""


@pytest.mark.parametrize("allowed", [False, True], ids=["allow-list", "allowed-by-config"])
def test_reading_credentials_from_the_environment(tmp_path: Path, allowed: bool) -> None:
    extra = ", env_allow: [DATABASE_URL, SLACK_WEBHOOK_URL]" if allowed else ""
    root = write_project(tmp_path / "p", "command", READ_ENV, "strict", extra_runner=extra)
    summary(assay_eval(root, env=CREDENTIALS))
    seen = outputs(root)
    found = [name for name, value in CREDENTIALS.items() if value in seen]
    assert found == (list(CREDENTIALS) if allowed else [])


SLOW = """
if os.fork() == 0:
    os.setsid()
    os.execvp("sleep", ["sleep", "{marker}"])
subprocess.Popen(["sleep", "{marker}"])
print("started", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP", "timeout"])
@pytest.mark.parametrize("mode", MODES)
def test_stopping_assay_mid_case_leaves_no_process_behind(tmp_path: Path, mode: str, how: str) -> None:
    marker = unique_marker()
    root = write_project(tmp_path / "p", "command", SLOW.format(marker=marker), mode)
    command = [sys.executable, "-m", "assay", "eval", "-q"]
    if how == "timeout":
        command = ["timeout", "8", *command]
    # assay leaves an ignored SIGHUP ignored (``nohup``): the test's own shell may have ignored it, so the
    # assay under test starts with the default, as from a terminal.
    process = subprocess.Popen(
        command,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while len(marked_processes(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(marked_processes(marker)) == 2, "the candidate never started"
        if how != "timeout":
            process.send_signal(getattr(signal, how))
        code = process.wait(timeout=60)
        assert code in (-getattr(signal, how, signal.SIGTERM), 124)
        time.sleep(0.5)
        survivors = marked_processes(marker)
        if mode == "strict":
            assert survivors == []
        else:
            assert len(survivors) == 1  # the child in its own session escaped; its process group was ended
    finally:
        process.kill()
        kill_marked(marker)


KEY = "OCELOT-5581-TAPIR"
# Ways to reach key/answers.txt, a file only the check program (checker.py) reads and nothing names.
KEY_PATHS = {
    "relative": 'print(open("key/answers.txt").read())',
    "absolute": 'print(open(os.path.join(os.getcwd(), "key", "answers.txt")).read())',
    "dotdot": 'print(open(os.path.join("..", os.path.basename(os.getcwd()), "key", "answers.txt")).read())',
    "proc-self-root": 'print(open("/proc/self/root" + os.getcwd() + "/key/answers.txt").read())',
    "proc-self-cwd": 'print(open(f"/proc/{os.getpid()}/cwd/key/answers.txt").read())',
    "proc-parent-cwd": 'print(open(f"/proc/{os.getppid()}/cwd/key/answers.txt").read())',
    "symlink": """
for name, target in [("leak-rel", "key/answers.txt"), ("leak-abs", os.path.join(os.getcwd(), "key/answers.txt"))]:
    os.symlink(target, name)
    try:
        print(open(name).read())
    except OSError as exc:
        print("refused", exc)
""",
    "hardlink": """
for name, source in [("leak-rel", "key/answers.txt"), ("leak-abs", os.path.join(os.getcwd(), "key/answers.txt"))]:
    try:
        os.link(source, name)
        print(open(name).read())
    except OSError as exc:
        print("refused", exc)
""",
}


def write_checked_project(root: Path, runner: str, attack: str, mode: str, extra_runner: str = "") -> Path:
    """A project checked by ``python3 checker.py``, which compares the output with ``key/answers.txt``: a data
    file no check, case or config names. The candidate passes only if it prints the key."""
    write_project(root, runner, attack, mode, extra_runner)
    (root / "cases.yaml").write_text("cases:\n  - {id: leak, input: 'find the key'}\n")
    (root / "key").mkdir()
    (root / "key" / "answers.txt").write_text(KEY + "\n")
    (root / "checker.py").write_text(
        "import sys\nkey = open('key/answers.txt').read().strip()\nsys.exit(0 if key in sys.stdin.read() else 1)\n"
    )
    config = root / "assay.yaml"
    config.write_text(config.read_text().replace("sh graders/check.sh", "python3 checker.py"))
    return root


@pytest.mark.parametrize("way", list(KEY_PATHS))
@pytest.mark.parametrize("mode", MODES)
def test_reading_a_data_file_only_a_check_program_reads(tmp_path: Path, way: str, mode: str) -> None:
    root = write_checked_project(tmp_path / "p", "command", KEY_PATHS[way], mode)
    case = summary(assay_eval(root))["cases"][0]
    leaked = KEY in outputs(root)
    if mode == "strict":
        assert not case["passed"] and not leaked
    else:
        assert case["passed"] and leaked  # the harm, without the jail


@pytest.mark.parametrize("mode", MODES)
def test_a_python_candidate_reading_a_data_file_only_a_check_program_reads(tmp_path: Path, mode: str) -> None:
    """Every way at once, from the python runner (whose parent in the jail is the jail's worker)."""
    attack = "\n".join(
        f"try:\n{textwrap.indent(textwrap.dedent(code).strip(), '    ')}\nexcept OSError:\n    pass"
        for way, code in KEY_PATHS.items()
        if way not in ("symlink", "hardlink")
    )
    root = write_checked_project(tmp_path / "p", "python", attack, mode)
    case = summary(assay_eval(root))["cases"][0]
    assert case["passed"] == (mode == "none") and (KEY in outputs(root)) == (mode == "none")


READ_DATA = """
print(open("data/table.csv").read().strip())
"""


@pytest.mark.bwrap
@pytest.mark.parametrize("runner", ["command", "python"])
def test_a_file_the_runner_reads_must_be_declared(tmp_path: Path, runner: str) -> None:
    """Deny by default: a file the runner reads but nothing declares is not there, and the case's evidence says
    how to declare it in one line; declared in runner.read_only, it is there (read-only)."""
    root = write_project(tmp_path / "p", runner, READ_DATA, "strict")
    (root / "data").mkdir()
    (root / "data" / "table.csv").write_text(f"{SCRIPT_SECRET} {SECRET}\n")
    case = summary(assay_eval(root))["cases"][0]
    hint = (
        "the jail does not show data/table.csv to candidates; declare what the runner reads in "
        "runner.read_only (docs/evolve.md)"
    )
    evidence = next(c["evidence"] for c in case["checks"] if c["type"] == "runner")
    assert not case["passed"] and hint in case["error"] and hint in evidence
    config = root / "assay.yaml"
    config.write_text(
        config.read_text().replace(", timeout: 60", ", timeout: 60, read_only: [data/table.csv]")
    )
    assert summary(assay_eval(root))["cases"][0]["passed"]


REWRITE_LEFTOVER = """
try:
    before = open("scratch.log").read()
except OSError:
    before = "missing"
with open("scratch.log", "w") as handle:
    handle.write(f"LEFTOVER-{os.getpid()}")
print(f"before={before!r} wrote")
"""


@pytest.mark.bwrap
def test_a_file_an_earlier_evaluation_left_can_be_rewritten_not_read(tmp_path: Path) -> None:
    """What the survey masks takes writes: a candidate that rewrites its own scratch file keeps working in the
    next evaluation, which neither shows it what was there nor changes it on the host."""
    root = write_project(tmp_path / "p", "command", REWRITE_LEFTOVER, "strict")
    (root / "cases.yaml").write_text("cases:\n  - {id: scratch, input: 'x'}\n")
    config = root / "assay.yaml"
    config.write_text(
        config.read_text().replace(
            "{type: script, value: 'sh graders/check.sh'}", "{type: contains, value: wrote}"
        )
    )
    first = summary(assay_eval(root))["cases"][0]
    assert first["passed"] and "before='missing'" in outputs(root)
    left = (root / "scratch.log").read_text()
    assert left.startswith("LEFTOVER-")
    shutil.rmtree(root / ".assay" / "evals")
    second = summary(assay_eval(root))["cases"][0]
    assert second["passed"] and "before=''" in outputs(root), outputs(root)
    assert (root / "scratch.log").read_text() == left


READ_LINKS = """
found = []
for path in ["shelf/copy.yaml", os.environ.get("OUTSIDE", "") + "/copy.yaml"]:
    try:
        found += re.findall(r"[A-Z]+-\\d{4}(?:-[A-Z]+)?", open(path).read())
    except OSError:
        pass
print(" ".join(sorted(set(found))) or "nothing")
"""


@pytest.mark.parametrize("mode", MODES)
def test_hard_links_to_the_case_file_under_read_only_are_masked(tmp_path: Path, mode: str) -> None:
    """A `runner.read_only` folder holding a hard link to the case file, inside the project and outside it:
    the candidate reads an empty file where the link is (the case file is masked however it is reached)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = write_project(
        tmp_path / "p",
        "command",
        READ_LINKS,
        mode,
        extra_runner=f", read_only: [shelf, {outside}], env: {{OUTSIDE: {outside}}}",
    )
    (root / "shelf").mkdir()
    os.link(root / "cases.yaml", root / "shelf" / "copy.yaml")
    os.link(root / "cases.yaml", outside / "copy.yaml")
    contains = summary(assay_eval(root))["cases"][0]["checks"][0]
    assert contains["type"] == "contains"
    assert contains["passed"] == (SECRET in outputs(root)) == (mode == "none")
