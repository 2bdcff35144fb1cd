import os

import pytest

from assay.config import load_config
from assay.errors import ConfigError

GOOD = """
artifact: {kind: code, paths: [a.py]}
cases: {files: cases.yaml}
runner: {type: command, command: "python a.py {input}", timeout: 5}
checks:
  - {type: contains, value: x}
"""


def write(tmp_path, text):
    path = tmp_path / "assay.yaml"
    path.write_text(text)
    return path


def test_loads_a_valid_config(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert config.runner.type == "command"
    overfitting = config.tiers.overfitting  # the paired rule unless told otherwise
    assert (overfitting.rule, overfitting.alpha, overfitting.gap) == ("paired", 0.05, 0.15)
    seed_rule = load_config(write(tmp_path, GOOD + "tiers: {overfitting: {rule: gap, gap: 0.2}}\n"))
    assert (seed_rule.tiers.overfitting.rule, seed_rule.tiers.overfitting.gap) == ("gap", 0.2)
    assert config.runner.timeout == 5
    assert config.cases.files == ["cases.yaml"]
    assert config.checks[0].type == "contains"
    assert config.artifact_dir == tmp_path.resolve()
    assert config.data_path == (tmp_path / ".assay").resolve()


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (GOOD.replace("timeout: 5", "timeout: -1"), "runner.timeout", "greater than 0"),
        (GOOD.replace("type: command", "type: shell"), "runner", "unknown type 'shell'"),
        (GOOD.replace("paths: [a.py]", "pathz: [a.py]"), "artifact.pathz", "did you mean 'paths'?"),
        (GOOD.replace("runner:", "runer:"), "runer", "unknown field; did you mean 'runner'?"),
        (GOOD.replace("artifact:", "artefact:"), "artefact", "did you mean 'artifact'?"),
        (GOOD.replace("command: ", "comand: "), "runner.comand", "did you mean 'command'?"),
        (GOOD + "\nchecker: []\n", "checker", "did you mean 'checks'?"),
        (GOOD.replace("kind: code", "kind: poem"), "artifact.kind", "'prompt'"),
        (GOOD + "\nsplit_ratio: 3\n", "split_ratio", "unknown field"),
        (GOOD + "\njudge: {model: gpt4}\n", "judge.model", "provider:model"),
        (
            GOOD + "evolve: {layers: [surface, cor]}\n",
            "evolve.layers[1]",
            "unknown layer 'cor'; did you mean 'core'?",
        ),
        (GOOD + "evolve: {layers: [L3]}\n", "evolve.layers[0]", "names a verification tier, not a layer"),
        (GOOD + "tiers: {overfitting: {rule: gapp}}\n", "tiers.overfitting.rule", "'paired' or 'gap'"),
        (GOOD + "tiers: {overfitting: {alpha: 0.5}}\n", "tiers.overfitting.alpha", "less than 0.5"),
        (GOOD + "tiers: {overfitting: {gap: 0}}\n", "tiers.overfitting.gap", "greater than 0"),
        (GOOD + "tiers: {overfitting: {gap: .nan}}\n", "tiers.overfitting.gap", "finite number"),
        (GOOD + "tiers: {overfitting: {rules: gap}}\n", "tiers.overfitting.rules", "unknown field"),
        # Nested typos get the close name of their own section (before: only a missing sibling was offered).
        (GOOD + "evolve: {max_generation: 5}\n", "evolve.max_generation", "did you mean 'max_generations'?"),
        (
            GOOD + "evolve: {tournament: {k_facter: 3}}\n",
            "evolve.tournament.k_facter",
            "did you mean 'k_factor'?",
        ),
        (GOOD.replace("timeout: 5", "timout: 5"), "runner.timout", "did you mean 'timeout'?"),
        (
            GOOD + "evolve: {proposer: {type: llm, llm: {model: 'openai:x', max_token: 3}}}\n",
            "evolve.proposer.llm.max_token",
            "did you mean 'max_tokens'?",
        ),
        (GOOD + "evolve: {parameters: {a: {hihg: 3}}}\n", "evolve.parameters.a.hihg", "did you mean 'high'?"),
        (GOOD.replace("value: x}", "value: x, wieght: 2}"), "checks[0].wieght", "did you mean 'weight'?"),
        (
            GOOD.replace("{files: cases.yaml}", "{files: cases.yaml, split: {dev: 0.9}}"),
            "cases.split",
            "add up to 1",
        ),
    ],
)
def test_errors_name_file_and_field(tmp_path, text, field, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    rendered = str(info.value)
    assert rendered.startswith(str(path))
    assert field in rendered
    assert message in rendered
    assert "\n" not in rendered


@pytest.mark.parametrize(
    ("layers", "numbers"),
    [
        ("[surface, core, architecture]", [1, 2, 3]),
        ("[core, architecture]", [2, 3]),
        ("[1, 2, 3]", [1, 2, 3]),  # as configs and runs recorded them before the names
        ("[Architecture, 1]", [3, 1]),
    ],
)
def test_layers_are_given_by_name_or_number(tmp_path, layers, numbers):
    config = load_config(write(tmp_path, GOOD + f"evolve: {{layers: {layers}}}\n"))
    assert config.evolve.layers == numbers
    assert config.model_dump(mode="json")["evolve"]["layers"] == numbers  # what a run records


def test_malformed_yaml_reports_line(tmp_path):
    path = write(tmp_path, "artifact: [unclosed\n")
    with pytest.raises(ConfigError, match=r"invalid YAML: line \d+"):
        load_config(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "nope.yaml")


def test_top_level_must_be_mapping(tmp_path):
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path, "- a\n- b\n"))


