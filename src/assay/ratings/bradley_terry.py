"""Bradley-Terry: a maximum-likelihood fit (via ``choix``) of strengths to every outcome so far."""

from __future__ import annotations

import math

import numpy as np

from assay.ratings.base import Outcome, RatingBackend

ELO_PER_NAT = 400.0 / math.log(10.0)


def win_matrix(names: list[str], outcomes: list[Outcome], pseudo_count: float) -> np.ndarray:
    """``W[i, j]`` = weighted wins of ``names[i]`` over ``names[j]``: a tie is half a win each way, and every
    pair compared at least once gets ``pseudo_count`` virtual wins each way."""
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for o in outcomes:
        i, j = index[o.a], index[o.b]
        wins[i, j] += o.score(o.a) * o.weight
        wins[j, i] += o.score(o.b) * o.weight
    compared = (wins + wins.T) > 0
    return wins + pseudo_count * compared


def fisher_information(strengths: np.ndarray, wins: np.ndarray) -> np.ndarray:
    """The observed information of the log-strengths: ``Σ n_ij p_ij (1 - p_ij)`` on the pair's Laplacian."""
    totals = wins + wins.T
    p = 1.0 / (1.0 + np.exp(strengths[None, :] - strengths[:, None]))
    weights = totals * p * (1.0 - p)
    return np.diag(weights.sum(axis=1)) - weights


class BradleyTerryRating(RatingBackend):
    """Bradley-Terry strengths refitted on all outcomes so far (order does not matter).

    ``P(i beats j) = θi / (θi + θj)``. Ties count as half a win each way and a weight scales a comparison.
    Every pair that was compared gets ``pseudo_count`` (λ, default 0.5) virtual wins each way, so a name
    that never lost still has a finite strength; ``regularization`` (the ``alpha`` of
    ``choix.ilsr_pairwise_dense``) keeps names in separate groups that were never linked finite.
    Ratings are on an Elo-like scale, ``1500 + 400·log10(θ)`` with the log-strengths centred at 0.
    Uncertainty is the standard error from the Fisher information (the pseudo-inverse of the Laplacian-shaped
    observed information, the centred gauge), on the same scale.
    """

    name = "bradley_terry"

    def __init__(self, pseudo_count: float = 0.5, regularization: float = 1e-4) -> None:
        super().__init__()
        self.pseudo_count = pseudo_count
        self.regularization = regularization
        self._outcomes: list[Outcome] = []
        self._fit: tuple[dict[str, int], np.ndarray, np.ndarray] | None = None

    def _update(self, outcomes: list[Outcome]) -> None:
        self._outcomes.extend(outcomes)
        self._fit = None

    def _fitted(self) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
        if self._fit is None:
            import choix  # imports scipy.stats (~1.4 s): only when a fit is needed, not at CLI start

            names = sorted(self._counts)
            wins = win_matrix(names, self._outcomes, self.pseudo_count)
            if len(names) < 2:
                strengths = np.zeros(len(names))
            else:
                strengths = choix.ilsr_pairwise_dense(
                    wins, alpha=self.regularization, tol=1e-10, max_iter=500
                )
                strengths = strengths - strengths.mean()
            variances = np.diag(np.linalg.pinv(fisher_information(strengths, wins)))
            errors = ELO_PER_NAT * np.sqrt(np.clip(variances, 0.0, None))
            self._fit = ({n: i for i, n in enumerate(names)}, strengths, errors)
        return self._fit

    def log_strength(self, name: str) -> float:
        """The fitted natural-log strength of ``name`` (0.0, the average, if unknown)."""
        index, strengths, _ = self._fitted()
        return float(strengths[index[name]]) if name in index else 0.0

    def win_probability(self, a: str, b: str) -> float:
        return 1.0 / (1.0 + math.exp(self.log_strength(b) - self.log_strength(a)))

    def _estimate(self, name: str) -> tuple[float, float]:
        index, strengths, errors = self._fitted()
        i = index[name]
        return self.start_rating + ELO_PER_NAT * float(strengths[i]), float(errors[i])
