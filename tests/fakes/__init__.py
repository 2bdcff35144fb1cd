"""Stand-ins for paid services, used by tests and benchmarks (a scripted LLM server on loopback)."""
