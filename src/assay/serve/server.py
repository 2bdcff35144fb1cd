"""Running the service under uvicorn: open the database, bind the port, say where it listens, serve."""

from __future__ import annotations

import errno
import socket
from collections.abc import Sequence
from pathlib import Path

from assay.errors import AssayError
from assay.serve.fromrun import RunVariant
from assay.serve.router_ratings import load_router_ratings
from assay.serve.schemas import VariantIn
from assay.serve.settings import ServeSettings, is_loopback
from assay.serve.state import ServeState


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one); a busy port is a one-line error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets that say they are TCP.
    # With it on, a response's body waited for the ACK of its headers, which the client delays up to 40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise AssayError(f"serve: cannot listen on {host}:{port}: {reason}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(
    settings: ServeSettings,
    host: str = "127.0.0.1",
    port: int = 8000,
    variants: Sequence[RunVariant] = (),
    log_level: str = "warning",
    imported: Path | None = None,
) -> None:
    """Serve until interrupted; errors before listening (database, port, token) are one-line AssayErrors.

    ``imported`` is the semantic router's ``elo_ratings.json``, loaded into the database before listening.
    """
    if not settings.token and not is_loopback(host):
        raise AssayError(f"serve: refusing to listen on {host} without a token; set ASSAY_SERVE_TOKEN")
    ratings = load_router_ratings(imported) if imported is not None else []
    state = ServeState(settings)
    try:
        import uvicorn

        from assay.serve.app import create_app

        for variant in variants:
            body = VariantIn(cost_per_1m_tokens=variant.cost_per_1m, description=variant.description)
            state.register_variant(variant.name, body)
        if imported is not None:
            done, kept = state.import_ratings(ratings)
            print(
                f"imported {done} rating(s) from {imported}; {kept} kept (feedback here had moved them)",
                flush=True,
            )
        sock = bind(host, port)
        bound_port = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        app = create_app(settings, state)
        writes = "token required" if settings.token else "open (no ASSAY_SERVE_TOKEN)"
        reads = "token required" if settings.require_token_for_reads else "open"
        print(
            f"assay serve listening on http://{shown}:{bound_port} (docs /docs; database {state.db.location}; "
            f"{len(variants)} variant(s) from the run; writes {writes}, reads {reads})",
            flush=True,
        )
        config = uvicorn.Config(
            app,
            log_level=log_level,
            access_log=False,
            lifespan="off",
            # Keep-alive longer than a load balancer's usual idle timeout, so the server is not the side closing.
            timeout_keep_alive=75,
            # h11, not httptools even when installed: only h11 bounds what a request's head may buffer. Twice the
            # header limit, so a head over it by less gets the API's 431 (RequestLimits), not h11's plain 400.
            http="h11",
            h11_max_incomplete_event_size=2 * settings.max_header_bytes,
        )
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        state.close()
