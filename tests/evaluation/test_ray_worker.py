"""The Ray worker's scratch directories: those of dead worker processes are swept by the next worker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from assay.evaluation.ray_worker import SCRATCH_PREFIX, _host, sweep_dead_scratch


def test_scratch_of_dead_workers_is_removed_and_live_ones_are_kept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(dead.stdout)
    host = _host()
    gone = tmp_path / f"{SCRATCH_PREFIX}{dead_pid}-{host}-abc"
    (gone / "tree-1").mkdir(parents=True)
    (gone / "tree-1" / "main.py").write_text("x = 1\n")
    live = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-{host}-def"
    other_host = tmp_path / f"{SCRATCH_PREFIX}{dead_pid}-{host}x-ghi"  # its pids are not ours to judge
    live.mkdir()
    legacy = tmp_path / f"{SCRATCH_PREFIX}k3j2h1"  # no process id in the name: not ours to judge
    legacy.mkdir()
    other_host.mkdir()
    stray_file = tmp_path / f"{SCRATCH_PREFIX}{dead_pid}-{host}-file"
    stray_file.write_text("")

    assert sweep_dead_scratch(tmp_path) == [gone]
    assert not gone.exists()
    assert live.is_dir() and legacy.is_dir() and other_host.is_dir() and stray_file.is_file()
