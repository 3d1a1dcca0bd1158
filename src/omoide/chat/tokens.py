"""Token counting for the budget: the whole rendered prompt counted at once by
the backend (through the model's chat template where the backend can apply
it), remembered per prompt so the inspector's per-layer figures and the budget
fitting do not count the same prompt twice."""

from __future__ import annotations

from collections import OrderedDict

from omoide.errors import BackendError
from omoide.llm.base import Backend, ChatMessage, estimate_tokens

CACHE_SIZE = 64


class TokenCounter:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.exact = True
        """Whether every count since `reset()` was exact."""
        self.method = ""
        self._cache: OrderedDict[tuple[tuple[str, str], ...], int] = OrderedDict()

    def reset(self) -> None:
        self.exact, self.method = True, ""

    @staticmethod
    def _key(messages: list[ChatMessage]) -> tuple[tuple[str, str], ...]:
        # The texts themselves: a string keeps its hash once computed, and a hit
        # compares them whole (no digest of the whole prompt at every count).
        return tuple((m["role"], m.get("content") or "") for m in messages)

    async def count(self, messages: list[ChatMessage]) -> int:
        """Tokens of `messages` as one prompt."""
        key = self._key(messages)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        try:
            result = await self.backend.count_tokens(messages)
        except BackendError:
            result = estimate_tokens(messages)
        self.exact = self.exact and result.exact
        if not self.method or not result.exact:
            self.method = result.method
        self._cache[key] = result.tokens
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return result.tokens
