"""Upper bounds on configured values, in a module of their own so that the CLI can name them in its options
without importing the config models."""

MAX_FILE_BYTES = 50 * 2**20
MAX_DURATION_S = 7 * 24 * 3600
MAX_CONCURRENCY = 1024
MAX_OUTPUT_BYTES = 2**30
MAX_PATH_BYTES = 4096
