"""The evolve loop: the engine, stop rules and layers."""
