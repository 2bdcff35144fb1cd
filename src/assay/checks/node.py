"""Running a user's JavaScript in Node, as promptfoo does: assertions, transforms, generators, var loaders.

``node`` must be on PATH (promptfoo users have it). Each call starts ``node`` on a small harness
(``node_harness.js``) with the request on stdin and reads one result line back, so the code's own logging
never mixes with the result. There is no sandbox beyond a time limit and an environment without API keys:
this is the suite author's code (like a ``python`` check), not a candidate's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.sandbox import SandboxLimits, decode_output, run_process, scrubbed_env

HARNESS = Path(__file__).with_name("node_harness.js")
RESULT_PREFIX = "ASSAY_RESULT:"
DEFAULT_TIMEOUT_S = 30.0
NO_NODE = "JavaScript needs Node.js: `node` is not on PATH (install Node 18 or newer)"
_TAIL = 300


class NodeError(RuntimeError):
    """The JavaScript could not run, or raised; the message says why in one line."""


def node_binary() -> str | None:
    """The ``node`` executable, or None when Node.js is not installed."""
    return shutil.which("node")


@dataclass
class JsCall:
    """One call into user JavaScript: inline ``code`` (a function body, or an expression that is returned)
    with ``params`` as its parameter names, or the function ``function`` (default: the module's export) of
    ``file``; ``kind="assert"`` applies promptfoo's rule for one-line assertions starting with ``const``."""

    args: list[Any]
    code: str | None = None
    file: str | None = None
    function: str | None = None
    params: tuple[str, ...] = ("output", "context")
    kind: str = "expression"
    exported_value: bool = False  # a file that exports a value rather than a function gives that value

    def request(self) -> bytes:
        return json.dumps(self.body(), ensure_ascii=False, default=str).encode("utf-8")

    def body(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "file": self.file,
            "function": self.function,
            "params": list(self.params),
            "kind": self.kind,
            "args": self.args,
            "exportedValue": self.exported_value,
        }


def _result(stdout: str, stderr: str, error: str | None) -> Any:
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith(RESULT_PREFIX)), None)
    if line is None:
        tail = " ".join(stderr.strip().split())[-_TAIL:]
        raise NodeError(
            f"JavaScript gave no result ({error or 'node exited early'}){': ' + tail if tail else ''}"
        )
    payload = json.loads(line[len(RESULT_PREFIX) :])
    if not payload.get("ok"):
        raise NodeError(str(payload.get("error", "JavaScript failed"))[:_TAIL])
    return None if payload.get("undefined") else payload.get("value")


async def call_js(call: JsCall, *, cwd: Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    """Run ``call`` and return its JSON value; NodeError if Node is missing or the code fails."""
    node = node_binary()
    if node is None:
        raise NodeError(NO_NODE)
    limits = SandboxLimits(timeout_s=timeout_s, max_output_bytes=20_000_000, memory_mb=None)
    proc = await run_process(
        [node, str(HARNESS)], cwd=cwd, limits=limits, stdin=call.request(), env=scrubbed_env()
    )
    stdout, _ = decode_output(proc.stdout)
    stderr, _ = decode_output(proc.stderr)
    if proc.timed_out:
        raise NodeError(f"JavaScript timed out after {timeout_s:g}s")
    return _result(stdout, stderr, proc.error)


def _run_harness(request: bytes, cwd: Path | None, timeout_s: float) -> Any:
    """One Node process on the harness, blocking: the request on stdin, its parsed answer."""
    node = node_binary()
    if node is None:
        raise NodeError(NO_NODE)
    try:
        proc = subprocess.run(
            [node, str(HARNESS)],
            input=request,
            capture_output=True,
            cwd=cwd,
            timeout=timeout_s,
            env=scrubbed_env(),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise NodeError(f"JavaScript timed out after {timeout_s:g}s") from None
    except OSError as exc:
        raise NodeError(f"cannot start node: {exc.strerror or exc}") from None
    stdout, _ = decode_output(proc.stdout)
    stderr, _ = decode_output(proc.stderr)
    return _result(stdout, stderr, f"exit {proc.returncode}")


def call_js_sync(call: JsCall, *, cwd: Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    """:func:`call_js` for loading time (test generators, var loaders, ``transformVars``)."""
    return _run_harness(call.request(), cwd, timeout_s)


def call_js_many(calls: list[JsCall], *, cwd: Path | None = None, timeout_s: float = 300.0) -> list[Any]:
    """Several calls in one Node process, in order (loading a suite: one ``transformVars`` per test); each
    result is the call's value, or a NodeError for a call that failed."""
    if not calls:
        return []
    request = json.dumps({"batch": [c.body() for c in calls]}, ensure_ascii=False, default=str).encode()
    results = _run_harness(request, cwd, timeout_s)
    return [
        (None if r.get("undefined") else r.get("value"))
        if r.get("ok")
        else NodeError(str(r.get("error"))[:_TAIL])
        for r in results
    ]


def split_file_ref(ref: str) -> tuple[str, str | None]:
    """``file://path/x.js:fn`` (or without ``file://``) → (``path/x.js``, ``fn``); the last colon after the
    file name separates the function (a Windows drive letter is not one)."""
    path = ref.removeprefix("file://")
    head, sep, tail = path.rpartition(":")
    if sep and head and len(head) > 1 and "/" not in tail and os.sep not in tail and tail:
        return head, tail
    return path, None
