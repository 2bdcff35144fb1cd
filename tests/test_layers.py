"""The test layers and the hermetic setup (tests/layers.py, tests/hermetic.py), proven on small suites run by
pytest in a subprocess with this suite's own hooks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.layers import LOG_VAR

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CONFTEST = """
from tests.conftest import (
    pytest_collection_modifyitems, pytest_configure, pytest_runtest_makereport, pytest_runtest_protocol,
    pytest_runtest_teardown,
)
"""


def run_suite(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    body: str,
    *args: str,
    conftest: str = CONFTEST,
) -> pytest.RunResult:
    """Run ``body`` as a test file under this suite's hooks, in a child pytest."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_suite=body)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


GIT_INIT = """
import subprocess, sys, pytest

def test_plain(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)

@pytest.mark.e2e
def test_marked(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)

def test_child_process(tmp_path):
    code = "import subprocess, sys; subprocess.run(['git', '-C', sys.argv[1], 'init', '-q'], check=True)"
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)

def test_other_git_commands(tmp_path):
    subprocess.run(["git", "--version"], check=True, capture_output=True)
    subprocess.run(["git", "-c", "x.y=init", "version"], check=True, capture_output=True)
"""


@pytest.mark.e2e  # it makes git repositories (in the child suite)
def test_a_fast_test_that_makes_a_git_repository_fails_and_says_so(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_suite(pytester, monkeypatch, GIT_INIT, "-rA")
    out = result.stdout.str()
    result.assert_outcomes(passed=4, errors=2)
    assert "test_plain made a git repository (git init) but is not marked e2e" in out
    assert "test_child_process made a git repository (git init) but is not marked e2e" in out
    assert "test_marked made" not in out and "test_other_git_commands made" not in out


SERVERS = """
import socket, subprocess, sys

def test_listens():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()

def test_starts_assay_serve():
    subprocess.run([sys.executable, "-m", "assay", "serve", "--help"], capture_output=True, check=True)

def test_scripted_llm_server_is_allowed(llm_server):
    assert llm_server.base_url.startswith("http://127.0.0.1:")

def test_connects_only():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
"""


def test_servers_are_e2e_but_the_scripted_llm_server_is_not(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    conftest = CONFTEST + "from tests.conftest import llm_server\n"
    result = run_suite(pytester, monkeypatch, SERVERS, "-rA", conftest=conftest)
    out = result.stdout.str()
    result.assert_outcomes(passed=4, errors=2)
    assert "test_listens made a server (a listening socket)" in out
    assert "test_starts_assay_serve made a server (assay serve)" in out
    assert "test_scripted_llm_server_is_allowed made" not in out


E2E_FIXTURE = """
import pytest
from tests.layers import e2e_fixture

@pytest.fixture
@e2e_fixture("a git repository")
def repo(tmp_path):
    return tmp_path

@pytest.fixture
def project(repo):
    return repo

def test_uses_it_through_another_fixture(project):
    pass

@pytest.mark.bwrap
def test_jailed():
    pass

@pytest.mark.e2e
def test_marked(project):
    pass
"""


def test_an_unmarked_test_using_an_e2e_fixture_or_the_jail_is_a_collection_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_suite(pytester, monkeypatch, E2E_FIXTURE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "test_uses_it_through_another_fixture: fixture 'repo' makes a git repository" in err
    assert "test_jailed: marked bwrap (a jail)" in err
    assert "test_marked" not in err


HERMETIC = """
import os
from pathlib import Path

def test_sees_none_of_the_callers_state():
    home = Path(os.environ["HOME"])
    assert home != Path(os.environ["CALLER_HOME"]) and list(home.iterdir()) == []
    assert Path.home() == home
    assert "RAY_ADDRESS" not in os.environ and "ASSAY_SERVE_TOKEN" not in os.environ
    assert "GIT_AUTHOR_NAME" not in os.environ and os.environ["GIT_CONFIG_NOSYSTEM"] == "1"
    assert os.environ["XDG_CACHE_HOME"].startswith(str(home))
    assert os.environ["ASSAY_CACHE_DIR"] == os.environ["CALLER_HOME"] + "/.cache/assay"
"""


def test_the_suite_runs_in_a_home_of_its_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    caller = tmp_path / "caller-home"
    (caller / ".ray").mkdir(parents=True)
    (caller / ".ray" / "auth_token").write_text("stale-token-of-another-cluster\n")
    (caller / ".gitconfig").write_text("[user]\n\tname = someone\n")
    for name in ("XDG_CACHE_HOME", "ASSAY_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(caller))
    monkeypatch.setenv("CALLER_HOME", str(caller))
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    monkeypatch.setenv("ASSAY_SERVE_TOKEN", "secret")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "someone")
    result = run_suite(pytester, monkeypatch, HERMETIC)
    result.assert_outcomes(passed=1)


@pytest.mark.e2e  # it makes a git repository
def test_git_init_in_a_shell_is_seen_too(tmp_path: Path) -> None:
    """The shim on PATH is what every child runs for ``git``: a shell script's ``git init`` is logged."""
    log = tmp_path / "log"
    env = {**os.environ, LOG_VAR: str(log)}
    script = (
        f"cd {tmp_path} && git init -q a && git -C a status -s && git commit --help >/dev/null 2>&1; true"
    )
    subprocess.run(["sh", "-c", script], env=env, check=True, capture_output=True)
    assert log.read_text().splitlines() == ["a git repository (git init)"]
    assert (tmp_path / "a" / ".git").is_dir()


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["runuser", "-u", "postgres", "--", "/usr/lib/postgresql/15/bin/initdb", "-D", "d"], "initdb"),
        (["/usr/lib/postgresql/15/bin/pg_ctl", "-D", "d", "start"], "pg_ctl"),
        (["/venv/bin/ray", "start", "--head"], "Ray"),
        (["/venv/bin/python3", "-m", "assay", "serve", "--db", "x"], "assay serve"),
        (["chromium", "--headless"], "browser"),
        (["/venv/bin/python3", "-m", "assay", "eval"], None),
        (["git", "commit", "-m", "postgres"], None),
        (["nice", "python3", "harness.py"], None),
    ],
)
def test_servers_clusters_and_browsers_are_known_by_what_they_run(argv: list[str], what: str | None) -> None:
    from tests.layers import _program

    found = _program(argv)
    assert (found is None) if what is None else (found is not None and what in found)


TEARDOWN = """
import subprocess, pytest

@pytest.fixture(scope="module")
def stopped_at_the_end():
    yield
    try:  # what a module's server fixture runs when it stops, after the last test of the module
        subprocess.run(["/nonexistent/pg_ctl", "stop"])
    except FileNotFoundError:
        pass

def test_first(stopped_at_the_end):
    pass

def test_last(stopped_at_the_end):
    pass
"""


def test_a_fixture_stopping_a_server_at_teardown_is_not_the_tests_doing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_suite(pytester, monkeypatch, TEARDOWN)
    result.assert_outcomes(passed=2)
