"""The values an answer-key file holds, as the redactor must hide them.

A check that runs a program (``script``, ``python``, ``javascript``) or names a file (``file://``, a schema path)
reads files besides the case files: the program itself and the data it is given. What a proposer must not see
in those files depends on what the file is:

- a **program** (by its suffix, ``.py``, ``.js``, ``.sh``, ..., or a ``#!`` line): its string literals (not
  its comments) of at least :data:`MIN_LITERAL` letters or digits that hold something
  distinctive — a word of four letters or more that is not common English (rank above :data:`COMMON_RANK`), a
  keyword or a standard-library name; a token of letters and digits; a number of four or more digits — and its
  numbers of at least four digits, except years (1900–2100), round numbers (``1000``, ``2500``) and powers of
  two (``4096``): ``"ZEBRA-4471"`` and ``73519`` are secrets, ``"expected output"``, ``"utf-8"`` and
  ``json.loads`` are not; a shell script's bare words count as literals;
- **data** (anything else): every value, of every shape — JSON, YAML and TOML scalars, CSV and TSV fields, the
  lines of any other text — that has at least three letters or digits (three digits for a number) and is
  not a stopword or ``true``/``false``/``null`` (a CSV file's first row is left out when it names columns).
  A file that parses as a JSON schema is read as a schema is in a check's value: its property names are
  structural words, its other values secrets.

Mapping keys are structure, not values: they are not collected (a schema's property names are, as words). A
file a check opens without naming it cannot be found here; the docs tell users to name such files in the
check's command. Binary files are skipped; at most :data:`MAX_FILE_BYTES` of a file and :data:`MAX_FILES` files
of a named directory are read.
"""

from __future__ import annotations

import builtins
import csv
import functools
import io
import json
import keyword
import os
import re
import sys
import tokenize
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assay.proposers.fragments import MIN_RARE, STOPWORDS, english_rank
from assay.proposers.secrets import schema_secrets
from assay.proposers.skeleton import skeleton_text

MIN_LITERAL = 6
MIN_VALUE = 3
MIN_NUMBER_DIGITS = 4
COMMON_RANK = 12_000
MAX_FILE_BYTES = 8 << 20
MAX_FILES = 2_000

_PROGRAMS = """.py .pyw .js .mjs .cjs .ts .mts .cts .jsx .tsx .sh .bash .zsh .rb .pl .php .lua .r .jl .go .rs .java
    .c .h .cc .cpp .cs .swift .kt .scala .ps1"""
PROGRAM_SUFFIXES = frozenset(_PROGRAMS.split())
_HASH_COMMENTS = frozenset((".py", ".pyw", ".sh", ".bash", ".zsh", ".rb", ".pl", ".r", ".jl", ".ps1"))
_SHELL = frozenset((".sh", ".bash", ".zsh"))
_NOT_VALUES = frozenset(("true", "false", "null", "none", "nil", "undefined", "nan"))
_TOKEN = re.compile(r"[^\W_]+")
_FIELD = re.compile(r"\$?\{[^{}]*\}|%[-+ #0-9.]*[a-zA-Z]")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_NUMBER = re.compile(r"(?<![\w.])\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?(?![\w.])")
_SHELL_WORD = re.compile(r"[^\s'\"`;|&<>()$={}\[\]\\]+")
# Words of program code and of the messages check programs print, which the frequency list ranks as rare.
_CODE_WORDS = """
    argv ascii assert async await baseline bool boolean checker const decode dedent elif encoding endswith
    epsilon err exc func grader impl incorrect init isinstance iter kwargs lambda len lowercase malformed
    mismatch msg mutate nonlocal noqa num obj params payload printf pytest readline repr req res ret rtol
    atol solver startswith stderr stdin stdout str subprocess substring tmp tokens traceback typeof uppercase
    utf utf8 val vals var verdict stringify parse parsefloat parseint tolowercase touppercase readfilesync
    writefilesync existssync includes indexof startswith endswith trim tostring jsonparse console require
    module exports process argv env exit undefined null typeof instanceof function return const let var
    echo grep egrep fgrep sed awk printf test then else elif fi esac done cat head tail sort uniq wc tr cut
    xargs jq python python3 node bash sh zsh diff cmp mktemp dirname basename realpath readlink
    http https www com org net api localhost assay
"""


@dataclass
class FileValues:
    """What one or more files hold: ``values`` (hidden in every form) and ``words`` (structural names, hidden
    as whole words only)."""

    values: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)

    def extend(self, other: FileValues) -> None:
        self.values += other.values
        self.words += other.words


