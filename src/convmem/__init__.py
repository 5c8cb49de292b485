"""convmem: deterministic, auditable memory for long LLM agent conversations.

The public API is small; names are imported lazily so that ``import convmem``
stays cheap for hook processes.
"""

from __future__ import annotations

# no runtime import of typing: hook processes import this package on every prompt
TYPE_CHECKING = False

__version__ = "0.1.0"

__all__ = [
    "ConvmemError",
    "Event",
    "MemoryRuntime",
    "MemoryStore",
    "Settings",
    "__version__",
    "load_settings",
    "open_store",
]

_LAZY = {
    "ConvmemError": "convmem.errors",
    "Event": "convmem.capture",
    "MemoryRuntime": "convmem.runtime",
    "MemoryStore": "convmem.memory.store",
    "Settings": "convmem.config",
    "load_settings": "convmem.config",
    "open_store": "convmem.runtime",
}

if TYPE_CHECKING:
    from typing import Any

    from convmem.capture import Event
    from convmem.config import Settings, load_settings
    from convmem.errors import ConvmemError
    from convmem.memory.store import MemoryStore
    from convmem.runtime import MemoryRuntime, open_store


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'convmem' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
