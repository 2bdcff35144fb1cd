"""``assay serve``: the online variant-selection HTTP service (needs the ``serve`` extra)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from assay.errors import AssayError
from assay.install import install_hint


def serve_command(
    ctx: typer.Context,
    db: str = typer.Option(
        "sqlite:///.assay/serve.db",
        "--db",
        help="SQLAlchemy URL: a SQLite file, or PostgreSQL for replicas.",
        envvar="ASSAY_SERVE_DB",
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on.", envvar="ASSAY_SERVE_HOST"),
    port: int = typer.Option(
        8000, "--port", min=0, max=65535, help="Port (0: any free port).", envvar="ASSAY_SERVE_PORT"
    ),
    from_run: str | None = typer.Option(
        None, "--from-run", help="Register a run's kept candidates as variants (run id or run folder)."
    ),
    data_dir: Path = typer.Option(
        Path(".assay"), "--data-dir", help="Where --from-run looks for runs/<id>/."
    ),
    require_token_for_reads: bool = typer.Option(
        False, "--require-token-for-reads", help="Reads need the bearer token too (writes always do)."
    ),
    unknown_variants: str = typer.Option(
        "reject", "--unknown-variants", help="Feedback naming an unregistered variant: reject or register."
    ),
    k: float = typer.Option(32.0, "--k", help="Elo K factor."),
    start: float = typer.Option(1500.0, "--start", help="Start rating."),
    min_comparisons: int = typer.Option(5, "--min-comparisons", help="Comparisons for confidence 0.5."),
    decay_half_life_days: float | None = typer.Option(
        None,
        "--decay-half-life-days",
        help="Ratings drift back to their prior with this half-life (off by default).",
    ),
    cost_scaling: float = typer.Option(
        0.0, "--cost-scaling", help="Scaling of the cost-aware adjustment (0, the router's default: off)."
    ),
    cost_formula: str = typer.Option(
        "seed",
        "--cost-formula",
        help="Cost normalisation: seed ((c-min)/(max-min), the router's) or relative (c/max).",
    ),
    import_ratings: Path | None = typer.Option(
        None,
        "--import-ratings",
        help="Load the semantic router's elo_ratings.json (global and category ratings) before serving.",
    ),
    busy_timeout: float = typer.Option(
        10.0, "--busy-timeout", help="Seconds a SQLite write waits for a lock."
    ),
    max_body_bytes: int = typer.Option(
        1024 * 1024,
        "--max-body-bytes",
        min=1,
        help="Largest request body; a larger one is refused (413) before it is read or authenticated.",
        envvar="ASSAY_SERVE_MAX_BODY_BYTES",
    ),
    body_timeout: float = typer.Option(
        30.0,
        "--body-timeout",
        help="Seconds a client has to send a whole body after its headers (then 408).",
        envvar="ASSAY_SERVE_BODY_TIMEOUT",
    ),
    max_headers: int = typer.Option(
        100,
        "--max-headers",
        min=1,
        help="Most headers a request may have (431).",
        envvar="ASSAY_SERVE_MAX_HEADERS",
    ),
    max_header_bytes: int = typer.Option(
        64 * 1024,
        "--max-header-bytes",
        min=1,
        help="Most bytes a request's header names and values may take together (431).",
        envvar="ASSAY_SERVE_MAX_HEADER_BYTES",
    ),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level."),
) -> None:
    """Serve online variant selection over HTTP: feedback in, ratings and a chosen variant out.

    Writes need `Authorization: Bearer $ASSAY_SERVE_TOKEN` when that variable is set. A request over the
    limits is refused before authentication: body over --max-body-bytes 413, body slower than --body-timeout
    408, headers over --max-headers or --max-header-bytes 431; each closes the connection.
    """
    if ctx.invoked_subcommand is not None:
        return
    try:
        from assay.serve.fromrun import find_run, kept_variants
        from assay.serve.server import serve
        from assay.serve.settings import ServeSettings
    except ImportError as exc:
        raise AssayError(f"assay serve needs the serve extra: {install_hint('serve')} ({exc})") from None
    if cost_formula not in ("seed", "relative"):
        raise AssayError(f"--cost-formula must be seed or relative, got {cost_formula!r}")
    if unknown_variants not in ("reject", "register"):
        raise AssayError(f"--unknown-variants must be reject or register, got {unknown_variants!r}")
    settings = ServeSettings(
        db_url=db,
        k=k,
        start=start,
        min_comparisons=min_comparisons,
        token=os.environ.get("ASSAY_SERVE_TOKEN") or None,
        require_token_for_reads=require_token_for_reads,
        unknown_variants=unknown_variants,  # type: ignore[arg-type]
        decay_half_life=None if decay_half_life_days is None else decay_half_life_days * 86_400.0,
        cost_scaling=cost_scaling,
        cost_formula=cost_formula,  # type: ignore[arg-type]
        busy_timeout=busy_timeout,
        max_body_bytes=max_body_bytes,
        body_timeout=body_timeout,
        max_headers=max_headers,
        max_header_bytes=max_header_bytes,
    )
    variants = kept_variants(find_run(from_run, data_dir)) if from_run else []
    serve(settings, host, port, variants, log_level, import_ratings)


def export_ratings_command(
    out: Path = typer.Option(..., "--out", help="The file to write (the router's storage_path)."),
    db: str = typer.Option(
        "sqlite:///.assay/serve.db", "--db", help="The service's SQLAlchemy URL.", envvar="ASSAY_SERVE_DB"
    ),
    decay_half_life_days: float | None = typer.Option(
        None,
        "--decay-half-life-days",
        help="The half-life the service runs with: ratings are written as it reads them (off by default).",
    ),
) -> None:
    """Write the semantic router's elo_ratings.json from the service's database, once, atomically.

    Every stored rating, global and per category. An unreadable file already at --out is kept as
    <out>.corrupted first.
    """
    try:
        from assay.serve.router_export import export_router_file
        from assay.serve.settings import ServeSettings
        from assay.serve.state import ServeState
    except ImportError as exc:
        raise AssayError(f"assay serve needs the serve extra: {install_hint('serve')} ({exc})") from None
    _need_database(db)
    half_life = None if decay_half_life_days is None else decay_half_life_days * 86_400.0
    state = ServeState(ServeSettings(db_url=db, decay_half_life=half_life))
    try:
        done = export_router_file(state, out)
    finally:
        state.close()
    if done.backup is not None:
        print(f"kept the file that was at {out} as {done.backup} ({done.why})", flush=True)
    print(
        f"wrote {done.global_ratings} global and {done.category_ratings} category rating(s) "
        f"({done.categories} categories) to {out}",
        flush=True,
    )


def _need_database(url: str) -> None:
    """Refuse a SQLite file that does not exist: exporting would make an empty database and an empty file."""
    import sqlalchemy as sa

    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        return  # the database's own check says it in one line
    database = parsed.database or ""
    on_disk = database not in ("", ":memory:") and not database.startswith("file:")
    if parsed.get_backend_name() == "sqlite" and on_disk and not Path(database).is_file():
        raise AssayError(f"serve database {database}: no such file (nothing to export)")


def register(app: typer.Typer) -> None:
    """Add the ``serve`` command, and its one-shot ``serve export-ratings``, to ``app``."""
    group = typer.Typer(add_completion=False, rich_markup_mode=None, subcommand_metavar="[COMMAND [ARGS]...]")
    group.callback(invoke_without_command=True)(serve_command)
    group.command("export-ratings")(export_ratings_command)
    app.add_typer(group, name="serve")
