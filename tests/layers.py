"""Test layers and the checks that keep them honest.

Two layers:

- **fast** (the default ``pytest`` run, in parallel): pure logic and in-process fakes of our own parts. No git
  repository, no jail, no server, no cluster, no browser.
- **e2e** (``pytest -m e2e``; run once in CI): tests marked ``@pytest.mark.e2e`` that run the whole loop on a
  real git repository, the bubblewrap jail, a server (``assay serve``, PostgreSQL, uvicorn), a Ray cluster or a
  browser.

The marker is enforced twice:

1. **At collection.** A test that uses a fixture decorated with :func:`e2e_fixture`, or is marked ``bwrap``, but
   is not marked ``e2e`` is a collection error naming the test and what it makes.
2. **While it runs.** A test without the marker that makes one of these things anyway (directly or in a child
   process: ``git init``/``git clone`` and ``bwrap`` are seen through shims first on ``PATH``, which log to the
   running test's file even from a child whose environment was cut down to an allow-list; servers, clusters and
   browsers through :class:`subprocess.Popen` and :meth:`socket.socket.listen` in this process; a repository
   copied from a template by ``tests/repos.py`` counts too) fails at its teardown, naming what it made. The scripted LLM server (``tests/fakes/llm_server.py``) is our stand-in for a paid API, not a
   server under test: it may listen in the fast layer.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])

LOG_VAR = "ASSAY_TEST_E2E_LOG"
SHIM_PREFIX = "assay-test-shims-"
E2E_ATTR = "__assay_e2e__"
# Programs that start a server, a cluster or a browser, by the name they are run as.
SERVER_PROGRAMS = {
    "initdb": "a PostgreSQL server (initdb)",
    "pg_ctl": "a PostgreSQL server (pg_ctl)",
    "postgres": "a PostgreSQL server",
    "ray": "a Ray cluster (ray start)",
    "uvicorn": "a server (uvicorn)",
    "chromium": "a browser (chromium)",
}
# Programs that run another one: the one they run is what counts.
WRAPPERS = {"runuser", "sudo", "env", "nice", "setsid", "timeout"}
ALLOWED_LISTENERS = (str(Path(__file__).parent / "fakes" / "llm_server.py"),)

# The log a shim writes to: the one its folder's `current` names, written there for each fast test (a file, not
# a variable: a jail's and a candidate's environment is an allow-list). $ASSAY_TEST_E2E_LOG overrides it.
FIND_LOG = """ASSAY_TEST_E2E_LOG="${ASSAY_TEST_E2E_LOG:-$(cat '{current}' 2>/dev/null)}"
"""

GIT_SHIM = """#!/bin/sh
# Test shim (tests/layers.py): records `git init` and `git clone` in the test's log, then runs git.
{find_log}if [ -n "${ASSAY_TEST_E2E_LOG:-}" ]; then
  skip=
  for arg in "$@"; do
    if [ -n "$skip" ]; then skip=; continue; fi
    case "$arg" in
      -C|-c|--git-dir|--work-tree|--namespace|--exec-path|--config-env) skip=1 ;;
      -*) ;;
      init|clone) echo "a git repository (git $arg)" >> "$ASSAY_TEST_E2E_LOG"; break ;;
      *) break ;;
    esac
  done
fi
exec {real} "$@"
"""

BWRAP_SHIM = """#!/bin/sh
# Test shim (tests/layers.py): records a jail in the test's log (not assay's probe, `... -- true`), then runs
# bubblewrap.
{find_log}if [ -n "${ASSAY_TEST_E2E_LOG:-}" ]; then
  last= before=
  for arg in "$@"; do before=$last; last=$arg; done
  if [ "$before $last" != "-- true" ]; then echo "a jail (bwrap)" >> "$ASSAY_TEST_E2E_LOG"; fi
