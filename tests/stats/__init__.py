"""Tests of assay.stats."""
