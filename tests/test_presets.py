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
