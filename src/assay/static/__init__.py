"""L1 static tier: structure, syntax, security scan."""
