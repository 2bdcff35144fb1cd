"""Committed git repositories for end-to-end tests, made once per test process and copied per test.

``committed(root, files)`` gives ``root`` as a repository on branch ``main`` with ``files`` in one commit. The
first call for a set of files builds a template (``git init``, add, commit); later calls copy it, which is a
file copy instead of four git processes. A copy is a whole repository: its objects, refs and index are its own.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.layers import LOG_VAR

_templates: dict[str, Path] = {}
_base: Path | None = None


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _template_dir() -> Path:
    global _base
    if _base is None:
        _base = Path(tempfile.mkdtemp(prefix="assay-test-templates-"))
        atexit.register(shutil.rmtree, _base, True)
    return _base


def _key(files: dict[str, str | bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        text = files[name]
        digest.update(name.encode() + b"\0" + (text.encode() if isinstance(text, str) else text) + b"\0")
    return digest.hexdigest()[:16]


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)


def committed(root: Path, files: dict[str, str | bytes], message: str = "start") -> Path:
    """``root`` (created) as a git repository whose one commit on ``main`` holds ``files``."""
    key = _key({**files, "\0message": message})
    template = _templates.get(key)
    if template is None:
        template = _template_dir() / key
        template.mkdir()
        _write(template, files)
        git(template, "init", "-q", "-b", "main")
        git(template, "add", "-A")
        git(template, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
        _templates[key] = template
    shutil.copytree(template, root, symlinks=True, dirs_exist_ok=True)
    if log := os.environ.get(LOG_VAR):  # a copy is a new repository too, as the layers see it
        with open(log, "a", encoding="utf-8") as out:
            out.write("a git repository (a copy of a template)\n")
    return root
