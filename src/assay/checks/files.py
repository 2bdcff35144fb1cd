"""``file_exists``: the runner left a file (or a glob match) inside its working directory."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath, PureWindowsPath

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError
from assay.checks.text import clip
from assay.model import CheckResult, CheckSpec, Output

GLOB_CHARS = re.compile(r"[*?\[]")
MAX_LISTED = 3


def _is_non_empty(path: Path) -> bool:
    if path.is_dir():
        return any(path.iterdir())
    return path.stat().st_size > 0


def _contained(path: Path, root: Path) -> bool:
    """Whether ``path``, with every symlink resolved, stays inside ``root`` (already resolved)."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # unreadable or a symlink loop
        return False


@CHECKS.register("file_exists")
class FileExistsCheck(Check):
    """A file or directory named by ``value`` (a relative path or a glob) exists inside the working directory.

    Absolute paths, ``~`` and ``..`` are refused at load; at evaluation every candidate is resolved and
    refused when a symlink takes it outside the working directory. Option ``non_empty``: a file must have
    bytes, a directory entries.
    """

    name = "file_exists"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        value = spec.value
        if not isinstance(value, str) or not value.strip():
            raise CheckSpecError("file_exists: value is required: a relative path or glob inside the workdir")
        self.pattern = value.strip()
        posix, windows = PurePosixPath(self.pattern), PureWindowsPath(self.pattern)
        if posix.is_absolute() or windows.is_absolute() or windows.drive or self.pattern.startswith("~"):
            raise CheckSpecError(f"file_exists: path {self.pattern!r} must be relative to the workdir")
        if ".." in posix.parts or ".." in windows.parts:
            raise CheckSpecError(f"file_exists: path {self.pattern!r} must not contain '..'")
        non_empty = spec.options.get("non_empty", False)
        if not isinstance(non_empty, bool):
            raise CheckSpecError("file_exists: option non_empty must be true or false")
        self.non_empty = non_empty
        self.is_glob = bool(GLOB_CHARS.search(self.pattern))
        if self.is_glob:
            # Python 3.13 reads `a**b` as `a*b`; earlier versions refuse it. Refuse it on every version.
            if any("**" in part and part != "**" for part in self.pattern.split("/")):
                raise CheckSpecError(
                    f"file_exists: invalid glob {self.pattern!r}: '**' can only be an entire path component"
                )
            try:  # the pattern is parsed before any directory is read
                next(Path("/nonexistent-assay-dir").glob(self.pattern), None)
            except ValueError as exc:
                raise CheckSpecError(f"file_exists: invalid glob {self.pattern!r}: {exc}") from None

    def _candidates(self, root: Path) -> list[Path]:
        if self.is_glob:
            return sorted(root.glob(self.pattern))
        path = root / self.pattern
        return [path] if path.exists() or path.is_symlink() else []

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        workdir = ctx.workdir or (Path(output.workdir) if output.workdir else None)
        if workdir is None:
            return self.result(False, evidence="file_exists: no working directory to look in")
        root = workdir.resolve()
        found, escaping, empty = [], [], []
        for path in self._candidates(root):
            rel = path.relative_to(root).as_posix()
            if not _contained(path, root):
                escaping.append(rel)
            elif not path.exists():
                continue  # a dangling symlink names nothing
            elif self.non_empty and not _is_non_empty(path):
                empty.append(rel)
            else:
                found.append(rel)
        if found:
            return self.result(True, evidence=clip(f"found {', '.join(found[:MAX_LISTED])}"))
        reasons = [f"no match for {self.pattern!r} in the workdir"]
        if empty:
            reasons = [f"empty: {', '.join(empty[:MAX_LISTED])}"]
        if escaping:
            reasons.append(f"refused (resolves outside the workdir): {', '.join(escaping[:MAX_LISTED])}")
        return self.result(False, evidence=clip("; ".join(reasons)))
