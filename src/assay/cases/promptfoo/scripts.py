"""The program file of a promptfoo ``python`` or ``javascript`` assertion, checked when the suite loads.

promptfoo reads such a file when an assertion runs, so a file that is missing or does not parse failed every
case with the same error, and ``assay eval`` exited 1 as if the artifact had failed them. It is a mistake in the
suite: refused at load, one line naming the assertion and the file. Nothing of the file runs: Python is
compiled (no bytecode written), JavaScript checked by ``node --check``.
"""

from __future__ import annotations

import subprocess
from functools import lru_cache
from pathlib import Path

from assay.cases._common import Loc, read_text
from assay.checks.node import node_binary, split_file_ref
from assay.errors import ConfigError

PYTHON_SUFFIXES = (".py",)
JS_SUFFIXES = (".js", ".cjs", ".mjs")
NODE_CHECK_TIMEOUT_S = 30.0


def check_script_file(ref: str, loc: Loc) -> None:
    """Refuse (ConfigError at ``loc``) the file an absolute ``file://path[:function]`` reference names when it
    is not a readable file, or is Python or JavaScript that does not parse."""
    path = Path(split_file_ref(ref)[0])
    if not path.is_file():
        raise loc.error(f"{path}: no such file (file:// paths are relative to the config's folder)")
    try:
        text = read_text(path, what="program files of checks")
    except ConfigError as exc:
        raise loc.error(f"{path}: {exc.message}") from None
    stamp = path.stat().st_mtime_ns
    if path.suffix in PYTHON_SUFFIXES:
        problem = _python_problem(str(path), stamp, text)
    elif path.suffix in JS_SUFFIXES and node_binary() is not None:
        problem = _javascript_problem(str(path), stamp)
    else:
        problem = None
    if problem is not None:
        raise loc.error(f"{path}: {problem}")


@lru_cache(maxsize=256)
def _python_problem(path: str, stamp: int, text: str) -> str | None:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"line {exc.lineno}: invalid Python: {exc.msg}"
    except ValueError as exc:  # a NUL byte
        return f"invalid Python: {exc}"
    return None


@lru_cache(maxsize=256)
def _javascript_problem(path: str, stamp: int) -> str | None:
    node = node_binary()
    assert node is not None
    try:
        done = subprocess.run(
            [node, "--check", path], capture_output=True, text=True, timeout=NODE_CHECK_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not be checked with node --check: {exc}"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    error = next((line for line in lines if "Error" in line), lines[-1] if lines else "node --check failed")
    where = next((line.rsplit(":", 1)[-1] for line in lines[:1] if line.startswith(path)), "")
    return f"line {where}: invalid JavaScript: {error}" if where.isdigit() else f"invalid JavaScript: {error}"
