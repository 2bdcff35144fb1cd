"""Flags are a StrEnum: a member is its recorded string, so records written before flags were typed read the
same, and the loop's rules about flags are named predicates."""

from __future__ import annotations

import json

from assay.history.records import CandidateRecord
from assay.loop.flags import TUNING_PROPOSER, Flag, counts_toward_layer, gate_flag, is_tuning, retried
from assay.proposers.tune import TuneProposer


def test_a_flag_is_its_recorded_string_both_ways() -> None:
    record = CandidateRecord(
        run_id="r",
        generation=1,
        candidate_id="cand-0001",
        layer=1,
        proposer="mutate",
        description="",
        decision="discard",
        flags=[Flag.SCOPE_VIOLATION, Flag.GATE_RETRY],
    )
    stored = json.loads(record.model_dump_json())
    assert stored["flags"] == ["scope-violation", "gate-retry"]
    again = CandidateRecord.model_validate(stored)
    assert again.flags == [Flag.SCOPE_VIOLATION, Flag.GATE_RETRY] and retried(again.flags)
    assert Flag("overfitting") is Flag.OVERFITTING


def test_a_gate_action_flag_is_a_member_for_built_in_actions_and_a_string_for_others() -> None:
    assert gate_flag("retry") is Flag.GATE_RETRY and gate_flag("rollback") is Flag.GATE_ROLLBACK
    assert gate_flag("escalate") == "gate-escalate" and not isinstance(gate_flag("escalate"), Flag)


def test_retries_and_discarded_tuning_trials_do_not_count_toward_the_layer() -> None:
    assert TuneProposer.name == TUNING_PROPOSER and is_tuning("tune") and not is_tuning("mutate")
    assert counts_toward_layer([], "mutate", kept=False)
    assert not counts_toward_layer(["gate-retry"], "mutate", kept=False)
    assert not counts_toward_layer([], "tune", kept=False)
    assert counts_toward_layer([], "tune", kept=True)
    assert not counts_toward_layer([Flag.GATE_RETRY], "tune", kept=True)
