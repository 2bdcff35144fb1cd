"""The ratings given back to the semantic router: its ``elo_ratings.json`` made from the database, served as
``GET /api/v1/ratings?format=router`` or written once by ``assay serve export-ratings``; both are the same text.

The file is written as the router saves it, durably: a temporary file in the same folder, fsynced, renamed over
the old one, so the router reads the old file or the new one, never half of one. A file already there that the
router could not load (not UTF-8 JSON ratings: what ``--import-ratings`` refuses) is kept first as
``<file>.corrupted``, as the router keeps a file it fails to parse; a valid file is replaced (the router replaces
its file on every save) and an empty one too (the router reads it as no ratings).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from assay.errors import AssayError
from assay.fsutil import durable_write_bytes
from assay.serve.router_ratings import dump_router_ratings, parse_router_ratings
from assay.serve.state import ServeState

CORRUPTED_SUFFIX = ".corrupted"


@dataclass(frozen=True)
class RouterExport:
    """What :func:`export_router_file` wrote: ``global_ratings`` and category records, the categories, and the
    backup of the unreadable file that was there (``why``: what was wrong with it), if any."""

    path: Path
    global_ratings: int
    category_ratings: int
    categories: int
    backup: Path | None = None
    why: str | None = None


def router_file(state: ServeState, updated: datetime | None = None) -> str:
    """The router's ``elo_ratings.json`` holding every rating of ``state`` (``last_updated``: ``updated``,
    default now)."""
    return dump_router_ratings(state.router_ratings(), updated or datetime.now(UTC))


def export_router_file(state: ServeState, path: Path, updated: datetime | None = None) -> RouterExport:
    """Write the router's file (see :func:`router_file`) to ``path`` durably, keeping an unreadable file that
    was there as ``<path>.corrupted``; a file that cannot be checked or written is a one-line AssayError."""
    ratings = state.router_ratings()
    text = dump_router_ratings(ratings, updated or datetime.now(UTC))
    backup, why = _keep_corrupted(path)
    try:
        durable_write_bytes(path, text.encode("utf-8"))
    except OSError as exc:
        raise AssayError(f"{path}: cannot write the ratings file ({exc.strerror or exc})") from None
    in_categories = [r for r in ratings if r.category is not None]
    return RouterExport(
        path=path,
        global_ratings=len(ratings) - len(in_categories),
        category_ratings=len(in_categories),
        categories=len({r.category for r in in_categories}),
        backup=backup,
        why=why,
    )


def _keep_corrupted(path: Path) -> tuple[Path | None, str | None]:
    """Copy the file at ``path`` to ``<path>.corrupted`` when the router could not load it; (backup, why)."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        # Never replace what could not be read, hence not kept: the operator decides.
        raise AssayError(
            f"{path}: cannot read the file there to keep a copy before replacing it ({exc.strerror or exc})"
        ) from None
    if not content:
        return None, None
    try:
        parse_router_ratings(path, content)
    except AssayError as exc:
        backup = path.with_name(path.name + CORRUPTED_SUFFIX)
        try:
            durable_write_bytes(backup, content)
        except OSError as error:
            raise AssayError(
                f"{backup}: cannot keep the unreadable ratings file ({error.strerror})"
            ) from None
        return backup, str(exc).removeprefix(f"{path}: ")
    return None, None
