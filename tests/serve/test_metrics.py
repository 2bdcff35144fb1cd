"""``/metrics``: Prometheus text with ratings, counts, win rates, feedback counts and request latency."""

from __future__ import annotations

import httpx
import pytest

from tests.extras import need

pytestmark = pytest.mark.e2e

need("serve")


def _samples(client: httpx.Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client import parser

    text = client.get("/metrics").text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in parser.text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_report_ratings_counts_and_latency(client: httpx.Client) -> None:
    for name in ("a", "b"):
        client.put(f"/api/v1/variants/{name}", json={})
    client.post("/api/v1/feedback", json={"winner": "a", "loser": "b", "category": "math"})
    client.post("/api/v1/feedback", json={"winner": "a", "loser": "b", "tie": True})
    client.post("/api/v1/feedback", json={"loser": "b"})
    client.post("/api/v1/feedback", json={})
    samples = _samples(client)
    a_global = (("category", ""), ("variant", "a"))
    assert samples[("assay_serve_rating", a_global)] > 1500
    assert samples[("assay_serve_comparisons", a_global)] == 2
    assert samples[("assay_serve_win_rate", a_global)] == 0.75
    assert samples[("assay_serve_wins", (("category", "math"), ("variant", "a")))] == 1
    assert samples[("assay_serve_feedback_total", (("kind", "pairwise"),))] == 1
    assert samples[("assay_serve_feedback_total", (("kind", "tie"),))] == 1
    assert samples[("assay_serve_feedback_total", (("kind", "loser_only"),))] == 1
    ok = (("method", "POST"), ("route", "/api/v1/feedback"), ("status", "200"))
    bad = (("method", "POST"), ("route", "/api/v1/feedback"), ("status", "422"))
    assert samples[("assay_serve_request_seconds_count", ok)] == 3
    assert samples[("assay_serve_request_seconds_count", bad)] == 1
    put = (("method", "PUT"), ("route", "/api/v1/variants/{name}"), ("status", "200"))
    assert samples[("assay_serve_request_seconds_count", put)] == 2
    assert client.get("/healthz").json()["status"] == "ok"
