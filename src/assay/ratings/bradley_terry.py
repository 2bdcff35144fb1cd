"""Bradley-Terry: a maximum-likelihood fit (via ``choix``) of strengths to every outcome so far, and its
step-link limit for a judge of constant accuracy (``ConstantAccuracyRanking``, a posterior over orderings)."""

from __future__ import annotations

import math

import numpy as np

from assay.ratings.base import MatchOutcome, RatingBackend

ELO_PER_NAT = 400.0 / math.log(10.0)


def win_matrix(names: list[str], outcomes: list[MatchOutcome], pseudo_count: float) -> np.ndarray:
    """``W[i, j]`` = weighted wins of ``names[i]`` over ``names[j]``: a tie is half a win each way, and every
    pair of different names gets ``pseudo_count`` virtual wins each way (SIFT's λ, added to every pair, not
    only to pairs that were compared: sparse comparisons cannot push a name to an extreme)."""
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for o in outcomes:
        i, j = index[o.a], index[o.b]
        wins[i, j] += o.score(o.a) * o.weight
        wins[j, i] += o.score(o.b) * o.weight
    return wins + pseudo_count * (1.0 - np.eye(len(names)))


def fisher_information(strengths: np.ndarray, wins: np.ndarray) -> np.ndarray:
    """The observed information of the log-strengths: ``Σ n_ij p_ij (1 - p_ij)`` on the pair's Laplacian."""
    totals = wins + wins.T
    p = 1.0 / (1.0 + np.exp(strengths[None, :] - strengths[:, None]))
    weights = totals * p * (1.0 - p)
    return np.asarray(np.diag(weights.sum(axis=1)) - weights)


class BradleyTerryRating(RatingBackend):
    """Bradley-Terry strengths refitted on all outcomes so far (order does not matter).

    ``P(i beats j) = θi / (θi + θj)``. Ties count as half a win each way and a weight scales a comparison.
    Every pair of names gets ``pseudo_count`` (λ, default 0.5) virtual wins each way (SIFT's smoothed
    objective), so a name that never lost still has a finite strength and names never compared stay linked;
    ``regularization`` (the ``alpha`` of ``choix.ilsr_pairwise_dense``) is a further guard.
    Ratings are on an Elo-like scale, ``1500 + 400·log10(θ)`` with the log-strengths centred at 0.
    Uncertainty is the standard error from the Fisher information (the pseudo-inverse of the Laplacian-shaped
    observed information, the centred gauge), on the same scale.
    """

    name = "bradley_terry"

    def __init__(self, pseudo_count: float = 0.5, regularization: float = 1e-4) -> None:
        super().__init__()
        self.pseudo_count = pseudo_count
        self.regularization = regularization
        self._outcomes: list[MatchOutcome] = []
        self._fit: tuple[dict[str, int], np.ndarray, np.ndarray] | None = None
        self._errors: np.ndarray | None = None
        self._previous: dict[str, float] = {}

    def _update(self, outcomes: list[MatchOutcome]) -> None:
        self._outcomes.extend(outcomes)
        self._fit = self._errors = None

    def _fitted(self) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
        """(index, log-strengths, win matrix); the fit starts from the previous one (same optimum, fewer steps)."""
        if self._fit is None:
            import choix  # imports scipy.stats (~1.4 s): only when a fit is needed, not at CLI start

            names = sorted(self._counts)
            wins = win_matrix(names, self._outcomes, self.pseudo_count)
            if len(names) < 2:
                strengths = np.zeros(len(names))
            else:
                start = np.array([self._previous.get(n, 0.0) for n in names])
                strengths = choix.ilsr_pairwise_dense(
                    wins, alpha=self.regularization, initial_params=start, tol=1e-10, max_iter=500
                )
                strengths = strengths - strengths.mean()
            self._previous = dict(zip(names, strengths.tolist(), strict=True))
            self._fit = ({n: i for i, n in enumerate(names)}, strengths, wins)
        return self._fit

    def _standard_errors(self) -> np.ndarray:
        """Standard errors (Elo scale), computed only when asked for: the pseudo-inverse is the costly part."""
        if self._errors is None:
            _, strengths, wins = self._fitted()
            information = fisher_information(strengths, wins)
            variances = np.diag(np.linalg.pinv(information, hermitian=True))
            self._errors = ELO_PER_NAT * np.sqrt(np.clip(variances, 0.0, None))
        return self._errors

    def log_strength(self, name: str) -> float:
        """The fitted natural-log strength of ``name`` (0.0, the average, if unknown)."""
        index, strengths, _ = self._fitted()
        return float(strengths[index[name]]) if name in index else 0.0

    def win_probability(self, a: str, b: str) -> float:
        return 1.0 / (1.0 + math.exp(self.log_strength(b) - self.log_strength(a)))

    def _estimate(self, name: str) -> tuple[float, float]:
        index, strengths, _ = self._fitted()
        i = index[name]
        return self.start_rating + ELO_PER_NAT * float(strengths[i]), float(self._standard_errors()[i])

    def log_strength_error(self, name: str) -> float:
        """The standard error of ``log_strength(name)`` in nats (``start_uncertainty`` converted if unknown)."""
        index, _, _ = self._fitted()
        return (
            float(self._standard_errors()[index[name]]) / ELO_PER_NAT
            if name in index
            else self.start_uncertainty / ELO_PER_NAT
        )


