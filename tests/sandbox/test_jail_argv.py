"""The jail's command line, built without running bubblewrap (the jail itself is proven in test_jail.py)."""

from __future__ import annotations

from pathlib import Path

from assay.sandbox.jail import BwrapStatus, Jail, jail_argv

STATUS = BwrapStatus("/usr/bin/bwrap")


def mounts_at(argv: list[str], path: str) -> list[list[str]]:
    """The mount operations whose destination is ``path``, each as [flag, *arguments]."""
    found = []
    for i, arg in enumerate(argv):
        if arg == path and i > 0 and argv[i - 1] in ("--tmpfs", "--dir"):
            found.append([argv[i - 1], arg])
    return found


def test_a_home_of_its_own_gets_a_private_tmpfs(tmp_path: Path) -> None:
    argv = jail_argv(Jail(writable=(tmp_path,)), home="/home/candidate", status=STATUS)
    assert mounts_at(argv, "/home/candidate") == [["--tmpfs", "/home/candidate"]]


def test_a_home_under_tmp_is_made_inside_the_private_tmp(tmp_path: Path) -> None:
    """A HOME under /tmp (as on CI runners) lies in the jail's private /tmp, where it must still exist."""
    argv = jail_argv(Jail(writable=(tmp_path,)), home="/tmp/runner-home", status=STATUS)
    assert mounts_at(argv, "/tmp/runner-home") == [["--dir", "/tmp/runner-home"]]
    assert argv.index("/tmp/runner-home") > argv.index("/tmp")  # made after /tmp is mounted
