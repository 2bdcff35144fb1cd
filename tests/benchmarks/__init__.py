"""Smoke tests of the scripts in benchmarks/ (each run in its quick mode, in a subprocess)."""
