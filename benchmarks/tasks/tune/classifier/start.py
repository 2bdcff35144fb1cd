"""A keyword classifier for support messages: is this a complaint?"""

WEIGHTS = {
    "refund": 1.0,
    "broken": 1.0,
    "late": 1.0,
    "never": 1.0,
    "again": 1.0,
    "thanks": 1.0,
    "great": 1.0,
    "love": 1.0,
    "help": 1.0,
    "account": 1.0,
}
THRESHOLD = 0.5


def classify(text: str) -> bool:
    score = sum(WEIGHTS.get(word, 0.0) for word in text.lower().split())
    return score > THRESHOLD
