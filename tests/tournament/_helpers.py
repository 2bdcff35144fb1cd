"""Builders shared by the tournament tests: real EvalResults and a chat model talking to the scripted server."""

from __future__ import annotations

from pathlib import Path

from assay.config import LLMSettings
from assay.evaluation.evaluator import EvalResult
from assay.llm import ChatModel, make_llm
from assay.model import CaseResult, Output, Split
from tests.fakes.llm_server import ScriptedLLMServer


def results(scores: dict[str, float], outputs: dict[str, str] | None = None) -> EvalResult:
    """An EvalResult with one case per id, with that score (passed at ≥ 0.5) and an optional output text."""
    outputs = outputs or {}
    return EvalResult(
        cases=[
            CaseResult(
                id=case_id,
                split=Split.DEV,
                passed=score >= 0.5,
                score=score,
                output=Output(text=outputs.get(case_id, f"output of {case_id}")),
            )
            for case_id, score in scores.items()
        ]
    )


def chat_model(server: ScriptedLLMServer, cache_dir: Path | None = None) -> ChatModel:
    """A real OpenAI-SDK chat model pointed at the scripted server (cached when ``cache_dir`` is given)."""
    settings = LLMSettings(
        model="openai:fake",
        base_url=server.openai_url,
        max_retries=0,
        price_in_per_mtok=1.0,
        price_out_per_mtok=2.0,
    )
    return make_llm(settings, cache_dir=cache_dir, use_cache=cache_dir is not None)
