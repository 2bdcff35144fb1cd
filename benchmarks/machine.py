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
    program = shutil.which("bwrap")
    if program is None:
        return "not installed"
    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def describe() -> str:
    """One line: ``CPU model (N cores), kernel K, Python V, bubblewrap B``."""
    return (
        f"{_cpu_model()} ({os.cpu_count()} cores), kernel {platform.release()}, Python {platform.python_version()}, "
        f"{_bwrap_version()}"
    )


if __name__ == "__main__":
    print(describe())
