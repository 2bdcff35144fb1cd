"""Prometheus metrics: ratings, counts and win rates read from the shared database at each scrape (so every
replica reports the same figures), and this process's request latency."""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.serve.state import ServeState
from assay.serve.tables import GLOBAL

FEEDBACK_TYPES = ("satisfied", "need_clarification", "wrong_answer", "want_different")


class StateCollector(Collector):
    """Ratings, comparisons, wins, losses, ties and win rates per (variant, category), and feedback counts."""

    def __init__(self, state: ServeState) -> None:
        self.state = state

    def collect(self) -> Iterator[Metric]:
        kinds, types, rows = self.state.counts()
        feedback = CounterMetricFamily(
            "assay_serve_feedback", "Feedback events recorded, by kind.", labels=["kind"]
        )
        for kind in ("pairwise", "tie", "winner_only", "loser_only"):
            feedback.add_metric([kind], kinds.get(kind, 0))
        yield feedback
        typed = CounterMetricFamily(
            "assay_serve_feedback_type",
            "Feedback events by the client's feedback_type (the router's four; any other is 'other').",
            labels=["feedback_type"],
        )
        for name in FEEDBACK_TYPES:
            typed.add_metric([name], types.get(name, 0))
        # Any other value is counted, not labelled: a label per client-chosen string would grow without end.
        other = sum(n for name, n in types.items() if name is not None and name not in FEEDBACK_TYPES)
        typed.add_metric(["other"], other)
        yield typed
        labels = ["variant", "category"]
        families = {
            "rating": GaugeMetricFamily(
                "assay_serve_rating", "Stored rating (category '' = global).", labels=labels
            ),
            "comparisons": GaugeMetricFamily(
                "assay_serve_comparisons", "Pairwise comparisons.", labels=labels
            ),
            "wins": GaugeMetricFamily("assay_serve_wins", "Pairwise wins.", labels=labels),
            "losses": GaugeMetricFamily("assay_serve_losses", "Pairwise losses.", labels=labels),
            "ties": GaugeMetricFamily("assay_serve_ties", "Ties.", labels=labels),
            "win_rate": GaugeMetricFamily(
                "assay_serve_win_rate", "Wins plus half the ties per comparison.", labels=labels
            ),
        }
        for row in rows:
            key = [row["variant"], row["category"] or GLOBAL]
            for column in ("rating", "comparisons", "wins", "losses", "ties"):
                families[column].add_metric(key, float(row[column]))
            if row["comparisons"]:
                families["win_rate"].add_metric(key, (row["wins"] + 0.5 * row["ties"]) / row["comparisons"])
        yield from families.values()


class Metrics:
    """The registry of one app: the state collector plus a request-latency histogram."""

    def __init__(self, state: ServeState) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(StateCollector(state))
        self.latency = Histogram(
            "assay_serve_request_seconds",
            "Request latency in seconds, by method, route and status.",
            ["method", "route", "status"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
        )

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """ASGI middleware timing every request; the route label is the path template (ids do not explode it)."""

        async def timed(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            started = time.perf_counter()
            status = [500]

            async def send_status(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status[0] = message["status"]
                await send(message)

            try:
                await app(scope, receive, send_status)
            finally:
                route = getattr(scope.get("route"), "path", "unmatched")
                elapsed = time.perf_counter() - started
                self.latency.labels(scope["method"], route, str(status[0])).observe(elapsed)

        return timed
