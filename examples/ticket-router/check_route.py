"""The check: is the message routed to the team in the answer file? (Read-only: the proposer never sees it.)

Usage: python check_route.py ROUTES.json, with the router's output on stdin and the case id in ASSAY_CASE_ID.
"""

import json
import os
import sys

routes = json.load(open(sys.argv[1], encoding="utf-8"))
expected = routes[os.environ["ASSAY_CASE_ID"]]
team = sys.stdin.read().strip()
if team != expected["team"]:
    print(f"routed to {team}", file=sys.stderr)
    sys.exit(1)
