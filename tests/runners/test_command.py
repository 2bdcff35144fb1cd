"""The command runner against real shell subprocesses."""

from __future__ import annotations

import shlex
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from assay.config import CommandRunnerConfig
from assay.model import Case
from assay.runners import RUNNERS
from assay.runners.base import RunContext
from assay.runners.command import CommandRunner, CommandTemplate, TemplateError

PY = shlex.quote(sys.executable)


def runner(tmp_path: Path, command: str, **options: object) -> CommandRunner:
    config = CommandRunnerConfig(command=command, **options)  # type: ignore[arg-type]
    return CommandRunner(config, RunContext(artifact_dir=tmp_path, project_dir=tmp_path))


async def test_registered_by_name() -> None:
    assert RUNNERS.get("command") is CommandRunner


async def test_echo_input_and_metadata(tmp_path: Path) -> None:
    out = await runner(tmp_path, "echo {input}").run(Case(id="a", input="hello world"), tmp_path)
    assert out.text == "hello world"
    assert out.stdout_tail == "hello world\n"
    assert out.exit_code == 0
    assert out.error is None and out.ok
    assert out.workdir == str(tmp_path)
    assert out.duration_s > 0
    assert out.cpu_s is not None and out.cpu_s < out.duration_s + 1  # the case's process's own CPU time


