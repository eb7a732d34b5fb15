"""Model families: reasoning models (OpenAI's o1, o3, o4, gpt-5) are sent max_completion_tokens
and no temperature, chat models temperature and max_tokens, through the real openai client
against the stand-in, which refuses the wrong form with OpenAI's 400 (issue 26, item 1)."""

from __future__ import annotations

import openai
import pytest

from dlbench.config import ConfigError, LLMEndpoint, ModelConfig, load_config, model_family
from dlbench.generate.jobs import generate_file
from dlbench.llm import ChatRequest, LLMClient, LLMError
from dlbench.llm.responses import request_key
from dlbench.records import Generation, GenStatus
from dlbench.standins.llm import LLMStandIn
from dlbench.store import read_jsonl, write_jsonl
from tests.test_generate_run import REPOS, make_tasks

ASK = [{"role": "user", "content": "Complete the function:\n\ndef add(a, b):\n    '''Add.'''\n"}]
MAX_TOKENS_REFUSED = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}
TEMPERATURE_REFUSED = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0.3 with this model. "
        "Only the default (1) value is supported.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
}


@pytest.fixture()
def server():
    with LLMStandIn() as s:
        yield s


def raw_client(server: LLMStandIn) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="local-standin", max_retries=0)


def sent(server: LLMStandIn) -> list[dict]:
    """Bodies the stand-in received, without model and messages."""
    return [{k: v for k, v in r.body.items() if k not in ("model", "messages")} for r in server.log]


# ------------------------------------------------------------------ detection


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("o1", "reasoning"),
        ("o1-mini", "reasoning"),
        ("o3-mini", "reasoning"),
        ("o3-mini-2025-01-31", "reasoning"),
        ("o4-mini", "reasoning"),
        ("gpt-5", "reasoning"),
        ("gpt-5-mini", "reasoning"),
        ("gpt-5.1", "reasoning"),
        ("openai/o3-mini", "reasoning"),
        ("O3-Mini", "reasoning"),
        ("gpt-4o", "chat"),
        ("gpt-4.1-mini", "chat"),
        ("qwen2.5-coder", "chat"),
        ("olmo-2", "chat"),
        ("o10-like", "chat"),
        ("standin-model", "chat"),
        (None, "chat"),
    ],
)
def test_family_from_the_model_name(name, family):
    assert model_family(name) == family
    other = "chat" if family == "reasoning" else "reasoning"
    assert model_family(name, other) == other  # the per-model override wins


# ------------------------------------------------------------------ the stand-in checks the form


def test_standin_refuses_max_tokens_and_temperature_of_a_reasoning_model_like_openai(server):
    api = raw_client(server)
    with pytest.raises(openai.BadRequestError) as refused:
        api.chat.completions.create(model="o3-mini", messages=ASK, max_tokens=100)
    assert refused.value.status_code == 400
    assert refused.value.response.json() == MAX_TOKENS_REFUSED
    with pytest.raises(openai.BadRequestError) as refused:
        api.chat.completions.create(model="o3-mini", messages=ASK, temperature=0.3, max_completion_tokens=100)
    assert refused.value.response.json() == TEMPERATURE_REFUSED
    with pytest.raises(openai.BadRequestError, match="does not support 0 with this model"):
        api.chat.completions.create(model="gpt-5-mini", messages=ASK, temperature=0)
    with pytest.raises(openai.BadRequestError, match="'reasoning_effort' does not support 'extreme'"):
        api.chat.completions.create(model="o4-mini", messages=ASK, extra_body={"reasoning_effort": "extreme"})
    # the right form, and the default temperature, are answered
    ok = api.chat.completions.create(
        model="o3-mini", messages=ASK, max_completion_tokens=100, reasoning_effort="high", temperature=1
    )
    assert "def add(a, b)" in ok.choices[0].message.content
    assert [r.status for r in server.log] == [400, 400, 400, 400, 200]


def test_standin_keeps_chat_models_as_they_were_and_refuses_their_reasoning_effort(server):
    api = raw_client(server)
    ok = api.chat.completions.create(model="gpt-4o", messages=ASK, temperature=0.3, max_tokens=100)
    also = api.chat.completions.create(model="gpt-4o", messages=ASK, max_completion_tokens=100)
    assert ok.choices[0].finish_reason == "stop" and also.choices[0].finish_reason == "stop"
    with pytest.raises(openai.BadRequestError) as refused:
        api.chat.completions.create(model="gpt-4o", messages=ASK, reasoning_effort="low")
    assert refused.value.response.json()["error"]["param"] == "reasoning_effort"


