"""The machine a benchmark ran on, printed beside its figures: CPU model and count, kernel, Python, bubblewrap."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _bwrap_version() -> str:
    # The program assay would use: ASSAY_BWRAP names it, and empty turns bubblewrap off (then it is not run).
    name = os.environ.get("ASSAY_BWRAP", "bwrap")
    if not name.strip():
        return "bubblewrap turned off (ASSAY_BWRAP is empty)"
    program = shutil.which(name)
    if program is None:
        return "bubblewrap not installed"
    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "bubblewrap (version unknown)"
    return done.stdout.strip() or "bubblewrap (version unknown)"


def describe() -> str:
    """One line: ``CPU model (N cores), kernel K, Python V, bubblewrap B``."""
    return (
        f"{_cpu_model()} ({os.cpu_count()} cores), kernel {platform.release()}, Python {platform.python_version()}, "
        f"{_bwrap_version()}"
    )


if __name__ == "__main__":
    print(describe())
