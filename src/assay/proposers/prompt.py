"""The proposer prompt: the task, the layer's guidance, the view, and the answer format.

The llm proposer's prompt shows the chosen cases inline (:mod:`assay.proposers.reflection`) within a token
budget (:mod:`assay.proposers.budget`); the agent's (``direct``) lists trace files it can open."""

from __future__ import annotations

import json
import re

from assay.errors import ConfigError
from assay.layer_names import layer_name
from assay.proposers.base import CaseFailure, DevCase, HistoryEntry, ProposerView, Reflection
from assay.proposers.budget import Fitted, Piece, TokenCounter, estimate_tokens, fit

_FENCE_RUN = re.compile(r"^\s*`{3,}", re.MULTILINE)
MAX_INPUT_CHARS = 600
HISTORY_SHOWN = 20  # the latest decided generations a prompt lists (the view holds them all)
FORMATS = ("search_replace", "whole_file", "direct")
_GUIDANCE = {
    1: "change wording, formatting, examples, names or constants. Keep the structure.",
    2: "change the main logic, instructions or algorithm of the artifact.",
    3: "restructure the artifact: reorganise its parts or change the approach.",
}
# "Layer 2 (core): ...": the prompt's words are part of the llm proposer's cache keys, so they stay as they were.
LAYERS = {n: f"Layer {n} ({layer_name(n)}): {text}" for n, text in _GUIDANCE.items()}
_CITES_LABELS = "CITES: <the numbers of the cases your change is based on, e.g. [2], [5]>"
_CITES_PATHS = "CITES: <path of a trace file your change is based on>[, <another trace path>]"
SEARCH_REPLACE_FORMAT = """\
Answer in exactly this format, with nothing else:

DESCRIPTION: <one line saying what you changed and why>
{cites}
<path of the file to edit>
<<<<<<< SEARCH
<lines copied exactly from the current file>
=======
<the lines that replace them>
>>>>>>> REPLACE

Repeat the path line and a SEARCH/REPLACE block for each change. SEARCH must copy existing lines exactly
(an empty SEARCH appends to the file). To rewrite a whole file instead, write `FILE: <path>` followed by the
complete new content in a fenced block (use a longer fence if the content itself contains ```)."""
WHOLE_FILE_FORMAT = """\
Answer in exactly this format, with nothing else:

DESCRIPTION: <one line saying what you changed and why>
{cites}
FILE: <path of the file to rewrite>
```
<the complete new content of the file>
```

Repeat `FILE:` and a fenced block for each file you rewrite (use a longer fence if the content itself
contains ```)."""
DIRECT_FORMAT = """\
Edit the artifact files in place, in the current directory; change nothing else. When done, print as the
first line of your output one line saying what you changed and why, then
`{cites}`."""
SYSTEM = (
    "You improve an artifact so that it passes more of its test cases. You cannot see the checks; you see "
    "the cases, what the artifact produced on some of them and how the failing ones failed. Make one focused "
    "change per answer, and follow the answer format exactly."
)
# The longest line saying what was left out: room is kept for it, as it is written after the choice.
_LONGEST_NOTE = (
    "# Not shown\nLeft out to stay within 9999999 tokens: 99999 more failing cases, 99 passing cases, the "
    "last gate's reasons, 99999 earlier changes, the best version's diff against the baseline, 99999 other "
    "dev cases.\n"
)
_TASK = (
    "# Task\nPropose ONE change to the artifact below that makes more of the failing cases pass "
    "without breaking the passing ones. Edit only the files shown."
)