async def test_runs_in_workdir(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("from the artifact\n")
    out = await runner(tmp_path, "cat data.txt; pwd").run(Case(id="a", input="x"), tmp_path)
    assert out.text.splitlines() == ["from the artifact", str(tmp_path)]


async def test_vars_are_substituted(tmp_path: Path) -> None:
    case = Case(id="a", vars={"city": "São Paulo", "n": 3, "geo": {"lat": 1.5}, "tags": ["x", "y"]})
    command = "printf '%s|%s|%s|%s' {vars.city} {vars.n} {vars.geo.lat} {vars.tags}"
    out = await runner(tmp_path, command).run(case, tmp_path)
    assert out.text == 'São Paulo|3|1.5|["x", "y"]'


async def test_vars_only_case_input_is_key_value_lines(tmp_path: Path) -> None:
    out = await runner(tmp_path, "printf '%s' {input}").run(Case(id="a", vars={"a": 1, "b": "two"}), tmp_path)
    assert out.text == "a: 1\nb: two"


async def test_shell_injection_stays_literal(tmp_path: Path) -> None:
    evil = "$(touch pwned1); `touch pwned2`; touch pwned3 && echo 'it\"s' | cat > pwned4 \\"
    case = Case(id="a", input=evil, vars={"v": "'; touch pwned5; '"})
    out = await runner(tmp_path, "printf '%s\\n' {input} {vars.v}").run(case, tmp_path)
    assert out.text == evil + "\n'; touch pwned5; '"
    assert not list(tmp_path.glob("pwned*"))


async def test_stdin_mode(tmp_path: Path) -> None:
    text = "line one\nline two with 'quotes' and $(danger)"
    out = await runner(tmp_path, "cat", stdin=True).run(Case(id="a", input=text), tmp_path)
    assert out.text == text


async def test_without_stdin_mode_the_child_reads_nothing(tmp_path: Path) -> None:
    out = await runner(tmp_path, "cat").run(Case(id="a", input="not sent"), tmp_path)
    assert out.text == ""
    assert out.ok


async def test_non_zero_exit_is_a_failed_output(tmp_path: Path) -> None:
    out = await runner(tmp_path, "echo out; echo err >&2; exit 3").run(Case(id="a", input="x"), tmp_path)
    assert out.error == "exit code 3"
    assert out.exit_code == 3
    assert out.text == "out"
    assert out.stderr_tail == "err\n"
    assert not out.ok


async def test_strips_exactly_one_trailing_newline(tmp_path: Path) -> None:
    out = await runner(tmp_path, "printf 'a\\n\\n'").run(Case(id="a", input="x"), tmp_path)
    assert out.text == "a\n"


async def test_timeout(tmp_path: Path) -> None:
    start = time.perf_counter()
    out = await runner(tmp_path, "echo started; sleep 10", timeout=0.3).run(Case(id="a", input="x"), tmp_path)
    assert time.perf_counter() - start < 3
    assert out.timed_out
    assert out.error == "timed out after 0.3s"
    assert out.text == "started"


async def test_huge_output_is_capped_fast_and_bounded(tmp_path: Path) -> None:
    flood = f"{PY} -c \"import sys; sys.stdout.write('x' * 50_000_000)\""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        out = await runner(tmp_path, flood, max_output_bytes=1000).run(Case(id="a", input="x"), tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 10
    assert peak < 5_000_000
    assert out.truncated
    assert out.text == "x" * 1000
    assert out.error is not None and "output flood" in out.error


async def test_output_over_cap_is_truncated_without_error(tmp_path: Path) -> None:
    command = f"{PY} -c \"print('y' * 3000)\""
    out = await runner(tmp_path, command, max_output_bytes=1000).run(Case(id="a", input="x"), tmp_path)
    assert out.truncated
    assert out.text == "y" * 1000
    assert out.error is None


async def test_multibyte_character_cut_by_the_cap_is_not_binary(tmp_path: Path) -> None:
    command = f"{PY} -c \"print('é' * 500)\""
    out = await runner(tmp_path, command, max_output_bytes=101).run(Case(id="a", input="x"), tmp_path)
    assert out.truncated
    assert not out.binary
    assert out.text == "é" * 50


async def test_binary_output_is_flagged(tmp_path: Path) -> None:
    out = await runner(tmp_path, "printf 'a\\000b\\377'").run(Case(id="a", input="x"), tmp_path)
    assert out.binary
    assert out.text.startswith("a\\x00b")


async def test_killed_by_signal(tmp_path: Path) -> None:
    out = await runner(tmp_path, "echo before; kill -9 $$").run(Case(id="a", input="x"), tmp_path)
    assert out.error == "killed by signal SIGKILL"
    assert out.text == "before"


async def test_the_environment_is_an_allow_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-secret-value")
    monkeypatch.setenv("ASSAY_PLAIN_VAR", "plain")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:pass@db/prod")
    show = (
        'printf \'%s|%s|%s|%s\' "${OPENAI_API_KEY:-unset}" "${ASSAY_PLAIN_VAR:-unset}" "${GREETING:-none}"'
        ' "${DATABASE_URL:-unset}"'
    )
    case = Case(id="a", input="x")
    hidden = await runner(tmp_path, show, env={"GREETING": "hi"}).run(case, tmp_path)
    assert hidden.text == "unset|unset|hi|unset"
    allowed = await runner(tmp_path, show, env_allow=["OPENAI_API_KEY", "ASSAY_*"]).run(case, tmp_path)
    assert allowed.text == "test-secret-value|plain|none|unset"


async def test_missing_var_is_a_failed_output(tmp_path: Path) -> None:
    out = await runner(tmp_path, "echo {vars.city}").run(Case(id="c7", vars={"town": "x"}), tmp_path)
    assert out.error == "case 'c7' has no value for {vars.city}"
    assert out.exit_code is None
    assert out.workdir == str(tmp_path)


async def test_missing_workdir_is_a_failed_output(tmp_path: Path) -> None:
    out = await runner(tmp_path, "echo hi").run(Case(id="a", input="x"), tmp_path / "absent")
    assert out.error is not None and "could not start process" in out.error


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("echo {inptu}", "unknown placeholder {inptu}"),
        ("echo {vars}", "malformed placeholder {vars}"),
        ("echo {vars.}", "malformed placeholder {vars.}"),
        ("echo {vars.a..b}", "malformed placeholder {vars.a..b}"),
        ("echo {input.x}", "unknown placeholder {input.x}"),
        ("   ", "command template is empty"),
        ('claude -p "{input}"', "placeholder {input} is inside double quotes"),
        ("echo 'say: {vars.x}'", "placeholder {vars.x} is inside single quotes"),
        ("cat <<EOF\n{input}\nEOF", "follows a here-document"),
        ("python x.py {input", "unclosed placeholder '{input'"),
        ("echo {input} {vars.city", "unclosed placeholder '{vars.city'"),
        ("echo {vars.city x}", "unclosed placeholder '{vars.city'"),
    ],
)
def test_bad_templates_fail_at_construction(tmp_path: Path, template: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"runner\.command: ") as info:
        runner(tmp_path, template)
    assert message in str(info.value)
    assert isinstance(info.value, TemplateError)


async def test_quotes_around_other_words_are_fine(tmp_path: Path) -> None:
    command = "printf '%s|%s|%s' \"it's\" {input} \\\"{vars.v}"
    out = await runner(tmp_path, command).run(Case(id="a", input="$(id)", vars={"v": "`id`"}), tmp_path)
    assert out.text == "it's|$(id)|\"`id`"


@pytest.mark.parametrize(
    "template", ["echo ${input", "echo {inputs", "echo {variable", "sed 's/{/(/' {input}"]
)
def test_braces_that_are_not_placeholders_need_no_closing(template: str) -> None:
    assert CommandTemplate(template).template == template


def test_shell_braces_are_left_alone() -> None:
    template = CommandTemplate("awk '{print $1}' ${HOME} {a,b} {} {{input}} '{\"k\": 1}' {vars.x} {input}")
    rendered = template.render(Case(id="a", input="in put", vars={"x": "v"}))
    assert rendered == "awk '{print $1}' ${HOME} {a,b} {} {input} '{\"k\": 1}' v 'in put'"
    assert template.placeholders == ["{vars.x}", "{input}"]
