"""Endpoint faults are infrastructure, not model failures (issue 15, items 1 and 7).

Against the fault-injecting stand-in (real HTTP, the real openai client): an unreachable
endpoint, a malformed reply, retries run out, or a day-long Retry-After make the
generation and prompt-drafting jobs fail with a one-line summary, writing nothing, so the
output never looks complete; the rerun asks only for what was not answered.
"""

from __future__ import annotations

import socket
import time

import pytest

from dlbench.config import LLMEndpoint, PromptsConfig
from dlbench.generate.jobs import journal_path
from dlbench.llm.client import LLMClient, UnansweredRequests
from dlbench.records import Generation, GenStatus, PromptSource
from dlbench.standins.llm import Fault, LLMStandIn, ScriptedResponder
from dlbench.store import read_jsonl, write_jsonl
from dlbench.tasks.prompts import draft_prompts_file
from tests.test_generate_run import REPOS, make_config, make_tasks, run_job
from tests.test_tasks_prompts import PROSE, make_function

REPO = REPOS[0]  # two tasks: two requests of model m1


def closed_port_url() -> str:
    """A local URL where nothing listens (the port was free a moment ago)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture()
def bench(tmp_path):
    path = tmp_path / "dlbench.jsonl"
    write_jsonl(path, make_tasks(n_repos=1))
    return path


FAULTS = {  # one request of two meets the fault (concurrency 1: the first one)
    "malformed": ([Fault("malformed")], "malformed reply"),
    "exhausted": ([Fault("server_error")] * 2, "gave up after 2 attempts: HTTP 500"),  # max_retries 1
    "day-long Retry-After": ([Fault("rate_limit", retry_after=86400)], "Retry-After 86400s exceeds max_backoff_s=60s"),
}


@pytest.mark.parametrize("kind", list(FAULTS))
def test_fault_fails_the_job_and_the_rerun_asks_only_what_was_unanswered(bench, tmp_path, kind):
    faults, problem = FAULTS[kind]
    out = tmp_path / "generations.jsonl"
    with LLMStandIn(faults=faults) as server:
        cfg = make_config(server.base_url, tmp_path / "cache", max_retries=1, concurrency=1)
        start = time.monotonic()
        with pytest.raises(UnansweredRequests, match=f"{out}: 1 of 2 candidates got no answer .*{problem}") as info:
            run_job(cfg, bench, out, "m1", "zero-shot", REPO)
        assert time.monotonic() - start < 30  # a day-long Retry-After is not slept
        assert "\n" not in str(info.value) and not out.exists()  # one line; nothing looks complete
        assert journal_path(cfg.storage.journal, "m1", "zero-shot", REPO).exists()  # the answered one
        failed_key = server.log[0].key
        asked = len(server.log)
        generations = run_job(cfg, bench, out, "m1", "zero-shot", REPO)
        assert [r.key for r in server.log[asked:]] == [failed_key]  # the answered request is not paid twice
    assert [g.status for g in read_jsonl(out, Generation)] == [GenStatus.OK, GenStatus.OK]
    assert generations == read_jsonl(out, Generation)


def test_unreachable_endpoint_fails_the_job_naming_the_connection_error(bench, tmp_path):
    out = tmp_path / "generations.jsonl"
    cfg = make_config(closed_port_url(), tmp_path / "cache", max_retries=0)
    with pytest.raises(
        UnansweredRequests,
        match="2 of 2 candidates got no answer .*2x gave up after 1 attempts: APIConnectionError: Connection error. Not written",
    ):
        run_job(cfg, bench, out, "m1", "zero-shot", REPO)
    assert not out.exists()


def test_client_does_not_sleep_a_day_for_retry_after(tmp_path):
    with LLMStandIn(faults=[Fault("rate_limit", retry_after=86400)]) as server:
        client = LLMClient(server.base_url, "standin-model", cache_dir=tmp_path / "cache", max_backoff_s=5)
        start = time.monotonic()
        result = client.chat([{"role": "user", "content": "Write function `f`"}])
    assert time.monotonic() - start < 5
    assert result.status == "api_error" and result.attempts == 1
    assert "HTTP 429" in result.error and "Retry-After 86400s exceeds max_backoff_s=5s: not waiting" in result.error


@pytest.mark.parametrize("fault", [Fault("server_error"), Fault("malformed")], ids=["exhausted", "malformed"])
def test_prompt_drafts_do_not_fall_back_to_templates_on_api_errors(tmp_path, fault):
    functions = [make_function(qualname="Dense.forward"), make_function(qualname="Dense.backward")]
    write_jsonl(tmp_path / "functions.jsonl", functions)
    out = tmp_path / "prompts.jsonl"
    with LLMStandIn(ScriptedResponder([PROSE]), faults=[fault]) as server:
        endpoint = LLMEndpoint(base_url=server.base_url, model="draft-model", concurrency=1, max_retries=0)
        cfg, cache = PromptsConfig(llm=endpoint), tmp_path / "cache"
        with pytest.raises(UnansweredRequests, match="1 of 2 prompt drafts got no answer from draft-model"):
            draft_prompts_file(tmp_path / "functions.jsonl", out, cfg, cache)
        assert not out.exists()
        failed_key, asked = server.log[0].key, len(server.log)
        records = draft_prompts_file(tmp_path / "functions.jsonl", out, cfg, cache)
        assert [r.key for r in server.log[asked:]] == [failed_key]
    assert [(r.source, r.status) for r in records] == [(PromptSource.LLM, "ok")] * 2
