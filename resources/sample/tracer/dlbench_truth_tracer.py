"""pytest plugin: record library functions called directly from test code.

Loaded by check_truth.py with ``-p dlbench_truth_tracer``. While each test item runs
(setup, call and teardown, so fixtures count), a global trace hook (``sys.settrace``,
which sees only new Python frames and returns None: no line tracing) records every call
into the library package whose *caller* frame lives in a test module or conftest.py. Calls
made from library code are ignored, which is exactly the sample's "reached" rule.
The result maps ``path::qualname`` to the sorted node ids and is written as JSON to
the file named by ``DLBENCH_TRUTH_OUT``.
"""
import json
import os
import re
import sys

import pytest

_PARAMS = re.compile(r"\[.*\]$")


class _Recorder:
    def __init__(self, root, package):
        self.root = os.path.realpath(root)
        self.package_dir = os.path.join(self.root, package) + os.sep
        self.tests_dir = os.path.join(self.root, "tests") + os.sep
        self.node_id = None
        self.reached = {}
        self._real = {}

    def _realpath(self, filename):
        # Cached: the hook runs for every Python call of the test run.
        real = self._real.get(filename)
        if real is None:
            real = self._real[filename] = os.path.realpath(filename)
        return real

    def _is_test_code(self, filename):
        name = os.path.basename(filename)
        return filename.startswith(self.tests_dir) and (
            name.startswith("test_") or name == "conftest.py"
        )

    def trace(self, frame, event, arg):
        if event != "call" or frame.f_back is None:
            return
        filename = self._realpath(frame.f_code.co_filename)
        if not filename.startswith(self.package_dir):
            return
        if not self._is_test_code(self._realpath(frame.f_back.f_code.co_filename)):
            return
        key = os.path.relpath(filename, self.root) + "::" + frame.f_code.co_qualname
        self.reached.setdefault(key, set()).add(self.node_id)


_recorder = None


def pytest_configure(config):
    global _recorder
    _recorder = _Recorder(str(config.rootpath), os.environ["DLBENCH_TRUTH_PACKAGE"])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _recorder.node_id = _PARAMS.sub("", item.nodeid)
    sys.settrace(_recorder.trace)
    try:
        yield
    finally:
        sys.settrace(None)


def pytest_unconfigure(config):
    out = {key: sorted(ids) for key, ids in sorted(_recorder.reached.items())}
    with open(os.environ["DLBENCH_TRUTH_OUT"], "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1)
