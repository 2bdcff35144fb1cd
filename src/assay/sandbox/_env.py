"""The environment an untrusted process gets: an allow-list, not a deny-list of secret-looking names.

A deny-list misses what it does not guess (``DATABASE_URL=postgres://u:pass@…``, ``SLACK_WEBHOOK_URL``), so
only the variables a program needs to run are passed: ``PATH``, ``HOME``, the user and locale, the time zone
and ``TMPDIR``, plus what the configuration names (``env`` values, ``env_allow`` names or patterns).

One variable is set besides: ``PYTHONDONTWRITEBYTECODE=1``, so a Python program run on a project writes no
``__pycache__`` beside its code (in a candidate's worktree, or a user's tree); ``env`` may override it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

BASE_ENV = frozenset({"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR"})
BASE_PREFIXES = ("LC_",)
SET_ENV = {"PYTHONDONTWRITEBYTECODE": "1"}


def passes(name: str, allow: Sequence[str] = ()) -> bool:
    """Whether the variable ``name`` reaches an untrusted process: a base variable (locale included), or
    named by ``allow`` (exact names or shell patterns such as ``MYAPP_*``)."""
    if name in BASE_ENV or name.startswith(BASE_PREFIXES):
        return True
    return any(name == entry or fnmatchcase(name, entry) for entry in allow)


def scrubbed_env(allow: Sequence[str] = (), extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of the current environment (see :func:`passes`) and ``SET_ENV``, then ``extra`` on
    top."""
    env = {k: v for k, v in os.environ.items() if passes(k, allow)}
    env.update(SET_ENV)
    if extra:
        env.update(extra)
    return env
