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
        (GOOD.replace("paths: [a.py]", "pathz: [a.py]"), "artifact", ""),
        (GOOD.replace("kind: code", "kind: poem"), "artifact.kind", "'prompt'"),
        (GOOD + "\nsplit_ratio: 3\n", "split_ratio", "unknown field"),
        (GOOD + "\njudge: {model: gpt4}\n", "judge.model", "provider:model"),
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
