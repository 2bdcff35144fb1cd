"""The distinctive fragments of a check value (a rare word, a run of two words rare together, a number of three
or more digits), and the Redactor removing each wherever it stands; keys drawn at random for every run."""

from __future__ import annotations

import pytest

from assay.proposers.fragments import english_rank, numbers, rare_runs, rare_words
from assay.proposers.redaction import REDACTED, Redactor
from tests.proposers import _fragments

DRAWS = 25


def redactor_for(key: _fragments.Key) -> Redactor:
    return Redactor([key.value, key.rubric])


def test_common_english_and_its_inflections() -> None:
    assert english_rank("the") == 1
    assert english_rank("refund") is not None and english_rank("refunded") == english_rank("refund")
    assert english_rank("stopped") == english_rank("stop") and english_rank("cities") == english_rank("city")
    assert english_rank("pangolin") is None and english_rank("kestrels") is None


@pytest.mark.parametrize("draw", range(DRAWS))
def test_the_fragments_of_a_drawn_key(draw: int) -> None:
    key = _fragments.draw()
    assert rare_words(key.rubric) == {key.rare} and rare_words(key.value) == {key.rare}
    assert "".join(key.pair) in rare_runs(key.rubric)
    assert numbers(key.value) == {key.number}
    assert not rare_runs(f"{key.common[0]} {key.common[1]}")


@pytest.mark.parametrize("draw", range(DRAWS))
def test_each_fragment_alone_is_redacted_in_every_spelling(draw: int) -> None:
    key = _fragments.draw()
    redactor = redactor_for(key)
    for text in _fragments.echoes(key):
        out = redactor.redact(text)
        assert _fragments.leaks(text, key), text  # the detector sees the planted fragment
        assert _fragments.leaks(out, key) == [], (key, text, out)
        assert REDACTED in out


@pytest.mark.parametrize("draw", range(DRAWS))
def test_common_words_and_other_numbers_are_kept(draw: int) -> None:
    key = _fragments.draw()
    redactor = redactor_for(key)
    first, second = key.pair
    kept = [
        " and ".join(key.common),
        f"a {first} here, a {second} there",
        f"order 1{key.number} and {key.number}0 and {key.number[:-1]}",
    ]
    for text in kept:
        assert redactor.redact(text) == text, (key, text)


def test_a_number_is_found_in_decoded_runs_but_not_assays_own_numbers() -> None:
    import base64

    redactor = Redactor(["ZEBRA 4471"])
    encoded = base64.b64encode(b"ref 4471").decode()
    assert redactor.redact(f"see {encoded} now") == f"see {REDACTED} now"
    assert redactor.redact('{"seconds": 4471}', short=False) == '{"seconds": 4471}'


def test_the_reported_attacks() -> None:
    rubric = "Reply politely like a pangolin guarding its young."
    redactor = Redactor([rubric, "ZEBRA 4471"])
    # The rare word, and with it the run it starts.
    assert redactor.redact("You were not PANGOLIN guarding enough") == f"You were not {REDACTED} enough"
    assert redactor.redact("we were guarding its young, politely") == "we were guarding its young, politely"
    reason = "missing ZEBRA 4471 and ZEBRA and 4471"
    assert "4471" not in redactor.redact(reason)
