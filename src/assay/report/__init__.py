"""The HTML report of a run or an evaluation: one self-contained file to look at instead of JSON.

:func:`run_report` reads a run from its events, :func:`render_run` turns it into a page; :func:`build_eval_report`
and :func:`render_eval` do the same for one evaluation. :func:`write_report` writes a page where no proposer or
candidate reads it.
"""

from assay.report.evalview import EvalReport, build_eval_report
from assay.report.output import default_run_output, write_report
from assay.report.page import render_eval, render_run
from assay.report.run import RunReport, load_run_report
from assay.report.sources import compare_source, run_report

__all__ = [
    "EvalReport",
    "RunReport",
    "build_eval_report",
    "compare_source",
    "default_run_output",
    "load_run_report",
    "render_eval",
    "render_run",
    "run_report",
    "write_report",
]
