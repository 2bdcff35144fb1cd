"""A candidate's fingerprint: a hash of its artifact files after normalisation, so two candidates that differ
only in formatting or comments have the same one; and its content size, which formatting and comments do not
change either (the gate's "smaller at a tie" measures it).

Python files are compared by their syntax tree (comments, spacing, quotes and line breaks do not count),
JSON, YAML and TOML files by their parsed value (key order, spacing and comments do not count), other files by
their lines with trailing spaces and trailing blank lines removed. A file that does not parse is compared as
text. The loop redraws a proposal whose fingerprint equals that of any earlier candidate.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import tomllib
from pathlib import PurePosixPath

import yaml

from assay.safeload import load_json, load_yaml


def normal_form(path: str, text: str) -> str:
    """``text`` of the file at ``path`` in a form that ignores formatting and comments."""
    suffix = PurePosixPath(path).suffix.lower()
    try:
        if suffix == ".py":
            return ast.dump(ast.parse(text))
        if suffix == ".json":
            return _canonical_json(load_json(text))
        if suffix in (".yaml", ".yml"):
            return _canonical_json(load_yaml(text))
        if suffix == ".toml":
            return _canonical_json(tomllib.loads(text))
    except (SyntaxError, ValueError, yaml.YAMLError, RecursionError, TypeError):
        pass
    return "\n".join(line.rstrip() for line in text.splitlines()).rstrip("\n")


def _canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


_MARKUP_COMMENT = re.compile(r"<!--.*?-->", re.S)


def content_size(path: str, text: str) -> int:
    """The size of what the file at ``path`` says, in characters, its comments and formatting left out: a
    Python file's code as its syntax tree writes it back (``ast.unparse``), a JSON, YAML or TOML file's data as
    compact JSON, any other file's words with one space between them (and without ``<!-- -->`` comments in
    Markdown and HTML). A file that does not parse counts its words."""
    suffix = PurePosixPath(path).suffix.lower()
    try:
        if suffix == ".py":
            return len(ast.unparse(ast.parse(text)))
        if suffix in (".json", ".yaml", ".yml", ".toml"):
            data = (
                load_json(text)
                if suffix == ".json"
                else tomllib.loads(text)
                if suffix == ".toml"
                else load_yaml(text)
            )
            return len(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str))
    except (SyntaxError, ValueError, yaml.YAMLError, RecursionError, TypeError):
        pass
    if suffix in (".md", ".markdown", ".html", ".htm", ".xml"):
        text = _MARKUP_COMMENT.sub(" ", text)
    return len(" ".join(text.split()))


def fingerprint(files: dict[str, str]) -> str:
    """The normalised hash of a set of artifact files (relative path -> text)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + normal_form(path, files[path]).encode() + b"\0")
    return digest.hexdigest()[:32]
