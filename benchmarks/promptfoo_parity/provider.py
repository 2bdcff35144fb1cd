"""A stand-in for a support bot: a fixed answer per topic, so both tools judge the same outputs.

promptfoo's exec provider calls it as `provider.py PROMPT OPTIONS CONTEXT`; it prints the answer."""

import re
import sys

prompt = sys.argv[1]
question = re.search(r"Question: (.*)", prompt).group(1).lower()
order = re.search(r"Order: (.*)", prompt).group(1).strip()
greeting = "Dear customer, " if prompt.startswith("Dear customer") else ""

if question.startswith("repeat "):
    answer = question.removeprefix("repeat ").upper()
elif "refund" in question:
    answer = f"{greeting}Refunds take 5 business days. Order {order} is eligible."
elif "ship" in question:
    answer = '{"carrier": "DHL", "days": 3, "tracking": true}'
elif "hours" in question or "open" in question:
    answer = f"{greeting}Yes, we are open 9am to 5pm, Monday to Friday."
elif "cancel" in question:
    answer = "I'm sorry, I can't cancel orders after dispatch."
elif "weekend" in question:
    answer = "Yes"
else:
    answer = "I don't know."
print(answer)
