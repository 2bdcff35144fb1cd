"""A completion-style starter for a local base model (``assay init --model local:...``).

A base model such as Gemma 3 270M (docs/local.md) continues text: given a chat instruction and a user message
it rambles on instead of answering. The few-shot form is what it follows: an instruction, a few examples of an
input and its label, then the query. So for a ``local:`` model the starter writes a prompt template of that
form beside the user's prompt, which it leaves as written:

- the instruction is the user's prompt text;
- a case's label is its ``expected`` text, or the value of its one check when that is ``equals``, ``contains``,
  ``icontains`` or ``starts_with`` with a short value (``icontains: positive``, as promptfoo users write a label);
- the examples are the user's own cases, from the dev split only (the split ``assay init`` will make), one per
  label in turn, so no label is missing and none comes last every time; holdout and regression cases never
  appear in a file a proposer edits;
- the other labelled dev cases go to a pool file, which the mutate proposer's few-shot operators draw new
  examples from (see :mod:`assay.proposers.mutate.fewshot`);
- the model stops at the first newline after a few tokens: a label is short, and on a CPU every token costs a
  forward pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from assay.cases.split import initial_split
from assay.config import SplitConfig
from assay.model import Case, Split

EXAMPLES_PER_LABEL = 3
MAX_EXAMPLES = 12
MAX_POOL = 40
MAX_EXAMPLE_CHARS = 300
LABEL_CHECKS = ("equals", "iequals")
# A case whose one check is one of these, with one short value, gives that value as its label: how promptfoo
# users write a label (`icontains: positive`), as the same case written with `expected: positive`.
ONE_CHECK_LABELS = ("equals", "iequals", "contains", "icontains", "starts_with")
MAX_LABEL_CHARS = 40
INPUT_FIELD = "Input"
LABEL_FIELD = "Label"


def is_local(model: str | None) -> bool:
    """Whether ``model`` names the in-process local provider (``local:...``)."""
    return bool(model) and str(model).strip().startswith("local:")


def label_of(case: Case) -> str | None:
    """The case's label: its ``expected`` text, else the value of its first ``equals`` check, else the value of
    its one check when that is ``equals``, ``contains``, ``icontains`` or ``starts_with`` (promptfoo's
    ``starts-with``) with one short value (at most :data:`MAX_LABEL_CHARS` characters on one line)."""
    if case.expected and case.expected.strip():
        return _one_line(case.expected)
    for check in case.checks:
        if check.type in LABEL_CHECKS and not check.negate and isinstance(check.value, str) and check.value:
            return _one_line(check.value)
    if len(case.checks) == 1:
        (check,) = case.checks
        value = check.value
        if check.type in ONE_CHECK_LABELS and not check.negate and isinstance(value, str) and value.strip():
            label = _one_line(value)
            if "\n" not in value.strip() and len(label) <= MAX_LABEL_CHARS:
                return label
    return None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _example(case: Case, label: str) -> str:
    text = _one_line(case.prompt_text())
    if len(text) > MAX_EXAMPLE_CHARS:
        text = text[: MAX_EXAMPLE_CHARS - 1].rstrip() + "…"
    return f"{INPUT_FIELD}: {text}\n{LABEL_FIELD}: {label}"


@dataclass(frozen=True)
class CompletionStarter:
    """The files of the completion-style starter: the prompt template and the pool, with what went in."""

    prompt: str
    pool: str
    examples: int
    pooled: int
    labels: tuple[str, ...]
    needs_label_check: bool  # the cases give labels as ``expected`` only: assay.yaml adds the equals check


def fewshot_files(
    instruction: str, cases: Sequence[Case], split: SplitConfig | None = None
) -> CompletionStarter:
    """The template and pool for ``instruction`` (the user's prompt text) and the user's ``cases``."""
    splits = initial_split([c.id for c in cases], split or SplitConfig())
    labelled = [(c, label) for c in cases if splits.get(c.id) == Split.DEV and (label := label_of(c))]
    labels = tuple(dict.fromkeys(label for _, label in labelled))
    chosen: list[tuple[Case, str]] = []
    for _round in range(EXAMPLES_PER_LABEL):
        for label in labels:
            unused = next((p for p in labelled if p[1] == label and p not in chosen), None)
            if unused is not None and len(chosen) < MAX_EXAMPLES:
                chosen.append(unused)
    rest = [p for p in labelled if p not in chosen][:MAX_POOL]
    parts = [instruction.strip()] if instruction.strip() else []
    parts += [_example(case, label) for case, label in chosen]
    parts.append(f"{INPUT_FIELD}: {{{{input}}}}\n{LABEL_FIELD}:")
    pool_head = (
        "# More examples from your dev cases, in the prompt's format (one per paragraph). The mutate\n"
        "# proposer's few-shot operators swap them into the prompt; this file is read, never edited.\n"
    )
    return CompletionStarter(
        prompt="\n\n".join(parts) + "\n",
        pool=pool_head + "".join(f"\n{_example(case, label)}\n" for case, label in rest),
        examples=len(chosen),
        pooled=len(rest),
        labels=labels,
        needs_label_check=bool(labelled) and not any(c.checks for c in cases),
    )


def template_names(artifact: str) -> tuple[str, str]:
    """The template and pool file names for the user's prompt file ``artifact`` (``prompt.md`` →
    ``prompt.local.txt``, ``prompt.pool.txt``)."""
    path = PurePosixPath(artifact)
    stem = path.stem
    return str(path.with_name(f"{stem}.local.txt")), str(path.with_name(f"{stem}.pool.txt"))
