"""Do the tournaments tell close candidates apart? The main job (the binpack example, default settings), then its
matches read back two ways:

- seed 000's rules, as the run played and rated them: a baseline match is won when the candidate's own score
  exceeds ``win_threshold``, a pool match by the higher raw score; only a kept candidate's matches are rated,
  Elo with K 24;
- the rule before (for comparison, on the same matches): an outcome from the clamped score
  ``0.5 + (a - b) / 2``, a tie unless it reaches the threshold, every match rated, Elo with K 32.

For each: the share of match outcomes that are ties, and Kendall's tau between the kept candidates' final ratings
and their dev scores (1: the ratings rank them exactly as their scores do; n/a: the ratings are all equal).

    python benchmarks/tournament_signal.py              # the example's 40 generations
    python benchmarks/tournament_signal.py -n 20
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scipy.stats import kendalltau

from assay.history.runfiles import RunFiles, read_events
from assay.loop.events import MatchesPlayed, typed_events
from assay.ratings import EloRating
from assay.ratings.base import MatchOutcome
from assay.tournament.matches import WIN_THRESHOLD, outcome_for

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "binpack"
OLD_K = 32.0


def run_main_job(root: Path, generations: int | None) -> Path:
    """``assay init && assay evolve`` on a copy of the example; the run's folder."""
    shutil.copytree(EXAMPLE, root)
    evolve = [sys.executable, "-m", "assay", "evolve"] + (["-n", str(generations)] if generations else [])
    for command in ([sys.executable, "-m", "assay", "init"], evolve):
        subprocess.run(command, cwd=root, check=True, capture_output=True, text=True)
    return max((root / ".assay" / "runs").iterdir())


def summarise(label: str, outcomes: list[MatchOutcome], ratings: EloRating, kept: dict[str, float]) -> None:
    ties = sum(o.winner is None for o in outcomes)
    names = sorted(kept)
    tau = kendalltau([kept[n] for n in names], [ratings.rating(n).rating for n in names]).statistic
    shown = ", ".join(f"{ratings.rating(n).rating:.0f}" for n in sorted(names, key=kept.__getitem__))
    print(
        f"{label:28s} ties {ties:4d} of {len(outcomes):4d} ({ties / max(1, len(outcomes)):4.0%})"
        f"   Kendall tau, kept ratings vs dev scores {'n/a' if math.isnan(tau) else f'{tau:.2f}':>5s}"
        f"   ratings by dev score: {shown}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=None, help="generations (default: the example's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tournament-signal-") as tmp:
        run = run_main_job(Path(tmp) / "binpack", args.n)
        events = [e for e in typed_events(read_events(run)) if isinstance(e, MatchesPlayed)]
        records = RunFiles(run).read_candidates()
    kept = {r.candidate_id: r.dev_score for r in records if r.decision == "keep" and r.dev_score is not None}
    if len(kept) < 2:
        sys.exit(f"only {len(kept)} kept candidate(s): nothing to rank; try more generations (-n)")
    now, now_ratings = [], EloRating(k=next((e.k_factor for e in events if e.k_factor), OLD_K))
    before, before_ratings = [], EloRating(k=OLD_K)
    for event in events:
        played = [MatchOutcome(o.a, o.b, o.winner, weight=o.weight) for batch in event.updates for o in batch]
        now += played
        if event.rated:
            now_ratings.update(played)
        old = [outcome_for(event.candidate, m.opponent, m.score, WIN_THRESHOLD) for m in event.matches]
        before += old
        before_ratings.update(old)
    print(f"{len(events)} candidates played {len(now)} matches; {len(kept)} kept")
    summarise("seed 000 (this run)", now, now_ratings, kept)
    summarise("clamped score, before", before, before_ratings, kept)


if __name__ == "__main__":
    main()