@functools.cache
def _known_names() -> frozenset[str]:
    """Keywords, builtins, standard-library modules and the public names of the modules check programs use
    most, and :data:`_CODE_WORDS`, lower-cased."""
    import base64
    import collections
    import datetime
    import hashlib
    import itertools
    import math
    import pathlib
    import random
    import shutil
    import statistics
    import string
    import subprocess
    import tempfile
    import textwrap
    import typing

    names: set[str] = {*keyword.kwlist, *keyword.softkwlist, *dir(builtins), *sys.stdlib_module_names}
    modules: list[Any] = [os, os.path, sys, json, re, csv, io, math, string, collections, itertools,
                          functools, typing, hashlib, base64, datetime, random, statistics, shutil, subprocess,
                          tempfile, textwrap, pathlib.Path, str, bytes, dict, list, set, int, float]  # fmt: skip
    for module in modules:
        names.update(name for name in dir(module) if not name.startswith("_"))
    names.update(_CODE_WORDS.split())
    return frozenset(name.lower() for name in names)


def common_word(word: str) -> bool:
    """Whether ``word`` is one plain word (letters, one case or capitalised) that says nothing on its own:
    common English, a keyword or a library name (``code``, ``status``; not ``error_code`` or ``exitCode``)."""
    return word.isalpha() and (word.islower() or word.isupper() or word.istitle()) and _common(word)


def _common(word: str) -> bool:
    """Whether ``word`` (letters only) says nothing on its own: common English, a keyword or a library name."""
    lowered = word.lower()
    if lowered in _known_names():
        return True
    rank = english_rank(skeleton_text(lowered))
    return rank is not None and rank <= COMMON_RANK


def _plain_number(digits: str, text: str) -> bool:
    """Whether a number says nothing: fewer than four digits, a year, a round number or a power of two."""
    significant = digits.lstrip("0")
    if len(significant) < MIN_NUMBER_DIGITS:
        return True
    if "." in text or "e" in text.lower():
        return len(significant.rstrip("0")) < MIN_NUMBER_DIGITS
    value = int(digits)
    return 1900 <= value <= 2100 or len(significant.rstrip("0")) <= 2 or value & (value - 1) == 0


def _distinctive_token(token: str) -> bool:
    if token.isdigit():
        return not _plain_number(token, token)
    if token.isalpha():
        parts = _CAMEL.findall(token) if not token.islower() and not token.isupper() else [token]
        return len(token) >= MIN_RARE and not _common(token) and not all(_common(p) for p in parts)
    return len(token) >= 4 and token.lower() not in _known_names()


def distinctive_literal(text: str) -> bool:
    """Whether a program's string literal is worth hiding (see the module docstring); the fields of a format
    string (``{name}``, ``${x}``, ``%s``) are code, not its text."""
    text = _FIELD.sub(" ", text)
    if len(skeleton_text(text)) < MIN_LITERAL:
        return False
    return any(_distinctive_token(token) for token in _TOKEN.findall(text))


def _numbers(code: str) -> list[str]:
    found = []
    for match in _NUMBER.finditer(code):
        text = match.group().replace("_", "")
        mantissa = re.split(r"[eE]", text)[0]
        if not _plain_number(mantissa.replace(".", ""), text):
            found.append(text)
    return found


def _python_literals(text: str) -> tuple[list[str], list[str]] | None:
    """String literals and numbers of Python source; None when it does not tokenize."""
    strings: list[str] = []
    numbers: list[str] = []
    middle = getattr(tokenize, "FSTRING_MIDDLE", None)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING:
                strings.append(_unquote(token.string))
            elif middle is not None and token.type == middle:
                strings.append(token.string)
            elif token.type == tokenize.NUMBER:
                numbers += _numbers(token.string)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return strings, numbers


def _unquote(literal: str) -> str:
    """A Python string literal's text (an f-string's text with its fields as written)."""
    body = literal.lstrip("rRbBuUfF")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    body = body[len(quote) : len(body) - len(quote)]
    prefix = literal[: len(literal) - len(literal.lstrip("rRbBuUfF"))].lower()
    if "\\" in body and "r" not in prefix:
        try:
            return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except (UnicodeDecodeError, ValueError):
            return body
    return body


def _scanned_literals(text: str, suffix: str) -> tuple[list[str], list[str]]:
    """String literals (``'…'``, ``"…"``, ```…```) and numbers of source in another language, comments left
    out; a shell script's bare words count as literals too."""
    hash_comments = suffix in _HASH_COMMENTS or text.startswith("#!")
    strings: list[str] = []
    code: list[str] = []
    i, n = 0, len(text)
    start = 0
    while i < n:
        char = text[i]
        if char in "'\"`":
            code.append(text[start:i])
            escapes = not (char == "'" and suffix in _SHELL)
            one_line = char != "`" and suffix not in _SHELL
            j = i + 1
            while j < n and text[j] != char and not (one_line and text[j] == "\n"):
                j += 2 if escapes and text[j] == "\\" else 1
            strings.append(text[i + 1 : j])
            i = start = j + 1
        elif _comment_at(text, i, hash_comments):
            code.append(text[start:i])
            block = text.startswith("/*", i)
            end = text.find("*/", i + 2) if block else text.find("\n", i)
            i = start = n if end == -1 else end + (2 if block else 0)
        else:
            i += 1
    code.append(text[start:])
    bare = "\n".join(code)
    if suffix in _SHELL or re.match(r"#!.*\b(?:ba|z|da)?sh\b", text.partition("\n")[0]):
        strings += _SHELL_WORD.findall(bare)
    return strings, _numbers(bare)


