"""``python -m assay``."""

from assay.cli.main import main

main()
