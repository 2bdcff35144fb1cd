"""Start-up: `assay --version` and `assay --help` load the command modules but none of the work behind them, so
they start in about the time of importing typer and pydantic (benchmarks/eval_overhead.py --only startup
measures it). A module-level import of the loaders, the checks or the loop in a command module breaks this."""

from __future__ import annotations

import json
import subprocess
import sys

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
