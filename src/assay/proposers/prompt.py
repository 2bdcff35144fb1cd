"""The proposer prompt: the task, the layer's guidance, the view, and the answer format."""

from __future__ import annotations

import json
import re

from assay.errors import ConfigError
from assay.proposers.base import ProposerView

_FENCE_RUN = re.compile(r"^\s*`{3,}", re.MULTILINE)
MAX_INPUT_CHARS = 600
FORMATS = ("search_replace", "whole_file", "direct")
LAYERS = {
    1: "Layer 1 (surface): change wording, formatting, examples, names or constants. Keep the structure.",
    2: "Layer 2 (core): change the main logic, instructions or algorithm of the artifact.",
    3: "Layer 3 (architecture): restructure the artifact: reorganise its parts or change the approach.",
}
SEARCH_REPLACE_FORMAT = """\
Answer in exactly this format, with nothing else:

DESCRIPTION: <one line saying what you changed and why>
CITES: <path of a trace file your change is based on>[, <another trace path>]
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
CITES: <path of a trace file your change is based on>[, <another trace path>]
FILE: <path of the file to rewrite>
```
<the complete new content of the file>
```

Repeat `FILE:` and a fenced block for each file you rewrite (use a longer fence if the content itself
contains ```)."""
DIRECT_FORMAT = """\
Edit the artifact files in place, in the current directory; change nothing else. When done, print as the
first line of your output one line saying what you changed and why, then
`CITES: <path of a trace file your change is based on>[, <another trace path>]`."""
SYSTEM = (
    "You improve an artifact so that it passes more of its test cases. You cannot see the checks; you see "
    "the cases, how the failing ones failed and their trace files. Make one focused change per answer, "
    "and follow the answer format exactly."
)


def render_prompt(view: ProposerView, *, format: str = "search_replace") -> str:
    """The prompt text for an LLM built from ``view`` alone. ``format`` is ``search_replace`` or
    ``whole_file`` (the answer's shape), or ``direct`` for an agent that edits the files itself; raises
    ConfigError for another value."""
    if format not in FORMATS:
        raise ConfigError(f"unknown answer format {format!r}; known: {', '.join(FORMATS)}", field="format")
    parts = [
        "# Task\nPropose ONE change to the artifact below that makes more of the failing cases pass "
        "without breaking the passing ones. Edit only the files shown.",
        "# Layer\n" + LAYERS.get(view.layer, f"Layer {view.layer}."),
        "# Artifact files\n"
        + "\n\n".join(_file_block(path, text) for path, text in sorted(view.artifact.items())),
        "# Dev cases\n" + ("\n".join(_case_line(case) for case in view.dev_cases) or "(none)"),
        "# Failing cases\n"
        + ("\n".join(f"- {f['id']}: {f['how']}" for f in view.failures) or "(none: every dev case passes)"),
    ]
    if view.trace_paths:
        parts.append(
            "# Trace files of failing cases (input, output tails, verdict; the checks are hidden)\n"
            + "\n".join(f"- {path}" for path in view.trace_paths)
        )
    if view.last_gate:
        parts.append("# Why the last change was discarded\n" + "\n".join(f"- {r}" for r in view.last_gate))
    if view.retry is not None:
        retry = view.retry
        parts.append(
            "# Try again\nThe gate asked for another try at the last change: it scored "
            f"{retry.score:.4f} against the best's {retry.best_score:.4f} and needed {retry.needed:+.4f} more to "
            "be kept. Improve on it (or take another route to the same gain). How its failing cases failed:\n"
            + ("\n".join(f"- {f['id']}: {f['how']}" for f in retry.failures) or "(none)")
        )
    if view.history:
        parts.append(
            "# Earlier changes\n"
            + "\n".join(f"- gen {h['generation']}: {h['decision']}: {h['description']}" for h in view.history)
        )
    answer = {"search_replace": SEARCH_REPLACE_FORMAT, "whole_file": WHOLE_FILE_FORMAT}.get(
        format, DIRECT_FORMAT
    )
    if view.failures:
        answer += "\nCITES must name at least one trace file listed above."
    else:
        answer += "\nNo case fails: CITES may be `none`."
    parts.append("# Answer format\n" + answer)
    return "\n\n".join(parts) + "\n"


def _fence(text: str) -> str:
    """A code fence longer than any fence inside ``text``."""
    longest = max((len(m.group(0).strip()) for m in _FENCE_RUN.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


def _file_block(path: str, text: str) -> str:
    fence = _fence(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{path}\n{fence}\n{body}{fence}"


def _case_line(case: dict[str, object]) -> str:
    kind = "input" if "input" in case else "vars"
    value = json.dumps(case.get(kind, {}), ensure_ascii=False)
    if len(value) > MAX_INPUT_CHARS:
        value = value[:MAX_INPUT_CHARS] + "…"
    return f"- {case['id']}: {kind} {value}"
