"""Route a support message to the team that handles it. This is the artifact: `assay evolve` may edit it."""

import sys

TEAMS = {
    "billing": ["invoice", "charge", "refund", "payment"],
    "shipping": ["parcel", "delivery", "tracking"],
    "returns": ["return", "exchange"],
    "technical": ["error", "crash", "login"],
}


def route(message: str) -> str:
    words = message.lower().split()
    for team, keywords in TEAMS.items():
        if any(word in keywords for word in words):
            return team
    return "general"


if __name__ == "__main__":
    print(route(" ".join(sys.argv[1:])))