fi
exec {real} "$@"
"""


def e2e_fixture(what: str) -> Callable[[F], F]:
    """Declare that a fixture makes ``what`` (a git repository, a server, ...): a test that uses it must be
    marked ``e2e``. Put it under ``@pytest.fixture``."""

    def mark(func: F) -> F:
        setattr(func, E2E_ATTR, what)
        return func

    return mark


def _install_shims(directory: Path) -> None:
    """Put the git and bwrap shims first on PATH (for this process and every child), in place of any a parent
    pytest put there (an xdist worker inherits its controller's)."""
    shims = {"git": GIT_SHIM, "bwrap": BWRAP_SHIM}
    entries = os.environ.get("PATH", "").split(os.pathsep)
    path = os.pathsep.join(e for e in entries if not Path(e).name.startswith(SHIM_PREFIX))
    for name, text in shims.items():
        real = shutil.which(name, path=path)
        if real is None:  # no shim for a program the machine lacks: a shim would make it look installed
            continue
        shim = directory / name
        find_log = FIND_LOG.replace("{current}", str(directory / "current"))
        shim.write_text(text.replace("{find_log}", find_log).replace("{real}", real))
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.environ["PATH"] = f"{directory}{os.pathsep}{path}"


class Watch:
    """What the test now running made, as seen in this process; None while no fast test runs."""

    made: list[str] | None = None

    @classmethod
    def saw(cls, what: str) -> None:
        if cls.made is not None and what not in cls.made:
            cls.made.append(what)


def _argv(args: Any) -> list[str]:
    if isinstance(args, (str, bytes, os.PathLike)):
        return [os.fsdecode(args)]
    return [os.fsdecode(a) for a in args]


def _program(argv: list[str]) -> str | None:
    """What ``argv`` starts, if it is a server, a cluster or a browser."""
    if argv and Path(argv[0]).name in WRAPPERS:  # runuser -u postgres -- initdb ...: what it runs counts
        rest = argv[argv.index("--") + 1 :] if "--" in argv else argv[1:]
        return next((SERVER_PROGRAMS[Path(a).name] for a in rest if Path(a).name in SERVER_PROGRAMS), None)
    if not argv:
        return None
    name = Path(argv[0]).name
    if name in SERVER_PROGRAMS:
        return SERVER_PROGRAMS[name]
    if name.startswith("python") and argv[1:4] == ["-m", "assay", "serve"]:
        return "a server (assay serve)"
    return None


def _patch_popen() -> None:
    original = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if Watch.made is not None:
            argv = _argv(args)
            if kwargs.get("shell"):
                argv = argv[0].split() if argv else []
            what = _program(argv)
            if what is not None:
                Watch.saw(what)
        original(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]


def _patch_listen() -> None:
    original = socket.socket.listen

    def listen(self: socket.socket, *args: Any) -> None:
        if Watch.made is not None and not _called_from(ALLOWED_LISTENERS):
            Watch.saw("a server (a listening socket)")
        original(self, *args)

    socket.socket.listen = listen  # type: ignore[method-assign]


def _called_from(files: Iterable[str]) -> bool:
    allowed = set(files)
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename in allowed:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def configure(config: pytest.Config) -> None:
    """Install the shims and the in-process watches (from ``pytest_configure``; the ``e2e`` marker is declared
    in pyproject.toml)."""
    shims = Path(tempfile.mkdtemp(prefix=SHIM_PREFIX))
    config.add_cleanup(lambda: shutil.rmtree(shims, ignore_errors=True))
    _install_shims(shims)
    config.stash[_SHIMS] = shims
    _patch_popen()
    _patch_listen()


_SHIMS = pytest.StashKey[Path]()


def _fixture_makes(item: pytest.Item) -> list[str]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    made = []
    for name, defs in info.name2fixturedefs.items():
        for fixturedef in defs:
            what = getattr(fixturedef.func, E2E_ATTR, None)
            if what is not None:
                made.append(f"fixture {name!r} makes {what}")
    return made


def check_collection(items: list[pytest.Item]) -> None:
    """Refuse tests that make e2e things (by their fixtures or a ``bwrap`` mark) but are not marked e2e."""
    wrong = []
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            continue
        made = _fixture_makes(item)
        if item.get_closest_marker("bwrap") is not None:
            made.append("marked bwrap (a jail)")
        if made:
            wrong.append(f"{item.nodeid}: {'; '.join(made)}")
    if wrong:
        raise pytest.UsageError(
            "tests that make a git repository, a jail, a server or a cluster must be marked "
            "@pytest.mark.e2e (tests/layers.py):\n  " + "\n  ".join(wrong)
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Watch a fast test from its setup to its teardown (module fixtures it starts included)."""
    if item.get_closest_marker("e2e") is not None:
        yield
        return
    shims = item.config.stash[_SHIMS]
    log = shims / f"{uuid.uuid4().hex}.log"
    (shims / "current").write_text(str(log))
    Watch.made = []
    item.stash[_MADE] = Watch.made
    item.stash[_LOG] = log
    try:
        yield
    finally:
        Watch.made = None
        (shims / "current").unlink(missing_ok=True)
        log.unlink(missing_ok=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Tearing down makes nothing: a module's server stopped (``pg_ctl stop``) after a fast test that ran last
    on its worker is not that test's doing."""
    made, Watch.made = Watch.made, None
    try:
        yield
    finally:
        Watch.made = made


_MADE = pytest.StashKey[list[str]]()
_LOG = pytest.StashKey[Path]()


def made_by(item: pytest.Item) -> list[str]:
    """What a fast test made that only the e2e layer may make (empty for an e2e test)."""
    made = list(item.stash.get(_MADE, []))
    log = item.stash.get(_LOG, None)
    if log is not None and log.exists():
        for line in log.read_text().splitlines():
            if line and line not in made:
                made.append(line)
    return made


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A fast test that made an e2e thing fails at its teardown, naming what it made."""
    outcome = yield
    if call.when != "teardown" or item.get_closest_marker("e2e") is not None:
        return
    made = made_by(item)
    if not made:
        return
    report = outcome.get_result()
    report.outcome = "failed"
    report.longrepr = (
        f"{item.nodeid} made {', '.join(made)} but is not marked e2e: "
        "add @pytest.mark.e2e (or pytestmark = pytest.mark.e2e), or use an in-process fake (tests/layers.py)"
    )
