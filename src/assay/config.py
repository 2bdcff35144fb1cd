"""``assay.yaml`` as pydantic models, and loading with one-line errors that name the file and field."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from assay.errors import ConfigError, field_path
from assay.fsutil import read_user_text
from assay.install import install_hint
from assay.layer_names import layer_number
from assay.limits import (
    MAX_CONCURRENCY,
    MAX_DURATION_S,
    MAX_FILE_BYTES,
    MAX_OUTPUT_BYTES,
    MAX_PATH_BYTES,
)
from assay.local_options import parse_options
from assay.model import CheckSpec
from assay.safeload import LIMIT_NOTE, describe_yaml_error, load_yaml

ArtifactKind = Literal["prompt", "skill", "code", "config", "document", "custom"]


# A mutation layer: its name (surface, core, architecture) or its number, held as the number.
Layer = Annotated[Literal[1, 2, 3], BeforeValidator(layer_number)]
ALL_LAYERS: tuple[Layer, ...] = (1, 2, 3)


def _duration(value: float) -> float:
    if value > MAX_DURATION_S:
        raise ValueError(f"must be at most {MAX_DURATION_S} seconds (one week, {LIMIT_NOTE})")
    return value


def _path(value: str) -> str:
    if "\x00" in value:
        raise ValueError("a path cannot hold a NUL character")
    if len(value.encode()) > MAX_PATH_BYTES or any(len(p.encode()) > 255 for p in value.split("/")):
        raise ValueError(f"path too long (at most {MAX_PATH_BYTES} bytes, 255 per name)")
    return value


PathText = Annotated[str, AfterValidator(_path)]
"""A file or directory path (or glob) that the operating system can take."""
Seconds = Annotated[float, Field(gt=0), AfterValidator(_duration)]
"""A time limit: finite (every model here refuses inf and NaN), positive, at most a week."""
Concurrency = Annotated[int, Field(gt=0, le=MAX_CONCURRENCY)]
OutputBytes = Annotated[int, Field(gt=0, le=MAX_OUTPUT_BYTES)]


class Strict(BaseModel):
    """Every section of assay.yaml: unknown fields are errors, and values are taken as YAML typed them — no
    ``true`` taken as 1, no ``'0.7'`` string as a number, no ``1`` as a boolean (an int is a number where a
    float belongs)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


class ArtifactConfig(Strict):
    """The editable files (``paths``, globs relative to ``root``) and the read-only rest (``forbid``)."""

    kind: ArtifactKind = "custom"
    root: PathText = "."
    paths: list[PathText] = Field(min_length=1)
    forbid: list[PathText] = Field(default_factory=list)


class SplitConfig(Strict):
    """Fractions of cases per split; fewer than ``min_cases_for_holdout`` cases means no holdout."""

    dev: float = Field(default=0.7, ge=0, le=1)
    holdout: float = Field(default=0.2, ge=0, le=1)
    regression: float = Field(default=0.1, ge=0, le=1)
    min_cases_for_holdout: int = Field(default=10, ge=0)

    @model_validator(mode="after")
    def _sums_to_one(self) -> SplitConfig:
        if abs(self.dev + self.holdout + self.regression - 1.0) > 1e-6:
            raise ValueError("dev + holdout + regression must add up to 1")
        return self


