"""The LLM client against the local stand-in, through the real openai client over HTTP."""

from __future__ import annotations

import subprocess
import sys
import time

import openai  # noqa: F401  (imported once here: the SDK's one-time import is not what the timings below measure)
import pytest

from dlbench.config import LLMEndpoint, ModelConfig
from dlbench.llm import ChatRequest, LLMClient, MissingAPIKeyError
from dlbench.standins.llm import Fault, LLMStandIn, Reply, ScriptedResponder

ASK = [{"role": "user", "content": "Complete the function:\n\ndef add(a, b):\n    '''Add.'''\n"}]


@pytest.fixture()
def server():
    with LLMStandIn() as s:
        yield s


def client_for(server: LLMStandIn, tmp_path, **kw) -> LLMClient:
    kw.setdefault("backoff_s", 0.01)
    return LLMClient(server.base_url, "standin-model", cache_dir=tmp_path / "cache", **kw)


def test_chat_returns_code_usage_and_cost(server, tmp_path):
    client = client_for(server, tmp_path, prices=(2.0, 8.0))
    result = client.chat(ASK)
    assert result.status == "ok" and not result.cached
    assert "```python\ndef add(a, b):" in result.text
    assert result.input_tokens > 0 and result.output_tokens > 0
    assert result.cost_usd == pytest.approx((result.input_tokens * 2 + result.output_tokens * 8) / 1e6)
    assert result.finish_reasons == ["stop"]


def test_cache_hit_makes_zero_requests(server, tmp_path):
    first = client_for(server, tmp_path).chat(ASK)
    assert server.served == 1
    again = client_for(server, tmp_path)  # a new process-like client on the same cache
    second = again.chat(ASK)
    assert second.cached and second.text == first.text and second.cache_key == first.cache_key
    assert server.served == 1 and len(server.log) == 1 and again.usage.requests == 0


def test_a_rerun_answered_from_the_cache_never_imports_the_sdk(server, tmp_path):
    """The SDK takes a second to import: every generate job of a rerun would pay it for nothing."""
    client_for(server, tmp_path).chat(ASK)
    script = (
        "import sys\nfrom dlbench.llm import LLMClient\n"
        f"client = LLMClient({server.base_url!r}, 'standin-model', cache_dir={str(tmp_path / 'cache')!r})\n"
        f"assert client.chat({ASK!r}).cached\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'openai'))\n"
    )
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "[]" and server.served == 1


def test_key_covers_model_messages_and_parameters(server, tmp_path):
    client = client_for(server, tmp_path)
    base = client.key(ASK)
    assert client.key(ASK, n=2) != base
    assert client.key(ASK, seed=1) != base
    assert client.key(ASK, temperature=0.7) != base
    assert client.key([{"role": "user", "content": "other"}]) != base
    other_model = LLMClient(server.base_url, "other-model", cache_dir=tmp_path / "cache")
    assert other_model.key(ASK) != base
    assert client.key(ASK) == base


def test_n_samples_return_every_choice(server, tmp_path):
    result = client_for(server, tmp_path).chat(ASK, n=3, temperature=0.8)
    assert len(result.texts) == 3 and len(set(result.texts)) == 3
    assert result.text == result.texts[0]


def test_retries_429_honouring_retry_after_then_500(server, tmp_path):
    server.fail_next(Fault("rate_limit", retry_after=0.3), Fault("server_error"))
    client = client_for(server, tmp_path)
    start = time.monotonic()
    result = client.chat(ASK)
    assert result.status == "ok" and result.attempts == 3
    assert time.monotonic() - start >= 0.3  # waited as the server asked
    assert [r.status for r in server.log] == [429, 500, 200]


def test_timeout_is_retried(server, tmp_path):
    server.fail_next(Fault("timeout", delay_s=1.5))
    result = client_for(server, tmp_path, timeout_s=0.3).chat(ASK)
    assert result.status == "ok" and result.attempts == 2


def test_errors_after_retries_are_recorded_not_raised_nor_cached(server, tmp_path):
    server.fail_next(*[Fault("server_error")] * 3)
    client = client_for(server, tmp_path, max_retries=2)
    result = client.chat(ASK)
    assert result.status == "api_error" and result.text is None
    assert "HTTP 500" in result.error and "3 attempts" in result.error
    assert result.cache_key not in client.cache  # a rerun asks again
    assert client.chat(ASK).status == "ok"


