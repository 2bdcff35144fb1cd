"""The flags a candidate's record carries (``CandidateRecord.flags``, ``ProposalMade.flags``), and the rules of the
loop that read them.

A :class:`Flag` is a ``StrEnum``: records keep their flags as strings (``events.ndjson``, experiments.jsonl,
results.tsv), a member is equal to its string, so runs recorded before flags were typed read the same. A gate
of one's own may answer with an action of its own; its flag, ``gate-<action>``, stays a plain string.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum

TUNING_PROPOSER = "tune"  # the name numeric tuning records as a candidate's proposer (TuneProposer.name)


class Flag(StrEnum):
    """A marker on a candidate: what the proposer, L2, L3, the judge or the gate noticed about it."""

    SCOPE_VIOLATION = "scope-violation"  # the proposer edited outside the editable files (reverted)
    MANY_FILES = "many-files"  # more files changed than ``evolve.max_files_changed``
    NO_NEW_CANDIDATE = "no-new-candidate"  # every layer's draws repeated earlier candidates
    SCREENED_OUT = "screened-out"  # L2's first dev cases all crashed: not evaluated further
    SCREENED_BY_JUDGE = "screened-by-judge"  # the judge did not prefer it to its parent: not evaluated
    OVERFITTING = "overfitting"  # its holdout gain fell short of its dev gain (assay.loop.overfitting)
    GATE_RETRY = "gate-retry"  # the gate asked for another try from the same parent
    GATE_ROLLBACK = "gate-rollback"  # the gate rolled back at once


def gate_flag(action: str) -> str:
    """The flag of a gate's action other than keep and discard: a :class:`Flag` for the built-in gates'
    actions, ``gate-<action>`` for an action of a gate of one's own."""
    flag = f"gate-{action}"
    return Flag(flag) if flag in Flag._value2member_map_ else flag


def screened_out(flags: Collection[str]) -> bool:
    """Whether a candidate was screened out before its dev cases all ran (they crashed first, or the pairwise
    judge did not prefer it to its parent)."""
    return Flag.SCREENED_OUT in flags or Flag.SCREENED_BY_JUDGE in flags


def retried(flags: Collection[str]) -> bool:
    """Whether the gate asked to try the candidate's parent again."""
    return Flag.GATE_RETRY in flags


def is_tuning(proposer: str) -> bool:
    """Whether a candidate is a trial of numeric tuning (it samples around the best by design)."""
    return proposer == TUNING_PROPOSER


def counts_toward_layer(flags: Collection[str], proposer: str, kept: bool) -> bool:
    """Whether a decision counts toward the layer's discards in a row: a gate's retry asks for another try
    from the same parent, and numeric tuning is no layer's edit, so a discard of either does not."""
    return not retried(flags) and (kept or not is_tuning(proposer))