class CasesConfig(Strict):
    """Case files (native YAML/JSONL, skill-creator evals.json, promptfoo config), relative to the config.
    ``dev_files``: case files whose cases are all dev cases, never split: more (and cheaper) instances for the
    search to learn from, which leave the dev / holdout / regression split of ``files`` as it was.
    ``require_checks``: a case without checks is an error (by default it runs unjudged, left out of pass
    rates and scores, and a warning names it)."""

    files: list[PathText] = Field(min_length=1)
    dev_files: list[PathText] = Field(default_factory=list)
    split: SplitConfig = Field(default_factory=SplitConfig)
    require_checks: bool = False

    @field_validator("files", "dev_files", mode="before")
    @classmethod
    def _one_file(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @property
    def all_files(self) -> list[str]:
        """Every case file: ``files``, then ``dev_files``."""
        return [*self.files, *self.dev_files]


SandboxMode = Literal["strict", "none"]


class ProcessRunnerConfig(Strict):
    """What every runner that starts a process has: the sandbox and the environment.

    ``sandbox``: ``strict`` runs each case in the jail (bubblewrap: its own PID namespace; of the project it sees
    only the artifact, the files the command names and ``read_only``, never the case files, the configuration,
    ``.git``, the data directory or any file a check reads; it writes only its worktree and a private /tmp),
    ``none`` as a plain process. Unset: ``strict`` where bubblewrap works, else ``none`` (and the evaluation says
    it ran unsandboxed). ``read_only``: what else the command reads (relative to the artifact root, globs too,
    or absolute), visible read-only in the jail. ``network``: whether a jailed case can
    reach the network. ``env`` is added to the environment, ``env_allow`` names (or patterns) of variables
    passed besides PATH, HOME, USER, LOGNAME, LANG, LANGUAGE, LC_*, TZ and TMPDIR."""

    sandbox: SandboxMode | None = None
    read_only: list[PathText] = Field(default_factory=list)
    network: bool = False
    env: dict[str, str] = Field(default_factory=dict)
    env_allow: list[str] = Field(default_factory=list)


class CommandRunnerConfig(ProcessRunnerConfig):
    """A shell template with ``{input}`` / ``{vars.x}`` (shell-quoted), run in the artifact's directory."""

    type: Literal["command"] = "command"
    command: str
    timeout: Seconds = 60.0
    max_output_bytes: OutputBytes = 1_000_000
    memory_mb: int | None = Field(default=4096, gt=0)
    stdin: bool = False


class PythonRunnerConfig(ProcessRunnerConfig):
    """``module:function(case, artifact_dir) -> output``, run in a subprocess with the artifact on sys.path."""

    type: Literal["python"] = "python"
    function: str
    timeout: Seconds = 60.0
    max_output_bytes: OutputBytes = 1_000_000
    memory_mb: int | None = Field(default=4096, gt=0)


class LLMSettings(Strict):
    """A model and how to reach it. ``model`` is ``provider:name`` (openai, anthropic, ollama, vllm, llamacpp,
    openrouter, lmstudio or any OpenAI-compatible endpoint given by ``base_url``)."""

    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int = Field(default=1024, gt=0)
    timeout: Seconds = 120.0
    max_retries: int = Field(default=4, ge=0)
    price_in_per_mtok: float | None = Field(default=None, ge=0)
    price_out_per_mtok: float | None = Field(default=None, ge=0)

    @field_validator("model", mode="before")
    @classmethod
    def _provider_model(cls, v: Any) -> Any:
        if v is None or (isinstance(v, str) and not v.strip()):
            raise ValueError(
                "not set: give a model as provider:name, e.g. openai:gpt-4o-mini, anthropic:claude-haiku-4-5,"
                f" ollama:llama3.2, or local:gemma3-270m (offline: {install_hint('local')})"
            )
        if not isinstance(v, str):
            return v
        if ":" not in v or not v.split(":", 1)[1]:
            raise ValueError("expected 'provider:model', e.g. 'openai:gpt-4o-mini' or 'ollama:llama3.2'")
        return v


class LLMRunnerConfig(LLMSettings):
    """The artifact file is the system prompt, or a template with ``{{vars}}`` rendered per case."""

    type: Literal["llm"] = "llm"
    prompt: PathText | None = None
    mode: Literal["system", "template"] = "system"
    concurrency: Concurrency | None = None


class AgentRunnerConfig(ProcessRunnerConfig):
    """An agent CLI template such as ``claude -p {input}`` or ``codex exec {input}``, run in the worktree
    (with the network on in the jail: an agent needs its model API)."""

    type: Literal["agent"] = "agent"
    command: str
    timeout: Seconds = 600.0
    max_output_bytes: OutputBytes = 2_000_000
    memory_mb: int | None = Field(default=None, gt=0)
    network: bool = True


RunnerConfig = Annotated[
    CommandRunnerConfig | PythonRunnerConfig | LLMRunnerConfig | AgentRunnerConfig,
    Field(discriminator="type"),
]


class OverfittingConfig(Strict):
    """How L3 decides that a candidate overfits its dev cases (docs/evolve.md, "Overfitting").

    ``paired`` (the default): its gain over the baseline on the holdout cases falls short of its gain on the dev
    cases by more than chance allows, on the pass rate or the graded score (a one-sided permutation test of the
    per-case gains, each measure at ``alpha`` / 2). ``gap``: the seed's fixed rule, a holdout pass rate more than
    ``gap`` below the dev pass rate."""

    rule: Literal["paired", "gap"] = "paired"
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    gap: float = Field(default=0.15, gt=0, le=1)


class TiersConfig(Strict):
    """Which tiers run. L1 static runs first and stops the artifact on a critical finding."""

    static: bool = True
    security: bool = True
    l3_every: int = Field(default=5, ge=1)
    l3_when_dev_above: float = Field(default=0.9, ge=0, le=1)
    # L3's blind A/B (seed 001): the tournament's pairwise judge compares the new best with the old, without
    # labels; a candidate the judge finds worse than the best it would replace is not kept.
    l3_compare: bool = False
    overfitting: OverfittingConfig = Field(default_factory=OverfittingConfig)


class JudgeConfig(LLMSettings):
    """The model used by judged checks (llm_judge, fact_coverage); ``votes`` per verdict, majority wins."""

    votes: int = Field(default=3, ge=1)


_OPEN_VIEW_FILE = re.compile(r"\{view_file(?!\})|(?<!\{)view_file\}")


class ProposerConfig(Strict):
    """Who proposes changes: ``mutate`` (built-in operators, no LLM: the offline default), ``llm`` (a model
    answering with SEARCH/REPLACE edits) or ``agent`` (an agent CLI editing its own copy of the editable files).

    The agent runs in the jail (bubblewrap): its copy and the redacted traces, read-only system directories,
    a private /tmp and $HOME, the network (``network``, on by default: it needs its model API), and read-only
    the paths in ``home_ro`` (its login, e.g. ``~/.claude``, or its own tools) — never the project. Without
    bubblewrap it refuses to start unless ``allow_unsandboxed: true``. ``env`` / ``env_allow`` as for runners
    (an agent's API key must be named in ``env_allow``). ``show_judge_reasons`` shows llm_judge reasons
    (redacted) instead of a neutral "rubric check N failed" line, for the llm and agent proposers alike.
    ``context_tokens`` bounds the llm proposer's prompt (default 32,000 tokens, 8,000 for a ``local:`` model):
    the artifact files, then the failing cases shown inline by priority, then the history."""

    type: Literal["mutate", "tune", "llm", "agent"] = "mutate"
    # mutate: structural operators and numeric tuning (Optuna), chosen by what has been paying off; False keeps
    # to the operators alone.
    tuning: bool = True
    # mutate: moves it never makes: operators by the names the report's table of moves shows (``py.guard``), the
    # schedule's own moves (``py.pair``, ``python.turn``, ``python.flip``, ``python.prune``, ``py.crossover``,
    # ``population``) and ``tune``; checked against the known names when the proposer is built.
    without: list[str] = Field(default_factory=list)
    llm: LLMSettings | None = None
    command: str | None = None
    timeout: Seconds = 600.0
    env: dict[str, str] = Field(default_factory=dict)
    env_allow: list[str] = Field(default_factory=list)
    allow_unsandboxed: bool = False
    home_ro: list[PathText] = Field(default_factory=list)
    network: bool = True
    show_judge_reasons: bool = False
    context_tokens: int | None = Field(default=None, ge=2000)

    @field_validator("command")
    @classmethod
    def _closed_placeholder(cls, v: str | None) -> str | None:
        if v is not None and _OPEN_VIEW_FILE.search(v):
            raise ValueError("unbalanced braces around the placeholder: write {view_file}")
        return v

    @model_validator(mode="after")
    def _needs(self) -> ProposerConfig:
        if self.type == "llm" and self.llm is None:
            raise ValueError("the llm proposer needs `llm: {model: provider:model}`")
        if self.type == "llm" and self.llm is not None and _base_local_model(self.llm.model):
            raise ValueError(
                f"the llm proposer cannot use {self.llm.model.split('?')[0]}: a local base model continues text"
                " and writes no edit blocks (docs/local.md); use the offline default (proposer: {type: mutate}),"
                " a hosted model, or a local instruction-tuned model with ?chat=1"
            )
        if self.type == "agent" and not self.command:
            raise ValueError("the agent proposer needs `command`, e.g. 'claude -p \"$(cat {view_file})\"'")
        return self


def _base_local_model(model: str) -> bool:
    """A ``local:`` model used as a base model (no ``chat=1``): it completes text, it follows no instruction."""
    if not model.startswith("local:"):
        return False
    try:
        return not parse_options(model.removeprefix("local:")).chat
    except ValueError:  # a bad option is the provider's to report, where the model is built
        return False


class ParameterSpec(Strict):
    """How numeric tuning treats a parameter (``evolve.parameters``, keyed by its name as
    ``assay evolve --list-parameters`` shows it, or a glob such as ``params.json:*``): ``low``/``high`` bound its
    range, ``log`` samples it on a log scale, ``integer`` makes it an int or a float, ``value`` pins it (the value
    is written and never tuned), ``exclude`` leaves it alone."""

    low: float | None = None
    high: float | None = None
    log: bool | None = None
    integer: bool | None = None
    value: float | None = None
    exclude: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> ParameterSpec:
        if self.low is not None and self.high is not None and self.low >= self.high:
            raise ValueError(f"low ({self.low:g}) must be below high ({self.high:g})")
        if self.log and self.low is not None and self.low <= 0:
            raise ValueError("a log scale needs a positive low bound")
        return self


class TournamentConfig(Strict):
    """Matches each generation, rated by ``rating`` (elo, glicko2, bradley_terry, weng_lin).

    The candidate plays the baseline ``matches_per_generation`` times, then opponents chosen by ``opponents``:
    ``pool`` (autocontext: the top ``pool_size`` kept candidates), ``top_k`` (SIFT: the ``k`` best-rated
    candidates so far) or ``adaptive`` (binary insertion: each next opponent is the rated candidate whose
    rating is closest to the newcomer's current one; up to ``k``). The ``scores`` judge compares per-case
    scores (no model calls); the ``llm`` judge asks ``judge_llm`` (default: the project's ``judge`` model)
    under blind labels, showing the artifact files or the outputs on sampled cases, never the checks.
    ``k_factor`` is Elo's K for these matches (seed 000: 24; ``assay serve`` has its own).
    """

    enabled: bool = True
    rating: str = "elo"
    k_factor: float = Field(default=24.0, gt=0)
    matches_per_generation: int | None = Field(default=None, ge=0)  # None: the preset's (2, 3 or 5)
    win_threshold: float = Field(default=0.55, ge=0, le=1)
    pool_size: int = Field(default=3, ge=0)
    opponents: Literal["pool", "top_k", "adaptive"] = "pool"
    k: int = Field(default=10, ge=0)
    judge: Literal["scores", "llm"] = "scores"
    judge_llm: LLMSettings | None = None
    judge_show: Literal["files", "outputs"] = "files"
    judge_votes: int = Field(default=3, ge=1)
    judge_both_orders: bool = False


class NoiseConfig(Strict):
    """Noise handling (docs/noise.md): the baseline's dev cases run ``baseline_runs`` times (default: 3 for llm
    or agent runners and judged checks, else 1); when their verdicts disagree, the ``ratchet`` gate judges
    progress and regression with a paired sequential test at level ``alpha``, adding runs only while
    undecided, up to ``max_runs_per_case`` candidate runs per case."""

    baseline_runs: int | None = Field(default=None, ge=1, le=20)
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    max_runs_per_case: int = Field(default=7, ge=1, le=50)


class EvolveConfig(Strict):
    """How ``assay evolve`` runs. Unset limits come from the preset (``quick``, ``standard``, ``deep``)."""

    preset: Literal["quick", "standard", "deep"] = "standard"
    proposer: ProposerConfig = Field(default_factory=ProposerConfig)
    gate: str = "ratchet"
    gate_options: dict[str, float | int] = Field(default_factory=dict)
    gate_input: Literal["dev", "tournament"] = "dev"
    # SIFT's judge-first ranking: a new candidate is first compared with its parent and the best-rated
    # candidates by the tournament's pairwise judge (on files); one it ranks below its parent is not evaluated.
    screening: Literal["none", "judge"] = "none"
    # The run's answer: the last candidate the gate kept, or (SIFT's final pick) the kept candidate the
    # tournament rates highest; only gate-approved candidates are ever picked.
    final_pick: Literal["best", "rating"] = "best"
    noise: NoiseConfig = Field(default_factory=NoiseConfig)
    tournament: TournamentConfig = Field(default_factory=TournamentConfig)
    parameters: dict[str, ParameterSpec] = Field(default_factory=dict)
    search: str = "greedy"
    search_options: dict[str, float] = Field(default_factory=dict)
    pipeline: int | None = Field(default=None, ge=1)
    # Generations whose candidates are measured at once; their decisions are still made one by one, in order.
    parallel_candidates: int = Field(default=1, ge=1)
    max_generations: int | None = Field(default=None, ge=1)
    wall_clock_s: Seconds | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_evaluations: int | None = Field(default=None, ge=1)
    max_judge_calls: int | None = Field(default=None, ge=1)
    target_pass_rate: float | None = Field(default=1.0, ge=0, le=1)
    plateau: int | None = Field(default=None, ge=1)
    # Candidates in a row that could not be proposed or evaluated before the run stops (a dead end).
    stop_after_failed: int = Field(default=5, ge=1)
    unfixable_in_progress: bool = False
    stop_on_oscillation: bool = True
    layers: list[Layer] = Field(default_factory=lambda: list(ALL_LAYERS), min_length=1)
    discards_per_layer: int = Field(default=3, ge=1)
    # After the last layer, start again at the first instead of stopping ("all layers exhausted"). None: on
    # for the offline default (mutate with tuning), whose search goes on at every layer; off otherwise.
    cycle_layers: bool | None = None
    l3_every: int | None = Field(default=None, ge=1)
    max_files_changed: int = Field(default=5, ge=1)
    seed: int = 0

    @property
    def layers_cycle(self) -> bool:
        """Whether the layers start again after the last one (see ``cycle_layers``)."""
        if self.cycle_layers is not None:
            return self.cycle_layers
        return self.proposer.type == "mutate" and self.proposer.tuning

    @property
    def pipeline_depth(self) -> int:
        """Proposals made ahead of evaluations: ``pipeline``, or by default 2 for ranked search with a proposer
        that takes time (llm, agent) and 1 (none ahead) otherwise, so offline runs stay reproducible. With
        ``parallel_candidates`` N > 1 it is at least N + 1: the proposals of N generations measured at once are
        made before the earliest of them is decided."""
        if self.pipeline is not None:
            depth = self.pipeline
        else:
            depth = 2 if self.search == "ranked" and self.proposer.type not in ("mutate", "tune") else 1
        if self.parallel_candidates > 1:
            return max(depth, self.parallel_candidates + 1)
        return depth


class ExecutorConfig(Strict):
    """Where case runs execute. ``local``: in this process's asyncio pool. ``ray``: one Ray task per case run
    on a cluster (``address``: ``auto`` for a running cluster, ``ray://host:10001`` for a remote one, unset for
    ``RAY_ADDRESS`` or a cluster started for this run); see docs/scale.md. ``max_retries``: how often a case
    whose worker died is run again before it is recorded as failed; ``num_cpus``: the CPUs a case run reserves
    on its worker (the slots of a node are its CPUs divided by this)."""

    type: Literal["local", "ray"] = "local"
    address: str | None = None
    max_retries: int = Field(default=2, ge=0, le=10)
    num_cpus: float = Field(default=1.0, gt=0, le=1024)
    max_bundle_mb: int = Field(default=200, ge=1, le=10_000)


class TracesConfig(Strict):
    """Which trace files an evaluation writes (one per case run, ``traces/<case>.json``) and how. ``keep``:
    ``all``; ``failing`` (the cases that failed, and the unjudged ones, which have no verdict to show
    instead); ``sampled`` (those, and a share ``sample`` of the passing cases, chosen by case id so that
    the same ones are kept every time). ``compress``: gzip each file (``<case>.json.gz``)."""

    keep: Literal["all", "failing", "sampled"] = "all"
    sample: float = Field(default=0.1, ge=0, le=1)
    compress: bool = False


class AssayConfig(Strict):
    """The whole ``assay.yaml``."""

    artifact: ArtifactConfig
    cases: CasesConfig
    runner: RunnerConfig
    checks: list[CheckSpec] = Field(default_factory=list)
    tiers: TiersConfig = Field(default_factory=TiersConfig)
    judge: JudgeConfig | None = None
    evolve: EvolveConfig = Field(default_factory=EvolveConfig)
    concurrency: Concurrency | None = None
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    traces: TracesConfig = Field(default_factory=TracesConfig)
    data_dir: PathText = ".assay"
    cache: bool = True

    # Set by load_config: where the file was, so relative paths resolve against it.
    path: Path | None = Field(default=None, exclude=True)

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    @property
    def artifact_dir(self) -> Path:
        return (self.base_dir / self.artifact.root).resolve()

    @property
    def data_path(self) -> Path:
        return (self.base_dir / self.data_dir).resolve()

    def ensure_data_path(self) -> Path:
        """Create ``data_path`` if needed; a ConfigError naming ``data_dir`` when that is impossible."""
        path = self.data_path
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create directory {str(path)!r}: {exc.strerror or exc}",
                file=self.path,
                field="data_dir",
            ) from None
        return path

    def check_data_path(self) -> None:
        """Refuse a ``data_dir`` that is a file, lies under one or cannot be a path (before anything runs)."""
        try:
            for path in (self.data_path, *self.data_path.parents):
                if path.exists():
                    if not path.is_dir():
                        where = "is a file" if path == self.data_path else f"is under the file {str(path)!r}"
                        raise ConfigError(
                            f"{self.data_dir!r} {where}; expected a directory",
                            file=self.path,
                            field="data_dir",
                        )
                    return
        except OSError as exc:
            raise ConfigError(
                f"unusable directory: {exc.strerror or exc}", file=self.path, field="data_dir"
            ) from None