def test_client_error_is_not_retried(tmp_path):
    def bad_request(body, index):
        raise ValueError("boom")

    with LLMStandIn(responder=bad_request) as s:
        result = client_for(s, tmp_path, max_retries=0).chat(ASK)
    assert result.status == "api_error" and "responder failed: boom" in result.error


def test_chat_many_keeps_order_runs_concurrently_and_dedupes(tmp_path):
    asks = [[{"role": "user", "content": f"Write function `f{i}`"}] for i in range(8)]
    with LLMStandIn(latency_s=0.2) as s:
        client = client_for(s, tmp_path, concurrency=8)
        start = time.monotonic()
        results = client.chat_many(asks + asks[:2])
        elapsed = time.monotonic() - start
    assert [r.text.split("`")[1] for r in results] == [f"f{i}" for i in range(8)] + ["f0", "f1"]
    assert s.served == 8 and not s.repeated()
    assert elapsed < 0.2 * 8 / 2  # well below the serial time


def test_complete_many_takes_per_request_parameters(server, tmp_path):
    client = client_for(server, tmp_path)
    results = client.complete_many([ChatRequest(ASK, {"seed": 0}), ChatRequest(ASK, {"seed": 1})])
    assert results[0].cache_key != results[1].cache_key and server.served == 2


def test_length_finish_reason_and_scripted_replies(tmp_path):
    script = ScriptedResponder(["first", Reply("x" * 100)])
    with LLMStandIn(responder=script) as s:
        client = client_for(s, tmp_path)
        assert client.chat(ASK).text == "first"
        cut = client.chat(ASK, max_tokens=5)
    assert cut.finish_reasons == ["length"] and cut.text == "x" * 20


def test_missing_key_for_remote_endpoint_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("DLBENCH_TEST_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError, match="DLBENCH_TEST_KEY"):
        LLMClient(None, "gpt-4o", api_key_env="DLBENCH_TEST_KEY", cache_dir=tmp_path)
    monkeypatch.setenv("DLBENCH_TEST_KEY", "sk-test")
    assert LLMClient("https://llm.example.org/v1", "m", api_key_env="DLBENCH_TEST_KEY", cache_dir=tmp_path)


def test_from_endpoint_uses_config(server, tmp_path):
    endpoint = LLMEndpoint(base_url=server.base_url, model="standin-model", temperature=0.3, max_tokens=64)
    client = LLMClient.from_endpoint(endpoint, tmp_path)
    assert client.defaults == {"temperature": 0.3, "max_tokens": 64, "n": 1}
    model = ModelConfig(provider="openai", base_url=server.base_url, model="m2", concurrency=3)
    assert LLMClient.from_endpoint(model, tmp_path).concurrency == 3
    assert client.chat(ASK).status == "ok"


def test_models_route(server):
    import openai

    listed = openai.OpenAI(base_url=server.base_url, api_key="x").models.list()
    assert [m.id for m in listed.data] == ["standin-model"]


def test_on_result_reports_every_index_as_it_completes(server, tmp_path):
    seen = []
    client = client_for(server, tmp_path, concurrency=4)
    asks = [[{"role": "user", "content": f"Write function `g{i % 3}`"}] for i in range(5)]
    results = client.complete_many([ChatRequest(a) for a in asks], on_result=lambda i, r: seen.append((i, r.text)))
    assert sorted(seen) == [(i, r.text) for i, r in enumerate(results)]
    assert server.served == 3


MALFORMED = {
    "no choices": ('{"id": "x", "object": "chat.completion"}', "application/json", "choices"),
    "not json": ("not json at all", "application/json", "JSONDecodeError"),
    "text body": ("not json at all", "text/plain", "not a chat completion"),
    "choice without message": ('{"choices": [{"index": 0}]}', "application/json", "message"),
    "content not text": ('{"choices": [{"index": 0, "message": {"content": 5}}]}', "application/json", "content"),
    "json list": ("[]", "application/json", "not a chat completion"),
}


@pytest.mark.parametrize("shape", MALFORMED)
def test_malformed_200_reply_is_an_api_error_not_cached(server, tmp_path, shape):
    body, content_type, hint = MALFORMED[shape]
    server.fail_next(Fault("malformed", body=body, content_type=content_type))
    client = client_for(server, tmp_path, max_retries=3)
    result = client.chat(ASK)
    assert result.status == "api_error" and result.text is None
    assert "malformed" in result.error and hint in result.error
    assert result.attempts == 1 and [r.status for r in server.log] == [200]  # a 200 is not retried
    assert result.cache_key not in client.cache and client.usage.errors == 1
    assert client.chat(ASK).status == "ok"  # a rerun asks again and gets the real answer
