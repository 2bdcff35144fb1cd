from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import UnreadableFile
from assay.fsutil import read_user_lines, read_user_text


def lines(path: Path, max_bytes: int = 1 << 20) -> list[str]:
    return list(read_user_lines(path, max_bytes))


def test_lines_end_as_read_user_text_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"one\ntwo\r\nthree\rfour\r\rsix\r\n\nlast")
    assert lines(path) == read_user_text(path, 1 << 20).split("\n")
    assert lines(path) == ["one", "two", "three", "four", "", "six", "", "last"]


def test_only_line_ends_split_lines(tmp_path: Path) -> None:
    # U+2028 and U+0085 are line breaks to str.splitlines, but JSON allows them raw inside a string.
    path = tmp_path / "cases.jsonl"
    path.write_text('{"input": "a\u2028b\x85c"}\n', encoding="utf-8")
    assert lines(path) == ['{"input": "a\u2028b\x85c"}']


def test_an_encoding_error_names_the_line_and_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"ok\nalso ok\nbad \xff here\n")
    with pytest.raises(UnreadableFile) as excinfo:
        lines(path)
    assert str(excinfo.value) == f"{path}: line 3: not UTF-8 text: invalid start byte at byte 15"


def test_size_and_kind_limits(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("x\n" * 100)
    with pytest.raises(UnreadableFile, match="file is larger than"):
        lines(path, max_bytes=50)
    with pytest.raises(UnreadableFile, match="expected a file, found a directory"):
        lines(tmp_path)
    with pytest.raises(UnreadableFile, match="file not found"):
        lines(tmp_path / "missing.jsonl")
    with pytest.raises(UnreadableFile, match="not a regular file"):
        lines(Path("/dev/zero"))
