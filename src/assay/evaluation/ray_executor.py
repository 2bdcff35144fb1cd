"""The Ray executor (``executor: {type: ray}``): one Ray task per case run, on any node of a cluster.

What travels: the evaluator's recipe (assay.yaml as loaded, the cases) and the project directory once per
evaluator, the candidate's tree once per distinct tree, all through the object store; each task carries only
its case. Workers build the same runner and jail as a local run would (:mod:`assay.evaluation.ray_worker`);
results stream back as they finish and the driver writes the traces and calls ``on_result``. At most
``concurrency`` tasks are in flight. A task whose worker dies is retried by Ray up to ``max_retries`` times;
after that the case is a failed case with the error as evidence, so every case has exactly one result."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from assay.config import AssayConfig, ExecutorConfig
from assay.errors import ConfigError
from assay.evaluation.bundle import Bundle, BundleTooLarge, pack
from assay.evaluation.evaluator import Evaluator
from assay.evaluation.executor import EXECUTORS, Executor, LocalExecutor
from assay.evaluation.scoring import runner_check
from assay.evaluation.traces import write_trace
from assay.install import install_hint
from assay.llm.base import RUN_INDEX
from assay.model import Case, CaseResult, Output, Split

T = TypeVar("T")
R = TypeVar("R")

FIELD = "executor"
# Ray Client starts a server process for each new client; that start sometimes fails for reasons of its own
# (Ray's own client tests are flaky on it), and a new attempt usually succeeds.
CLIENT_SERVER_FAILED = "Starting Ray client server failed"
CONNECT_ATTEMPTS = 3
CONNECT_BACKOFF_S = 1.0  # times the attempt's number


class RayUnavailable(ConfigError):
    """The cluster cannot be used: the extra is missing, the address does not answer, or the preflight found
    workers without what the cases need."""


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(
            f"executor.type is ray but Ray is not installed here: {install_hint('ray')}", field=FIELD
        ) from None
    return ray


@EXECUTORS.register("ray")
class RayExecutor(Executor):
    """Case runs as Ray tasks (see the module docstring). ``connect`` happens on first use; the preflight runs
    once per executor, on every alive node."""

    @classmethod
    def from_config(cls, config: AssayConfig) -> RayExecutor:
        """The executor ``executor: {type: ray, ...}`` names."""
        return cls(config.executor, config_path=config.path)

    def __init__(self, settings: ExecutorConfig | None = None, *, config_path: Path | None = None) -> None:
        self.settings = settings or ExecutorConfig(type="ray")
        self.config_path = config_path
        self.attempts = 1 + self.settings.max_retries
        self._ray: Any = None
        self._remote: Any = None
        self._sessions: dict[int, tuple[str, list[Any]]] = {}
        self._trees: dict[str, Any] = {}
        self._checked = False

    def _error(self, message: str) -> RayUnavailable:
        return RayUnavailable(message, file=self.config_path, field=FIELD)

    def connect(self) -> Any:
        """Join the cluster at ``address`` (or ``RAY_ADDRESS``, or start a local one) and return ``ray``."""
        if self._ray is not None:
            return self._ray
        ray = import_ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
            if self.settings.address:
                options["address"] = self.settings.address
                self._reachable(self.settings.address)
            self._init(ray, options)
        from assay.evaluation.ray_worker import run_case_job

        self._remote = ray.remote(run_case_job).options(
            max_retries=self.settings.max_retries,
            retry_exceptions=False,
            num_cpus=self.settings.num_cpus,
        )
        self._ray = ray
        return ray

    def _init(self, ray: Any, options: dict[str, Any]) -> None:
        """``ray.init``, tried again (up to ``CONNECT_ATTEMPTS`` times) when Ray Client's server for this
        driver failed to start; any other failure is a one-line error at once."""
        where = self.settings.address or "a local cluster"
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            try:
                ray.init(**options)
                return
            except (ConnectionError, RuntimeError, ValueError) as exc:
                if CLIENT_SERVER_FAILED not in str(exc) or attempt == CONNECT_ATTEMPTS:
                    raise self._error(f"cannot connect to Ray at {where}: {exc}") from None
                logging.getLogger(__name__).warning(
                    "Ray Client's server did not start (attempt %d of %d); trying again",
                    attempt,
                    CONNECT_ATTEMPTS,
                )
                ray.shutdown()
                time.sleep(CONNECT_BACKOFF_S * attempt)

    def _reachable(self, address: str) -> None:
        """Fail fast on a ``host:port`` nobody listens on (Ray itself would keep retrying for minutes)."""
        host, _, port = address.rpartition(":")
        if address == "auto" or "://" in address or not port.isdigit():
            return
        try:
            socket.create_connection((host or "127.0.0.1", int(port)), timeout=5).close()
        except OSError as exc:
            raise self._error(f"cannot connect to Ray at {address}: {exc.strerror or exc}") from None

    def preflight(self, evaluator: Evaluator) -> list[str]:
        """Ask every alive node for its assay and Python versions, git, bubblewrap and the runner's commands;
        return the notes (bubblewrap missing) and raise, naming node and thing, for anything that is missing."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from assay.evaluation.ray_worker import probe, runner_commands
        from assay.version import __version__

        ray = self.connect()
        commands = runner_commands(evaluator.recipe.config.runner if evaluator.recipe else None)
        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
        task = ray.remote(probe)
        refs = [
            task.options(
                num_cpus=0,
                max_retries=1,
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
            ).remote(commands)
            for n in nodes
        ]
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        problems, notes = [], []
        for node, ref in zip(nodes, refs, strict=True):
            try:
                found = ray.get(ref, timeout=120)
            except Exception as exc:  # the probe could not even run there: no assay, another Python, ...
                where = node.get("NodeManagerAddress", "?")
                problems.append(
                    f"node {where} cannot run assay's probe ({type(exc).__name__}: {_first_line(exc)})"
                )
                continue
            name = f"{found['node']} ({node.get('NodeManagerAddress', '?')})"
            if found["assay"] != __version__:
                problems.append(f"{name} has assay {found['assay']}, this machine {__version__}")
            if found["python"] != python:
                problems.append(f"{name} has Python {found['python']}, this machine {python}")
            if not found["git"]:
                problems.append(f"{name} has no git")
            if found["missing"]:
                problems.append(f"{name} lacks the runner's {', '.join(found['missing'])}")
            if found["bwrap"]:
                notes.append(f"{name}: cases run unsandboxed ({found['bwrap']})")
        if not nodes:
            problems.append("the cluster has no alive node with CPUs")
        if problems:
            raise self._error("Ray workers are not ready: " + "; ".join(problems) + " (see docs/scale.md)")
        return notes

    def _session(self, evaluator: Evaluator) -> tuple[str, list[Any]]:
        """The object refs of the evaluator's recipe and project, put in the object store once."""
        known = self._sessions.get(id(evaluator))
        if known is not None:
            return known
        recipe = evaluator.recipe
        if recipe is None or recipe.config.path is None:
            raise self._error("the Ray executor runs evaluators built from an assay.yaml (build_evaluator)")
        config = recipe.config
        project = self._pack(config.base_dir, exclude=[config.data_path])
        ray = self._ray
        refs = [ray.put(recipe), ray.put(project.data)]
        entry = (f"{project.digest[:32]}-{id(evaluator):x}", refs)
        self._sessions[id(evaluator)] = entry
        return entry

    def _pack(self, root: Path, exclude: Sequence[Path] = ()) -> Bundle:
        try:
            return pack(root, exclude=exclude, max_bytes=self.settings.max_bundle_mb * 2**20)
        except BundleTooLarge as exc:
            raise self._error(f"{exc}; raise executor.max_bundle_mb or move data out of it") from None

    def _tree(self, workdir: Path, evaluator: Evaluator) -> tuple[str, Any]:
        assert evaluator.recipe is not None
        bundle = self._pack(workdir, exclude=[evaluator.recipe.config.data_path])
        ref = self._trees.get(bundle.digest)
        if ref is None:
            ref = self._ray.put(bundle.data)
            self._trees = {bundle.digest: ref, **dict(list(self._trees.items())[:7])}
        return bundle.digest, ref

    async def evaluate(
        self,
        evaluator: Evaluator,
        cases: Sequence[tuple[Case, Split]],
        workdir: Path,
        *,
        trace_dir: Path | None = None,
        on_result: Callable[[CaseResult], None] | None = None,
    ) -> list[CaseResult]:
        """Run the cases as Ray tasks, at most ``evaluator.concurrency`` in flight; results in input order."""
        if not cases:
            return []
        self.connect()
        if not self._checked:
            self.preflight(evaluator)
            self._checked = True
        from assay.evaluation.ray_worker import CaseJob

        session, refs = self._session(evaluator)
        digest, tree = self._tree(workdir.resolve(), evaluator)
        run_index = RUN_INDEX.get()
        results: list[CaseResult | None] = [None] * len(cases)
        pending: dict[asyncio.Future[Any], int] = {}
        in_flight: dict[int, Any] = {}
        next_index = 0
        limit = max(1, evaluator.concurrency)
        try:
            while next_index < len(cases) or pending:
                while next_index < len(cases) and len(pending) < limit:
                    case, split = cases[next_index]
                    job = CaseJob(case, split, run_index, session, digest)
                    ref = self._remote.remote([*refs, tree], job)
                    pending[asyncio.wrap_future(ref.future())] = next_index
                    in_flight[next_index] = ref
                    next_index += 1
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    del in_flight[index]
                    case, split = cases[index]
                    result = self._result(future, case, split)
                    if trace_dir is not None and evaluator.traces.keeps(result):
                        result.trace_path = write_trace(
                            trace_dir, case, result, compress=evaluator.traces.compress
                        )
                    results[index] = result
                    if on_result is not None:
                        on_result(result)
        finally:
            for ref in in_flight.values():  # interrupted: stop what was sent rather than let it run on
                self._ray.cancel(ref, force=True)
        return results  # type: ignore[return-value]

    def _result(self, future: asyncio.Future[Any], case: Case, split: Split) -> CaseResult:
        """The task's case result, or a failed case whose evidence is why its worker never returned one."""
        try:
            result: CaseResult = future.result()
            return result
        except Exception as exc:  # a failed case, never a lost one
            if isinstance(
                exc, self._ray.exceptions.RayTaskError
            ):  # raised by assay on the worker: not retried
                cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                error = f"error on the Ray worker: {type(cause).__name__}: {_first_line(cause)}"
            else:  # the worker or its node died on every attempt
                error = (
                    f"worker lost after {self.attempts} attempts: {type(exc).__name__}: {_first_line(exc)}"
                )
            output = Output(error=error[:400])
            check = runner_check(output)
            return CaseResult(
                id=case.id,
                split=split,
                passed=False,
                score=0.0,
                output=output,
                checks=[check] if check else [],
            )

    async def map(
        self,
        fn: Callable[[T], Awaitable[R]],
        items: Sequence[T],
        *,
        concurrency: int,
        on_result: Callable[[R], None] | None = None,
    ) -> list[R]:
        """Arbitrary coroutines cannot travel to a worker: they run here, as the local executor runs them."""
        return await LocalExecutor().map(fn, items, concurrency=concurrency, on_result=on_result)

    def close(self) -> None:
        """Forget the shipped objects (the cluster frees them); the connection stays for the process."""
        self._sessions.clear()
        self._trees.clear()


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""
