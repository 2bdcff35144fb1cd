"""Small filesystem helpers: atomic writes, safe file names and bounded reads of user files."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from assay.errors import UnreadableFile

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never a partial one."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename), with plain system calls: this runs once per
    trace, thousands of times per evaluation, where mkstemp and text wrappers cost more than the write."""
    target = os.fspath(path)
    tmp = f"{target}.{os.getpid()}.{threading.get_ident()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        fd = os.open(tmp, flags, 0o644)
    try:
        with memoryview(data) as view:
            written = 0
            while written < len(view):
                written += os.write(fd, view[written:])
        os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def durable_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old file or the new one, whole, on disk: a temporary
    file in the same folder, fsynced, renamed over ``path``, then the folder fsynced. For files other programs
    read (:func:`atomic_write_bytes` is the cheap one, without fsync); mode 0644, folders made as needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):  # some filesystems refuse to fsync a folder
            os.fsync(folder)
    finally:
        os.close(folder)


def safe_name(name: str, max_len: int = 80) -> str:
    """A file name for an arbitrary id: readable, and unique (a short hash is added when characters changed)."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "case"
    if cleaned != name or len(cleaned) > max_len:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        cleaned = f"{cleaned[: max_len - 9]}-{digest}"
    return cleaned


def relative_posix(path: Path, root: Path) -> str | None:
    """The real path of ``path`` relative to ``root`` (a resolved path) as POSIX text, ``""`` for ``root``
    itself; None when it lies outside."""
    try:
        rel = Path(os.path.realpath(path)).relative_to(root)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else ""


def megabytes(size: int) -> str:
    """``52428800`` → ``50 MB``."""
    return f"{size / 2**20:g} MB"


def _open_user_file(path: Path, max_bytes: int, limit_note: str) -> int:
    """A descriptor open on the regular file ``path`` of at most ``max_bytes`` by its size; UnreadableFile
    otherwise (see :func:`read_user_bytes`)."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UnreadableFile("file not found", file=path) from None
    except NotADirectoryError:
        raise UnreadableFile("file not found (a parent in the path is a file)", file=path) from None
    except (OSError, ValueError) as exc:
        raise UnreadableFile(f"cannot read: {getattr(exc, 'strerror', None) or exc}", file=path) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableFile("expected a file, found a directory", file=path)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile("not a regular file (a device, FIFO or socket); give a file", file=path)
        if info.st_size > max_bytes:
            raise _too_large(path, max_bytes, limit_note)
    except OSError as exc:
        os.close(fd)
        raise UnreadableFile(f"cannot read: {exc.strerror or exc}", file=path) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _too_large(path: Path, max_bytes: int, limit_note: str) -> UnreadableFile:
    return UnreadableFile(f"file is larger than {megabytes(max_bytes)} ({limit_note})", file=path)


def read_user_bytes(path: Path, max_bytes: int, *, limit_note: str = "assay's limit") -> bytes:
    """The bytes of the regular file ``path``; UnreadableFile (a ConfigError) naming the file when it is
    missing, a directory, not a regular file (a device such as /dev/zero, a FIFO, a socket: reading those
    may never end) or larger than ``max_bytes``."""
    fd = _open_user_file(path, max_bytes, limit_note)
    try:
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {exc.strerror or exc}", file=path) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # a file whose size stat does not tell (/proc) or that grew
        raise _too_large(path, max_bytes, limit_note)
    return data


LINES_BLOCK = 1 << 20  # bytes read and decoded at once by read_user_lines


def read_user_lines(path: Path, max_bytes: int, *, limit_note: str = "assay's limit") -> Iterator[str]:
    """The lines of the UTF-8 regular file ``path``, without line ends, read a block at a time: a file of many
    lines is never held whole (number them with ``enumerate(..., 1)``). Lines end as :func:`read_user_text`
    reads them (``\\n``, ``\\r\\n`` or ``\\r``). Raises what :func:`read_user_text` raises, when the line
    is reached (the lines before a line that is not UTF-8 are still given)."""
    fd = _open_user_file(path, max_bytes, limit_note)
    number = 0  # lines given so far
    offset = 0  # bytes of the file before ``carry``
    carry = b""  # the bytes after the last line feed read so far
    try:
        with open(fd, "rb", buffering=0, closefd=True) as handle:
            while True:
                chunk = handle.read(LINES_BLOCK)
                if chunk:
                    if offset + len(carry) + len(chunk) > max_bytes:  # a file that grew since it was opened
                        raise _too_large(path, max_bytes, limit_note)
                    data = carry + chunk
                    # Cut after a line feed: it is never part of a multi-byte character, nor splits a \r\n.
                    cut = data.rfind(b"\n") + 1
                    if cut == 0:
                        carry = data
                        continue
                    block, carry = data[:cut], data[cut:]
                elif carry:
                    block, carry = carry, b""
                else:
                    return
                pieces, error = _block_lines(block, path, number, offset)
                yield from pieces
                if error is not None:
                    raise error
                number += len(pieces)
                offset += len(block)
    except OSError as exc:
        raise UnreadableFile(f"cannot read: {exc.strerror or exc}", file=path) from None


