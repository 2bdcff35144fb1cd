"""Start-up: `assay --version` and `assay --help` load the command modules but none of the work behind them, so
they start in about the time of importing typer and pydantic (benchmarks/eval_overhead.py --only startup
measures it). A module-level import of the loaders, the checks or the loop in a command module breaks this."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = (
    "assay.config",
    "assay.cases.loader",
    "assay.checks",
    "assay.loop.engine",
    "assay.evaluation.session",
    "assay.report",
    "assay.serve.app",
    "numpy",
    "scipy",
    "sqlalchemy",
    "jinja2",
    "yaml",
)


def _modules_after(args: list[str]) -> set[str]:
    code = (
        "import json, sys\n"
        "from assay.cli.main import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_version_and_help_import_none_of_the_work() -> None:
    for args in (["--version"], ["--help"]):
        loaded = _modules_after(args)
        assert "assay.cli.cases" in loaded and "assay.cli.report" in loaded  # every command registered
        assert not [m for m in HEAVY if m in loaded], args


def test_a_command_line_that_names_a_command_registers_only_it() -> None:
    loaded = _modules_after(["eval", "--help"])
    assert "assay.cli.eval" in loaded
    assert not {"assay.cli.cases", "assay.cli.runs", "assay.cli.serve", "assay.cli.evolve"} & loaded


def test_an_eval_of_native_cases_without_a_terminal_loads_no_promptfoo_templates_or_progress_bar(
    tmp_path: Path,
) -> None:
    (tmp_path / "prompt.txt").write_text("x\n")
    (tmp_path / "cases.yaml").write_text("- {id: a, input: hi, checks: [{type: contains, value: hi}]}\n")
    (tmp_path / "assay.yaml").write_text(
        "artifact: {kind: prompt, paths: [prompt.txt]}\ncases: {files: [cases.yaml]}\n"
        "runner: {type: command, command: 'echo {input}', sandbox: none}\n"
    )
    loaded = _modules_after(["eval", "-q", "-c", str(tmp_path / "assay.yaml")])
    assert "assay.evaluation.session" in loaded  # it did evaluate
    assert not {"jinja2", "assay.cases.promptfoo", "rich.progress", "assay.cli.serve"} & loaded


def test_the_command_table_names_each_command_where_its_module_registers_it() -> None:
    """``COMMANDS`` is a second list of the commands: it must say, for every command a module registers, that
    module (a command it misplaced would not exist when named; one it lacked would load every module)."""
    import importlib

    import typer

    from assay.cli.main import COMMANDS

    registered = {}
    for module in dict.fromkeys(COMMANDS.values()):
        app = typer.Typer()
        importlib.import_module(f"assay.cli.{module}").register(app)
        for name in [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]:
            registered[name] = module
    assert registered == COMMANDS