_UNKNOWN = "unknown field (check the spelling; see docs/config.md)"


def _members(annotation: Any) -> list[Any]:
    """The types an annotation allows: ``Annotated`` unwrapped, a union's members, ``None`` left out."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        return [m for arg in get_args(annotation) for m in _members(arg)]
    return [] if annotation is type(None) else [annotation]


def fields_at(loc: tuple[Any, ...], root: type[BaseModel] | None = None) -> set[str]:
    """The field names of the section of assay.yaml at ``loc`` (as pydantic reports a location: field names,
    list indices, mapping keys, a tagged union's tag), every member's for a union; empty for a leaf."""
    types: list[Any] = [root or AssayConfig]
    for part in loc:
        found: list[Any] = []
        for kind in types:
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                field = kind.model_fields.get(str(part))
                if field is not None:
                    found += _members(field.annotation)
                tag = kind.model_fields.get("type")
                if (
                    tag is not None
                    and get_origin(tag.annotation) is Literal
                    and part in get_args(tag.annotation)
                ):
                    found.append(kind)  # the tag pydantic puts in a tagged union's location
            elif get_origin(kind) in (list, tuple) and isinstance(part, int):
                found += _members(get_args(kind)[0])
            elif get_origin(kind) is dict:
                found += _members(get_args(kind)[1])
        types = found
    return {
        name
        for kind in types
        if isinstance(kind, type) and issubclass(kind, BaseModel)
        for name in kind.model_fields
    }


def _unknown_field(error: Any, errors: list[Any], prefix: tuple[Any, ...]) -> str:
    """The message of an unknown field, naming the closest field that belongs there: a sibling the same
    mistake left missing, or any field of the section it is in, at any depth (``evolve.max_generation``)."""
    loc = tuple(error.get("loc", ()))
    name, parent = str(loc[-1]) if loc else "", loc[:-1]
    known = {
        str(e["loc"][-1]) for e in errors if e.get("type") == "missing" and tuple(e["loc"][:-1]) == parent
    }
    if not prefix:
        known |= fields_at(parent)
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    if close:
        return f"unknown field; did you mean {close[0]!r}? (see docs/config.md)"
    return _UNKNOWN


_EXPECTED = {"int_type": "a whole number", "float_type": "a number", "bool_type": "true or false"}


def _given(value: Any, expected: str) -> str:
    """A value of the wrong type as the user wrote it: ``true (a boolean)``, ``'0.7' (text in quotes: ...)``."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        if expected == "true or false":
            return f"{value!r} (text: write true or false without quotes)"
        return f"{value!r} (text: write a number without quotes)"
    if isinstance(value, int | float):
        return f"{value!r} (a number)" if expected == "true or false" else f"{value!r} (not a whole number)"
    return f"a {type(value).__name__}"


def describe_error(error: Any) -> str:
    """One pydantic error as a short phrase (the field path is rendered separately)."""
    kind = error.get("type", "")
    if kind in _EXPECTED and "input" in error:
        expected = _EXPECTED[kind]
        return f"expected {expected}, got {_given(error['input'], expected)}"
    if kind == "finite_number":
        return "must be a finite number"
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return str(error.get("msg", "")) if "unknown field" in str(error.get("msg", "")) else _UNKNOWN
    if kind == "union_tag_invalid":
        ctx = error.get("ctx", {})
        return f"unknown type {ctx.get('tag')!r}; expected one of {ctx.get('expected_tags')}"
    return str(error.get("msg", "invalid value")).removeprefix("Value error, ")


def validation_error(exc: ValidationError, file: str | Path, prefix: tuple[Any, ...] = ()) -> ConfigError:
    """Turn pydantic's first error into a ConfigError naming the field path. An unknown field comes before
    any other error (a misspelt ``runer:`` also leaves ``runner`` missing), with the closest known name."""
    errors = exc.errors()
    unknown = [e for e in errors if e.get("type") == "extra_forbidden"]
    first = unknown[0] if unknown else errors[0]
    if unknown:
        first = {**first, "msg": _unknown_field(first, errors, prefix)}
    loc = tuple(p for p in (*prefix, *first.get("loc", ())) if not (isinstance(p, str) and p.endswith("]")))
    # Drop the discriminator tag pydantic inserts into the location of the runner's tagged union (``llm`` is a
    # field elsewhere: evolve.proposer.llm.model).
    loc = tuple(
        p
        for i, p in enumerate(loc)
        if not (
            i and loc[i - 1] == "runner" and p in ("command", "python", "llm", "agent") and i < len(loc) - 1
        )
    )
    # ... and the member type it appends for plain unions (gate_options.x.float).
    if len(loc) > 1 and loc[-1] in ("float", "int", "str", "bool"):
        loc = loc[:-1]
    return ConfigError(describe_error(first), file=file, field=field_path(loc) or None)


def read_yaml(path: Path, max_bytes: int = MAX_FILE_BYTES, *, core_schema: bool = False) -> Any:
    """Read a YAML file (see :mod:`assay.safeload` for the limits); a missing, special or oversized file, a
    syntax error, a repeated key or too deep nesting becomes a one-line ConfigError. ``core_schema``: YAML
    1.2 scalars (``yes``/``no``/``on`` stay strings), as case files are read."""
    text = read_user_text(path, max_bytes, limit_note=f"{LIMIT_NOTE} for case and config files")
    try:
        return load_yaml(text, core_schema=core_schema)
    except yaml.YAMLError as exc:
        field = getattr(exc, "field", None)
        raise ConfigError(f"invalid YAML: {describe_yaml_error(exc)}", file=path, field=field) from None


# Keys a promptfoo config is run by: a file with one of them and none of assay.yaml's sections is one.
PROMPTFOO_KEYS = frozenset(("prompts", "providers", "targets", "defaultTest", "scenarios"))


def is_promptfoo_config(data: Any) -> bool:
    """Whether ``data`` (a config file's contents) is a promptfoo config rather than an assay.yaml."""
    return (
        isinstance(data, dict)
        and not data.keys() & {"artifact", "cases", "runner"}
        and bool(data.keys() & PROMPTFOO_KEYS)
    )


PROPOSER_TYPES: tuple[str, ...] = get_args(ProposerConfig.model_fields["type"].annotation)
"""The proposers ``evolve.proposer.type`` (and ``assay evolve --proposer``) takes."""


def with_proposer(config: AssayConfig, name: str) -> AssayConfig:
    """``config`` with ``evolve.proposer.type`` set to ``name`` and its other options as assay.yaml gives them:
    one ConfigError naming the field when ``name`` is unknown or the proposer misses what it needs (a model,
    a command)."""
    if name not in PROPOSER_TYPES:
        raise ConfigError(
            f"--proposer {name!r}: unknown proposer; expected one of {', '.join(PROPOSER_TYPES)}",
            file=config.path,
            field="evolve.proposer.type",
        )
    given = config.evolve.proposer.model_dump(exclude_unset=True)
    try:
        spec = ProposerConfig.model_validate({**given, "type": name})
    except ValidationError as exc:
        error = validation_error(exc, config.path or "assay.yaml", ("evolve", "proposer"))
        raise ConfigError(
            f"--proposer {name}: {error.message}", file=config.path, field=error.field
        ) from None
    evolve = config.evolve.model_copy(update={"proposer": spec})
    return config.model_copy(update={"evolve": evolve})


def load_config(path: str | Path) -> AssayConfig:
    """Load and validate ``assay.yaml``. Raises ConfigError (file, field, what is expected)."""
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping at the top level (artifact, cases, runner, ...)", file=path)
    if is_promptfoo_config(data):
        raise ConfigError(
            f"a promptfoo config, not an assay.yaml: `assay eval -c {path.name}` runs it as it is;"
            " `assay init` writes an assay.yaml from it (for `assay evolve`)",
            file=path,
        )
    try:
        config = AssayConfig.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, path) from None
    config.path = path.resolve()
    config.check_data_path()
    return config
