"""Which entry a full cache drops: segmented LRU. Entries seen once wait on probation and are dropped first,
oldest first, while probation holds more than 30% of the cache; an entry hit again is protected."""


class Cache:
    def __init__(self, capacity: int) -> None:
        self.floor = 0.3 * capacity
        self.once: dict[str, None] = {}  # in order of arrival
        self.again: dict[str, None] = {}  # in order of last use

    def hit(self, key: str) -> None:
        if key in self.once:
            del self.once[key]
        else:
            del self.again[key]
        self.again[key] = None

    def miss(self, key: str) -> None:
        self.once[key] = None

    def victim(self) -> str:
        pool = self.once if len(self.once) > self.floor or not self.again else self.again
        key = next(iter(pool))
        del pool[key]
        return key
