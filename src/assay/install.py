"""How to install an optional extra of assay, in the form that fits how assay itself was installed.

pip records where a distribution came from in its ``direct_url.json`` (PEP 610): a local folder (editable or
not), a VCS URL or an archive URL; an install from an index has none. ``pip install 'assay[llm]'`` is right
only in that last case: a user who installed from a clone must name the clone, or pip fetches another
``assay`` from the index. Without any metadata (assay run from a source tree on ``PYTHONPATH``) the tree's
own folder is named when it has a ``pyproject.toml``.
"""

from __future__ import annotations

import json
import shlex
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "assay"


def hint_for(extra: str, direct_url: dict[str, Any] | None, source_tree: Path | None = None) -> str:
    """The pip command that installs ``extra`` given a PEP 610 ``direct_url`` record (None: installed from an
    index, or not installed when ``source_tree`` names the folder assay runs from)."""
    if direct_url is None:
        if source_tree is not None:
            return f"pip install -e {shlex.quote(f'{source_tree}[{extra}]')}"
        return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}]')}"
    url = str(direct_url.get("url", ""))
    parts = urlsplit(url)
    dir_info = direct_url.get("dir_info")
    if parts.scheme == "file" and isinstance(dir_info, dict):
        folder = unquote(parts.path)
        subdirectory = direct_url.get("subdirectory")
        if isinstance(subdirectory, str) and subdirectory:
            folder = f"{folder.rstrip('/')}/{subdirectory}"
        editable = "-e " if dir_info.get("editable") else ""
        return f"pip install {editable}{shlex.quote(f'{folder}[{extra}]')}"
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs"):
        revision = vcs.get("requested_revision") or vcs.get("commit_id")
        url = f"{vcs['vcs']}+{url}" + (f"@{revision}" if revision else "")
    subdirectory = direct_url.get("subdirectory")
    if isinstance(subdirectory, str) and subdirectory:
        url += f"#subdirectory={subdirectory}"
    return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}] @ {url}')}"


def _direct_url() -> dict[str, Any] | None:
    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        found = json.loads(text) if text else None
    except ValueError:
        return None
    return found if isinstance(found, dict) and found.get("url") else None


def _source_tree() -> Path | None:
    """The project folder of the running assay (``<tree>/src/assay``) when it is not installed."""
    try:
        metadata.distribution(DISTRIBUTION)
        return None
    except metadata.PackageNotFoundError:
        pass
    tree = Path(__file__).resolve().parents[2]
    return tree if (tree / "pyproject.toml").is_file() else None


@cache
def install_hint(extra: str) -> str:
    """The command that installs assay's optional ``extra`` here, e.g. ``pip install 'assay[llm]'`` after an
    install from PyPI, ``pip install -e '/home/me/assay[llm]'`` after ``pip install -e .`` in a clone."""
    return hint_for(extra, _direct_url(), _source_tree())