def test_pipeline_depth_defaults_to_two_only_for_ranked_search_with_a_slow_proposer() -> None:
    from assay.config import EvolveConfig

    llm = {"type": "llm", "llm": {"model": "openai:x"}}
    assert EvolveConfig().pipeline_depth == 1
    assert EvolveConfig(search="ranked").pipeline_depth == 1  # mutate: instant, keep runs reproducible
    assert EvolveConfig(search="ranked", proposer=llm).pipeline_depth == 2
    assert EvolveConfig(search="dgm", proposer=llm).pipeline_depth == 1
    assert EvolveConfig(search="greedy", pipeline=3).pipeline_depth == 3


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (GOOD.replace("timeout: 5", "timeout: .inf"), "runner.timeout", "must be a finite number"),
        (GOOD.replace("timeout: 5", "timeout: .nan"), "runner.timeout", "must be a finite number"),
        (GOOD.replace("timeout: 5", "timeout: 604801"), "runner.timeout", "at most 604800 seconds"),
        (GOOD + "evolve: {wall_clock_s: 1.0e+9}\n", "evolve.wall_clock_s", "at most 604800 seconds"),
        (GOOD + "judge: {model: 'openai:x', timeout: .inf}\n", "judge.timeout", "finite"),
        (GOOD.replace("value: x}", "value: x, weight: .nan}"), "checks[0].weight", "must be a finite number"),
        (GOOD + "concurrency: 1025\n", "concurrency", "less than or equal to 1024"),
        (GOOD + "evolve: {gate_options: {min_delta: .inf}}\n", "evolve.gate_options.min_delta", "finite"),
        (GOOD + "evolve: {layers: [4]}\n", "evolve.layers[0]", "1, 2 or 3"),
        (GOOD + 'data_dir: "a\\x00b"\n', "data_dir", "NUL"),
        (GOOD.replace("[a.py]", "[" + "a" * 256 + "]"), "artifact.paths[0]", "path too long"),
        (
            GOOD + "evolve: {proposer: {type: agent, command: 'x {view_file'}}\n",
            "evolve.proposer.command",
            "",
        ),
        (
            GOOD + "runner: {type: command, command: x}\n",
            "runner",
            "duplicate key 'runner' (first at line 4)",
        ),
        (GOOD + "tiers: " + "{a: " * 200 + "1" + "}" * 200 + "\n", "tiers.a.a.a.a...", "nested deeper"),
    ],
)
def test_limits_are_one_line_errors(tmp_path, text, field, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == field
    assert message in info.value.message and "\n" not in str(info.value)


def test_a_week_long_timeout_is_accepted(tmp_path):
    assert (
        load_config(write(tmp_path, GOOD.replace("timeout: 5", "timeout: 604800"))).runner.timeout == 604800
    )


@pytest.mark.parametrize(("make", "message"), [("file", "is a file"), ("under", "is under the file")])
def test_data_dir_must_be_able_to_be_a_directory(tmp_path, make, message):
    (tmp_path / "state").write_text("")
    data_dir = "state" if make == "file" else "state/inner"
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, GOOD + f"data_dir: {data_dir}\n"))
    assert info.value.field == "data_dir" and message in info.value.message


def test_data_dir_that_cannot_be_created_names_the_field(tmp_path):
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc, where no directory can be created")
    config = load_config(write(tmp_path, GOOD + "data_dir: /proc/assay-state\n"))
    with pytest.raises(ConfigError) as info:
        config.ensure_data_path()
    assert (
        info.value.field == "data_dir" and "cannot create directory '/proc/assay-state'" in info.value.message
    )


def test_a_local_base_model_is_refused_as_the_llm_proposer(tmp_path):
    def proposer(model):
        return f"evolve:\n  proposer: {{type: llm, llm: {{model: '{model}'}}}}\n"

    with pytest.raises(
        ConfigError, match=r"evolve\.proposer: the llm proposer cannot use local:gemma3-270m: "
    ):
        load_config(write(tmp_path, GOOD + proposer("local:gemma3-270m?stop=%0A")))
    chat = load_config(write(tmp_path, GOOD + proposer("local:/models/instruct?chat=1")))
    assert chat.evolve.proposer.llm is not None and chat.evolve.proposer.llm.model.endswith("chat=1")
