"""Placeholder: filled in by the runners work."""
