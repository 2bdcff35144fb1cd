"""Text generation with a loaded causal LM on the CPU: greedy or sampled, with a seed, stop strings and a
reused prompt prefix.

Evaluations send the same prompt head (instruction and few-shot examples) with every case and only the end
differs, so the key/value cache of the head is computed once and copied for each call. The prompt is always
split at its last blank line and the two parts are encoded and run separately, whether or not the head was
cached, so an answer never depends on what ran before it.
"""

from __future__ import annotations

import copy
import inspect
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

PREFIX_CACHE_SIZE = 8


@dataclass(frozen=True)
class Generated:
    """One completion: the text (cut before a stop string, stripped) and the token counts."""

    text: str
    tokens_in: int
    tokens_out: int


class LocalEngine:
    """A model and its tokenizer. Not thread-safe: callers run one generation at a time."""

    def __init__(self, model: Any, tokenizer: Any, torch: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.torch = torch
        eos = model.generation_config.eos_token_id
        self.eos = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if tokenizer.eos_token_id is not None:
            self.eos.add(tokenizer.eos_token_id)
        self._prefixes: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        # transformers 5.x renamed ``past_key_values`` to ``cache`` (the old name warns).
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"

    def _forward(self, ids: list[list[int]], cache: Any) -> tuple[Any, Any]:
        out = self.model(
            input_ids=self.torch.tensor(ids), use_cache=True, logits_to_keep=1, **{self._cache_arg: cache}
        )
        return out.logits[0, -1].float(), out[self._cache_arg]

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as this model encodes it (with the start token)."""
        return len(self.tokenizer(text)["input_ids"])

    def encode(self, prompt: str) -> tuple[list[int], list[int]]:
        """The prompt's head (up to and including its last blank line) and tail, encoded separately."""
        cut = prompt.rfind("\n\n") + 2
        head, tail = (prompt[:cut], prompt[cut:]) if 2 <= cut < len(prompt) else ("", prompt)
        head_ids = self.tokenizer(head)["input_ids"] if head else []
        tail_ids = self.tokenizer(tail, add_special_tokens=not head)["input_ids"]
        return list(head_ids), list(tail_ids)

    def _head_cache(self, head: list[int]) -> Any:
        key = tuple(head)
        if key in self._prefixes:
            self._prefixes.move_to_end(key)
        else:
            self._prefixes[key] = self._forward([head], None)[1]
            while len(self._prefixes) > PREFIX_CACHE_SIZE:
                self._prefixes.popitem(last=False)
        return copy.deepcopy(self._prefixes[key])

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
        stop: tuple[str, ...] = (),
    ) -> Generated:
        """Complete ``prompt``: greedy at temperature 0, else sampled with a generator seeded by ``seed``.
        Stops at an end-of-sequence token, after ``max_tokens`` tokens, or before the first stop string."""
        torch = self.torch
        head, tail = self.encode(prompt)
        generator = torch.Generator().manual_seed(seed) if temperature > 0 else None
        produced: list[int] = []
        text = ""
        with torch.inference_mode():
            cache = self._head_cache(head) if head else None
            logits, cache = self._forward([tail], cache)
            while len(produced) < max_tokens:
                if generator is None:
                    token = int(torch.argmax(logits))
                else:
                    probs = torch.softmax(logits / temperature, dim=-1)
                    token = int(torch.multinomial(probs, 1, generator=generator))
                if token in self.eos:
                    break
                produced.append(token)
                text = self.tokenizer.decode(produced, skip_special_tokens=True)
                hits = [i for i in (text.find(s) for s in stop if s) if i >= 0]
                if hits:
                    text = text[: min(hits)]
                    break
                if len(produced) < max_tokens:
                    logits, cache = self._forward([[token]], cache)
        return Generated(text.strip(), len(head) + len(tail), len(produced))
