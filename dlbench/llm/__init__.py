"""LLM layer: one OpenAI-compatible client with a content-addressed response cache.

Other stages use ``LLMClient.from_endpoint(cfg, cache_dir)`` and ``client.chat`` /
``client.chat_many``; ``dlbench.standins.llm.LLMStandIn`` is a local server for offline runs.
"""

from dlbench.llm.client import (
    ChatRequest,
    LLMClient,
    LLMError,
    LLMResult,
    MissingAPIKeyError,
)

__all__ = ["ChatRequest", "LLMClient", "LLMError", "LLMResult", "MissingAPIKeyError"]
