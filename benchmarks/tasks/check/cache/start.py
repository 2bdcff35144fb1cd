"""Which entry a full cache drops: the one used longest ago (LRU), with room for frequency to count."""


class Cache:
    def __init__(
        self,
        capacity: int,
        recency: float = 1.0,
        frequency: float = 0.0,
        decay: float = 1.0,
        new_uses: float = 1.0,
    ) -> None:
        self.capacity = capacity
        self.recency = recency  # weight of when an entry was last used
        self.frequency = frequency  # weight of how often it was used
        self.decay = decay  # uses kept at each eviction (1.0: all)
        self.new_uses = new_uses  # uses a new entry starts with
        self.clock = 0
        self.entries: dict[str, list[float]] = {}  # key -> [last used, uses]

    def hit(self, key: str) -> None:
        self.clock += 1
        entry = self.entries[key]
        entry[0] = self.clock
        entry[1] += 1

    def miss(self, key: str) -> None:
        self.clock += 1
        self.entries[key] = [self.clock, self.new_uses]

    def victim(self) -> str:
        key = min(
            self.entries,
            key=lambda k: self.recency * self.entries[k][0] + self.frequency * self.entries[k][1],
        )
        del self.entries[key]
        for entry in self.entries.values():
            entry[1] *= self.decay
        return key
