"""Replaying the feedback log with another backend or a half-life."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from assay.ratings import BradleyTerryRating, EloRating
from assay.serve.errors import ApiError
from assay.serve.recompute import DAY, make_backend, replay


def _event(winner: str | None, loser: str | None, age_days: float, kind: str = "pairwise") -> dict[str, Any]:
    return {
        "winner": winner,
        "loser": loser,
        "kind": kind,
        "category": None,
        "confidence": 1.0,
        "time": 1_000 * DAY - age_days * DAY,
    }


def test_a_half_life_lets_recent_feedback_outweigh_old_feedback() -> None:
    events = [_event("old", "new", 100) for _ in range(6)] + [_event("new", "old", 0) for _ in range(3)]
    plain = replay(events, BradleyTerryRating(), None, now=1_000 * DAY)
    assert plain[0].name == "old"
    decayed = replay(events, BradleyTerryRating(), half_life_days=5, now=1_000 * DAY)
    assert decayed[0].name == "new"
    with pytest.raises(ApiError) as err:
        replay(events, BradleyTerryRating(), half_life_days=0)
    assert err.value.code == "invalid_request"


def test_elo_replay_counts_one_sided_feedback_and_ties() -> None:
    events = [_event("a", "b", 0), _event("a", "b", 0, "tie"), _event("a", None, 0, "winner_only")]
    board = {r.name: r for r in replay(events, EloRating(), now=1_000 * DAY)}
    assert (board["a"].wins, board["a"].ties, board["b"].losses) == (1, 1, 1)
    assert board["a"].rating + board["b"].rating == pytest.approx(3000 + 3.2)
    assert make_backend("elo", 16, 1000).rating("x").rating == 1000
    with pytest.raises(ApiError, match="known: "):
        make_backend("chess", 32, 1500)


@pytest.mark.e2e
def test_recompute_endpoint_ranks_with_bradley_terry_and_leaves_ratings_alone(client: httpx.Client) -> None:
    for name in ("strong", "weak"):
        client.put(f"/api/v1/variants/{name}", json={})
    for _ in range(4):
        client.post("/api/v1/feedback", json={"winner": "strong", "loser": "weak", "category": "math"})
    client.post("/api/v1/feedback", json={"winner": "weak", "loser": "strong"})
    before = client.get("/api/v1/ratings").json()
    result = client.post("/api/v1/recompute", json={"backend": "bradley_terry", "category": "math"}).json()
    assert result["backend"] == "bradley_terry" and result["events"] == 4
    assert [row["name"] for row in result["leaderboard"]] == ["strong", "weak"]
    assert result["leaderboard"][0]["wins"] == 4
    assert client.get("/api/v1/ratings").json() == before
