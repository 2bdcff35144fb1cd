"""Pairwise judges: which of two candidates is better. ``scores`` compares per-case results; ``llm`` asks a
model under blind labels, every text redacted first (a judge never sees the answer key either)."""

from __future__ import annotations

import asyncio
import random
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from assay.config import AssayConfig
from assay.errors import ConfigError
from assay.evaluation.evaluator import EvalResult
from assay.llm import make_llm
from assay.llm.base import LLM, Completion, LLMError
from assay.proposers.redaction import Redactor
from assay.registry import Registry

TIE = "tie"


@dataclass
class Contestant:
    """One side of a comparison: its id, its artifact files (path → text) and its results, if evaluated."""

    id: str
    files: dict[str, str]
    results: EvalResult | None = None


@dataclass
class PairVerdict:
    """A judge's decision: ``winner`` is a contestant id or None for a tie; ``votes`` are each vote's winner
    id or ``"tie"``; ``means`` are (a, b) mean scores on shared cases when the judge compared scores;
    ``calls`` the model calls it took (0 for a judge that asks no model)."""

    winner: str | None
    reason: str
    votes: list[str] = field(default_factory=list)
    tokens: int = 0
    cost_usd: float = 0.0
    means: tuple[float, float] | None = None
    calls: int = 0


class PairwiseJudge(ABC):
    """Compares two contestants. ``round`` distinguishes repeated matches of the same pair (a stochastic
    judge draws fresh samples for each round; a deterministic one ignores it)."""

    name: ClassVar[str]

    @abstractmethod
    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        """Which of ``a`` and ``b`` is better, with the reason and the cost of deciding."""


JUDGES: Registry[type[PairwiseJudge]] = Registry("pairwise judge")


def shared_scores(a: EvalResult | None, b: EvalResult | None) -> list[tuple[str, float, float]]:
    """(case id, a's score, b's score) for every case both results contain, in ``a``'s order."""
    if a is None or b is None:
        return []
    theirs = {case.id: case.score for case in b.judged}
    return [(case.id, case.score, theirs[case.id]) for case in a.judged if case.id in theirs]


@JUDGES.register("scores")
@dataclass
class ScoresJudge(PairwiseJudge):
    """The higher mean score on the cases both candidates ran wins; within ``tolerance`` it is a tie.

    Each match is played on its own sample of the shared cases (``sample``, a fraction: half by default; None
    for all), drawn from the pair and the round, as autocontext plays each match on its own seed: repeated
    matches of the same pair then tell more than one. The cases where the two scores differ are drawn first,
    so a sample never misses the one case that tells two close candidates apart; the rest of the sample is
    drawn from the cases where they score the same."""

    name: ClassVar[str] = "scores"
    tolerance: float = 1e-9

    @classmethod
    def from_config(cls, config: AssayConfig | None = None, **context: object) -> ScoresJudge:
        """The judge ``tournament: {judge: scores}`` names."""
        return cls()

    def __init__(self, sample: float | None = 0.5) -> None:
        if sample is not None and not 0 < sample <= 1:
            raise ValueError(f"sample must be a fraction in (0, 1], got {sample}")
        self.sample = sample

    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        shared = shared_scores(a.results, b.results)
        if not shared:
            return PairVerdict(None, f"tie: {a.id} and {b.id} share no cases", [TIE])
        if self.sample is not None and len(shared) > 1:
            size = max(1, round_half_up(len(shared) * self.sample))
            shared = self._draw(shared, size, random.Random(f"{a.id}|{b.id}|{round}"))
        mean_a = sum(s for _, s, _ in shared) / len(shared)
        mean_b = sum(s for _, _, s in shared) / len(shared)
        diff = mean_a - mean_b
        winner = None if abs(diff) <= self.tolerance else a.id if diff > 0 else b.id
        reason = (
            f"{winner or TIE}: {a.id} mean {mean_a:.4f} vs {b.id} mean {mean_b:.4f} "
            f"on {len(shared)} shared cases (difference {diff:+.4f})"
        )
        return PairVerdict(winner, reason, [winner or TIE], means=(mean_a, mean_b))

    def _draw(
        self, shared: list[tuple[str, float, float]], size: int, rng: random.Random
    ) -> list[tuple[str, float, float]]:
        """``size`` of the shared cases, the differing ones first (a random few when there are more), in id
        order."""
        differ = [case for case in shared if abs(case[1] - case[2]) > self.tolerance]
        same = [case for case in shared if abs(case[1] - case[2]) <= self.tolerance]
        picked = rng.sample(differ, min(size, len(differ)))
        picked += rng.sample(same, size - len(picked))
        return sorted(picked)