def test_standin_serves_the_reasoning_models_it_is_told_to():
    api_of = raw_client
    with LLMStandIn(reasoning_models={"house-reasoner"}) as server:
        with pytest.raises(openai.BadRequestError, match="max_completion_tokens"):
            api_of(server).chat.completions.create(model="house-reasoner", messages=ASK, max_tokens=10)
        # a local server that names its model o3-mini but takes chat parameters
        api_of(server).chat.completions.create(model="o3-mini", messages=ASK, max_tokens=10, temperature=0.2)


def test_the_batch_api_refuses_a_line_of_the_wrong_form(server, tmp_path):
    right = LLMClient(server.base_url, "o3-mini", cache_dir=tmp_path / "right")
    wrong = LLMClient(server.base_url, "o3-mini", family="chat", cache_dir=tmp_path / "wrong")
    assert right.batch_many([ChatRequest(ASK)], poll_s=0.1)[0].status == "ok"
    refused = wrong.batch_many([ChatRequest(ASK)], poll_s=0.1)[0]
    assert refused.status == "api_error" and "max_completion_tokens" in refused.error


# ------------------------------------------------------------------ the client sends the right form


def test_a_reasoning_model_is_sent_max_completion_tokens_and_no_temperature(server, tmp_path):
    cfg = ModelConfig(provider="openai", base_url=server.base_url, model="o3-mini", reasoning_effort="high")
    client = LLMClient.from_endpoint(cfg, tmp_path)
    result = client.chat(ASK, n=2, seed=3)
    assert result.status == "ok" and len(result.texts) == 2  # the stand-in would have refused the wrong form
    assert sent(server) == [{"max_completion_tokens": 16384, "n": 2, "seed": 3, "reasoning_effort": "high"}]
    # the cache key is what was sent: another effort or budget is another request
    body = server.log[0].body
    params = {k: v for k, v in body.items() if k not in ("model", "messages")}
    assert result.cache_key == request_key(
        {"endpoint": server.base_url, "model": "o3-mini", "messages": ASK, "params": params}
    )
    low = LLMClient.from_endpoint(cfg.model_copy(update={"reasoning_effort": "low"}), tmp_path)
    assert low.key(ASK, n=2, seed=3) != result.cache_key
    assert client.key(ASK, n=2, seed=3, max_tokens=100) != result.cache_key
    assert client.chat(ASK, n=2, seed=3).cached and server.served == 1


def test_a_reasoning_clients_per_request_budget_is_max_completion_tokens(server, tmp_path):
    client = LLMClient(server.base_url, "o4-mini", cache_dir=tmp_path)
    assert client.family == "reasoning" and client.defaults == {"max_completion_tokens": 16384, "n": 1}
    assert client.chat(ASK, max_tokens=5).finish_reasons == ["length"]
    assert sent(server) == [{"max_completion_tokens": 5, "n": 1}]
    with pytest.raises(LLMError, match="temperature 1 only"):
        client.chat(ASK, temperature=0.5)
    with pytest.raises(LLMError, match="temperature 1 only"):
        LLMClient(server.base_url, "o4-mini", temperature=0.2, cache_dir=tmp_path)
    assert client.key(ASK, temperature=1) == client.key(ASK)  # the default is not sent


def test_the_wrong_form_fails_against_the_standin(server, tmp_path):
    """What a regression would send (a reasoning model shaped as chat) is an api_error, not a pass."""
    client = LLMClient(server.base_url, "o3-mini", family="chat", cache_dir=tmp_path)
    result = client.chat(ASK)
    assert result.status == "api_error" and "HTTP 400" in result.error and "max_completion_tokens" in result.error
    assert [r.status for r in server.log] == [400]  # a 400 is not retried


def test_a_chat_model_still_sends_temperature_and_max_tokens_with_its_old_key(server, tmp_path):
    cfg = ModelConfig(provider="openai", base_url=server.base_url, model="gpt-4o", temperature=0.3)
    result = LLMClient.from_endpoint(cfg, tmp_path).chat(ASK, seed=1)
    assert result.status == "ok"
    assert sent(server) == [{"temperature": 0.3, "max_tokens": 4096, "n": 1, "seed": 1}]
    # a chat model's key is built as before families, so a cache made at max_tokens 1024 is reused
    pinned = LLMClient.from_endpoint(cfg.model_copy(update={"max_tokens": 1024}), tmp_path)
    old_payload = {"temperature": 0.3, "max_tokens": 1024, "n": 1}
    assert pinned.key(ASK) == request_key(
        {"endpoint": server.base_url, "model": "gpt-4o", "messages": ASK, "params": old_payload}
    )


