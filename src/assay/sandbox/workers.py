"""Jail workers: one long-lived bubblewrap sandbox per concurrency slot and jail, running case after case.

Starting a jail costs more than most cases (new namespaces, a dozen mounts); a worker pays that once. It is
:mod:`assay.sandbox._jail_worker` run inside the same jail a case would get (same binds, same namespaces,
``/`` and ``/dev`` read-only besides, and a private ``/dev/shm``), taking one case at a time over a pipe and
running it as a child leading a process group of its own in the worker's session (bubblewrap's, which has no
terminal), under the same limits as ``run_process``. After every case it
kills every other process of its PID namespace and empties its private ``/tmp``, ``/dev/shm`` and ``$HOME``,
so a case finds nothing of the one before. A case cannot signal its worker (it is the jail's PID 1) nor reach
its pipes. When the worker dies, hangs or finds something it cannot undo, that case fails with the reason (or,
for what it cannot undo, only the worker goes) and the next one gets a fresh worker; so does a case whose
jail's mounts no longer match the tree (a masked or read-only path that appeared, or was replaced, outside).
Workers are shut down when their jail is released (:meth:`JailWorkers.close`, at the end of an evaluation).
"""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import Collection, Mapping
from pathlib import Path

from assay.sandbox._common import ProcessResult, SandboxLimits
from assay.sandbox._worker_process import (
    JailWorker,
    WorkerFailed,
    decode_result,
    encode_request,
    worker_argv,
    worker_threads,
)
from assay.sandbox.jail import BwrapStatus, Jail

# Beyond a case's own timeout, how long a worker may take to start, clean up and answer.
ANSWER_GRACE_S = 10.0
# Jails whose idle workers are kept (a runner that moves from tree to tree does not keep a jail per tree).
KEPT_JAILS = 4


# The jail, $HOME, and what its paths are now (a worker's mounts follow what existed when it started).
_Key = tuple[Jail, str | None, tuple[int | None, ...]]


_MOUNTED = (stat.S_IFREG, stat.S_IFDIR)


def _kind(path: Path) -> int | None:
    try:
        return stat.S_IFMT(os.lstat(path).st_mode)
    except OSError:
        return None


def _mounted_paths(jail: Jail) -> tuple[Path, ...]:
    """The paths of ``jail`` that its mounts depend on."""
    return (*jail.writable, *jail.read_only, *jail.hidden, *jail.scratch)


class _Layouts:
    """The layout of each jail, looked at again case after case only where no file or directory was: an
    existing file or directory is mounted (bound, masked or shown read-only) or not visible in the jail at all,
    and replacing it outside drops that mount, which the worker sees in its mount table before the next case
    (it answers ``stale``, and the jail's layout is looked at again whole); a missing path or a symbolic link
    has no mount, and only looking says what is there now."""

    def __init__(self) -> None:
        self._known: dict[Jail, tuple[tuple[int | None, ...], tuple[tuple[Path, int | None], ...]]] = {}

    def of(self, jail: Jail) -> tuple[int | None, ...]:
        known = self._known.get(jail)
        if known is not None and all(_kind(path) == kind for path, kind in known[1]):
            return known[0]
        # The kind of file (or None: missing) at each path: a file that appears where a hidden or read-only one
        # was missing needs a jail that masks it or shows it read-only.
        paths = _mounted_paths(jail)
        layout = tuple(_kind(path) for path in paths)
        unmounted = tuple((p, kind) for p, kind in zip(paths, layout, strict=True) if kind not in _MOUNTED)
        if len(self._known) >= KEPT_JAILS * 4:
            self._known.clear()
        self._known[jail] = (layout, unmounted)
        return layout

    def forget(self, jail: Jail) -> None:
        self._known.pop(jail, None)