def render_prompt(
    view: ProposerView, *, format: str = "search_replace", count: TokenCounter = estimate_tokens
) -> str:
    """The prompt text for an LLM built from ``view`` alone. ``format`` is ``search_replace`` or
    ``whole_file`` (the answer's shape), or ``direct`` for an agent that edits the files itself; raises
    ConfigError for another value.

    For the two answer formats of the llm proposer the prompt shows the chosen cases inline (numbered, cited by
    number) and stays within ``view.context_tokens`` as counted by ``count`` (the system prompt included):
    the artifact files first, then cases by priority, then the history; what was left out is said. The
    ``direct`` prompt of the agent lists trace file paths instead (the agent can open them) and is not cut."""
    if format not in FORMATS:
        raise ConfigError(f"unknown answer format {format!r}; known: {', '.join(FORMATS)}", field="format")
    if format == "direct":
        return _render_direct(view)
    pieces = prompt_pieces(view, format=format)
    counts = [count(text) for text in count_texts(pieces)]
    return assemble(view, pieces, fit_pieces(view, pieces, counts))


def fit_pieces(view: ProposerView, pieces: list[Piece], counts: list[int]) -> Fitted:
    """The pieces that fit in the view's budget. ``counts``: the tokens of each piece, then of
    :data:`SYSTEM`, then of the longest note on what was left out (see :func:`count_texts`)."""
    *own, system, note = counts
    return fit(pieces, view.context_tokens - system - note, own)


def count_texts(pieces: list[Piece]) -> list[str]:
    """The texts whose tokens :func:`fit_pieces` needs, in its order."""
    return [*(p.text for p in pieces), SYSTEM, _LONGEST_NOTE]


def prompt_pieces(view: ProposerView, *, format: str) -> list[Piece]:
    """The prompt of an answer format, as pieces in display order (see :func:`render_prompt`)."""
    pieces = [
        Piece("task", _TASK, required=True),
        Piece("layer", "# Layer\n" + LAYERS.get(view.layer, f"Layer {view.layer}."), required=True),
        Piece(
            "artifact",
            "# Artifact files\n"
            + "\n\n".join(_file_block(path, text) for path, text in sorted(view.artifact.items())),
            required=True,
        ),
    ]
    if view.reflections:
        pieces.append(Piece("what", _what_happened(view), required=True))
        priority = {r.label: rank for rank, r in enumerate(view.reflections)}
        contrast = False
        for reflection in sorted(view.reflections, key=lambda r: r.label):
            if reflection.passed and not contrast:
                contrast = True
                pieces.append(Piece("contrast-heading", "## Passing cases, for contrast", required=True))
            section = "contrast" if reflection.passed else "case"
            pieces.append(Piece(section, _reflection_block(reflection), 1000 + priority[reflection.label]))
    elif view.failures:
        pieces.append(Piece("what", "# Failing cases", required=True))
        pieces += [Piece("case-line", _failure_line(f), 1000 + n) for n, f in enumerate(view.failures)]
        if view.trace_paths:
            pieces.append(Piece("traces", _traces_block(view), 1500))
    else:
        pieces.append(Piece("what", "# Failing cases\n(none: every dev case passes)", required=True))
    if view.last_gate:
        text = "# Why the last change was discarded\n" + "\n".join(f"- {r}" for r in view.last_gate)
        pieces.append(Piece("gate", text, 2000))
    if view.retry is not None:
        pieces.append(Piece("retry", _retry_block(view), 2000))
    if view.best_diff:
        pieces.append(
            Piece(
                "best-diff",
                "# What the best version so far changed from the baseline (keep these gains)\n"
                + _fenced(view.best_diff, "diff"),
                3500,
            )
        )
    history = view.history[-HISTORY_SHOWN:]
    if history:
        pieces.append(Piece("history-heading", "# Earlier changes (newest last)", required=True))
        last = len(history)
        pieces += [Piece("history", _history_line(item), 3000 + last - n) for n, item in enumerate(history)]
    shown = {r.id for r in view.reflections}
    others = [case for case in view.dev_cases if case.id not in shown]
    if others:
        pieces.append(Piece("dev-heading", "# Other dev cases (inputs only)", required=True))
        pieces += [Piece("dev", _case_line(case), 4000 + n) for n, case in enumerate(others)]
    pieces.append(Piece("format", "# Answer format\n" + _answer_format(view, format), required=True))
    return pieces


