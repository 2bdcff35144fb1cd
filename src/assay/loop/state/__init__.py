"""Loop state as a fold over the run's events: ``apply(state, event) -> state`` is the one way it changes,
live and on resume, so a resumed run continues exactly where the events end.

The state is a few parts, each with one owner and its own ``apply``, each folding only the events that concern
it:

- :class:`~assay.loop.state.lineage.Lineage`: the candidates and what is known of them (the generation, the
  records, the baseline and the best, measurements, sizes, the archive and its ratings, the pending candidate);
- :class:`~assay.loop.state.spend.Spending`: what was spent, for how long, in how many sessions, and the noise runs;
- :class:`~assay.loop.state.proposals.Pipeline`: proposals made ahead and the candidate trees seen;
- :class:`~assay.loop.state.feedback.ProposerFeedback`: what the next proposal and gate decision are given (the layer,
  the history, the last gate's reasons, a retry, tuning's trials, the gate's memory);
- :class:`~assay.loop.state.watchers.Watchers`: what the stop rules watch, and the run's end.

:func:`apply` folds an event into the lineage first; the decision on a candidate gives an
:class:`~assay.loop.state.lineage.Outcome` (what it did to the lineage), and the other parts fold the event
from it, in this order: spend, pipeline, feedback, watchers (which also read the lineage's best at
``verified``). No part writes another. Code outside the loop (stop rules, the live view, the API, the report)
reads a frozen :class:`~assay.loop.state.view.RunView`, never the state; a recorded run is read view by view
with :func:`replay`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from assay.config import AssayConfig, TournamentConfig
from assay.loop.announce import SUSPECT_AFTER
from assay.loop.events import Event
from assay.loop.layers import LayerTracker
from assay.loop.state.feedback import HistoryItem, ProposerFeedback, Retry
from assay.loop.state.lineage import Best, Lineage, Outcome, Pending
from assay.loop.state.proposals import Pipeline
from assay.loop.state.spend import Spending
from assay.loop.state.view import CandidateView, DecisionView, PendingView, RatingRow, RunView
from assay.loop.state.watchers import Watchers
from assay.ratings import RatingBackendProtocol

__all__ = [
    "SUSPECT_AFTER",
    "Best",
    "CandidateView",
    "DecisionView",
    "HistoryItem",
    "Lineage",
    "LoopState",
    "Outcome",
    "Pending",
    "PendingView",
    "Pipeline",
    "ProposerFeedback",
    "RatingRow",
    "Retry",
    "RunView",
    "Spending",
    "Watchers",
    "apply",
    "final_view",
    "fold",
    "replay",
]


@dataclass
class LoopState:
    """Everything the loop knows, folded from the events, in owned parts (see the module docstring)."""

    lineage: Lineage = field(default_factory=Lineage)
    spend: Spending = field(default_factory=Spending)
    pipeline: Pipeline = field(default_factory=Pipeline)
    feedback: ProposerFeedback = field(default_factory=ProposerFeedback)
    watchers: Watchers = field(default_factory=Watchers)

    @classmethod
    def new(
        cls,
        tracker: LayerTracker | None = None,
        *,
        keep_all_measurements: bool = False,
        tournament: TournamentConfig | None = None,
        ratings: RatingBackendProtocol | str | None = None,
    ) -> LoopState:
        """An empty state: the layers as ``tracker`` counts them, every measurement kept or only the kept
        candidates' (a greedy search builds on the best only), ratings when a ``tournament`` is played (by the
        ``ratings`` backend given, an object or a name, else the configured one)."""
        return cls(
            lineage=Lineage(
                keep_all_measurements=keep_all_measurements, tournament=tournament, rating_backend=ratings
            ),
            feedback=ProposerFeedback(tracker=tracker or LayerTracker()),
        )

    def view(self) -> RunView:
        """The run as it is now, frozen: what stop rules and code outside the loop read."""
        return RunView.of(self)


def apply(state: LoopState, event: Event) -> LoopState:
    """Fold one event into ``state``'s parts (changed in place; ``state`` is returned), in the order the module
    docstring gives."""
    outcome = state.lineage.apply(event)
    state.spend.apply(event, outcome)
    state.pipeline.apply(event)
    state.feedback.apply(event, outcome)
    state.watchers.apply(event, state.lineage, outcome)
    return state


def fold(state: LoopState, events: list[Event]) -> LoopState:
    """Apply every event in order."""
    for event in events:
        apply(state, event)
    return state


def replay(events: Iterable[Event], config: AssayConfig | None = None) -> Iterator[tuple[Event, RunView]]:
    """Each event of a recorded run with the run's view just after it, folded as the loop folds them (with
    every measurement kept, the layers and the tournament as ``config`` has them): how code outside the loop
    (the report, a comparison) reads a run's history without holding its state."""
    state = _recorded(config)
    for event in events:
        apply(state, event)
        yield event, state.view()


def final_view(events: Iterable[Event], config: AssayConfig | None = None) -> RunView:
    """The view of a recorded run after its last event (as :func:`replay` would end)."""
    return fold(_recorded(config), list(events)).view()


def _recorded(config: AssayConfig | None) -> LoopState:
    if config is None:
        return LoopState.new(keep_all_measurements=True)
    evolve = config.evolve
    return LoopState.new(
        LayerTracker(layers=list(evolve.layers), discards_per_layer=evolve.discards_per_layer),
        keep_all_measurements=True,
        tournament=evolve.tournament if evolve.tournament.enabled else None,
    )
