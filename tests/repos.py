"""Committed git repositories for end-to-end tests, made once per test process and copied per test.

``committed(root, files)`` gives ``root`` as a repository on branch ``main`` with ``files`` in one commit. The
first call for a set of files builds a template (``git init``, add, commit); later calls copy it, which is a
file copy instead of four git processes. A copy is a whole repository: its objects, refs and index are its own.
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.layers import Watch

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


def _key(files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"{name}\0{files[name]}\0".encode())
    return digest.hexdigest()[:16]


def committed(root: Path, files: dict[str, str], message: str = "start") -> Path:
    """``root`` (created) as a git repository whose one commit on ``main`` holds ``files``."""
    key = _key({**files, "\0message": message})
    template = _templates.get(key)
    if template is None:
        template = _template_dir() / key
        template.mkdir()
        for name, text in files.items():
            (template / name).parent.mkdir(parents=True, exist_ok=True)
            (template / name).write_text(text)
        git(template, "init", "-q", "-b", "main")
        git(template, "add", "-A")
        git(template, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
        _templates[key] = template
    shutil.copytree(template, root, symlinks=True, dirs_exist_ok=True)
    Watch.saw("a git repository (a copy of a template)")  # a copy is a new repository too
    return root