def test_per_model_override_both_ways(tmp_path):
    with LLMStandIn(reasoning_models={"house-reasoner"}) as server:
        base = {"provider": "openai", "base_url": server.base_url}
        guessed = LLMClient.from_endpoint(ModelConfig(**base, model="house-reasoner"), tmp_path / "a")
        assert guessed.chat(ASK).status == "api_error"  # by its name a chat model: refused
        told = ModelConfig(**base, model="house-reasoner", family="reasoning", reasoning_effort="low")
        assert LLMClient.from_endpoint(told, tmp_path / "b").chat(ASK).status == "ok"
        as_chat = ModelConfig(**base, model="o3-mini", family="chat", temperature=0.2, max_tokens=256)
        assert LLMClient.from_endpoint(as_chat, tmp_path / "c").chat(ASK).status == "ok"
    assert sent(server)[1:] == [
        {"max_completion_tokens": 16384, "n": 1, "reasoning_effort": "low"},
        {"temperature": 0.2, "max_tokens": 256, "n": 1},
    ]


def test_the_drafting_llm_takes_the_same_settings(server, tmp_path):
    endpoint = LLMEndpoint(base_url=server.base_url, model="gpt-5-mini", max_tokens=2000, reasoning_effort="minimal")
    assert LLMClient.from_endpoint(endpoint, tmp_path).chat(ASK).status == "ok"
    assert sent(server) == [{"max_completion_tokens": 2000, "n": 1, "reasoning_effort": "minimal"}]


def test_generation_with_a_reasoning_model_end_to_end(tmp_path):
    tasks = make_tasks(n_repos=1, per_repo=2)
    bench = tmp_path / "dlbench.jsonl"
    write_jsonl(bench, tasks)
    with LLMStandIn() as server:
        cfg = ModelConfig(provider="openai", base_url=server.base_url, model="o3-mini", n=2, runs=2)
        out = tmp_path / "o3-mini.jsonl"
        generate_file(bench, out, "o3-mini", "zero-shot", REPOS[0], cfg, tmp_path / "llm", tmp_path / "journal")
    gens = read_jsonl(out, Generation)
    assert len(gens) == len(tasks) * 2 * 2 and all(g.status == GenStatus.OK for g in gens)
    assert all(r.status == 200 for r in server.log) and len(server.log) == len(tasks) * 2
    assert {tuple(sorted(b)) for b in sent(server)} == {("max_completion_tokens", "n", "seed")}


# ------------------------------------------------------------------ config


def models(**extra: dict) -> dict:
    return {"models": {"gold": {"provider": "gold"}, "null": {"provider": "null"}, **extra}}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            models(o3={"provider": "openai", "model": "o3-mini", "temperature": 0}),
            "config key 'models.o3.temperature': o3-mini is a reasoning model (by its name)",
        ),
        (
            models(r={"provider": "openai", "model": "house", "family": "reasoning", "temperature": 0.3}),
            "config key 'models.r.temperature': house is a reasoning model (family: reasoning)",
        ),
        (
            models(g={"provider": "openai", "model": "gpt-4o", "reasoning_effort": "high"}),
            "config key 'models.g.reasoning_effort': gpt-4o is a chat model (by its name)",
        ),
        (models(g={"provider": "openai", "model": "o3", "reasoning_effort": "extreme"}), "models.g.reasoning_effort"),
        (models(g={"provider": "openai", "model": "o3", "family": "thinking"}), "config key 'models.g.family'"),
        (models(g={"provider": "openai", "model": "gpt-4o", "max_tokens": 0}), "config key 'models.g.max_tokens'"),
        (
            {"prompts": {"llm": {"model": "gpt-5-mini", "temperature": 0.2}}},
            "config key 'prompts.llm.temperature': gpt-5-mini is a reasoning model",
        ),
    ],
)
def test_config_refuses_settings_a_family_does_not_take(raw, expected):
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_config_defaults_by_family():
    cfg = load_config(
        models(
            o3={"provider": "openai", "model": "o3-mini", "reasoning_effort": "medium"},
            o3t={"provider": "openai", "model": "o3-mini", "temperature": 1, "timeout_s": 90},
            gpt={"provider": "openai", "model": "gpt-4o"},
            chatty={"provider": "openai", "model": "o3-mini", "family": "chat", "temperature": 0.3},
        )
    )
    o3, o3t, gpt, chatty = (cfg.models[k] for k in ("o3", "o3t", "gpt", "chatty"))
    assert (o3.request_family(), o3.token_budget(), o3.request_timeout()) == ("reasoning", 16384, 600.0)
    assert (o3t.request_family(), o3t.request_timeout()) == ("reasoning", 90.0)  # a timeout set is kept
    assert (gpt.request_family(), gpt.token_budget(), gpt.request_timeout()) == ("chat", 4096, 120.0)
    assert (chatty.request_family(), chatty.temperature) == ("chat", 0.3)
    assert LLMEndpoint(model="o3-mini").request_timeout() == 600.0 and LLMEndpoint().request_timeout() == 60.0