class JailWorkers:
    """The workers of one runner: idle ones kept per jail, a new one started when none is free (so there are
    as many as cases run at once). ``answer_grace_s``: how long past a case's timeout a worker may take to
    answer before it is killed. Use from one event loop; close with :meth:`close`."""

    def __init__(self, answer_grace_s: float = ANSWER_GRACE_S) -> None:
        self.answer_grace_s = answer_grace_s
        self._idle: dict[_Key, list[JailWorker]] = {}
        self._busy: dict[JailWorker, _Key] = {}
        self._closed: set[_Key] = set()
        self._recent: dict[_Key, None] = {}  # insertion order: least recently used first
        self._layouts = _Layouts()

    async def run(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str],
        limits: SandboxLimits,
        stdin: bytes | None,
        jail: Jail,
        home: str | None,
        status: BwrapStatus,
    ) -> ProcessResult:
        """Run ``argv`` (from ``shell_argv``) with ``env`` in a worker of ``jail``; as ``run_process`` would,
        never raising for the process's sake."""
        request = encode_request(argv, env, limits, stdin)
        start = time.monotonic()
        for _ in range(2):  # a stale worker answers at once, without running the case: once more, fresh
            key = (jail, home, self._layouts.of(jail))
            self._use(key)
            result = await self._run_once(key, request, limits, status, start)
            if result is not None:
                return result
            self._layouts.forget(jail)  # the tree changed where the jail mounts it: look at every path again
        return ProcessResult(error="the jail's worker kept finding its mounts changed")

    async def _run_once(
        self, key: _Key, request: bytes, limits: SandboxLimits, status: BwrapStatus, start: float
    ) -> ProcessResult | None:
        idle = self._idle.get(key)
        worker = idle.pop() if idle else JailWorker(worker_argv(key[0], key[1], status), _worker_env())
        self._busy[worker] = key
        deadline = start + limits.timeout_s + self.answer_grace_s
        loop = asyncio.get_running_loop()
        keep = False
        try:
            header, stdout, stderr = await worker.exchange(request, deadline)
            if header.get("stale"):
                return None
            keep = header.get("dirty") is None
            return decode_result(header, stdout, stderr)
        except WorkerFailed as exc:
            return ProcessResult(
                error=f"timed out after {limits.timeout_s:g}s ({exc})" if exc.timed_out else str(exc),
                timed_out=exc.timed_out,
                duration_s=time.monotonic() - start,
            )
        finally:
            del self._busy[worker]
            if keep and key not in self._closed:
                self._idle.setdefault(key, []).append(worker)
            else:
                worker.kill()
                loop.run_in_executor(worker_threads(), worker.stop)

    def _use(self, key: _Key) -> None:
        """Note ``key`` as the latest jail used; retire the jails used least recently past ``KEPT_JAILS``."""
        self._closed.discard(key)
        self._recent.pop(key, None)
        self._recent[key] = None
        while len(self._recent) > KEPT_JAILS:
            old = next(iter(self._recent))
            del self._recent[old]
            self._retire([old])

    def _retire(self, keys: Collection[_Key]) -> list[asyncio.Future[None]]:
        """Mark ``keys`` closed (busy workers stop when their case ends) and stop their idle workers: the
        futures of their ends."""
        self._closed.update(keys)
        loop = asyncio.get_running_loop()
        ends = []
        for worker in [w for k in keys for w in self._idle.pop(k, [])]:
            worker.kill()
            ends.append(loop.run_in_executor(worker_threads(), worker.stop))
        return ends

    async def close(self, workdir: Path | None = None) -> None:
        """Stop the idle workers of the jails that write ``workdir`` (of every jail when None); busy ones
        stop when their case ends."""
        root = Path(os.path.realpath(workdir)) if workdir is not None else None
        keys = {*self._idle, *self._busy.values()}
        chosen = [k for k in keys if root is None or root in k[0].writable]
        for key in chosen:
            self._recent.pop(key, None)
            self._layouts.forget(key[0])
        await asyncio.gather(*self._retire(chosen))


def _worker_env() -> dict[str, str]:
    """The worker's own environment (each case gets its own): nothing of assay's."""
    return {"PATH": os.defpath}
