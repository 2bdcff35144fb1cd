"""The ``python`` runner: call ``module:function(case, artifact_dir)`` from the artifact, in a subprocess.

Candidate code is untrusted, so it never runs in assay's process: each case starts the interpreter
running assay (``sys.executable``) on :mod:`assay.runners._python_worker` under the same sandbox limits
as the command runner, with the workdir as the current directory and first on ``sys.path``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from assay.config import PythonRunnerConfig
from assay.model import Case, Output
from assay.runners import _python_worker
from assay.runners.base import RUNNERS, RunContext, Runner
from assay.runners.command import TAIL_CHARS, decode_capped, note_refusal, output_from_process
from assay.sandbox import SandboxLimits, run_process, scrubbed_env
from assay.sandbox.workers import JailWorkers

_IDENT = r"[A-Za-z_]\w*"
FUNCTION_REF = re.compile(rf"{_IDENT}(?:\.{_IDENT})*:{_IDENT}(?:\.{_IDENT})*")
HEADER_ROOM = 16_384  # stdout bytes allowed for the worker's response header beyond the output cap
WORKER = Path(_python_worker.__file__).resolve()


@RUNNERS.register("python")
class PythonRunner(Runner):
    """Runs ``config.function`` once per case in a fresh worker process.

    The function is called as ``function(case, artifact_dir)``:

    - ``case`` is a plain object with attributes ``id``, ``input`` (``None`` when the case has only
      vars), ``text`` (the prompt text: ``input``, or the vars as ``key: value`` lines), ``vars`` (a
      dict) and ``tags`` (a list). Checks and ``expected`` are withheld on purpose: the code under
      evaluation must not see what it is graded against.
    - ``artifact_dir`` is a :class:`pathlib.Path` to the workdir (the artifact or a candidate worktree).

    It may be ``async``. A ``str`` result is the output as is; ``bytes`` are decoded (flagged binary when
    not text); anything else is JSON-dumped. A ``str`` with a ``prompt`` attribute (the text it answered)
    puts that text in ``meta["prompt"]``, which ``python``/``javascript`` checks pass on as ``context.prompt``. An exception becomes ``Output.error`` (``"ValueError: boom"``)
    with the traceback tail in ``meta["traceback"]``. What the function prints lands in ``stderr_tail``.
    """

    name = "python"

    def __init__(self, config: PythonRunnerConfig, context: RunContext) -> None:
        super().__init__(config, context)
        if not FUNCTION_REF.fullmatch(config.function):
            raise ValueError(
                f"runner.function: expected 'module:function' (e.g. 'solver:solve'), got {config.function!r}"
            )
        self.max_output_bytes = config.max_output_bytes
        self.limits = SandboxLimits(
            timeout_s=config.timeout,
            max_output_bytes=config.max_output_bytes + HEADER_ROOM,
            memory_mb=config.memory_mb,
            env_allow=tuple(config.env_allow),
        )
        self.env = scrubbed_env(self.limits.env_allow, dict(config.env))
        # Jailed cases run in long-lived jails, one per case in flight (see assay.sandbox.workers).
        self.workers = JailWorkers() if context.jail is not None else None

    def _request(self, case: Case, workdir: Path) -> bytes:
        view: dict[str, Any] = case.model_dump(mode="json", include={"id", "input", "vars", "tags"})
        view["text"] = case.prompt_text()
        request = {
            "function": self.config.function,
            "case": view,
            "artifact_dir": str(workdir.resolve()),
            "max_output_bytes": self.max_output_bytes,
        }
        return json.dumps(request, ensure_ascii=False).encode("utf-8")

    async def run(self, case: Case, workdir: Path) -> Output:
        jail = None
        if self.context.jail is not None:
            jail = self.context.jail.for_workdir(workdir, readable=[WORKER])
        # -P keeps the worker's own directory and the cwd off sys.path: the worker inserts the workdir.
        result = await run_process(
            [sys.executable, "-P", str(WORKER)],
            cwd=workdir,
            limits=self.limits,
            stdin=self._request(case, workdir),
            env=self.env,
            jail=jail,
            workers=self.workers,
        )
        output = output_from_process(result, workdir)
        head, newline, body = result.stdout.partition(b"\n")
        try:
            header = json.loads(head) if newline else None
        except (ValueError, RecursionError):
            header = None
        if not isinstance(header, dict):
            if output.error is None:
                output.error = "python worker wrote no response (did the code call os._exit?)"
            output.text = output.stdout_tail = ""
            note_refusal(output, jail, workdir)
            return output
        truncated = result.truncated or len(body) > self.max_output_bytes
        text, binary = decode_capped(body[: self.max_output_bytes], truncated)
        output.text, output.stdout_tail = text, text[-TAIL_CHARS:]
        output.binary, output.truncated = binary, truncated
        if isinstance(header.get("prompt"), str):
            output.meta["prompt"] = header["prompt"]
        if not header.get("ok"):
            output.error = output.error or str(header.get("error") or "the function failed")
            output.meta["traceback"] = str(header.get("traceback") or "")
        note_refusal(output, jail, workdir)
        return output
