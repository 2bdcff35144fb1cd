"""benchmarks/gate_noise.py at a small trial count: runs in a subprocess, prints its table, and the gates order
as the issue expects (keep-if-better keeps many null changes, the strict rule few gains, the paired gate most)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_gate_noise_benchmark_prints_the_expected_shape() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/gate_noise.py", "--trials", "150", "--jobs", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    kept: dict[tuple[str, str], float] = {}
    for line in done.stdout.splitlines():
        for gate in ("keep-if-better", "ratchet_strict", "noisy"):
            if line.startswith(gate + " ") and "%" in line and "target" not in line:
                rest = line[len(gate) :].split()
                scenario = " ".join(rest[:-4])
                kept[(gate, scenario)] = float(rest[-4].rstrip("%"))
    assert len(kept) == 9
    assert kept[("keep-if-better", "null")] > 25  # ~44%: noise passes for progress
    assert kept[("ratchet_strict", "medium gain")] < 25  # ~9%: real gains are lost
    assert kept[("noisy", "null")] < 12  # ~3% (150 trials: wide margin)
    assert kept[("noisy", "medium gain")] > 60  # ~85%
    assert kept[("noisy", "medium gain")] > kept[("ratchet_strict", "medium gain")] + 40
