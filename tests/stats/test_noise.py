import json

from assay.stats import default_repeats, estimate_noise


def test_per_case_estimates():
    noise = estimate_noise({"a": [1, 1, 1], "b": [0, 0, 0], "c": [1, 0, 1], "d": [0, 1, 0, 0], "e": []})
    assert set(noise.cases) == {"a", "b", "c", "d"}
    assert noise.cases["a"].deterministic and noise.cases["a"].pass_probability == 1.0
    assert noise.cases["c"].pass_probability == 2 / 3 and noise.cases["c"].flakiness == 1 / 3
    assert noise.cases["d"].flakiness == 0.25 and not noise.cases["d"].deterministic
    assert noise.flaky == ["c", "d"]
    assert not noise.deterministic
    assert noise.summary().startswith("noisy: 2 of 4 cases flaky over 4 runs: c, d")


def test_deterministic_runner_detected_and_logged():
    noise = estimate_noise({"a": [1, 1, 1], "b": [0.5, 0.5, 0.5]})
    assert noise.deterministic and noise.flaky == []
    assert noise.summary() == "deterministic: all 2 cases agreed over 3 runs each"
    data = json.loads(json.dumps(noise.to_dict()))
    assert data["deterministic"] is True and data["cases"]["b"]["pass_probability"] == 1.0


def test_default_repeats():
    assert default_repeats(llm_runner=True, judged_checks=False) == 3
    assert default_repeats(llm_runner=False, judged_checks=True, repeats=5) == 5
    assert default_repeats(llm_runner=False, judged_checks=False) == 1


def test_a_single_run_per_case_is_not_called_measured() -> None:
    noise = estimate_noise({"a": [1.0], "b": [0.0]})
    assert noise.deterministic
    assert noise.summary() == "one run per case (2 cases): taken as deterministic, not measured"
