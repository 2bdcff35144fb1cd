"""Text operators (GrIPS-style): phrases at the surface layer, sentences and reminders at core, paragraphs and
sections at architecture."""

from __future__ import annotations

import random

import pytest

from assay.proposers.mutate import OPERATORS
from assay.proposers.mutate.text_split import split_blocks

SKILL = """---
name: reviewer
description: Reviews code, carefully. Use when asked for a review.
---
# Reviewer

You are a careful reviewer. Read the diff, then the tests. Always cite the line you mean.

Keep the review short.

## Steps

- Read the diff.
- Run the tests, if any.
- Write the review.

```python
review = "a, b. c"
```

## Output

Never approve without tests. Use markdown.
"""
FRONTMATTER = SKILL.split("# Reviewer")[0]
FROZEN = ["# Reviewer\n", "## Steps\n", "## Output\n", '```python\nreview = "a, b. c"\n```\n']


def apply(name: str, text: str = SKILL, seed: int = 0, path: str = "SKILL.md"):
    return OPERATORS.get(name).apply(path, text, random.Random(seed))


def words(text: str) -> list[str]:
    return sorted(text.split())


@pytest.mark.parametrize("name", sorted(n for n in OPERATORS.names() if n.startswith("text.")))
def test_every_text_operator_keeps_frontmatter_headings_and_code(name: str) -> None:
    for seed in range(12):
        mutation = apply(name, seed=seed)
        assert mutation is not None and mutation.new_text != SKILL
        assert mutation.new_text.startswith(FRONTMATTER)
        assert all(block in mutation.new_text for block in FROZEN)
        assert mutation.operator == name and mutation.description.startswith("text: ")


def test_delete_phrase_removes_exactly_one_phrase() -> None:
    mutation = apply("text.delete_phrase", seed=3)
    gone = mutation.description.split("'")[1]
    assert SKILL.count(gone) == 1 and mutation.new_text.count(gone) == 0
    assert len(mutation.new_text) < len(SKILL)
    assert words(SKILL) == words(mutation.new_text + " " + gone)


def test_swap_phrases_keeps_every_word() -> None:
    for seed in range(8):
        mutation = apply("text.swap_phrases", seed=seed)
        assert words(mutation.new_text) == words(SKILL)


def test_duplicate_phrase_adds_one_copy() -> None:
    mutation = apply("text.duplicate_phrase", seed=1)
    copied = mutation.description.split("'")[1]
    assert mutation.new_text.count(copied) == SKILL.count(copied) + 1


def test_move_sentence_reorders_within_a_paragraph() -> None:
    text = "Intro.\n\nFirst. Second. Third.\n"
    results = {apply("text.move_sentence", text, seed, "p.txt").new_text for seed in range(30)}
    assert "Intro.\n\nSecond. First. Third.\n" in results
    assert "Intro.\n\nFirst. Third. Second.\n" in results
    assert all(words(r) == words(text) and r.startswith("Intro.\n\n") for r in results)


def test_move_sentence_reorders_list_items() -> None:
    text = "- one\n- two\n"
    assert apply("text.move_sentence", text, path="p.md").new_text == "- two\n- one\n"


def test_add_reminder_repeats_an_instruction_at_the_end() -> None:
    reminders = {apply("text.add_reminder", seed=s).new_text.rsplit("\n\n", 1)[1] for s in range(20)}
    assert reminders == {
        "Reminder: Always cite the line you mean.\n",
        "Reminder: Never approve without tests.\n",
    }


def test_swap_paragraphs_stays_inside_a_section() -> None:
    mutation = apply("text.swap_paragraphs")
    assert "# Reviewer\n\nKeep the review short.\n\nYou are a careful reviewer." in mutation.new_text
    assert apply("text.swap_paragraphs", "# A\n\nOne.\n\n# B\n\nTwo.\n", path="a.md") is None


def test_swap_sections_moves_whole_sections_of_the_same_level() -> None:
    mutation = apply("text.swap_sections")
    new = mutation.new_text
    assert new.index("## Output") < new.index("## Steps") < new.index("```python")
    assert "Use markdown.\n\n## Steps\n" in new and new.endswith("```\n")
    assert sorted(b.text for b in split_blocks(new)) == sorted(b.text for b in split_blocks(SKILL))


def test_text_without_a_final_newline_stays_without_one() -> None:
    mutation = apply("text.swap_phrases", "Be brief, be kind.", path="p.txt")
    assert mutation.new_text == "be kind. Be brief,"


def test_nothing_to_edit_gives_none() -> None:
    only_code = "```\ncode, more. code\n```\n"
    for name in OPERATORS.names():
        if name.startswith("text."):
            assert apply(name, only_code, path="x.md") is None
    assert apply("text.delete_phrase", "Single.\n", path="x.txt") is None
