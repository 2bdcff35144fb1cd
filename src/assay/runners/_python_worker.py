"""Subprocess side of the ``python`` runner: import ``module:function`` from the artifact and call it once.

Standard library only, so a case starts fast and nothing the artifact ships can shadow it. Protocol:

- stdin: one JSON object ``{"function": "pkg.mod:func", "case": {...}, "artifact_dir": "...",
  "max_output_bytes": N}``.
- stdout: one JSON header line, then the raw output bytes. The header is ``{"ok": true, "kind": "str" |
  "json" | "bytes"}`` (plus ``"prompt"`` when the result is a ``str`` carrying the prompt it answered in a
  ``prompt`` attribute, as :mod:`assay.cases.promptfoo_bridge` returns) (at most N + 1 output bytes follow) or ``{"ok": false, "error": "ValueError: boom", "traceback": "<tail>"}``.

Everything the called code prints (fd 1 included, so subprocesses and C extensions too) goes to stderr:
only this worker writes to the real stdout.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

# Every case starts a worker: `typing` and `traceback` cost milliseconds to import, so neither is imported
# up front (traceback only when a call fails).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TRACEBACK_CHARS = 1500
MESSAGE_CHARS = 500
PROMPT_CHARS = 100_000


class WorkerFailure(Exception):
    """A failure with a ready one-line message (import errors, a bad reference, an unserialisable result)."""


def _short(exc: BaseException) -> str:
    message = str(exc)
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _resolve(ref: str) -> Any:
    module_name, _, attr_path = ref.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise WorkerFailure(f"cannot import module {module_name!r}: {exc}") from exc
        raise WorkerFailure(f"error importing {module_name!r}: {_short(exc)}") from exc
    except BaseException as exc:
        raise WorkerFailure(f"error importing {module_name!r}: {_short(exc)}") from exc
    for attr in attr_path.split("."):
        if not hasattr(target, attr):
            raise WorkerFailure(f"{ref!r}: {module_name!r} has no attribute {attr_path!r}")
        target = getattr(target, attr)
    if not callable(target):
        raise WorkerFailure(f"{ref!r} is not callable")
    return target


def _case_view(case: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(
        id=case.get("id"),
        input=case.get("input"),
        text=case.get("text", ""),
        vars=case.get("vars") or {},
        tags=case.get("tags") or [],
    )


def _encode(result: Any) -> tuple[str, bytes]:
    if isinstance(result, str):
        return "str", result.encode("utf-8", errors="surrogatepass")
    if isinstance(result, bytes | bytearray):
        return "bytes", bytes(result)
    try:
        return "json", json.dumps(result, ensure_ascii=False, default=str).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise WorkerFailure(f"cannot serialise the result as JSON: {_short(exc)}") from exc


def _call(request: dict[str, Any]) -> tuple[str, bytes, str | None]:
    artifact_dir = str(request["artifact_dir"])
    sys.path.insert(0, artifact_dir)
    # The assay this worker belongs to answers `import assay`, as in the process that started it, even when
    # site-packages names another (a source tree on PYTHONPATH, which the scrubbed environment drops): the
    # code `assay init` writes for a promptfoo suite, and `assay eval` of one, call its promptfoo bridge.
    home = str(Path(__file__).resolve().parents[2])
    if home not in sys.path:
        sys.path.insert(1, home)
    function = _resolve(str(request["function"]))
    result = function(_case_view(request["case"]), Path(artifact_dir))
    if hasattr(result, "__await__"):
        import asyncio  # only async functions pay for it

        result = asyncio.run(_await(result))
    prompt = getattr(result, "prompt", None) if isinstance(result, str) else None
    kind, body = _encode(result)
    limit = request.get("max_output_bytes")
    # One byte past the cap tells the runner the output was cut, without piping a flood through.
    return kind, body[: int(limit) + 1] if limit else body, prompt if isinstance(prompt, str) else None


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _traceback_tail(exc: BaseException) -> str:
    """The traceback from the called code down, without this worker's own frames."""
    import traceback

    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))[-TRACEBACK_CHARS:]


def main() -> int:
    """Serve one request; the exit status is 0 whenever a response header was written."""
    sys.dont_write_bytecode = True  # the artifact's modules leave no __pycache__ in the work directory
    reply = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        request = json.loads(sys.stdin.buffer.read())
        kind, body, prompt = _call(request)
        header: dict[str, Any] = {"ok": True, "kind": kind}
        if prompt is not None:
            header["prompt"] = prompt[:PROMPT_CHARS]
    except WorkerFailure as exc:
        header, body = {"ok": False, "error": str(exc), "traceback": ""}, b""
    except BaseException as exc:
        tail = _traceback_tail(exc)
        sys.stderr.write(tail)
        header, body = {"ok": False, "error": _short(exc), "traceback": tail}, b""
    reply.write(json.dumps(header).encode("utf-8") + b"\n" + body)
    reply.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
