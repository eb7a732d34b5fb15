"""The one way into an LLM: the openai client with ``base_url``, cached and retried.

Requests are shaped by the model's family (``dlbench.config.model_family``): a chat model
is sent ``temperature`` and ``max_tokens``; a reasoning model (OpenAI's o1, o3, o4, gpt-5)
``max_completion_tokens``, no temperature, and ``reasoning_effort`` when one is set.
Every request is keyed by sha256 of (endpoint, model, messages, parameters incl. n and
seed) as sent, so a chat model's key is built as it was before families. A response is
stored in the on-disk cache before it is returned; a key found in the cache never reaches
the server again. Transient failures (429, 5xx, timeouts, lost
connections) are retried with exponential backoff and jitter, honouring ``Retry-After``
up to ``max_backoff_s`` (a longer one ends the request at once); what still fails
becomes a result with status ``api_error`` — recorded, never raised. So does a 200
whose body is not a usable chat completion (not JSON, no ``choices``, a choice without
``message``, ...): it is not retried (the server may have billed it) and not cached, so a
rerun asks again.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from pydantic import BaseModel, Field

from dlbench.config import DEFAULT_MAX_TOKENS, REASONING_TEMPERATURE, LLMEndpoint, ModelConfig, model_family
from dlbench.llm.responses import ResponseCache, request_key

if TYPE_CHECKING:  # the SDK takes a second to import: a rerun answered from the cache never needs it
    import openai

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://api.openai.com/v1"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
STATUS_OK = "ok"
STATUS_API_ERROR = "api_error"
RETRYABLE_STATUS = {408, 409, 429}
BATCH_FINAL = {"completed", "failed", "expired", "cancelled"}

Messages = list[dict[str, str]]


class LLMError(RuntimeError):
    """A problem with the LLM setup (not with one request)."""


class MissingAPIKeyError(LLMError):
    """A non-local endpoint and no API key in the configured environment variable."""


class UnansweredRequests(LLMError):
    """A job ends with requests still unanswered (api_error): it is not done; a rerun asks again."""


def count_errors(errors: Sequence[str | None], shown: int = 3) -> str:
    """The most common errors with their counts, for a one-line summary."""
    counts = Counter((error or "no detail").rstrip(".") for error in errors)
    return "; ".join(f"{n}x {error}" for error, n in counts.most_common(shown))


class LLMResult(BaseModel):
    """Outcome of one chat request (all ``n`` choices)."""

    text: str | None = Field(description="First choice's text (None on api_error).")
    texts: list[str] = Field(default_factory=list, description="Every choice's text (n > 1).")
    finish_reasons: list[str | None] = Field(default_factory=list)
    cache_key: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached: bool = False
    status: str = STATUS_OK
    error: str | None = None
    attempts: int = 0


@dataclass(frozen=True)
class ChatRequest:
    """One request for ``complete_many``: messages plus per-request parameters."""

    messages: Messages
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Usage:
    """Running totals of one client (thread-safe through the client's lock)."""

    requests: int = 0  # HTTP requests sent, retries included
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    errors: int = 0


class MalformedReply(ValueError):
    """A 2xx reply whose body is not a chat completion we can use."""


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None):
        super().__init__(message)
        self.retry_after = retry_after


def is_local(base_url: str | None) -> bool:
    return base_url is not None and urlparse(base_url).hostname in LOCAL_HOSTS


