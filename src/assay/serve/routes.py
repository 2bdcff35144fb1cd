"""The ``/api/v1`` endpoints: a thin HTTP layer over :class:`ServeState` and the selection functions."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response

from assay.ratings.base import confidence
from assay.ratings.leaderboard import leaderboard_records
from assay.serve import selection
from assay.serve.auth import require_read, require_write
from assay.serve.errors import ApiError
from assay.serve.recompute import make_backend, replay
from assay.serve.responses import json_response
from assay.serve.router_export import router_file
from assay.serve.schemas import (
    CandidateOut,
    FeedbackIn,
    FeedbackOut,
    RatingOut,
    RecomputeIn,
    RecomputeOut,
    SelectIn,
    SelectOut,
    VariantIn,
    VariantOut,
)
from assay.serve.state import ServeState
from assay.serve.validation import category_name, check_feedback, finite_in, variant_name

router = APIRouter(prefix="/api/v1")
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "Invalid request"},
    401: {"description": "Missing or wrong token"},
}


def _state(request: Request) -> ServeState:
    state: ServeState = request.app.state.serve
    return state


@router.post("/feedback", response_model=FeedbackOut, dependencies=[Depends(require_write)], responses=ERRORS)
async def post_feedback(
    body: FeedbackIn, request: Request, idempotency_key: str | None = Header(None, alias="Idempotency-Key")
) -> Response:
    """Record pairwise (winner + loser), tie, or one-sided feedback and update the ratings atomically."""
    return json_response(await feedback(_state(request), body, idempotency_key))


@router.post("/select", response_model=SelectOut, dependencies=[Depends(require_read)], responses=ERRORS)
async def post_select(body: SelectIn, request: Request) -> Response:
    """Choose a variant among candidates by rating (optionally cost-aware) and say why."""
    return json_response(await select(_state(request), body))


async def feedback(state: ServeState, body: FeedbackIn, idempotency_key: str | None) -> FeedbackOut:
    """The answer to ``POST /feedback`` (its route's and :mod:`assay.serve.hot`'s)."""
    return await state.record_feedback_async(check_feedback(body, idempotency_key))


async def select(state: ServeState, body: SelectIn) -> SelectOut:
    """The answer to ``POST /select`` (its route's and :mod:`assay.serve.hot`'s)."""
    settings = state.settings
    category = category_name(body.category)
    cost_weight = finite_in(body.cost_weight, 0.0, 1e6, "invalid_cost", "cost_weight")
    snapshot = await state.snapshot_async(category)
    registered = snapshot[0]
    if body.candidates is None:
        names = sorted(registered)
    else:
        names = list(dict.fromkeys(variant_name(n, "candidates") for n in body.candidates))
    if not names:
        raise ApiError("no_candidates", "no candidates given and no variant registered")
    unknown = [n for n in names if n not in registered]
    if unknown and settings.unknown_variants == "reject":
        raise ApiError(
            "unknown_variant", f"unknown variant(s): {', '.join(map(repr, unknown))}", variants=unknown
        )
    if category is not None:
        names = [n for n in names if _serves(registered.get(n), category)]
        if not names:
            raise ApiError("category_conflict", f"no candidate serves category {category!r}")
    standings = state.standings(category, names, snapshot)
    contenders = [
        selection.Contender(s.name, s.rating, s.source, s.cost_per_1m, s.comparisons) for s in standings
    ]
    scored = selection.score(contenders, cost_weight, settings.cost_scaling, settings.cost_formula)
    chosen = selection.choose(scored, body.strategy)
    c = chosen.contender
    row = next(s for s in standings if s.name == c.name)
    return SelectOut(
        variant=c.name,
        probability=chosen.probability,
        score=chosen.score,
        rating=c.rating,
        confidence=confidence(c.comparisons, settings.min_comparisons),
        comparisons=c.comparisons,
        category=category,
        reasoning=selection.reasoning(chosen, category, row.wins, row.wins + row.losses + row.ties),
        detail=selection.detail(chosen, len(scored), category, cost_weight, settings.min_comparisons),
        candidates=[
            CandidateOut(
                name=s.contender.name,
                rating=s.contender.rating,
                source=s.contender.source,
                probability=s.probability,
                score=s.score,
                cost_per_1m_tokens=s.contender.cost_per_1m,
            )
            for s in scored
        ],
    )


def _serves(variant: dict[str, object] | None, category: str) -> bool:
    served = None if variant is None else variant.get("categories")
    return served is None or (isinstance(served, list) and category in served)


@router.get(
    "/ratings",
    response_model=list[RatingOut],
    dependencies=[Depends(require_read)],
    responses={
        **ERRORS,
        200: {"description": "The ratings; with format=router, the router's elo_ratings.json"},
    },
)
def get_ratings(
    request: Request,
    category: str | None = Query(None),
    format_: str | None = Query(None, alias="format", description="router: the router's elo_ratings.json"),
) -> list[RatingOut] | Response:
    """Every registered variant's rating in ``category`` (falling back to global, then start), by name; with
    ``format=router``, every stored rating as the semantic router's ``elo_ratings.json``."""
    state = _state(request)
    if format_ is not None:
        if format_ != "router":
            raise ApiError("invalid_request", f"format: expected router, got {format_!r}", field="format")
        if category is not None:
            raise ApiError(
                "invalid_request", "category: format=router gives every category, not one", field="category"
            )
        return Response(router_file(state), media_type="application/json")
    standings = state.standings(category_name(category))
    return [s.out(state.settings.min_comparisons) for s in standings]


@router.get("/leaderboard", response_model=list[RatingOut], dependencies=[Depends(require_read)])
def get_leaderboard(request: Request, category: str | None = Query(None)) -> list[RatingOut]:
    """The ratings best first, with ranks."""
    state = _state(request)
    board = sorted(state.standings(category_name(category)), key=lambda s: (-s.rating, s.name))
    return [s.out(state.settings.min_comparisons, rank) for rank, s in enumerate(board, start=1)]


@router.put(
    "/variants/{name}", response_model=VariantOut, dependencies=[Depends(require_write)], responses=ERRORS
)
def put_variant(name: str, body: VariantIn, request: Request) -> VariantOut:
    """Register or update a variant (cost per 1M tokens, categories served, static category scores)."""
    return _state(request).register_variant(name, body)


@router.get("/variants", dependencies=[Depends(require_read)])
def get_variants(request: Request) -> list[dict[str, object]]:
    """The registered variants."""
    return [
        {
            "name": v["name"],
            "cost_per_1m_tokens": v["cost_per_1m"],
            "description": v["description"],
            "categories": v["categories"],
        }
        for v in _state(request).variants().values()
    ]


@router.post(
    "/recompute", response_model=RecomputeOut, dependencies=[Depends(require_read)], responses=ERRORS
)
def post_recompute(body: RecomputeIn, request: Request) -> RecomputeOut:
    """Replay the feedback log with another backend or a half-life; the stored ratings do not change."""
    state = _state(request)
    category = category_name(body.category)
    backend = make_backend(body.backend, state.settings.k, state.settings.start)
    events = state.events(category)
    board = replay(events, backend, body.half_life_days, time.time())
    return RecomputeOut(
        backend=backend.name,
        category=category,
        events=len(events),
        half_life_days=body.half_life_days,
        leaderboard=leaderboard_records(board),
    )
