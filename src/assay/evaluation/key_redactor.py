"""The redactor of a project: everything its answer key holds, hidden from proposers, judges and shared reports.

Its secrets are the check values, expected outputs and holdout cases of the case files
(:func:`~assay.proposers.secrets.secrets_for`), and the values of every file a check runs or reads
(:mod:`assay.evaluation.key_values`: a program's distinctive literals and numbers, a data file's values). Its
words, hidden only where they stand whole, are the structural names: a structured check value's keys and a
schema's property names (:func:`~assay.proposers.secrets.words_for`), a single common English word excepted.

What the proposer is shown anyway is no secret: a value of a check's file, or a word, that stands in the
artifact's own files or in a dev case's input or vars is left out (the values written in the case files stay,
as they always were).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from assay.config import AssayConfig
from assay.evaluation.answer_key import answer_key
from assay.evaluation.key_values import common_word, files_values
from assay.history.scope import artifact_files
from assay.model import Case
from assay.proposers.redaction import LONG, Redactor
from assay.proposers.secrets import ordered, secrets_for, words_for
from assay.proposers.skeleton import skeleton, skeleton_text


class _Seen:
    """Texts the proposer is shown, to look values up in by their skeletons: a value of :data:`LONG` or more
    skeleton characters anywhere, a shorter one as whole words (as the redactor would match them)."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._sk = skeleton("\n".join(texts))

    def holds(self, value: str) -> bool:
        needle = skeleton_text(value)
        if not needle:
            return False
        text = self._sk.text
        if len(needle) >= LONG:
            return needle in text
        at = text.find(needle)
        while at != -1:
            if self._sk.whole(at, at + len(needle)):
                return True
            at = text.find(needle, at + 1)
        return False


def _shown_texts(config: AssayConfig, dev: Iterable[Case]) -> list[str]:
    """The artifact's files and the dev cases' inputs and vars."""
    root = config.artifact_dir
    texts = []
    for rel in artifact_files(root, config.artifact.paths, forbid=config.artifact.forbid):
        try:
            texts.append((root / rel).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    for case in dev:
        texts.append(case.input or "")
        texts += [v if isinstance(v, str) else json.dumps(v, default=str) for v in case.vars.values()]
    return texts


def key_redactor(config: AssayConfig, cases: Sequence[Case], hidden: Sequence[Case]) -> Redactor:
    """The redactor for a project whose proposer may see ``cases`` (dev) but not ``hidden`` (holdout and
    regression): see the module docstring."""
    everything = [*cases, *hidden]
    files = files_values(key.path for key in answer_key(config, everything) if key.kind == "check")
    hidden_ids = {case.id for case in hidden}
    seen = _Seen(_shown_texts(config, [c for c in cases if c.id not in hidden_ids]))
    values = secrets_for(cases, hidden) + [v for v in ordered(files.values) if not seen.holds(v)]
    words = [w for w in ordered([*words_for(cases, hidden), *files.words]) if not common_word(w)]
    return Redactor(values, [w for w in words if not seen.holds(w)])
