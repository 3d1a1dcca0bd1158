"""Token counting for the budget: the backend's tokenizer where it has one,
remembered per text so a long window is tokenized once, an estimate otherwise."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable

from omoide.errors import BackendError
from omoide.llm.base import Backend, estimate_tokens

CACHE_SIZE = 4096


class TokenCounter:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.exact = False
        self.method = "estimate (4 characters a token)"
        self._cache: OrderedDict[str, int] = OrderedDict()

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    async def prepare(self, texts: Iterable[str]) -> None:
        """Count every text not yet counted, with the backend's tokenizer."""
        for text in texts:
            key = self._key(text)
            if key in self._cache:
                self._cache.move_to_end(key)
                continue
            try:
                result = await self.backend.count_tokens([{"role": "user", "content": text}])
            except BackendError:
                result = estimate_tokens([{"role": "user", "content": text}])
            self.exact, self.method = result.exact, result.method
            self._cache[key] = result.tokens
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)

    def count(self, text: str) -> int:
        cached = self._cache.get(self._key(text))
        if cached is not None:
            return cached
        return len(text) // 4 + 1
