"""A case's command runs in place of the shell when it is one simple command of a program, and only then."""

from __future__ import annotations

import os

import pytest

from assay.sandbox import run_process
from assay.sandbox._common import in_place, shell_argv


@pytest.mark.parametrize(
    "command",
    [
        "/bin/echo 'a;b|c'",
        "python3 -c 'import sys; print(sys.argv[1])' 'x & y'",
        'prog "$HOME" "a;b" "it\'s"',
        'prog "$(date; echo)"',  # a substitution inside quotes runs before the exec
        "npx promptfoo eval -c config.yaml",
        "./run.sh --fast",
    ],
)
def test_one_simple_command_of_a_program_runs_in_place(command: str) -> None:
    assert in_place(command) == f"exec {command}"


@pytest.mark.parametrize(
    "command",
    [
        "a; b",
        "a && b",
        "a || b",
        "a | b",
        "a &",
        "a\nb",
        "prog > out.txt",
        "prog < in.txt",
        "prog $(date)",
        "prog `date`",
        'prog "`date`"',
        "prog \\; rm x",
        'prog "a\'b" ; c "d\'e"',  # a single quote inside double quotes does not open a quote
        "prog it's",  # an unclosed quote
        "A=1 prog",
        "echo hi",  # the builtin reads escapes its own way; exec would run /bin/echo
        "cd sub",
        "declare x=1",  # bash's builtin, where /bin/sh is bash
        "-x prog",  # an option of bash's exec, not a program
        "[ -f x ]",
        "if true; then prog; fi",
        "{ prog; }",
        "(prog)",
        "~/bin/prog",
        "$PROG x",
        "'quoted prog' x",
        "",
        "   ",
    ],
)
def test_anything_else_is_left_as_it_is(command: str) -> None:
    assert in_place(command) == command


def test_the_prelude_comes_before_the_exec() -> None:
    argv = shell_argv("prog 'x'", cwd="/tmp/w", memory_mb=512)
    assert argv == ["/bin/sh", "-c", "cd -- /tmp/w || exit 126\nulimit -v 524288\nexec prog 'x'"]


async def test_the_program_is_the_spawned_process_itself(tmp_path) -> None:
    """No shell waits between assay and the program: its parent is assay."""
    result = await run_process("python3 -c 'import os; print(os.getppid())'", cwd=tmp_path)
    assert result.error is None, result.stderr
    assert int(result.stdout) == os.getpid()
    kept = await run_process("python3 -c 'import os; print(os.getppid())'; true", cwd=tmp_path)
    assert int(kept.stdout) != os.getpid()  # a list keeps its shell


async def test_a_program_not_found_is_still_exit_127(tmp_path) -> None:
    result = await run_process("no-such-program-xyz --flag", cwd=tmp_path)
    assert result.exit_code == 127
    assert b"not found" in result.stderr