def assemble(view: ProposerView, pieces: list[Piece], fitted: Fitted) -> str:
    """The prompt text of the kept pieces, with one line saying what was left out."""
    blocks: list[str] = []
    kept = {piece.section for piece in fitted.kept}
    for piece in pieces:
        if not fitted.has(piece) or _HEADS.get(piece.section, piece.section) not in kept:
            continue
        if piece.section == "format":
            note = _left_out_note(view, fitted)
            if note:
                blocks.append(note)
        if blocks and piece.section in _JOINED_TO_PREVIOUS:
            blocks[-1] += "\n" + piece.text
        else:
            blocks.append(piece.text)
    return "\n\n".join(blocks) + "\n"


# One-line pieces join the piece before them on the next line; the others stand as paragraphs.
_JOINED_TO_PREVIOUS = frozenset(["history", "dev", "case-line"])
# A heading is kept whatever it costs (it is short) and shown only above pieces of its section that fit.
_HEADS = {"history-heading": "history", "dev-heading": "dev", "contrast-heading": "contrast"}


def _left_out_note(view: ProposerView, fitted: Fitted) -> str:
    """``# Not shown`` and one line: ``Left out to stay within 8000 tokens: 12 more failing cases, 3 earlier
    changes.`` ('' when nothing was left out)."""
    left = fitted.left_out
    parts = []
    failing = view.more_failing + left.get("case", 0) + left.get("case-line", 0)
    if failing:
        parts.append(f"{failing} more failing case{'s' if failing != 1 else ''}")
    if left.get("contrast"):
        parts.append(f"{left['contrast']} passing case{'s' if left['contrast'] != 1 else ''}")
    if left.get("gate") or left.get("retry"):
        parts.append("the last gate's reasons")
    if left.get("history"):
        parts.append(f"{left['history']} earlier change{'s' if left['history'] != 1 else ''}")
    if left.get("best-diff"):
        parts.append("the best version's diff against the baseline")
    if left.get("dev"):
        parts.append(f"{left['dev']} other dev case{'s' if left['dev'] != 1 else ''}")
    if not parts:
        return ""
    return f"# Not shown\nLeft out to stay within {view.context_tokens} tokens: {', '.join(parts)}."


def _what_happened(view: ProposerView) -> str:
    total, total_failing = len(view.dev_cases), len(view.failures)
    fails = f"{total_failing} of {total} dev cases fail" if total else f"{total_failing} dev cases fail"
    return (
        f"# What happened\n{fails}. Below are some of them, numbered, with their input, the output the "
        "artifact produced (long outputs cut in the middle), and each check's verdict (the checks themselves "
        "are hidden; [redacted] marks removed text). Cite the numbers your change is based on."
    )


def _reflection_block(r: Reflection) -> str:
    state = "passes" if r.passed else f"fails ({r.kind})"
    if r.regressed:
        state += ", passed in the baseline"
    lines = [f"[{r.label}] case {r.id} — {state}"]
    (kind, value), *_ = r.input.items()
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    label = {"input": "input", "vars": "vars", "vars_json": "vars"}[kind]
    lines.append(f"{label}: {text}" if "\n" not in text else f"{label}:\n{_fenced(text)}")
    if r.output_tail:
        lines.append(
            f"output ({r.output_chars} characters; the start and the end):\n"
            + _fenced(r.output_head)
            + "\n[…]\n"
            + _fenced(r.output_tail)
        )
    elif r.output_head:
        lines.append("output:\n" + _fenced(r.output_head))
    else:
        lines.append("output: (empty)")
    if r.stderr_tail:
        lines.append("stderr (the end):\n" + _fenced(r.stderr_tail))
    facts = []
    if r.error:
        facts.append(f"error: {r.error}")
    if r.exit_code not in (None, 0) and f"exit code {r.exit_code}" not in (r.error or ""):
        facts.append(f"exit code {r.exit_code}")
    facts.append(f"took {r.seconds:g} s")
    lines.append("; ".join(facts))
    if r.verdicts:
        lines.append(
            "checks: " + " | ".join(f"{n} {kind}: {how}" for n, (kind, how) in enumerate(r.verdicts, 1))
        )
    return "\n".join(lines)


