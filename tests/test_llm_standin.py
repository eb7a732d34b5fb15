"""The local OpenAI-compatible stand-in: routes, responders, faults, request log, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from dlbench.standins.llm import Fault, LLMStandIn, ScriptedResponder, code_responder


def post(url: str, body: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        url + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def ask(text: str, **params) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **params}


def test_code_responder_answers_with_the_asked_signature():
    answer = code_responder(ask("Do it.\n\ndef mean(xs: list[float],\n         axis: int = 0) -> float:\n"), 0)
    assert "```python\ndef mean(xs: list[float], axis: int = 0) -> float:" in answer
    assert "def scale(*args, **kwargs):" in code_responder(ask("Write the function `scale`."), 0)
    assert "```" not in code_responder(ask("Tell me a joke."), 0)
    assert code_responder(ask("def f():"), 1) != code_responder(ask("def f():"), 0)


def test_completion_shape_usage_and_n():
    with LLMStandIn() as server:
        status, _, body = post(server.base_url, ask("def f(x):", n=2, max_tokens=500))
    assert status == 200 and body["object"] == "chat.completion" and len(body["choices"]) == 2
    usage = body["usage"]
    assert usage["prompt_tokens"] > 0 and usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_fault_schedule_and_request_log():
    with LLMStandIn() as server:
        server.fail_next(Fault("rate_limit", retry_after=2.5), Fault("server_error"))
        first = post(server.base_url, ask("def f():"))
        second = post(server.base_url, ask("def f():"))
        third = post(server.base_url, ask("def f():"))
        other = post(server.base_url, ask("def g():"))
    assert (first[0], first[1]["Retry-After"]) == (429, "2.5")
    assert second[0] == 500 and third[0] == 200 and other[0] == 200
    assert [r.status for r in server.log] == [429, 500, 200, 200]
    assert server.served == 2 and not server.repeated()
    assert sorted(server.counts(status=None).values()) == [1, 3]


def test_repeated_requests_are_visible():
    with LLMStandIn() as server:
        post(server.base_url, ask("def f():"))
        post(server.base_url, ask("def f():"))
    assert list(server.repeated().values()) == [2]


def test_scripted_by_substring_and_unknown_routes():
    script = ScriptedResponder({"alpha": "A", "beta": "B"})
    with LLMStandIn(responder=script) as server:
        assert post(server.base_url, ask("say beta"))[2]["choices"][0]["message"]["content"] == "B"
        status, _, body = post(server.base_url, ask("say gamma"))
        assert status == 500 and "no scripted answer" in body["error"]["message"]
        assert post(server.base_url.replace("/v1", "/v2"), ask("x"))[0] == 404


def test_unknown_fault_kind_is_rejected():
    with pytest.raises(ValueError, match="unknown fault"):
        Fault("meltdown")


def test_command_line_server():
    proc = subprocess.Popen(
        [sys.executable, "-m", "dlbench.standins.llm", "--latency", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        base_url = proc.stdout.readline().strip()
        with urllib.request.urlopen(base_url + "/models", timeout=10) as response:
            assert json.loads(response.read())["data"][0]["id"] == "standin-model"
        assert post(base_url, ask("def f():"))[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_malformed_fault_answers_200_with_the_given_body():
    with LLMStandIn(faults=[Fault("malformed", body="oops", content_type="text/plain")]) as server:
        request = urllib.request.Request(server.base_url + "/chat/completions", json.dumps(ask("x")).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            status, content_type, text = response.status, response.headers["Content-Type"], response.read()
        after = post(server.base_url, ask("x"))
    assert (status, content_type, text) == (200, "text/plain", b"oops")
    assert after[0] == 200 and after[2]["choices"]  # one fault answers one request
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault("garbled")
