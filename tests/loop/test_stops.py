from assay.loop.stops import (
    Budget,
    Interrupted,
    LayersExhausted,
    MaxGenerations,
    Oscillation,
    Plateau,
    RunState,
    ScoreRegression,
    StopFile,
    TargetReached,
    WallClock,
    first_reason,
)


def state(tmp_path, **kwargs) -> RunState:
    s = RunState(run_dir=tmp_path)
    for key, value in kwargs.items():
        setattr(s, key, value)
    return s


def test_max_generations(tmp_path):
    assert MaxGenerations(3).check(state(tmp_path, generation=2)) is None
    assert "3 generations" in MaxGenerations(3).check(state(tmp_path, generation=3))


def test_wall_clock(tmp_path):
    s = state(tmp_path)
    assert WallClock(60).check(s) is None
    s.started -= 61
    assert "wall clock" in WallClock(60).check(s)


def test_budgets(tmp_path):
    assert Budget(tokens=100).check(state(tmp_path, tokens=99)) is None
    assert "token" in Budget(tokens=100).check(state(tmp_path, tokens=100))
    assert "cost" in Budget(cost_usd=1.0).check(state(tmp_path, cost_usd=1.5))
    assert "evaluation" in Budget(evaluations=10).check(state(tmp_path, evaluations=10))
    assert Budget().check(state(tmp_path, tokens=10**9)) is None


def test_target_and_plateau(tmp_path):
    assert TargetReached(1.0).check(state(tmp_path, best_pass_rate=0.9)) is None
    assert "target" in TargetReached(0.9).check(state(tmp_path, best_pass_rate=0.95))
    assert "plateau" in Plateau(5).check(state(tmp_path, since_keep=5))
    assert Plateau(5).check(state(tmp_path, since_keep=4)) is None


def test_oscillation_on_content_or_failing_set(tmp_path):
    assert Oscillation().check(state(tmp_path, content_hashes=["a", "b", "a"])) is None
    assert "content" in Oscillation().check(state(tmp_path, content_hashes=["x", "a", "a", "a"]))
    same = frozenset({"c1", "c2"})
    assert "failing cases" in Oscillation().check(state(tmp_path, failing_sets=[same, same, same]))


def test_score_regression(tmp_path):
    assert ScoreRegression().check(state(tmp_path, kept_scores=[0.5, 0.6, 0.55])) is None
    assert "fell" in ScoreRegression().check(state(tmp_path, kept_scores=[0.7, 0.6, 0.5]))


def test_stop_file_layers_and_interrupt(tmp_path):
    s = state(tmp_path)
    rules = [StopFile(), LayersExhausted(), Interrupted()]
    assert first_reason(rules, s) is None
    (tmp_path / "STOP").write_text("")
    assert first_reason(rules, s) == "STOP file found"
    (tmp_path / "STOP").unlink()
    s.layers_exhausted = True
    assert first_reason(rules, s) == "all layers exhausted"
    s.layers_exhausted, s.interrupted = False, True
    assert "interrupted" in first_reason(rules, s)


def test_standard_rules_follow_the_config():
    from assay.config import EvolveConfig
    from assay.loop.stops import standard_rules
    from assay.presets import resolve

    names = lambda evolve: [type(rule).__name__ for rule in standard_rules(evolve, resolve(evolve), 10)]  # noqa: E731
    assert "Oscillation" in names(EvolveConfig())
    assert "Oscillation" not in names(EvolveConfig(stop_on_oscillation=False))
    assert "TargetReached" not in names(EvolveConfig(target_pass_rate=None))
