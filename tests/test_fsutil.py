from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from assay.errors import UnreadableFile
from assay.fsutil import durable_write_bytes, read_user_lines, read_user_text


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


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64])
def test_lines_are_the_same_whatever_the_block_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    # Blocks cut after a line feed: a \r\n or a multi-byte character across a block's edge stays whole.
    from assay import fsutil

    monkeypatch.setattr(fsutil, "LINES_BLOCK", block)
    path = tmp_path / "mixed.txt"
    path.write_bytes("é\r\nñø\rx\n\n€ end\r\r\n\u2028\nlast\r".encode())
    assert lines(path) == ["é", "ñø", "x", "", "€ end", "", "\u2028", "last"]
    assert lines(path) == read_user_text(path, 1 << 20).split("\n")[:-1]


def test_the_lines_before_a_line_that_is_not_utf8_are_given(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"one\r\ntwo\rthree\nbad \xff\nnever\n")
    got: list[str] = []
    with pytest.raises(UnreadableFile) as excinfo:
        got.extend(read_user_lines(path, 1 << 20))
    assert got == ["one", "two", "three"]
    assert str(excinfo.value) == f"{path}: line 4: not UTF-8 text: invalid start byte at byte 19"


def test_a_durable_write_replaces_the_file_whole_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "made" / "elo_ratings.json"
    durable_write_bytes(path, b"first")
    durable_write_bytes(path, b"second")
    assert path.read_bytes() == b"second" and stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["elo_ratings.json"]
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    durable_write_bytes(path, b"third")
    assert len(synced) == 2  # the file, then its folder

    def fail(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        durable_write_bytes(path, b"lost")
    assert path.read_bytes() == b"third" and [p.name for p in path.parent.iterdir()] == ["elo_ratings.json"]
