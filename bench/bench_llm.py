"""Throughput of the LLM client against the local stand-in with a fixed latency.

The stand-in runs in its own process (``python -m dlbench.standins.llm``) so the client's
threads do not share its interpreter lock. With latency L and concurrency C the ideal
throughput is C / L; the target is >= 80% of it at C=16, L=0.1 s (160 req/s), measured
beside a concurrency-1 baseline in the same invocation. A third pass replays every
request from the cache (zero server calls).

    python bench/bench_llm.py [--requests 500] [--concurrency 16] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dlbench.llm import LLMClient

TARGET_RATIO = 0.8


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dlbench.standins.llm", "--latency", str(latency)], stdout=subprocess.PIPE, text=True
    )
    base_url = proc.stdout.readline().strip()
    if not base_url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"the stand-in did not start (printed {base_url!r})")
    return proc, base_url


def asks(n: int, tag: str) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"Write the function `f_{tag}_{i}`."}] for i in range(n)]


def measure(base_url: str, cache: Path, concurrency: int, messages: list) -> tuple[float, LLMClient]:
    client = LLMClient(base_url, "standin-model", concurrency=concurrency, cache_dir=cache, max_retries=0)
    start = time.perf_counter()
    results = client.chat_many(messages)
    elapsed = time.perf_counter() - start
    failed = [r.error for r in results if r.status != "ok"]
    if failed:
        raise RuntimeError(f"{len(failed)} requests failed, e.g. {failed[0]}")
    return len(messages) / elapsed, client


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--baseline-requests", type=int, default=40, help="Requests of the concurrency-1 baseline.")
    args = parser.parse_args()
    proc, base_url = start_server(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp)
            measure(base_url, cache / "warmup", args.concurrency, asks(args.concurrency, "warm"))
            base_rate, _ = measure(base_url, cache / "c1", 1, asks(args.baseline_requests, "c1"))
            rate, _ = measure(base_url, cache / "cN", args.concurrency, asks(args.requests, "cN"))
            cached_rate, cached = measure(base_url, cache / "cN", args.concurrency, asks(args.requests, "cN"))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ideal = args.concurrency / args.latency
    print(f"latency {args.latency * 1000:.0f} ms per request")
    print(
        f"concurrency 1:  {base_rate:7.1f} req/s = {base_rate * args.latency:.2f} of ideal {1 / args.latency:.0f} req/s"
    )
    share = rate / ideal
    print(
        f"concurrency {args.concurrency}: {rate:7.1f} req/s = {share:.2f} of ideal {ideal:.0f} req/s (target {TARGET_RATIO})"
    )
    print(f"speed-up over concurrency 1: {rate / base_rate:.1f}x")
    usage = cached.usage
    print(f"cache replay:   {cached_rate:7.1f} req/s, {usage.requests} server requests, {usage.cache_hits} hits")
    ok = share >= TARGET_RATIO and usage.requests == 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