class ConstantAccuracyRanking:
    """A posterior over orderings for a judge that is right with one fixed probability ``p`` whatever the gap.

    This is the Thurstone/Bradley-Terry family with a step link and a lapse rate: ``P(i beats j) = p`` when
    ``i`` is truly stronger, ``1 - p`` otherwise. Under that judge only the order matters, the likelihood of
    an ordering is ``p^agreements (1-p)^disagreements`` and, with exchangeable candidates, every ordering is
    equally likely a priori. A plain BT fit reads lopsided records as large gaps; this model does not.
    ``chains`` orderings are sampled by Markov chain Monte Carlo: a new or touched name is re-inserted at a
    position drawn from its exact conditional (a Gibbs step), then ``sweeps`` odd-even rounds of adjacent
    Metropolis swaps run. ``accuracy`` fixes ``p``; left None, each chain draws ``p`` from its Beta posterior
    given its ordering's agreements (folded onto (0.5, 1)), so ``p`` is learned, not assumed.
    Ties count as half an agreement each way; weights scale counts.
    """

    def __init__(
        self, chains: int = 32, sweeps: int = 8, accuracy: float | None = None, seed: int = 0
    ) -> None:
        if accuracy is not None and not 0.5 < accuracy < 1.0:
            raise ValueError(f"accuracy must be in (0.5, 1) or None, got {accuracy!r}")
        if chains < 1 or sweeps < 0:
            raise ValueError(f"chains must be >= 1 and sweeps >= 0, got {chains!r} and {sweeps!r}")
        self._rng = np.random.default_rng(seed)
        self._fixed = accuracy
        self._sweeps = sweeps
        self._index: dict[str, int] = {}
        self._wins = np.zeros((0, 0))
        self._order = np.zeros((chains, 0), dtype=int)  # per chain: item indices, strongest first
        self._p = np.full(chains, accuracy or 0.75)

    def update(self, outcomes: list[MatchOutcome]) -> None:
        """Add the outcomes, place new names, re-sample the names they touched and mix the chains."""
        touched: list[int] = []
        for o in outcomes:
            for name in (o.a, o.b):
                if name not in self._index:
                    self._index[name] = len(self._index)
                    self._wins = np.pad(self._wins, ((0, 1), (0, 1)))
                    self._order = np.concatenate(
                        [self._order, np.full((len(self._p), 1), self._index[name])], 1
                    )
            i, j = self._index[o.a], self._index[o.b]
            self._wins[i, j] += o.score(o.a) * o.weight
            self._wins[j, i] += o.score(o.b) * o.weight
            touched += [x for x in (i, j) if x not in touched]
        for x in touched:
            self._reinsert(x)
        self._sweep(self._sweeps)
        self._resample_accuracy()

    def positions(self) -> dict[str, np.ndarray]:
        """Each name's position (0 = best) in every chain."""
        rows, cols = np.indices(self._order.shape)
        pos = np.empty_like(self._order)
        pos[rows, self._order] = cols
        return {name: pos[:, i] for name, i in self._index.items()}

    def scores(self) -> dict[str, float]:
        """Minus the posterior mean position: higher is better (the Bayes choice for squared rank error)."""
        return {name: -float(p.mean()) for name, p in self.positions().items()}

    def accuracy(self) -> float:
        """The posterior mean of the judge's accuracy ``p`` (the fixed value when given)."""
        return float(self._p.mean())

    def _log_odds(self) -> np.ndarray:
        return np.log(self._p / (1.0 - self._p))[:, None]

    def _reinsert(self, x: int) -> None:
        chains, m = self._order.shape
        rest = self._order[self._order != x].reshape(chains, m - 1)
        gain = self._wins[x, rest] - self._wins[rest, x]  # log-odds units gained by standing above each
        above = np.concatenate([np.cumsum(gain[:, ::-1], axis=1)[:, ::-1], np.zeros((chains, 1))], axis=1)
        logp = above * self._log_odds()
        weights = np.exp(logp - logp.max(axis=1, keepdims=True))
        cdf = np.cumsum(weights, axis=1) / weights.sum(axis=1, keepdims=True)
        slot = np.minimum((cdf < self._rng.random((chains, 1))).sum(axis=1), m - 1)[:, None]
        cols = np.arange(m)[None, :]
        shifted = np.concatenate([rest, rest[:, -1:]], axis=1)
        unshifted = np.concatenate([rest[:, :1], rest], axis=1)
        self._order = np.where(cols < slot, shifted, np.where(cols > slot, unshifted, x))

    def _sweep(self, rounds: int) -> None:
        chains, m = self._order.shape
        rows, odds = np.arange(chains)[:, None], self._log_odds()
        for _ in range(rounds):
            for start in (0, 1):
                r = np.arange(start, m - 1, 2)
                if r.size == 0:
                    continue
                u, v = self._order[:, r], self._order[:, r + 1]
                swap = np.log(self._rng.random(u.shape)) < (self._wins[v, u] - self._wins[u, v]) * odds
                self._order[rows, r], self._order[rows, r + 1] = np.where(swap, v, u), np.where(swap, u, v)

    def _resample_accuracy(self) -> None:
        if self._fixed is not None or not self._index:
            return
        pos = np.argsort(self._order, axis=1)
        ahead = pos[:, :, None] < pos[:, None, :]
        agree = (self._wins[None] * ahead).sum(axis=(1, 2))
        total = self._wins.sum()
        draws = self._rng.beta(1.0 + agree, 1.0 + total - agree)
        self._p = np.clip(np.maximum(draws, 1.0 - draws), 0.51, 0.995)