JUDGE_FIELD = "evolve.tournament.judge_llm"


def task_text(config: AssayConfig) -> str:
    """What the llm judge is told the artifact is for (never the checks: those stay hidden)."""
    paths = ", ".join(config.artifact.paths)
    return (
        f"a {config.artifact.kind} artifact ({paths}) that is run on many cases of one task; "
        "the better version handles that task more correctly and more robustly"
    )


def round_half_up(value: float) -> int:
    return int(value + 0.5)


SYSTEM = (
    "You compare two candidate versions, labelled A and B, of an artifact written for a task, and decide "
    "which is better for that task. Judge only quality for the task; ignore the order they are shown in.\n"
    "Answer in exactly this format and nothing else:\nWINNER: A|B|TIE\nREASON: <one sentence>"
)
_WINNER = re.compile(r"^[ \t]*WINNER:[ \t]*(A|B|TIE)[ \t]*$", re.MULTILINE | re.IGNORECASE)
_REASON = re.compile(r"^[ \t]*REASON:[ \t]*(\S.*)$", re.MULTILINE | re.IGNORECASE)


def parse_answer(text: str) -> tuple[str, str] | None:
    """(``"A"``, ``"B"`` or ``"TIE"``, reason) from a strict answer; None when it does not follow the format
    (no or several WINNER lines, or no REASON)."""
    winners = _WINNER.findall(text)
    reason = _REASON.search(text)
    if len(winners) != 1 or reason is None:
        return None
    return winners[0].upper(), reason.group(1).strip()


