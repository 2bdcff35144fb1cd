"""Crash safety: `assay evolve` killed with SIGKILL at random points, resumed each time, loses nothing."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.history.runfiles import RunFiles
from assay.history.store import RunStore

from .conftest import git, make_project

pytestmark = pytest.mark.e2e

EXTRA = (
    "evolve:\n  layers: [1, 2]\n  discards_per_layer: 100\n  plateau: 1000\n  target_pass_rate: null\n"
    "  stop_on_oscillation: false\n"
)
GENERATIONS = 60


def start(root: Path, command: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "assay", command, "-n", str(GENERATIONS)],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_killed_ten_times_and_resumed(tmp_path):
    root = make_project(tmp_path / "p", cases=5, items=30, extra=EXTRA)
    head = git(root, "rev-parse", "HEAD")
    rng = random.Random(11)
    proc = start(root, "evolve")
    runs = root / ".assay" / "runs"
    deadline = time.monotonic() + 60
    while not (runs.exists() and any(runs.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.05)  # the first kill comes once the run exists; before that there is nothing to resume
    kills = 0
    while kills < 10:
        time.sleep(rng.uniform(0.3, 1.5))
        if proc.poll() is not None:
            break
        proc.kill()
        proc.wait()
        kills += 1
        proc = start(root, "resume")
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr.decode()[-2000:]
    assert kills >= 10

    run_dir = next((root / ".assay" / "runs").iterdir())
    files = RunFiles(run_dir)
    records = files.read_candidates()
    finished = [e for e in files.read_events() if e.kind == "finished"]
    assert finished, "the run never finished"
    assert finished[-1].data["reason"] == f"reached {GENERATIONS} generations"
    assert [r.generation for r in records] == list(range(GENERATIONS + 1))
    assert [row["candidate"] for row in files.read_results_tsv()] == [r.candidate_id for r in records]
    store = RunStore(f"sqlite:///{root / '.assay' / 'assay.db'}")
    assert [r.candidate_id for r in store.candidates(run_dir.name)] == [r.candidate_id for r in records]
    seqs = [e.seq for e in files.read_events()]
    assert seqs == list(range(1, len(seqs) + 1))
    assert store.get_run(run_dir.name).status == "finished"
    refs = git(root, "for-each-ref", "--format=%(refname:short) %(objectname)", f"refs/assay/{run_dir.name}/")
    by_candidate = {line.split()[0].rsplit("/", 1)[1]: line.split()[1] for line in refs.splitlines()}
    for record in records[1:]:
        if record.commit:
            assert by_candidate[record.candidate_id] == record.commit
    kept = [r for r in records if r.decision in ("baseline", "keep")]
    assert git(root, "rev-parse", f"assay/{run_dir.name}") == kept[-1].commit
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "status", "--porcelain") == ""
