"""``assay serve``: online variant selection from live pairwise feedback, with ratings in shared SQL state.

:func:`create_app` builds the FastAPI app; :class:`ServeState` is the same API in process; :func:`serve` runs
it under uvicorn. FastAPI, uvicorn and prometheus-client come with the ``serve`` extra.
"""

from __future__ import annotations

from assay.serve.settings import ServeSettings
from assay.serve.state import ServeState

__all__ = ["ServeSettings", "ServeState"]
