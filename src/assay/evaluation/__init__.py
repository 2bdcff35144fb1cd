"""Tiered evaluation, traces and executors."""
