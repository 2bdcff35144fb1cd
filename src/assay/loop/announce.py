"""What a run announces: plan.md (Phase 0), one line per generation, and each decision's reason (also as
the candidate commit's git note)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.config import AssayConfig, OverfittingConfig
from assay.gates.relax import floor
from assay.history.git import Git
from assay.history.gitrun import GitError
from assay.history.reasons import evaluated, reason_of
from assay.history.records import CandidateRecord, RunRecord
from assay.layer_names import LAYER_WIDTH, layer_name
from assay.loop.stops import MaxGenerations, Plateau, TargetReached, WallClock, standard_rules
from assay.presets import EvolveSettings
from assay.stats import NoiseEstimate
from assay.words import cut_at_word, plural

SUSPECT_AFTER = 5  # generations in a row a case must fail for the best to be marked unfixable
DESCRIPTION_CHARS = 80  # of a proposal's description on its generation's line

if TYPE_CHECKING:
    from assay.loop.state import LoopState


def plan_text(
    run: RunRecord,
    config: AssayConfig,
    settings: EvolveSettings,
    counts: dict[str, int],
    max_generations: int,
    *,
    noise: NoiseEstimate | None = None,
    unfixable: Sequence[str] = (),
    own_stops: Sequence[object] = (),
) -> str:
    """plan.md: kind, editable scope, tiers and when L3 runs, gate, the layers in order, budget and stop rules (the
    rules in force, as :func:`~assay.loop.stops.standard_rules` builds them, and ``own_stops``, rules of the
    caller's own), and the dev cases marked unfixable so far."""
    evolve = config.evolve
    plateau = (
        f"plateau after {plural(settings.plateau, 'generation')} without a keep"
        if settings.plateau < max_generations
        else "no plateau rule"
    )
    lines = [
        f"# assay run {run.run_id}",
        "",
        f"- artifact: {config.artifact.kind}, editable {config.artifact.paths}, read-only {config.artifact.forbid}",
        f"- cases: dev {counts['dev']}, holdout {counts['holdout']}, regression {counts['regression']}",
        f"- branch: {run.branch} from {run.base_commit[:12]} (your branch: {run.user_branch})",
        f"- proposer: {evolve.proposer.type}; gate: {evolve.gate}; layers"
        f" {' -> '.join(layer_name(n) for n in evolve.layers)}, {evolve.discards_per_layer} discards in a row"
        f" move to the next layer{', cycling' if evolve.layers_cycle else ''}",
        "- tiers: L1 static (structure, syntax, security) -> L2 dev cases -> L3 holdout + regression"
        f" (every {plural(settings.l3_every, 'generation')}, when dev pass rate > {config.tiers.l3_when_dev_above},"
        " before a layer promotion, and at the end)",
        _overfitting_line(config.tiers.overfitting),
        _gate_line(config, settings, noise),
        f"- budget: {plural(max_generations, 'generation')}, {settings.wall_clock_s:g}s wall clock, {plateau},"
        f" target dev pass rate {evolve.target_pass_rate}",
        _stops_line(config, settings, max_generations, own_stops),
    ]
    if run.unsandboxed:
        lines.append(f"- ran unsandboxed (no jail): {', '.join(run.unsandboxed)}")
    if noise is not None:
        lines.insert(3, f"- noise at the baseline: {noise.summary()}")
        flaky = noise.flaky
        if flaky:
            lines.insert(
                4,
                "- flaky dev cases (pass probability over the baseline runs): "
                + ", ".join(f"{cid} {noise.cases[cid].pass_probability:.2f}" for cid in flaky),
            )
    if unfixable:
        counted = "kept in" if config.evolve.unfixable_in_progress else "left out of"
        lines += [
            "",
            "## Unfixable cases",
            "",
            f"The best candidate has failed these dev cases {SUSPECT_AFTER} or more generations in a row; they are"
            f" {counted} the gate's progress (`evolve.unfixable_in_progress`), still measured and reported. Check"
            " whether the cases themselves are right:",
            "",
            *(f"- {cid}" for cid in unfixable),
        ]
    return "\n".join(lines) + "\n"


def _stops_line(
    config: AssayConfig, settings: EvolveSettings, max_generations: int, own_stops: Sequence[object]
) -> str:
    """The stop rules in force beyond the budget line's (generations, wall clock, plateau, target)."""
    rules = standard_rules(
        config.evolve, settings, max_generations, run_dir=Path("."), now=lambda: 0.0, pressed=lambda: False
    )
    on_budget_line = (MaxGenerations, WallClock, Plateau, TargetReached)
    said = [rule.describe() for rule in rules if not isinstance(rule, on_budget_line)]
    said += [f"your own {_described(rule)}" for rule in own_stops]
    return f"- stops: also {', '.join(said)}"


def _described(rule: object) -> str:
    describe = getattr(rule, "describe", None)
    return str(describe()) if callable(describe) else type(rule).__name__


def _threshold(min_delta: float, relax_factor: float, back: str) -> str:
    """The trend-aware relaxation of ``min_delta`` in words (seed 000); ``back``: what the gate calls going back
    to the best (rollbacks, discards)."""
    return (
        f"min_delta {min_delta:g}, relaxed as seed 000's trend-aware gate: x{relax_factor:g} after 3 flat"
        f" generations and after 3 {back} in a row, down to {floor(min_delta, relax_factor):g}, back to"
        f" {min_delta:g} on a keep"
    )


def _gate_line(config: AssayConfig, settings: EvolveSettings, noise: NoiseEstimate | None) -> str:
    gate = config.evolve.gate
    noisy = noise is not None and not noise.deterministic
    if gate in ("noisy", "paired") or (gate == "ratchet" and noisy):
        n = config.evolve.noise
        return (
            "- gate: structure AND progress AND regression judged by a paired sequential test over repeated"
            f" runs (alpha {n.alpha}, up to {n.max_runs_per_case} candidate runs per case; docs/noise.md)"
            " AND cost <= 2x baseline per case AND no new security findings"
        )
    options = settings.gate_options
    min_delta = float(options.get("min_delta", 0.0))
    relax_factor = float(options.get("relax_factor", 0.5))
    if gate in ("ratchet", "ratchet_strict"):
        progress = (
            f"a higher dev pass rate, or the same and a mean score higher by at least the threshold:"
            f" {_threshold(min_delta, relax_factor, 'discards')}"
            if min_delta
            else "a higher dev pass rate, or the same and a higher mean score"
        )
        return (
            f"- gate: structure AND progress ({progress}) AND no PASS->FAIL regression (one regression with other"
            f" gains is rerun 3x; 2 of 3 passing = noise) AND cost <= {options.get('cost_factor', 2.0):g}x baseline"
            " per case AND no new security findings"
        )
    if gate == "trend":
        return f"- gate: trend (backpressure with {_threshold(min_delta, relax_factor, 'rollbacks')})"
    return f"- gate: {gate} {options or ''}".rstrip()


def score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def generation_line(record: CandidateRecord) -> str:
    """``gen  12 surface      keep     dev score 0.977 pass 0.714 (1.2s) python: changed ... — keep: dev ...``"""
    flags = f" [{', '.join(record.flags)}]" if record.flags else ""
    layer = layer_name(record.layer).ljust(LAYER_WIDTH)
    figures = (
        f" dev score {score(record.dev_score)} pass {score(record.dev_pass_rate)}"
        if evaluated(record)
        else ""
    )
    return (
        f"gen {record.generation:3d} {layer} {record.decision:8s}{figures}"
        f" ({record.seconds:.1f}s) {cut_at_word(record.description, DESCRIPTION_CHARS)}{flags}"
        f" — {reason_of(record)}"
    )


def explain(git: Git, record: CandidateRecord, report: Callable[[str], None]) -> None:
    """Give a decided ``record`` its reason, and its commit (when it made one) that reason as its git note:
    the candidate was committed before it was judged. Written before the decision is logged, so a resumed
    generation writes it again. The note is a view of the record: when git cannot write it (another process
    holds the notes ref), ``report`` says so and the run goes on."""
    record.reason = reason_of(record)
    if record.commit:
        try:
            git.set_note(record.commit, f"reason: {record.reason}\n")
        except GitError as exc:
            report(f"{record.candidate_id}: its reason is in the run's log, not in a git note ({exc})")


def baseline_lines(state: LoopState) -> list[str]:
    """What a run says once its baseline is measured: the noise estimate and the baseline's scores."""
    assert state.lineage.baseline is not None
    record = state.lineage.baseline.record
    lines = [f"noise at the baseline: {state.spend.noise.summary()}"] if state.spend.noise is not None else []
    lines.append(
        f"baseline: dev pass rate {score(record.dev_pass_rate)}, score {score(record.dev_score)},"
        f" holdout score {score(record.holdout_score)}"
    )
    return lines


def _overfitting_line(setting: OverfittingConfig) -> str:
    """How L3 flags overfitting, as plan.md says it."""
    lead = "- overfitting, when the holdout is measured:"
    if setting.rule == "gap":
        return f"{lead} a holdout pass rate more than {setting.gap:g} below the dev pass rate (gap rule)"
    return (
        f"{lead} a gain over the baseline on holdout cases short of the gain on dev cases by more than chance"
        f" allows (paired rule: a permutation test of the per-case gains, alpha {setting.alpha:g})"
    )
