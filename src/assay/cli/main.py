"""The ``assay`` command: one typer app, one module per subcommand."""

from __future__ import annotations

import gc
import os
import sys

import typer

from assay.cli.console import LazyConsole
from assay.cli.exits import CONFIG, COULD_NOT_RUN, INTERRUPTED
from assay.errors import AssayError
from assay.version import __version__

app = typer.Typer(
    name="assay",
    help="Make an artifact (prompt, skill, code, config, document) improve itself against cases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help and usage errors: typer's rich formatting imports markdown-it and pygments, which
    # tripled the time of `assay --help`.
    rich_markup_mode=None,
)
err = LazyConsole(stderr=True)


def _version(value: bool) -> None:
    if value:
        print(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """assay: cheap checks before expensive ones, and only changes that prove better are kept."""


# The subcommands and their modules. A command line that names one registers only it: the others' modules (and
# what they import) are not loaded on the way to its first case.
COMMANDS = {
    "init": "init",
    "eval": "eval",
    "cases": "cases",
    "evolve": "evolve",
    "resume": "evolve",
    "status": "runs",
    "log": "runs",
    "diff": "runs",
    "adopt": "runs",
    "rate": "rate",
    "report": "report",
    "serve": "serve",
}


def _register(command: str | None = None) -> None:
    import importlib

    chosen = COMMANDS.get(command or "")
    for module in dict.fromkeys(COMMANDS.values()):
        if chosen is None or module == chosen:
            importlib.import_module(f"assay.cli.{module}").register(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app. Usage errors get typer's usage message and exit 2; configuration errors
    print one line and exit 2; only a bug prints "internal error" (exit 3), never a traceback. The statuses
    are :mod:`assay.cli.exits`'s."""
    from assay.cli.collector import pause_for

    words = sys.argv[1:] if argv is None else argv
    paused = pause_for(words[0] if words else None)
    _register(words[0] if words else None)
    from assay.sandbox import install_cleanup

    install_cleanup()  # SIGTERM / SIGHUP end the untrusted processes first, then assay
    try:
        # Standalone mode: typer itself reports usage errors (unknown option or command, bad choice, missing
        # argument) with the usage line and exit status 2, and turns typer.Exit into the exit status.
        app(args=argv, prog_name="assay", standalone_mode=True)
    except AssayError as exc:
        from rich.text import Text

        err.print(Text("error:", style="red"), str(exc), highlight=False, soft_wrap=True)
        sys.exit(CONFIG)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(INTERRUPTED)
    except Exception as exc:
        if os.environ.get("ASSAY_DEBUG"):
            raise
        from rich.text import Text

        err.print(
            Text("internal error:", style="red"),
            f"{type(exc).__name__}: {exc} (set ASSAY_DEBUG=1 for the traceback)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(COULD_NOT_RUN)
    finally:
        if paused:
            gc.enable()  # a caller in the same process (a test) keeps its collector


if __name__ == "__main__":
    main()
