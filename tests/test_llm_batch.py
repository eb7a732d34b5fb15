"""Batch API mode against the stand-in's /v1/files and /v1/batches, through the openai client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dlbench.llm import ChatRequest, LLMClient
from dlbench.standins.llm import Fault, LLMStandIn

ASKS = [[{"role": "user", "content": f"Write the function `b{i}`."}] for i in range(6)]

RUN_BATCH = """
import sys
from dlbench.llm import ChatRequest, LLMClient
client = LLMClient(sys.argv[1], "standin-model", cache_dir=sys.argv[2])
asks = [[{"role": "user", "content": f"Write the function `b{i}`."}] for i in range(6)]
client.batch_many([ChatRequest(a) for a in asks])
"""


def test_batch_many_answers_caches_and_matches_direct_calls(tmp_path):
    with LLMStandIn() as server:
        client = LLMClient(server.base_url, "standin-model", cache_dir=tmp_path / "batch")
        seen = []
        results = client.batch_many([ChatRequest(a) for a in ASKS + ASKS[:1]], on_result=lambda i, r: seen.append(i))
        assert len(server.batches.jobs) == 1 and server.served == 6  # the duplicate rides along
        assert all(r.status == "ok" and not r.cached and r.input_tokens > 0 for r in results)
        assert [r.text.split("`")[1] for r in results] == [f"b{i}" for i in range(6)] + ["b0"]
        assert sorted(seen) == list(range(7))
        direct = LLMClient(server.base_url, "standin-model", cache_dir=tmp_path / "direct").chat_many(ASKS)
        assert [r.text for r in direct] == [r.text for r in results[:6]]
        assert [r.cache_key for r in direct] == [r.cache_key for r in results[:6]]  # one key space

        again = LLMClient(server.base_url, "standin-model", cache_dir=tmp_path / "batch")
        assert all(r.cached for r in again.batch_many([ChatRequest(a) for a in ASKS]))
        assert len(server.batches.jobs) == 1 and again.usage.requests == 0
        assert not list((tmp_path / "batch" / "batches").glob("*.json"))  # no batch left pending


def test_failed_lines_become_api_errors(tmp_path):
    def picky(body, index):
        if "b3" in body["messages"][-1]["content"]:
            raise ValueError("cannot")
        return "```python\ndef ok():\n    pass\n```"

    with LLMStandIn(responder=picky) as server:
        client = LLMClient(server.base_url, "standin-model", cache_dir=tmp_path)
        results = client.batch_many([ChatRequest(a) for a in ASKS])
    assert [r.status for r in results] == ["ok"] * 3 + ["api_error"] + ["ok"] * 2
    assert "responder failed: cannot" in results[3].error and results[3].cache_key not in client.cache


def test_malformed_batch_lines_become_api_errors_not_cached(tmp_path):
    broken = [Fault("malformed"), Fault("malformed", body="not json"), Fault("malformed", body='{"choices": [{}]}')]
    with LLMStandIn(faults=broken) as server:
        client = LLMClient(server.base_url, "standin-model", cache_dir=tmp_path)
        results = client.batch_many([ChatRequest(a) for a in ASKS])
    assert [r.status for r in results] == ["api_error"] * 3 + ["ok"] * 3
    assert all("malformed answer" in r.error and r.cache_key not in client.cache for r in results[:3])


def test_killed_batch_job_reattaches_instead_of_resubmitting(tmp_path):
    with LLMStandIn(batch_delay_s=1.5) as server:
        env = os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        proc = subprocess.Popen([sys.executable, "-c", RUN_BATCH, server.base_url, str(tmp_path)], env=env)
        deadline = time.monotonic() + 60
        while not list((tmp_path / "batches").glob("*.json")):
            assert proc.poll() is None and time.monotonic() < deadline, "the batch was never submitted"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert len(server.batches.jobs) == 1 and server.served == 0  # killed while the batch ran

        client = LLMClient(server.base_url, "standin-model", cache_dir=tmp_path)
        results = client.batch_many([ChatRequest(a) for a in ASKS])
    assert all(r.status == "ok" for r in results)
    assert len(server.batches.jobs) == 1 and server.served == 6 and not server.repeated()
