"""Local stand-ins for the services the workflow reaches: GitHub's REST API (``github``) and
an OpenAI-compatible endpoint (``llm``).

Real HTTP on 127.0.0.1 for offline runs, tests and benchmarks, with the same lifecycle and
fault schedule (``server``). The real clients talk to them through their usual base URL;
nothing here imports a client. On the ground floor: they import only ``store``.
"""
