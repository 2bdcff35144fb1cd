from assay.config import EvolveConfig
from assay.presets import PRESETS, resolve


def test_preset_fills_unset_limits():
    settings = resolve(EvolveConfig(preset="quick"))
    assert settings.max_generations == PRESETS["quick"].max_generations
    assert settings.judge_votes == 1


def test_explicit_values_win_and_cli_preset_overrides():
    settings = resolve(EvolveConfig(preset="quick", max_generations=7), preset="deep")
    assert settings.max_generations == 7
    assert settings.wall_clock_s == PRESETS["deep"].wall_clock_s


def test_presets_switch_gate_strictness_and_matches_as_autocontexts_do():
    from assay.config import TournamentConfig

    quick, deep = (resolve(EvolveConfig(preset=p, gate="trend")) for p in ("quick", "deep"))
    assert quick.gate_options["min_delta"] > deep.gate_options["min_delta"]
    assert quick.matches_per_generation < deep.matches_per_generation
    explicit = resolve(
        EvolveConfig(
            preset="deep",
            gate="backpressure",
            gate_options={"min_delta": 0.05},
            tournament=TournamentConfig(matches_per_generation=1),
        )
    )
    assert explicit.gate_options["min_delta"] == 0.05 and explicit.matches_per_generation == 1
    # The default ratchet takes the preset's min_delta too (seed 000's default gate is trend-aware).
    assert [resolve(EvolveConfig(preset=p)).gate_options["min_delta"] for p in PRESETS] == [
        0.01,
        0.005,
        0.002,
    ]
    assert "min_delta" not in resolve(EvolveConfig(preset="deep", gate="noisy")).gate_options


def test_the_offline_default_runs_to_its_generation_limit_unless_a_plateau_is_set():
    from assay.config import LLMSettings, ProposerConfig

    offline = resolve(EvolveConfig(preset="standard"))
    assert offline.plateau == offline.max_generations == PRESETS["standard"].max_generations
    assert resolve(EvolveConfig(preset="quick", max_generations=33)).plateau == 33
    assert resolve(EvolveConfig(preset="standard", plateau=12)).plateau == 12
    operators_only = EvolveConfig(proposer=ProposerConfig(type="mutate", tuning=False))
    llm = EvolveConfig(proposer=ProposerConfig(type="llm", llm=LLMSettings(model="openai:gpt-4o-mini")))
    for evolve in (operators_only, llm):
        assert resolve(evolve).plateau == PRESETS["standard"].plateau
