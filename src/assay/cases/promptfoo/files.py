"""``file://`` references in promptfoo configs, read as promptfoo reads them.

Paths are relative to the config's folder (promptfoo's base path) unless absolute. A var's file becomes:
text, trimmed (most files); YAML as JSON text; an image as a ``data:<mime>;base64,...`` URL; audio and
video as plain base64; the ``output`` of ``get_var(var_name, prompt, vars)`` for ``.py`` and of the
exported function ``(varName, prompt, vars)`` for ``.js`` (the suite's own code, run while loading). An
assertion value's file: JSON and YAML parsed, other text trimmed.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.cases._common import Loc, parse_json, parse_yaml_text, read_text
from assay.checks.node import JsCall, NodeError, call_js_sync, split_file_ref
from assay.errors import ConfigError
from assay.fsutil import read_user_bytes

MAX_VAR_FILE_BYTES = 10 * 2**20
JS_SUFFIXES = (".js", ".cjs", ".mjs")
TS_SUFFIXES = (".ts", ".cts", ".mts")
IMAGE_TYPES = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "bmp": "image/bmp",
    "webp": "image/webp",
    "svg": "image/svg+xml",
}
VIDEO = frozenset(("mp4", "webm", "ogg", "mov", "avi", "wmv", "mkv", "m4v"))
AUDIO = frozenset(("wav", "mp3", "aac", "m4a", "flac", "wma", "aiff", "opus"))
# The first bytes of an image, base64-encoded, and its type: the content wins over the extension.
MAGIC = (
    ("/9j/", "image/jpeg"),
    ("iVBORw0KGgo", "image/png"),
    ("R0lGODlh", "image/gif"),
    ("R0lGODdh", "image/gif"),
    ("UklGR", "image/webp"),
    ("Qk0", "image/bmp"),
    ("Qk1", "image/bmp"),
)


@dataclass
class FileScope:
    """Where ``file://`` paths resolve (``base``, the config's folder), and what var scripts and tool-call
    checks need from the config: its first prompt's text and its first provider's tools."""

    base: Path
    prompt: str = ""
    provider_tools: Any = None


def file_ref(value: Any) -> str | None:
    """The path of a ``file://`` string (None for anything else)."""
    return value[len("file://") :] if isinstance(value, str) and value.startswith("file://") else None


def resolve(path: str, base: Path) -> Path:
    return Path(path) if Path(path).is_absolute() else base / path


def absolute_ref(ref: str, base: Path) -> str:
    """``file://x.py:fn`` relative to ``base`` as ``file:///abs/x.py:fn`` (a check reads it at run time)."""
    path, function = split_file_ref(ref)
    return f"file://{resolve(path, base).resolve()}" + (f":{function}" if function else "")


@contextlib.contextmanager
def named_at(loc: Loc) -> Iterator[None]:
    """A problem with a whole file that ``loc`` names with ``file://`` (missing, a FIFO, too large, bad
    syntax) is reported at ``loc``, followed by that file."""
    try:
        yield
    except ConfigError as exc:
        if exc.field is not None or exc.file is None or exc.file == str(loc.file):
            raise
        raise loc.error(f"{exc.file}: {exc.message}") from None


def read_structured(path: Path) -> Any:
    """A JSON or YAML (1.2 core schema) file's data."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        return parse_json(text, Loc(path))
    return parse_yaml_text(text, Loc(path))


def read_value_file(ref: str, loc: Loc, files: FileScope) -> Any:
    """An assertion value given as ``file://``: JSON/YAML parsed, other text trimmed."""
    path = resolve(ref.removeprefix("file://"), files.base)
    suffix = path.suffix.lower()
    if suffix in (".py", *JS_SUFFIXES, *TS_SUFFIXES):
        raise loc.error(
            f"a value computed by a script ({ref}) is not supported here; python and javascript "
            "assertions run their files"
        )
    with named_at(loc):
        if suffix in (".json", ".yaml", ".yml"):
            return read_structured(path)
        return read_text(path).strip()


def _image_url(data: bytes, suffix: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    mime = next((kind for prefix, kind in MAGIC if encoded.startswith(prefix)), IMAGE_TYPES[suffix])
    return f"data:{mime};base64,{encoded}"


def _script_var(path: Path, name: str, files: FileScope, variables: dict[str, Any], loc: Loc) -> str:
    function: str | None
    if path.suffix == ".py":
        from assay.checks.base import CheckSpecError
        from assay.checks.programs import import_file_function

        try:
            result = import_file_function(path, "get_var")(name, files.prompt, dict(variables))
        except CheckSpecError as exc:
            raise loc.error(str(exc)) from None
        except Exception as exc:
            raise loc.error(f"get_var in {path} raised {type(exc).__name__}: {exc}") from None
    else:
        file, function = split_file_ref(str(path))
        try:
            result = call_js_sync(
                JsCall(args=[name, files.prompt, dict(variables)], file=file, function=function),
                cwd=files.base,
            )
        except NodeError as exc:
            raise loc.error(f"{path}: {exc}") from None
    if isinstance(result, dict) and result.get("error"):
        raise loc.error(f"{path} reported an error: {result['error']}")
    output = result.get("output") if isinstance(result, dict) else None
    if not output:
        raise loc.error(
            f"{path} must return {{output: ...}} with the var's value; it returned {result!r:.80}"
        )
    return output.strip() if isinstance(output, str) else json.dumps(output)


def read_var_file(ref: str, name: str, loc: Loc, files: FileScope, variables: dict[str, Any]) -> Any:
    """A var given as ``file://`` (see the module docstring)."""
    path = resolve(ref, files.base)
    suffix = path.suffix.lower().lstrip(".")
    if f".{suffix}" in TS_SUFFIXES:
        raise loc.error(
            f"{ref}: TypeScript var loaders are not supported (no TypeScript runner); use .js or .py"
        )
    if suffix == "py" or f".{suffix}" in JS_SUFFIXES:
        return _script_var(path, name, files, variables, loc)
    if suffix == "pdf":
        raise loc.error(
            f"{ref}: promptfoo extracts a PDF's text; assay has no PDF reader: convert it to a .txt file"
        )
    with named_at(loc):
        if suffix in ("yaml", "yml"):
            return json.dumps(read_structured(path), ensure_ascii=False, separators=(",", ":"))
        if suffix in IMAGE_TYPES or suffix in VIDEO or suffix in AUDIO:
            data = read_user_bytes(path, MAX_VAR_FILE_BYTES, limit_note="assay's limit for file:// vars")
            if suffix in IMAGE_TYPES:
                return _image_url(data, suffix)
            return base64.b64encode(data).decode("ascii")
        return read_text(path, MAX_VAR_FILE_BYTES, "file:// vars").strip()