def _traces_block(view: ProposerView) -> str:
    heading = "# Trace files of failing cases (input, output tails, verdict; the checks are hidden)\n"
    return heading + "\n".join(f"- {path}" for path in view.trace_paths)


def _retry_block(view: ProposerView) -> str:
    retry = view.retry
    assert retry is not None
    return (
        "# Try again\nThe gate asked for another try at the last change: it scored "
        f"{retry.score:.4f} against the best's {retry.best_score:.4f} and needed {retry.needed:+.4f} more to "
        "be kept. Improve on it (or take another route to the same gain). How its failing cases failed:\n"
        + ("\n".join(_failure_line(f) for f in retry.failures) or "(none)")
    )


def _history_line(item: HistoryEntry) -> str:
    shift = f" ({item.delta:+.4f})" if item.delta is not None else ""
    origin = " from this parent" if item.same_parent else ""
    return f"- gen {item.generation}{origin}: {item.decision}{shift}: {item.description}"


def _failure_line(failure: CaseFailure) -> str:
    return f"- {failure.id}: {failure.how}"


def _answer_format(view: ProposerView, format: str) -> str:
    by_label = bool(view.reflections) or not view.failures
    cites = (
        _CITES_LABELS if by_label else "CITES: <id or trace file of a failing case your change is based on>"
    )
    answer = (SEARCH_REPLACE_FORMAT if format == "search_replace" else WHOLE_FILE_FORMAT).format(cites=cites)
    if view.failures and view.reflections:
        answer += "\nCITES must name at least one failing case shown above, by its number."
    elif view.failures:
        answer += "\nCITES must name at least one failing case listed above."
    else:
        answer += "\nNo case fails: CITES may be `none`."
    return answer


def _render_direct(view: ProposerView) -> str:
    """The agent's prompt: failing cases with their trace file paths, to open and cite."""
    parts = [
        _TASK,
        "# Layer\n" + LAYERS.get(view.layer, f"Layer {view.layer}."),
        "# Artifact files\n"
        + "\n\n".join(_file_block(path, text) for path, text in sorted(view.artifact.items())),
        "# Dev cases\n" + ("\n".join(_case_line(case) for case in view.dev_cases) or "(none)"),
        "# Failing cases\n"
        + ("\n".join(_failure_line(f) for f in view.failures) or "(none: every dev case passes)"),
    ]
    if view.trace_paths:
        parts.append(_traces_block(view))
    if view.last_gate:
        parts.append("# Why the last change was discarded\n" + "\n".join(f"- {r}" for r in view.last_gate))
    if view.retry is not None:
        parts.append(_retry_block(view))
    if view.history:
        recent = view.history[-HISTORY_SHOWN:]
        parts.append("# Earlier changes\n" + "\n".join(_history_line(h) for h in recent))
    answer = DIRECT_FORMAT.format(cites=_CITES_PATHS)
    if view.failures:
        answer += "\nCITES must name at least one trace file listed above."
    else:
        answer += "\nNo case fails: CITES may be `none`."
    parts.append("# Answer format\n" + answer)
    return "\n\n".join(parts) + "\n"


def _fenced(text: str, info: str = "") -> str:
    fence = _fence(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"


def _fence(text: str) -> str:
    """A code fence longer than any fence inside ``text``."""
    longest = max((len(m.group(0).strip()) for m in _FENCE_RUN.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


def _file_block(path: str, text: str) -> str:
    fence = _fence(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{path}\n{fence}\n{body}{fence}"


def _case_line(case: DevCase) -> str:
    kind, shown = ("input", case.input) if case.input is not None else ("vars", case.vars)
    value = json.dumps(shown, ensure_ascii=False)
    if len(value) > MAX_INPUT_CHARS:
        value = value[:MAX_INPUT_CHARS] + "…"
    return f"- {case.id}: {kind} {value}"
