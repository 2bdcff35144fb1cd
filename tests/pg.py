"""A throwaway PostgreSQL server for tests: ``initdb`` + ``pg_ctl`` on 127.0.0.1 and a free port.

``running_postgres()`` skips the test (fails it under ASSAY_REQUIRE_EXTRAS=1) when there are no server binaries
(or psycopg), as root runs the server
as the ``postgres`` user, and yields the base URL (no database); ``create_database`` makes a fresh database.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

import pytest

from tests.extras import need, unavailable

_databases = count(1)


def pg_bin() -> Path | None:
    """The folder of the PostgreSQL server binaries, or None."""
    found = shutil.which("initdb") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))), None)
    return Path(os.path.realpath(found)).parent if found else None


def _run_or_fail(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed: {(done.stderr or done.stdout).strip()[-500:]}")


@contextmanager
def running_postgres(max_connections: int = 100) -> Iterator[str]:
    """Start a PostgreSQL server on 127.0.0.1 and a random port; yield its base URL; stop and delete it."""
    need("postgres")
    bindir = pg_bin()
    if bindir is None or not (bindir / "pg_ctl").exists():
        unavailable("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    prefix: list[str] = []
    datadir = Path(tempfile.mkdtemp(prefix="assay-pg-"))
    if os.geteuid() == 0:  # the server refuses to run as root
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            unavailable("running as root and there is no postgres user to run the server as")
        if shutil.which("runuser") is None:
            unavailable("running as root and runuser is missing")
        os.chown(datadir, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    pgdata = datadir / "data"
    pg_ctl = [*prefix, str(bindir / "pg_ctl"), "-D", str(pgdata)]
    try:
        _run_or_fail(
            [*prefix, str(bindir / "initdb"), "-D", str(pgdata), "-U", "assay", "-A", "trust", "--no-sync"]
        )
        options = f"-h 127.0.0.1 -p {port} -k {datadir} -F -c max_connections={max_connections}"
        _run_or_fail([*pg_ctl, "-o", options, "-l", str(datadir / "log"), "-w", "-t", "60", "start"])
        yield f"postgresql+psycopg://assay@127.0.0.1:{port}"
    finally:
        subprocess.run([*pg_ctl, "-m", "immediate", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(datadir, ignore_errors=True)


def create_database(base_url: str) -> str:
    """Create a new empty database on the server at ``base_url`` and return its URL."""
    import psycopg

    name = f"t{next(_databases)}_{os.getpid()}"
    with psycopg.connect(base_url.replace("+psycopg", "") + "/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{base_url}/{name}"
