"""Placeholder: filled in by the checks work."""
