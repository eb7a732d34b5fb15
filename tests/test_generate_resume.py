"""A generation job killed with SIGKILL midway resumes without asking a finished request
again, and ends with the same file as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dlbench.llm.responses import request_key
from dlbench.records import Generation
from dlbench.standins.llm import LLMStandIn
from dlbench.store import read_jsonl, write_jsonl
from tests.test_generate_run import REPOS, make_config, make_tasks

RUN_JOB = """
import json, sys
from dlbench.config import Config
from dlbench.generate.jobs import generate_file
bench, out, cfg = sys.argv[1], sys.argv[2], Config.model_validate_json(open(sys.argv[3]).read())
generate_file(bench, out, "m1", "zero-shot", "alpha__one", cfg.models["m1"], cfg.storage.llm_cache, cfg.storage.journal)
"""
TASKS_PER_REPO = 24


def client_key(base_url: str, body: dict) -> str:
    """The LLM client's cache key of a request the server received."""
    params = {k: body[k] for k in ("temperature", "max_tokens", "n", "seed")}
    return request_key({"endpoint": base_url, "model": body["model"], "messages": body["messages"], "params": params})


def start_job(bench: Path, out: Path, cfg_file: Path) -> subprocess.Popen:
    env = os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.Popen([sys.executable, "-c", RUN_JOB, str(bench), str(out), str(cfg_file)], env=env)


def wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout_s: float = 60) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        lines = len(path.read_text().splitlines()) if path.exists() else 0
        if lines >= n:
            return lines
        assert proc.poll() is None, "the job ended before it could be killed"
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {n} lines")


def test_killed_job_resumes_without_repeating_finished_requests(tmp_path):
    bench = tmp_path / "dlbench.jsonl"
    write_jsonl(bench, make_tasks(n_repos=1, per_repo=TASKS_PER_REPO))

    # the uninterrupted run, on its own cache
    with LLMStandIn(latency_s=0.1) as first:
        port = first._httpd.server_address[1]
        cfg = make_config(first.base_url, tmp_path / "clean", concurrency=2)
        clean_cfg = tmp_path / "clean.json"
        clean_cfg.write_text(cfg.model_dump_json())
        start_job(bench, tmp_path / "clean.jsonl", clean_cfg).wait(timeout=120)

    # the same job on a fresh cache, against a server on the same port (same cache keys)
    with LLMStandIn(latency_s=0.1, port=port) as server:
        cfg = make_config(server.base_url, tmp_path / "killed", concurrency=2)
        cfg_file = tmp_path / "killed.json"
        cfg_file.write_text(cfg.model_dump_json())
        out = tmp_path / "killed.jsonl"
        journal = tmp_path / "killed" / "journal" / "m1" / "zero-shot" / f"{REPOS[0]}.jsonl"

        proc = start_job(bench, out, cfg_file)
        wait_for_lines(journal, 4, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL and not out.exists()
        items = [json.loads(line)["item"] for line in journal.read_text().splitlines() if line.strip()]
        assert 4 <= len(items) < TASKS_PER_REPO  # killed midway
        finished = {item.rsplit("#", 1)[1] for item in items}  # their requests' cache keys

        resumed = start_job(bench, out, cfg_file)
        assert resumed.wait(timeout=120) == 0
        served = [client_key(server.base_url, r.body) for r in server.log if r.status == 200]

    # no finished item was asked again; only requests in flight at the kill may repeat
    assert all(served.count(key) == 1 for key in finished)
    assert len(served) - len(set(served)) <= 2  # concurrency
    assert set(served) == {g.cache_key for g in read_jsonl(out, Generation)}
    assert out.read_bytes() == (tmp_path / "clean.jsonl").read_bytes()
    assert len(read_jsonl(out, Generation)) == TASKS_PER_REPO and not journal.exists()