@JUDGES.register("llm")
class LLMPairJudge(PairwiseJudge):
    """A model compares the two candidates' files (``show="files"``) or their outputs on up to ``cases``
    sampled shared cases (``show="outputs"``), labelled only A and B.

    Each of ``votes`` votes uses its own ``sample`` index at temperature 0. Without ``both_orders`` (the
    default, as SIFT chose: asking both orders cost twice as much for almost no gain) each vote shows the pair
    in one order drawn at random (seeded by ``seed``, the pair, the round and the vote), so neither side is
    always A. With ``both_orders`` a vote asks in both orders and a side wins the vote only if it wins both;
    otherwise the vote is a tie. A side needs a strict majority of the votes to win the match. An unparseable
    or failed answer is a tied vote.
    """

    name = "llm"

    @classmethod
    def from_config(cls, config: AssayConfig, *, redactor: Redactor, use_cache: bool = True) -> LLMPairJudge:
        """The judge ``tournament: {judge: llm}`` names: ``judge_llm``'s model, else the project's ``judge``
        model, told what the artifact is for (never the checks: those stay hidden); every text it is shown
        passes through ``redactor``."""
        settings = config.evolve.tournament
        llm_settings = settings.judge_llm or config.judge
        if llm_settings is None:
            raise ConfigError(
                "the llm tournament judge needs a model: set `evolve.tournament.judge_llm: "
                "{model: provider:model}` or a top-level `judge:`",
                file=config.path,
                field=JUDGE_FIELD,
            )
        llm = make_llm(
            llm_settings,
            cache_dir=config.data_path / "cache" / "llm",
            use_cache=use_cache,
            section=JUDGE_FIELD,
        )
        return cls(
            llm,
            task_text(config),
            redactor=redactor,
            votes=settings.judge_votes,
            both_orders=settings.judge_both_orders,
            show=settings.judge_show,
            seed=config.evolve.seed,
        )

    def __init__(
        self,
        llm: LLM,
        task: str,
        *,
        redactor: Redactor,
        votes: int = 3,
        both_orders: bool = False,
        show: Literal["files", "outputs"] = "files",
        cases: int = 3,
        max_chars: int = 20_000,
        max_tokens: int = 400,
        seed: int = 0,
    ) -> None:
        if votes < 1:
            raise ValueError(f"votes must be at least 1, got {votes}")
        self.llm, self.task, self.redactor = llm, task, redactor
        self.votes, self.both_orders, self.show = votes, both_orders, show
        self.cases, self.max_chars, self.max_tokens, self.seed = cases, max_chars, max_tokens, seed

    async def compare(self, a: Contestant, b: Contestant, *, round: int = 0) -> PairVerdict:
        texts = self._render(a, b)
        calls = [
            (x, y, round * self.votes + vote)
            for vote in range(self.votes)
            for x, y in self._orders(a, b, round, vote)
        ]
        answers = await asyncio.gather(*(self._ask(x, y, texts, sample) for x, y, sample in calls))
        sides = [side for side, _, _ in answers]
        per_vote = 2 if self.both_orders else 1
        chunks = [sides[v * per_vote : (v + 1) * per_vote] for v in range(self.votes)]
        votes = [chunk[0] if len(set(chunk)) == 1 else TIE for chunk in chunks]
        counts = {side: votes.count(side) for side in (a.id, b.id, TIE)}
        winner = next((s for s in (a.id, b.id) if counts[s] * 2 > self.votes), None)
        said = next((r for side, r, _ in answers if side == (winner or TIE)), answers[0][1])
        reason = (
            f"{winner or TIE}: votes {a.id}={counts[a.id]}, {b.id}={counts[b.id]}, tie={counts[TIE]} "
            f"of {self.votes}; judge: {said}"
        )
        done = [c for _, _, c in answers if c is not None]
        tokens, cost = sum(c.tokens_in + c.tokens_out for c in done), sum(c.cost_usd for c in done)
        return PairVerdict(winner, reason, votes, tokens, cost, calls=len(calls))

    def _orders(
        self, a: Contestant, b: Contestant, round: int, vote: int
    ) -> list[tuple[Contestant, Contestant]]:
        if self.both_orders:
            return [(a, b), (b, a)]
        flip = random.Random(f"{self.seed}|{a.id}|{b.id}|{round}|{vote}").random() < 0.5
        return [(b, a) if flip else (a, b)]

    async def _ask(
        self, first: Contestant, second: Contestant, texts: dict[str, str], sample: int
    ) -> tuple[str, str, Completion | None]:
        """(winning id or "tie", reason, completion) of one call with ``first`` shown as A, ``second`` as B."""
        user = (
            f"Task: {self.task}\n\n=== Candidate A ===\n{texts[first.id]}\n\n"
            f"=== Candidate B ===\n{texts[second.id]}\n\n"
            "Which candidate is better for the task? Answer with WINNER and REASON lines."
        )
        redact = self.redactor.redact
        try:
            completion = await self.llm.complete(
                [{"role": "user", "content": redact(user)}],
                system=redact(SYSTEM),
                temperature=0.0,
                max_tokens=self.max_tokens,
                sample=sample,
            )
        except LLMError as exc:
            return TIE, f"judge call failed: {exc}", None
        label, reason = parse_answer(completion.text) or (TIE, "unparseable answer, counted as a tie")
        return {"A": first.id, "B": second.id}.get(label, TIE), reason, completion

    def _render(self, a: Contestant, b: Contestant) -> dict[str, str]:
        """Each side's redacted text, keyed by contestant id (the ids themselves are never shown)."""
        shared = sorted(case_id for case_id, _, _ in shared_scores(a.results, b.results))
        picked = sorted(random.Random(self.seed).sample(shared, min(self.cases, len(shared))))
        show = _outputs if self.show == "outputs" and picked else _files
        return {c.id: self._cut(show(c, picked)) for c in (a, b)}

    def _cut(self, text: str) -> str:
        text = self.redactor.redact(text)
        return text if len(text) <= self.max_chars else text[: self.max_chars] + "\n[... cut]"


def _files(contestant: Contestant, picked: list[str]) -> str:
    return "\n\n".join(f"--- file: {path} ---\n{text}" for path, text in sorted(contestant.files.items()))


def _outputs(contestant: Contestant, picked: list[str]) -> str:
    texts = {r.id: r.output.text for r in contestant.results.cases} if contestant.results else {}
    return "\n\n".join(f"--- case {n}: output ---\n{texts[k]}" for n, k in enumerate(picked, 1))
