"""Stored responses for ``previous_response_id``: in memory, the oldest evicted past a bound."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

DEFAULT_STORE_SIZE = 256
"""Responses kept for ``previous_response_id``; older ones are forgotten."""


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """What a later request continues from: the whole conversation as Responses items."""

    response: dict[str, object]
    """The response object as it was returned."""
    items: list[dict[str, object]] = field(default_factory=list)
    """Every input item of the request (its previous responses' included), then the output items."""


class ResponseStore:
    """A bounded, thread-safe map from response id to :class:`StoredResponse` (least recently used out)."""

    def __init__(self, size: int = DEFAULT_STORE_SIZE) -> None:
        self.size = max(0, size)
        self._items: OrderedDict[str, StoredResponse] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, response_id: str, stored: StoredResponse) -> None:
        """Keep a response, evicting the least recently used beyond the bound."""
        with self._lock:
            self._items[response_id] = stored
            self._items.move_to_end(response_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def get(self, response_id: str) -> StoredResponse | None:
        """The stored response, or None when it was never stored or has been evicted."""
        with self._lock:
            stored = self._items.get(response_id)
            if stored is not None:
                self._items.move_to_end(response_id)
            return stored

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
