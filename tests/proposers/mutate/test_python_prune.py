"""Pruning: the branches a best program added over the baseline, and the program without one of them."""

from __future__ import annotations

from assay.proposers.mutate.python_prune import PRUNE_NOTE, added_branches, without_branch

BEST = (
    "def priority(item, remaining):\n"
    "    if 0 < remaining - item - 5 < 45:  # added\n"
    "        return -(remaining - item) * 2\n"
    "    if item > 90:  # the baseline's own\n"
    "        return 0\n"
    "    if item < 3:\n"
    "        return 1\n"
    "    else:\n"
    "        return 2\n"
)
DIFF = (
    "--- a/priority.py\n+++ b/priority.py\n@@ -1,3 +1,5 @@\n def priority(item, remaining):\n"
    "+    if 0 < remaining - item - 5 < 45:  # added\n+        return -(remaining - item) * 2\n"
    "+    if item < 3:\n"
)


def test_only_branches_the_diff_adds_and_that_can_go_are_offered() -> None:
    # line 4 is the baseline's; line 6 has an else (removing it would change what the block returns)
    assert added_branches(BEST, DIFF) == [2]
    assert added_branches(BEST, "") == []
    assert added_branches("def (:\n", DIFF) == []


def test_the_program_without_a_branch_keeps_everything_else_as_written() -> None:
    mutation = without_branch("priority.py", BEST, 2)
    assert mutation is not None
    assert mutation.new_text == BEST.replace(
        "    if 0 < remaining - item - 5 < 45:  # added\n        return -(remaining - item) * 2\n", ""
    )
    assert mutation.description == (
        "python: removed the branch `if 0 < remaining - item - 5 < 45` in priority() line 2" + PRUNE_NOTE
    )
    assert without_branch("priority.py", BEST, 3) is None  # no if starts there
    assert without_branch("priority.py", BEST, 6) is None  # has an else


def test_the_last_statement_of_a_block_is_never_removed() -> None:
    text = "def f(a):\n    if a > 1:\n        return 2\n"
    assert added_branches(text, "+    if a > 1:\n") == []
    assert without_branch("f.py", text, 2) is None


def test_a_baseline_branch_whose_numbers_were_tuned_is_not_the_runs_to_remove() -> None:
    text = "def f(a, b):\n    if a - b > 12.5:\n        return 3\n    if b < 4:\n        return 1\n    return a\n"
    diff = "-    if a - b > 10:\n+    if a - b > 12.5:\n+    if b < 4:\n"
    assert added_branches(text, diff) == [4]