def _comment_at(text: str, i: int, hash_comments: bool) -> bool:
    """Whether a comment starts at ``i``: ``#`` after a space or a line start (shell, Python, Ruby), else
    ``//`` (not in ``https://``) or ``/*``."""
    if hash_comments:
        return text[i] == "#" and (i == 0 or text[i - 1] in " \t\n;")
    return text.startswith("/*", i) or (text.startswith("//", i) and (i == 0 or text[i - 1] != ":"))


def program_values(text: str, suffix: str) -> list[str]:
    """The secrets of a check program's source (see the module docstring)."""
    python = suffix in (".py", ".pyw") or re.match(r"#!.*\bpython", text.partition("\n")[0])
    found = _python_literals(text) if python else None
    strings, numbers = found if found is not None else _scanned_literals(text, suffix)
    return [*dict.fromkeys(s.strip() for s in strings if distinctive_literal(s)), *dict.fromkeys(numbers)]


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _looks_like_schema(value: Any) -> bool:
    return isinstance(value, dict) and ("$schema" in value or isinstance(value.get("properties"), dict))


def _kept(value: Any) -> str | None:
    """A data value as a secret, or None when it says nothing (see the module docstring)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        text = str(value)
        return text if sum(c.isdigit() for c in text) >= MIN_VALUE else None
    text = str(value).strip()
    sk = skeleton_text(text)
    if len(sk) < MIN_VALUE or text.lower() in STOPWORDS or text.lower() in _NOT_VALUES:
        return None
    return text


def _parsed(text: str, suffix: str) -> list[Any] | None:
    """The documents of a structured data file, or None when it is not one (or does not parse)."""
    try:
        if suffix == ".json":
            return [json.loads(text)]
        if suffix in (".jsonl", ".ndjson"):
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        if suffix in (".yaml", ".yml"):
            return list(yaml.safe_load_all(text))
        if suffix == ".toml":
            return [tomllib.loads(text)]
    except (ValueError, yaml.YAMLError, RecursionError):
        return None
    return None


def _csv_rows(text: str, suffix: str) -> list[list[str]]:
    delimiter = "\t" if suffix == ".tsv" else ","
    try:
        return list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error:
        return [line.split(delimiter) for line in text.splitlines()]


def _is_header(row: list[str]) -> bool:
    """Whether a CSV row names columns: two or more fields, each made of common words or names of code
    (``id,expected_answer,score``; not ``pangolin,kestrel``)."""
    words = [_TOKEN.findall(cell) for cell in row]
    return len(row) > 1 and all(
        tokens and all(t.isalpha() and _common(p) for t in tokens for p in _CAMEL.findall(t))
        for tokens in words
    )


def data_values(text: str, suffix: str) -> FileValues:
    """The secrets of a check's data file (see the module docstring)."""
    found = FileValues()
    documents = _parsed(text, suffix)
    if documents is not None:
        for document in documents:
            if _looks_like_schema(document):
                values, words = schema_secrets(document)
                found.values += values
                found.words += words
            else:
                found.values += [v for v in map(_kept, _leaves(document)) if v is not None]
        return found
    if suffix in (".csv", ".tsv"):
        rows = _csv_rows(text, suffix)
        if rows and _is_header(rows[0]):
            rows = rows[1:]  # column names are structure, as mapping keys are
        found.values += [v for row in rows for v in map(_kept, row) if v is not None]
        return found
    found.values += [v for v in map(_kept, text.splitlines()) if v is not None]
    return found


def _files(path: Path) -> Iterator[Path]:
    """``path`` if it is a file, else the files under it (at most :data:`MAX_FILES`, hidden ones too)."""
    if path.is_file():
        yield path
        return
    count = 0
    for where, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            count += 1
            if count > MAX_FILES:
                return
            yield Path(where) / name


def file_values(path: Path) -> FileValues:
    """The secrets of one answer-key file (or of the files of a directory a check names)."""
    found = FileValues()
    for file in _files(path):
        try:
            with open(file, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES)
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue  # binary: nothing a redactor could match in text
        text = data.decode("utf-8", errors="replace")
        suffix = file.suffix.lower()
        if suffix in PROGRAM_SUFFIXES or text.startswith("#!"):
            found.values += program_values(text, suffix)
        else:
            found.extend(data_values(text, suffix))
    return found


def files_values(paths: Iterable[Path]) -> FileValues:
    """The secrets of every file of ``paths`` (see :func:`file_values`)."""
    found = FileValues()
    for path in paths:
        found.extend(file_values(path))
    return found
