"""The suite keeps its tools' state in its own directories, not the machine's: a fresh HOME and XDG folders per
test process, no user or system git config, and none of the caller's Ray, assay or provider settings. A test
that could fail only because of what else the machine holds (a stale ``~/.ray/auth_token``, a user's
``~/.gitconfig``, an ``ASSAY_SERVE_TOKEN`` in the shell) is a defect.

One thing is carried over on purpose: the local model's converted weights (``$ASSAY_CACHE_DIR/local``), a
content cache whose conversion takes a minute; the tests never write anything else there.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from assay.llm.local_model import cache_root

# Variables of the caller that would change what a test sees. Provider keys stay: the live tests need them.
DROPPED_PREFIXES = ("RAY_", "GIT_", "XDG_")
DROPPED = {
    "ASSAY_SERVE_TOKEN",
    "ASSAY_DEBUG",
    "ASSAY_LOCAL_THREADS",
    "ASSAY_FAULT",
    "COLUMNS",
    "LINES",
}


def isolate() -> Path:
    """Point this process (and so every child) at a new empty HOME; returns it (the caller removes it)."""
    cache = cache_root().parent  # read before HOME and XDG_CACHE_HOME change
    home = Path(tempfile.mkdtemp(prefix="assay-test-home-"))
    for name in list(os.environ):
        if name in DROPPED or name.startswith(DROPPED_PREFIXES):
            del os.environ[name]
    os.environ.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "ASSAY_CACHE_DIR": str(cache),
        }
    )
    return home
