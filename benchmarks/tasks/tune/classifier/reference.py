WEIGHTS = {
    "refund": 1.6,
    "broken": 1.2,
    "late": 0.7,
    "never": 0.5,
    "again": 0.3,
    "thanks": -1.1,
    "great": -0.9,
    "love": -1.4,
    "help": 0.2,
    "account": 0.1,
}
THRESHOLD = 0.9


def classify(text: str) -> bool:
    score = sum(WEIGHTS.get(word, 0.0) for word in text.lower().split())
    return score > THRESHOLD