def _universal_newlines(text: str) -> str:
    """``text`` with ``\\r\\n`` and ``\\r`` line ends turned into ``\\n``, as Path.read_text gives."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _split_lines(text: str) -> list[str]:
    pieces = _universal_newlines(text).split("\n")
    if pieces[-1] == "":  # the text ended with a line end
        pieces.pop()
    return pieces


def _block_lines(
    block: bytes, path: Path, number: int, offset: int
) -> tuple[list[str], UnreadableFile | None]:
    """The lines of ``block`` (whole lines of the file, ``number`` lines and ``offset`` bytes into it); if it
    is not all UTF-8, the lines before the bad one and the error naming that line and the byte."""
    try:
        return _split_lines(block.decode("utf-8")), None
    except UnicodeDecodeError as exc:
        before = block[: exc.start]
        good = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
        lines = _split_lines(block[:good].decode("utf-8")) if good else []
        return lines, UnreadableFile(
            f"not UTF-8 text: {exc.reason} at byte {offset + exc.start}",
            file=path,
            field=f"line {number + len(lines) + 1}",
        )


def read_user_text(path: Path, max_bytes: int, *, limit_note: str = "assay's limit") -> str:
    """The UTF-8 text (universal newlines) of the regular file ``path``; UnreadableFile (a ConfigError) naming
    the file when it cannot be read (see :func:`read_user_bytes`) or is not UTF-8."""
    data = read_user_bytes(path, max_bytes, limit_note=limit_note)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"not UTF-8 text: {exc.reason} at byte {exc.start}", file=path) from None
    return _universal_newlines(text)


BOM = "\ufeff"
UTF8_BOM = BOM.encode()


def artifact_text(data: bytes) -> str:
    """A file's bytes as every reader of an artifact sees them (proposers, fingerprints, trimming): UTF-8 with
    invalid bytes replaced, universal newlines, no leading byte-order mark (Python reads a file that starts with
    one, but its parser, and JSON's, refuse the mark inside a string). A file written from such text gets its
    CRLF ends and its mark back through :func:`restore_marks`."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n").removeprefix(BOM)


def has_marks(data: bytes) -> bool:
    """Whether ``data`` starts with a UTF-8 byte-order mark or ends every line with CRLF, as a Windows editor
    writes a file: what :func:`restore_marks` keeps."""
    return data.startswith(UTF8_BOM) or _crlf(data)


def written_marks(root: Path, paths: Iterable[str]) -> dict[str, bytes]:
    """The bytes of each file of ``paths`` under ``root`` that :func:`has_marks`: what :func:`restore_marks`
    compares an edit with."""
    marked: dict[str, bytes] = {}
    for path in paths:
        try:
            data = (root / path).read_bytes()
        except OSError:
            continue
        if has_marks(data):
            marked[path] = data
    return marked


def restore_marks(root: Path, before: dict[str, bytes]) -> list[str]:
    """Put back the byte-order mark and the CRLF line ends of each file of ``before`` that was rewritten
    without them (an edit made on text read with universal newlines, written with ``\\n``); the paths mended.
    A file left as it was, or removed, is not touched."""
    mended = []
    for path, old in before.items():
        file = root / path
        try:
            data = file.read_bytes()
        except OSError:
            continue
        new = data
        if _crlf(old) and not _crlf(new):
            new = new.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        if old.startswith(UTF8_BOM) and not new.startswith(UTF8_BOM):
            new = UTF8_BOM + new
        if new != data:
            file.write_bytes(new)
            mended.append(path)
    return mended


def _crlf(data: bytes) -> bool:
    """Whether every line of ``data`` ends with CRLF (and there is one): a file with mixed ends is left alone."""
    lines = data.count(b"\n")
    return lines > 0 and data.count(b"\r\n") == lines
