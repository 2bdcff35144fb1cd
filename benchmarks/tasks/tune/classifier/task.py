"""A keyword text classifier: ``classify(text)`` says whether a support message is a complaint. Each instance
is 40 messages of 3-8 words (keywords and filler); a message is a complaint when its keywords' hidden weights
sum above a hidden threshold. The gap is the error rate, in percent."""

import random

FILE = "classify.py"
FUNCTION = "classify"
TARGET = 5.0
PARAMETERS = {
    "WEIGHTS['refund']": (-3.0, 3.0),
    "WEIGHTS['broken']": (-3.0, 3.0),
    "WEIGHTS['late']": (-3.0, 3.0),
    "WEIGHTS['never']": (-3.0, 3.0),
    "WEIGHTS['again']": (-3.0, 3.0),
    "WEIGHTS['thanks']": (-3.0, 3.0),
    "WEIGHTS['great']": (-3.0, 3.0),
    "WEIGHTS['love']": (-3.0, 3.0),
    "WEIGHTS['help']": (-3.0, 3.0),
    "WEIGHTS['account']": (-3.0, 3.0),
    "THRESHOLD": (-3.0, 3.0),
}
_WEIGHTS = {
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
_THRESHOLD = 0.9
_FILLER = ("the", "my", "order", "was", "it", "please", "today", "and", "is", "a")


def instance(seed):
    rng = random.Random(seed)
    words = list(_WEIGHTS)
    messages = []
    for _ in range(40):
        text = [
            rng.choice(words) if rng.random() < 0.5 else rng.choice(_FILLER) for _ in range(rng.randint(3, 8))
        ]
        messages.append([" ".join(text), sum(_WEIGHTS.get(w, 0.0) for w in text) > _THRESHOLD])
    return {"messages": messages}


def gap(classify, instance):
    wrong = sum(bool(classify(text)) != label for text, label in instance["messages"])
    return 100 * wrong / len(instance["messages"])