class LLMClient:
    """Cached, retried, concurrent chat completions against one endpoint and model."""

    def __init__(
        self,
        endpoint: str | None,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float | None = None,
        max_tokens: int | None = None,
        concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 6,
        prices: tuple[float | None, float | None] = (None, None),
        cache_dir: str | Path = ".cache/dlbench/llm",
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        family: str = "auto",
        reasoning_effort: str | None = None,
    ):
        """``temperature`` None: 0 for a chat model, none sent to a reasoning model; ``max_tokens``
        None: the family's default budget (``DEFAULT_MAX_TOKENS``); ``family``: 'auto' (from the
        model's name), 'chat' or 'reasoning'."""
        self.endpoint = endpoint or DEFAULT_ENDPOINT
        self.model = model
        self.family = model_family(model, family)
        self.defaults = _defaults(self.family, model, temperature, max_tokens, reasoning_effort)
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.price_in, self.price_out = prices
        self.cache = ResponseCache(cache_dir)
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.usage = Usage()
        self._lock = threading.Lock()
        self._api_key, self._timeout_s = _api_key(self.endpoint, api_key_env), timeout_s  # a missing key fails now
        self._sdk: openai.OpenAI | None = None
        self._sdk_lock = threading.Lock()

    def _client(self) -> openai.OpenAI:
        """The SDK's client, made once (concurrent requests wait for it) when the first
        request leaves the cache."""
        with self._sdk_lock:
            if self._sdk is None:
                import openai

                self._sdk = openai.OpenAI(
                    base_url=self.endpoint,
                    api_key=self._api_key,
                    timeout=self._timeout_s,
                    max_retries=0,  # retries are ours: jitter, Retry-After and one place to count them
                )
            return self._sdk

    @classmethod
    def from_endpoint(cls, cfg: LLMEndpoint | ModelConfig, cache_dir: str | Path, **overrides: Any) -> LLMClient:
        """Client for a configured endpoint (the prompts' LLM) or an openai model."""
        if not cfg.model:
            raise LLMError("the endpoint config names no model")
        family = cfg.request_family()
        kwargs: dict[str, Any] = dict(
            endpoint=cfg.base_url,
            model=cfg.model,
            api_key_env=cfg.api_key_env,
            # validation refused a reasoning model's temperature other than its default: none is sent
            temperature=cfg.temperature if family == "chat" else None,
            max_tokens=cfg.token_budget(),
            family=family,
            reasoning_effort=cfg.reasoning_effort,
            concurrency=cfg.concurrency,
            timeout_s=cfg.request_timeout(),
            max_retries=cfg.max_retries,
            prices=(cfg.price_in_per_mtok, cfg.price_out_per_mtok),
            cache_dir=cache_dir,
        )
        return cls(**(kwargs | overrides))

    # ------------------------------------------------------------ public API

    def key(self, messages: Messages, **params: Any) -> str:
        """Cache key of a request: sha256 of endpoint, model, messages and all parameters."""
        return request_key(self._payload(messages, params))

    def chat(self, messages: Messages, **params: Any) -> LLMResult:
        """One chat completion (``n`` choices); cached, retried, never raises on API errors."""
        return self.complete_many([ChatRequest(messages, params)])[0]

    def chat_many(self, list_of_messages: Sequence[Messages], **params: Any) -> list[LLMResult]:
        """Many chats with the same parameters, ``concurrency`` at a time, in input order."""
        return self.complete_many([ChatRequest(m, params) for m in list_of_messages])

    def complete_many(
        self, requests: Sequence[ChatRequest], on_result: Callable[[int, LLMResult], None] | None = None
    ) -> list[LLMResult]:
        """Run requests ``concurrency`` at a time; identical requests are sent once.

        Results come back in input order; ``on_result(index, result)`` is also called, on
        the calling thread, as soon as each one is ready (e.g. to journal it).
        """
        payloads = [self._payload(r.messages, r.params) for r in requests]
        keys = [request_key(p) for p in payloads]
        indices: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            indices.setdefault(key, []).append(i)
        results: dict[str, LLMResult] = {}
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = {pool.submit(self._complete, key, payloads[ix[0]]): key for key, ix in indices.items()}
            for future in as_completed(futures):
                key = futures[future]
                results[key] = future.result()
                for i in indices[key] if on_result else ():
                    on_result(i, results[key])
        return [results[k] for k in keys]

    def batch_many(
        self,
        requests: Sequence[ChatRequest],
        on_result: Callable[[int, LLMResult], None] | None = None,
        poll_s: float = 60.0,
    ) -> list[LLMResult]:
        """Like ``complete_many`` through the Batch API (cheaper, slower): one batch for
        every request not in the cache, polled at growing intervals up to ``poll_s``. The
        batch id is kept under the cache folder until its answers are cached, so a killed
        job re-attaches instead of paying again."""
        payloads = [self._payload(r.messages, r.params) for r in requests]
        keys = [request_key(p) for p in payloads]
        results = {k: r for k in dict.fromkeys(keys) if (r := self._cached(k)) is not None}
        missing = {k: p for k, p in zip(keys, payloads, strict=True) if k not in results}
        if missing:
            results |= self._run_batch(missing, poll_s)
        for i, key in enumerate(keys if on_result else ()):
            on_result(i, results[key])  # type: ignore[misc]
        return [results[k] for k in keys]

    # ------------------------------------------------------------ internals

    def _run_batch(self, payloads: dict[str, dict[str, Any]], poll_s: float) -> dict[str, LLMResult]:
        state = self.cache.root / "batches" / f"{request_key(sorted(payloads))}.json"
        api = self._client().with_options(max_retries=self.max_retries)  # the SDK honours Retry-After
        batch = self._attach(api, state) or self._submit(api, payloads, state)
        log.info("batch %s: %d requests, %s", batch.id, len(payloads), batch.status)
        for poll in itertools.count():
            if batch.status in BATCH_FINAL:
                break
            time.sleep(min(poll_s, 0.1 * 2**poll))
            batch = api.batches.retrieve(batch.id)
        answers = self._batch_answers(api, batch) if batch.status == "completed" else {}
        results = {}
        for key in payloads:
            status, body = answers.get(key, (None, f"batch {batch.id} ended {batch.status} without an answer"))
            results[key] = self._batch_result(key, batch.id, status, body)
        state.unlink(missing_ok=True)
        return results

    def _batch_result(self, key: str, batch_id: str, status: int | None, body: Any) -> LLMResult:
        if status != 200:
            return self._failed(key, f"batch {batch_id}: {body}", 1)
        from openai.types.chat import ChatCompletion

        try:
            response = _response(ChatCompletion.model_validate(body))
        except (TypeError, AttributeError, ValueError) as exc:  # ValueError: pydantic's ValidationError
            return self._failed(key, f"batch {batch_id}: malformed answer ({exc})", 1)
        return self._stored(key, response, 1)

    def _attach(self, api: openai.OpenAI, state: Path) -> Any:
        if not state.exists():
            return None
        batch = api.batches.retrieve(json.loads(state.read_text())["batch_id"])
        return None if batch.status in BATCH_FINAL - {"completed"} else batch

    def _submit(self, api: openai.OpenAI, payloads: dict[str, dict[str, Any]], state: Path) -> Any:
        lines = [
            {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": _body(self.model, p)}
            for key, p in payloads.items()
        ]
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        uploaded = api.files.create(file=("requests.jsonl", data), purpose="batch")
        batch = api.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h")
        with self._lock:
            self.usage.requests += len(lines)
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps({"batch_id": batch.id}))
        return batch

    @staticmethod
    def _batch_answers(api: openai.OpenAI, batch: Any) -> dict[str, tuple[int | None, Any]]:
        """custom_id → (HTTP status, completion body or error) from the output and error files."""
        answers: dict[str, tuple[int | None, Any]] = {}
        for file_id in (batch.error_file_id, batch.output_file_id):
            for line in api.files.content(file_id).text.splitlines() if file_id else ():
                record = json.loads(line)
                response = record.get("response") or {}
                answers[record["custom_id"]] = (
                    response.get("status_code"),
                    response.get("body") or record.get("error"),
                )
        return answers

    def _payload(self, messages: Messages, params: dict[str, Any]) -> dict[str, Any]:
        given = {k: v for k, v in params.items() if v is not None}
        if self.family == "reasoning":
            given = _reasoning_params(self.model, given)
        merged = self.defaults | given
        return {"endpoint": self.endpoint, "model": self.model, "messages": list(messages), "params": merged}

    def _complete(self, key: str, payload: dict[str, Any]) -> LLMResult:
        cached = self._cached(key)
        if cached is not None:
            return cached
        response, attempts, error = self._call_with_retries(payload)
        if response is None:
            return self._failed(key, error, attempts)
        return self._stored(key, response, attempts)

    def _cached(self, key: str) -> LLMResult | None:
        stored = self.cache.get(key)
        if stored is None:
            return None
        with self._lock:
            self.usage.cache_hits += 1
        return self._result(key, stored, cached=True)

    def _stored(self, key: str, response: dict[str, Any], attempts: int) -> LLMResult:
        self.cache.put(key, response)  # stored before use: a kill after this never pays again
        result = self._result(key, response, cached=False)
        with self._lock:
            self.usage.input_tokens += result.input_tokens
            self.usage.output_tokens += result.output_tokens
            self.usage.cost_usd += result.cost_usd
        return result.model_copy(update={"attempts": attempts})

    def _failed(self, key: str, error: str | None, attempts: int) -> LLMResult:
        with self._lock:
            self.usage.errors += 1
        return LLMResult(text=None, cache_key=key, status=STATUS_API_ERROR, error=error, attempts=attempts)

    def _call_with_retries(self, payload: dict[str, Any]) -> tuple[dict[str, Any] | None, int, str | None]:
        import openai

        error = None
        for attempt in range(self.max_retries + 1):
            with self._lock:
                self.usage.requests += 1
            try:
                return self._call(payload), attempt + 1, None
            except _Retryable as exc:
                error = str(exc)
                if exc.retry_after is not None and exc.retry_after > self.max_backoff_s:
                    return None, attempt + 1, self._too_long(error, exc.retry_after)
                if attempt < self.max_retries:
                    delay = self._delay(attempt, exc.retry_after)
                    log.warning("%s (attempt %d); retrying in %.2fs", error, attempt + 1, delay)
                    time.sleep(delay)
            except openai.APIError as exc:  # 4xx other than 408/409/429: retrying cannot help
                return None, attempt + 1, _describe(exc)  # also APIResponseValidationError (a 200)
            except MalformedReply as exc:
                return None, attempt + 1, str(exc)
        return None, self.max_retries + 1, f"gave up after {self.max_retries + 1} attempts: {error}"

    def _too_long(self, error: str, retry_after: float) -> str:
        """A Retry-After beyond our longest wait (e.g. a day's quota) ends the request now:
        recorded as api_error, so the job fails with a summary and a later run asks again."""
        return f"{error}; Retry-After {retry_after:.0f}s exceeds max_backoff_s={self.max_backoff_s:.0f}s: not waiting"

    def _call(self, payload: dict[str, Any]) -> dict[str, Any]:
        import openai

        try:
            raw = self._client().chat.completions.with_raw_response.create(**_body(self.model, payload))
        except openai.APIStatusError as exc:
            if exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500:
                raise _Retryable(_describe(exc), _retry_after(exc)) from exc
            raise
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise _Retryable(_describe(exc), None) from exc
        return _parsed(raw)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after + random.uniform(0, 0.1 * max(retry_after, 0.01))
        base = min(self.max_backoff_s, self.backoff_s * 2**attempt)
        return base * random.uniform(0.5, 1.0)  # jitter keeps concurrent retries apart

    def _result(self, key: str, response: dict[str, Any], cached: bool) -> LLMResult:
        texts = list(response["texts"])
        tokens_in, tokens_out = int(response["input_tokens"]), int(response["output_tokens"])
        return LLMResult(
            text=texts[0] if texts else None,
            texts=texts,
            finish_reasons=list(response.get("finish_reasons", [])),
            cache_key=key,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost_usd=self.cost(tokens_in, tokens_out),
            cached=cached,
        )

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for the tokens at the configured per-million prices (0 when unpriced)."""
        return (input_tokens * (self.price_in or 0.0) + output_tokens * (self.price_out or 0.0)) / 1e6


def _parsed(raw: Any) -> dict[str, Any]:
    """The cached form of a 2xx reply, or MalformedReply naming what is wrong with its body."""
    try:
        return _response(raw.parse())
    except (TypeError, AttributeError, ValueError, RecursionError) as exc:  # ValueError: JSON and pydantic
        problem = str(exc) if isinstance(exc, MalformedReply) else f"{type(exc).__name__}: {exc}"
        body = raw.http_response.text[:200]
        raise MalformedReply(f"HTTP {raw.status_code}: malformed reply ({problem}); body starts {body!r}") from exc


def _response(completion: Any) -> dict[str, Any]:
    """What the cache keeps of a completion; checked here, before anything is cached.

    The SDK builds its models without validation, so a broken body arrives as a text, a
    list, or a ChatCompletion with None where a field should be.
    """
    from openai.types.chat import ChatCompletion

    if not isinstance(completion, ChatCompletion):
        raise MalformedReply(f"not a chat completion but a {type(completion).__name__}")
    if not isinstance(completion.choices, list):
        raise MalformedReply("no 'choices' list")
    texts, finish_reasons = [], []
    for i, choice in enumerate(completion.choices):
        message = getattr(choice, "message", None)
        if message is None:
            raise MalformedReply(f"choice {i} has no 'message'")
        if not isinstance(message.content, str | None):
            raise MalformedReply(f"choice {i}: 'content' is a {type(message.content).__name__}, not text")
        texts.append(message.content or "")
        finish_reasons.append(None if choice.finish_reason is None else str(choice.finish_reason))
    usage = completion.usage
    return {
        "texts": texts,
        "finish_reasons": finish_reasons,
        "input_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
        "model": completion.model,
        "id": completion.id,
    }


def _defaults(
    family: str, model: str, temperature: float | None, max_tokens: int | None, effort: str | None
) -> dict[str, Any]:
    """Parameters every request of the client carries, in its family's form."""
    budget = max_tokens or DEFAULT_MAX_TOKENS[family]
    if family == "chat":
        if effort is not None:
            raise LLMError(f"{model} is a chat model: it takes no reasoning_effort (got {effort!r})")
        return {"temperature": 0.0 if temperature is None else temperature, "max_tokens": budget, "n": 1}
    params = _reasoning_params(model, {"max_completion_tokens": budget, "n": 1, "temperature": temperature})
    return params | ({"reasoning_effort": effort} if effort is not None else {})


def _reasoning_params(model: str, params: dict[str, Any]) -> dict[str, Any]:
    """A reasoning model's form of request parameters: the budget as ``max_completion_tokens``;
    no temperature (its default, 1, is dropped; any other is an error, never silently changed)."""
    params = dict(params)
    if "max_tokens" in params:
        params["max_completion_tokens"] = params.pop("max_tokens")
    temperature = params.pop("temperature", None)
    if temperature is not None and temperature != REASONING_TEMPERATURE:
        raise LLMError(f"{model} is a reasoning model: it samples at temperature 1 only (got {temperature})")
    return params


def _body(model: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"model": model, "messages": payload["messages"], **payload["params"]}


def _api_key(endpoint: str, env: str) -> str:
    key = os.environ.get(env)
    if key:
        return key
    if is_local(endpoint):
        return "local-standin"  # the local stand-in ignores keys
    raise MissingAPIKeyError(
        f"no API key for {endpoint}: set the environment variable {env} "
        "(or point base_url at a local OpenAI-compatible server)"
    )


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def _describe(exc: openai.APIError) -> str:
    status = getattr(exc, "status_code", None)
    prefix = f"HTTP {status}" if status else type(exc).__name__
    return f"{prefix}: {exc.message}"
