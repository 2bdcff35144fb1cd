"""Loading cases (native, skill-creator evals.json, promptfoo) and splitting them."""
