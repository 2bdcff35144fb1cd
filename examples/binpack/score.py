"""The check: how close the packing is to the lower bound (score = lower_bound / bins, in (0, 1]).

A case passes when it uses at most 3% more bins than the lower bound.
"""

import json


def check(output: str, context: dict) -> dict:
    result = json.loads(output)
    ratio = result["lower_bound"] / result["bins"]
    return {"pass": result["bins"] <= result["lower_bound"] * 1.03, "score": ratio,
            "reason": f"{result['bins']} bins for a lower bound of {result['lower_bound']}"}
