from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from assay.errors import UnreadableFile
from assay.fsutil import (
    artifact_text,
    durable_write_bytes,
    read_user_lines,
    read_user_text,
    restore_marks,
    written_marks,
)


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


def test_an_edit_written_with_newlines_gets_back_the_files_crlf_ends_and_byte_order_mark(
    tmp_path: Path,
) -> None:
    files = {
        "windows.py": b"\xef\xbb\xbfA = 1\r\nB = 2\r\n",
        "crlf.toml": b"a = 1\r\nb = 2\r\n",
        "bom.yaml": b"\xef\xbb\xbfa: 1\nb: 2\n",
        "mixed.txt": b"a\r\nb\n",  # neither: left as the edit writes it
        "plain.py": b"A = 1\n",
        "untouched.py": b"\xef\xbb\xbfX = 0\r\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    before = written_marks(tmp_path, [*files, "gone.py"])
    assert set(before) == {"windows.py", "crlf.toml", "bom.yaml", "untouched.py"}
    for name in ("windows.py", "crlf.toml", "bom.yaml", "mixed.txt", "plain.py"):
        text = (tmp_path / name).read_text(encoding="utf-8")  # universal newlines, as an editor of text reads
        (tmp_path / name).write_text(text.lstrip("\ufeff").replace("1", "7"), encoding="utf-8")
    assert sorted(restore_marks(tmp_path, before)) == ["bom.yaml", "crlf.toml", "windows.py"]
    assert (tmp_path / "windows.py").read_bytes() == b"\xef\xbb\xbfA = 7\r\nB = 2\r\n"
    assert (tmp_path / "crlf.toml").read_bytes() == b"a = 7\r\nb = 2\r\n"
    assert (tmp_path / "bom.yaml").read_bytes() == b"\xef\xbb\xbfa: 7\nb: 2\n"
    assert (tmp_path / "mixed.txt").read_bytes() == b"a\nb\n"
    assert (tmp_path / "untouched.py").read_bytes() == files["untouched.py"]
    assert restore_marks(tmp_path, before) == []  # nothing left to mend


def test_an_artifact_reads_as_text_without_its_marks_and_with_newlines() -> None:
    assert artifact_text(b"\xef\xbb\xbfA = 1\r\nB = 2\r\n") == "A = 1\nB = 2\n"
    assert artifact_text(b"a\rb\r\nc\n") == "a\nb\nc\n"
    assert artifact_text(b"caf\xe9 \xef\xbb\xbf") == "caf\ufffd \ufeff"  # only a leading mark is set aside
