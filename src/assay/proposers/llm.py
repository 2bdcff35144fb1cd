"""The ``llm`` proposer: render the view as a prompt (failing cases' real outputs inline, redacted, within the
view's token budget), ask the model, apply its SEARCH/REPLACE or whole-file answer. A failed call, an answer
without edits or without a cited case, or an edit that does not apply is a failed proposal (``ok=False``) with
a one-line reason, never an exception. The cases cited by number are recorded by their ids."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypedDict

from assay.config import AssayConfig, LLMSettings
from assay.errors import ConfigError
from assay.llm import make_llm
from assay.llm.base import LLMError
from assay.proposers.base import PROPOSERS, Proposal, Proposer, ProposerView
from assay.proposers.edits import EditError, apply_edits, parse_answer
from assay.proposers.prompt import (
    FORMATS,
    SYSTEM,
    assemble,
    count_texts,
    fit_pieces,
    prompt_pieces,
    render_prompt,
)

if TYPE_CHECKING:
    from assay.llm.base import LLM

# Whole files and several blocks need more room than the 1024-token default of a runner or a judge.
DEFAULT_MAX_TOKENS = 4096
MAX_DESCRIPTION = 200


class _Usage(TypedDict):
    tokens_in: int
    tokens_out: int
    cost_usd: float


def one_line(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def match_citations(cited: Sequence[str], trace_paths: Sequence[str]) -> list[str]:
    """The trace paths that ``cited`` names, by full path, file name, or case id (the file name without its
    ``NN-`` number and ``.json``)."""
    found: list[str] = []
    for path in trace_paths:
        name = PurePosixPath(path).name
        stem = PurePosixPath(name).stem
        bare = stem.split("-", 1)[1] if stem[:2].isdigit() and "-" in stem else stem
        for item in cited:
            item_name = PurePosixPath(item.replace("\\", "/")).name
            named = item in (path, name, stem, bare, f"{bare}.json") or item_name in (name, f"{bare}.json")
            if named and path not in found:
                found.append(path)
    return found


def match_labels(cited: Sequence[str], view: ProposerView) -> list[str]:
    """The (redacted) ids of the cases that ``cited`` names: by their number in the prompt (``[3]``, ``3``,
    ``#3``) or by id; for a view without inline cases, the failing cases named by id or trace path."""
    ids = {str(r.label): r.id for r in view.reflections}
    known = {r.id for r in view.reflections} | {f.id for f in view.failures}
    found: list[str] = []
    for item in cited:
        bare = item.strip("[]#().:")
        case = ids.get(bare) or (bare if bare in known else None)
        if case is not None and case not in found:
            found.append(case)
    if not view.reflections:
        found += [path for path in match_citations(cited, view.trace_paths) if path not in found]
    return found


async def render_for(model: object, view: ProposerView, format: str) -> str:
    """The prompt for ``view``, its tokens counted by ``model.count_tokens`` (a batch of texts to counts)
    when the model has its tokenizer at hand, else estimated."""
    count_tokens = getattr(model, "count_tokens", None)
    if not callable(count_tokens):
        return render_prompt(view, format=format)
    pieces = prompt_pieces(view, format=format)
    counts = list(await count_tokens(count_texts(pieces)))
    return assemble(view, pieces, fit_pieces(view, pieces, counts))


@PROPOSERS.register("llm")
class LLMProposer(Proposer):
    """Proposes with a chat model (``settings.model``, e.g. ``openai:gpt-4o-mini`` or ``ollama:qwen2.5``).

    Each call asks for a new ``sample`` so repeated proposals from the same view differ even when cached.
    ``format`` is ``search_replace`` (default) or ``whole_file``; ``model`` replaces the model built from
    ``settings`` (any object with the LLM protocol). Raises ConfigError for a bad model or format.
    """

    name = "llm"

    def __init__(
        self,
        settings: LLMSettings,
        *,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        format: str = "search_replace",
        model: LLM | None = None,
    ) -> None:
        if format not in FORMATS or format == "direct":
            raise ConfigError(f"unknown answer format {format!r}; known: search_replace, whole_file")
        self.format = format
        self.model = model or make_model(settings, cache_dir=cache_dir, use_cache=use_cache)
        explicit = "max_tokens" in settings.model_fields_set
        self.max_tokens = settings.max_tokens if explicit else DEFAULT_MAX_TOKENS
        self._calls = 0

    @classmethod
    def from_config(cls, config: AssayConfig, *, use_cache: bool = True) -> LLMProposer:
        """The proposer ``proposer: {type: llm, llm: {...}}`` names."""
        settings = config.evolve.proposer.llm
        if settings is None:
            raise ConfigError(
                "the llm proposer needs a model: set `proposer: {type: llm, llm: {model: provider:model}}`",
                file=config.path,
                field="evolve.proposer.llm",
            )
        return cls(settings, cache_dir=config.data_path / "cache" / "llm", use_cache=use_cache)

    async def propose(self, view: ProposerView, worktree: Path, *, editable: list[str]) -> Proposal:
        """Ask the model once and apply its answer to ``worktree``; see the class docstring."""
        sample, self._calls = self._calls, self._calls + 1
        try:
            prompt = await render_for(self.model, view, self.format)
            completion = await self.model.complete(
                [{"role": "user", "content": prompt}],
                system=SYSTEM,
                max_tokens=self.max_tokens,
                sample=sample,
            )
        except LLMError as exc:
            return Proposal(
                ok=False, description="llm proposal", error=one_line(f"model call failed: {exc}", 300)
            )
        usage: _Usage = {
            "tokens_in": completion.tokens_in,
            "tokens_out": completion.tokens_out,
            "cost_usd": completion.cost_usd,
        }
        description = "llm proposal"
        citations: list[str] = []
        try:
            answer = parse_answer(completion.text)
            description = one_line(answer.description) or description
            citations = match_labels(answer.citations, view)
            if not answer.edits:
                raise EditError("the answer has no edit (no SEARCH/REPLACE block and no FILE block)")
            if view.failures and not citations:
                raise EditError("no case cited: the answer must cite at least one case shown, by its number")
            changed = apply_edits(worktree, answer.edits, editable=editable)
        except EditError as exc:
            error = one_line(str(exc), 300)
            return Proposal(ok=False, description=description, error=error, citations=citations, **usage)
        if not answer.description:
            description = one_line(f"edit {', '.join(changed)}")
        # What made the change: SEARCH/REPLACE blocks, whole files written again, or both.
        kinds = {"llm.rewrite" if edit.search is None else "llm.edit" for edit in answer.edits}
        operator = kinds.pop() if len(kinds) == 1 else "llm.edit+rewrite"
        return Proposal(
            ok=True, description=description, citations=citations, operator=operator, sites=changed, **usage
        )

    async def aclose(self) -> None:
        """Close the model's client."""
        await self.model.aclose()


def make_model(settings: LLMSettings, *, cache_dir: Path | None, use_cache: bool) -> LLM:
    """The chat model for ``settings``; ConfigError fields read ``proposer.model`` / ``proposer.api_key_env``."""
    return make_llm(settings, cache_dir=cache_dir, use_cache=use_cache, section="evolve.proposer.llm")
