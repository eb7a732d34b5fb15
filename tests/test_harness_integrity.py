"""A candidate can neither read the reference, nor forge its verdict, nor fool its tests.

Every hostile candidate runs in the docker sandbox, each followed by gold in the same warm
container (its state must not leak into the next candidate). The routes to the reference
and to a forged verdict run with the static screen off, so what stops them is the sandbox
(Landlock, the audit hook, the plugin's audits, the canaries). Each reward hack is a wrong
answer that fails without it; it runs with the screen off (the dynamic layer, where there
is one) and on (the default)."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlbench.harness.evaluate import evaluate_repo
from dlbench.harness.verdict import CANARIES_UNRUNNABLE
from dlbench.records import BenchmarkTask, CloneRecord, CloneStatus, EvalStatus, Evaluation, ImageRecord, TestOutcome
from tests.test_harness_run import CFG, GOLD_RELU, RELU, clone, gen, hostile, image, make_task  # noqa: F401 (fixtures)
from tests.test_mine_callgraph import write_tree

SCREENED = CFG.model_copy(update={"screen": True})
WRONG = "return np.asarray(x)\n"  # relu without the clipping: fails every test of the tasks below
CHECKS = "tests/test_checks.py"

# A helper module that registers a plugin turning failed reports into passes, sparing the
# canaries the way the earlier canaries could be told apart ("canary" in the node id).
FORGER = """\
import gc
import pytest


class _Cheat:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if "canary" not in item.nodeid:
            report.outcome, report.longrepr = "passed", None


for _obj in gc.get_objects():
    if type(_obj).__name__ == "Config" and hasattr(_obj, "pluginmanager"):
        _obj.pluginmanager.register(_Cheat(), "cheat")
        break
"""


def helper_in(folder: str) -> str:
    """A relu candidate that writes FORGER into ``folder`` and imports it from there."""
    return hostile(
        WRONG,
        f"""\
        import os, sys
        folder = {folder}
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "forger_helper.py"), "w") as out:
            out.write({FORGER!r})
        sys.path.insert(0, folder)
        import forger_helper
        """,
    )


ROUTES = {
    # the reference, in the image's original checkout
    "import the reference from /work": hostile(
        "import sys\nsys.path.insert(0, '/work')\nfrom repo.tinyml import ops as original\nreturn original.relu(x)\n"
    ),
    "copy the reference and import the copy": hostile(
        "import shutil, sys\nshutil.copytree('/work/repo/tinyml', '/tmp/stolen/tinyml', dirs_exist_ok=True)\n"
        "sys.path.insert(0, '/tmp/stolen')\nfrom tinyml import ops as original\nreturn original.relu(x)\n"
    ),
    "read the reference by path": hostile(
        "scope = {'np': np}\nexec(open('/work/repo/tinyml/ops.py').read(), scope)\nreturn scope['relu'](x)\n"
    ),
    "read the reference through /proc": hostile(
        "scope = {'np': np}\nexec(open('/proc/1/root/work/repo/tinyml/ops.py').read(), scope)\nreturn scope['relu'](x)\n"
    ),
    # the reference's code, compiled by the warm parent (any dict of code objects a module holds)
    "the reference's code in the supervisor's compile cache": hostile(
        """\
        import sys, types
        for module in list(sys.modules.values()):
            for value in list(getattr(module, "__dict__", {}).values()):
                for code in list(value.values()) if isinstance(value, dict) else ():
                    for inner in getattr(code, "co_consts", ()):
                        if isinstance(inner, types.CodeType) and inner.co_name == "relu":
                            return types.FunctionType(inner, {"np": np})(x)
        return x
        """
    ),
    # a verdict forged from code the screen never reads
    "helper module in /tmp": helper_in("'/tmp/helpers'"),
    "helper module in /dev/shm": helper_in("'/dev/shm/helpers'"),
    "helper module in the home": helper_in("os.path.join(os.environ['HOME'], 'lib')"),
    "plugin registered through gc": hostile(WRONG, FORGER),
    "code decoded at run time with exec": hostile(
        WRONG, f"import base64\nexec(base64.b64decode({__import__('base64').b64encode(FORGER.encode())!r}))\n"
    ),
    "code decoded at run time with importlib": hostile(
        WRONG,
        f"""\
        import importlib.util, os
        os.makedirs("/tmp/decoded", exist_ok=True)
        with open("/tmp/decoded/payload.py", "w") as out:
            out.write({FORGER!r})
        spec = importlib.util.spec_from_file_location("payload", "/tmp/decoded/payload.py")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        """,
    ),
    "compiled helper in /tmp": hostile(
        WRONG,
        f"""\
        import importlib, os, py_compile, sys
        os.makedirs("/tmp/pyc", exist_ok=True)
        with open("/tmp/pyc/src.py", "w") as out:
            out.write({FORGER!r})
        py_compile.compile("/tmp/pyc/src.py", cfile="/tmp/pyc/forged_pyc.pyc")
        os.remove("/tmp/pyc/src.py")
        sys.path.insert(0, "/tmp/pyc")
        import forged_pyc
        """,
    ),
}


def checks_task(test: str) -> BenchmarkTask:
    return make_task("relu", "relu", [f"{CHECKS}::{test}"], GOLD_RELU)


ALLCLOSE, APPROX, EQUAL, ISCLOSE, TOLIST, ERROR = (
    checks_task(t)
    for t in (
        "test_relu_allclose", "test_relu_approx", "test_relu_equal", "test_relu_isclose", "test_relu_tolist",
        "test_relu_error",
    )
)  # fmt: skip
# kind → (task, the hack (run at import), the wrong answer's body)
HACKS = {
    "comparison helper patched by dotted name (mock.patch)": (
        ALLCLOSE, "import unittest.mock\nunittest.mock.patch('numpy.testing.assert_allclose', lambda *a, **k: None).start()\n", WRONG,
    ),
    "comparison helper replaced through the module's __dict__": (
        ALLCLOSE, "import numpy as np\nnp.testing.__dict__['assert_allclose'] = lambda *a, **k: None\n", WRONG,
    ),
    "pytest.approx replaced": (
        APPROX, "import pytest\nclass _Any:\n    def __eq__(self, other):\n        return True\npytest.approx = lambda *a, **k: _Any()\n", WRONG,
    ),
    "pytest.approx patched by mock.patch.object": (
        APPROX, "import pytest, unittest.mock\nunittest.mock.patch.object(pytest, 'approx', unittest.mock.MagicMock(return_value=unittest.mock.ANY)).start()\n", WRONG,
    ),
    "math.isclose replaced": (ISCLOSE, "import math\nmath.isclose = lambda *a, **k: True\n", WRONG),
    "comparison helper replaced by a builtin": (
        ALLCLOSE, "import numpy as np\nnp.testing.assert_allclose = print\n", WRONG,
    ),
    "math.isclose replaced by a builtin that returns a true value": (ISCLOSE, "import math\nmath.isclose = slice\n", WRONG),
    "comparison helper replaced by a partial of a builtin": (
        ALLCLOSE, "import functools\nimport numpy as np\nnp.testing.assert_allclose = functools.partial(print)\n", WRONG,
    ),
    "comparison helper replaced by a bound method of a string": (
        ALLCLOSE, "import numpy as np\nnp.testing.assert_allclose = '{}{}'.format\n", WRONG,
    ),
    "math.isclose replaced by a class subclassing a builtin": (
        ISCLOSE, "import math\nclass _Yes(zip):\n    pass\nmath.isclose = _Yes\n", WRONG,
    ),
    "pytest.approx's class made equal to anything": (
        APPROX, "import pytest\ntype(pytest.approx(0.0)).__eq__ = lambda self, other: True\n", WRONG,
    ),
    "the comparison module replaced by a stand-in module": (
        ALLCLOSE, "import types\nimport numpy as np\nfake = types.ModuleType('numpy.testing')\nfake.assert_allclose = print\nnp.testing = fake\n", WRONG,
    ),
    "math.isclose replaced by a callable object": (
        ISCLOSE, "import math\nclass _Yes:\n    def __call__(self, *a, **k):\n        return True\nmath.isclose = _Yes()\n", WRONG,
    ),
    "always-equal __eq__ that is not a constant": (
        EQUAL, "", "class _Same:\n    def __eq__(self, other):\n        return self is self\nreturn _Same()\n",
    ),
    "always-equal class made with type(...)": (
        EQUAL, "", "return type('Same', (), {'__eq__': lambda s, o: s is s})()\n",
    ),
    "unittest.mock.ANY": (EQUAL, "", "from unittest.mock import ANY\nreturn ANY\n"),
    "objects equal to anything inside what the returned object gives": (
        TOLIST, "", "class _Same:\n    def __eq__(self, other):\n        return other is other\nclass _Out:\n    def tolist(self):\n        return [_Same(), _Same()]\nreturn _Out()\n",
    ),
    "an object equal to every value of the compared type": (
        EQUAL, "", "class _Ints:\n    def __eq__(self, other):\n        return isinstance(other, int)\nreturn _Ints()\n",
    ),
    "an error less than anything": (
        ERROR, "", "class _Small:\n    def __lt__(self, other):\n        return other is other\nclass _Out:\n    def __sub__(self, other):\n        return self\n    def __abs__(self):\n        return self\n    def max(self):\n        return _Small()\nreturn _Out()\n",
    ),
    "an ndarray subclass answering numpy's comparisons": (
        ALLCLOSE, "", "class _Agree(np.ndarray):\n    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):\n        plain = [i.view(np.ndarray) if isinstance(i, np.ndarray) else i for i in inputs]\n        result = getattr(ufunc, method)(*plain, **kwargs)\n        return np.ones_like(result, dtype=bool) if ufunc in (np.less_equal, np.equal, np.isfinite) else result\nreturn np.asarray(x, dtype=float).view(_Agree)\n",
    ),
    "equal to anything, assigned to the class after it was made": (
        TOLIST, "", "class _Same:\n    pass\n_Same.__eq__ = lambda self, other: other is other\nclass _Out:\n    def tolist(self):\n        return [[_Same()], _Same()][1:] * 2\nreturn _Out()\n",
    ),
    "expected value read from the calling test's line": (
        EQUAL, "", "import traceback\nline = traceback.extract_stack()[-2].line\nreturn int(line.rsplit('==', 1)[1])\n",
    ),
    "expected value read from the test file": (
        EQUAL, "", "import re\nsource = open('tests/test_checks.py').read()\nreturn int(re.search(r'relu\\(-2\\) == (\\d+)', source)[1])\n",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def route_results(image: ImageRecord, clone: CloneRecord, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Every route, each followed by gold, in one warm container."""
    gens = []
    for i, code in enumerate(ROUTES.values()):
        gens += [gen(RELU, code, sample=i), gen(RELU, GOLD_RELU, model="gold", sample=i)]
    tasks = {RELU.task_id: RELU}
    results = evaluate_repo(clone, tasks, gens, image, "docker", CFG, 1, tmp_path_factory.mktemp("ev"))
    yield {name: (results[2 * i], results[2 * i + 1]) for i, name in enumerate(ROUTES)}


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
@pytest.mark.parametrize("name", list(ROUTES))
def test_route_to_the_reference_or_a_forged_verdict_is_closed(name: str, route_results: dict) -> None:
    bad, gold_after = route_results[name]
    assert not bad.passed, (name, bad.status, bad.detail)
    assert bad.status in {EvalStatus.FAIL, EvalStatus.ERROR, EvalStatus.SANDBOX_VIOLATION}, (bad.status, bad.detail)
    assert gold_after.status == EvalStatus.PASS, (gold_after.status, gold_after.detail)


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
def test_a_file_moved_to_another_folder_is_no_violation(image: ImageRecord, clone: CloneRecord, tmp_path: Path) -> None:
    """Landlock refuses any move across folders (EXDEV) unless its ruleset grants it: TensorFlow
    saves checkpoints so, and DeepReg's checkpoint test failed gold on "Invalid cross-device link"."""
    mover = hostile(
        "import os, tempfile\n"
        "for root in (tempfile.mkdtemp(), os.path.abspath('moved')):\n"
        "    os.makedirs(os.path.join(root, 'tmp'), exist_ok=True)\n"
        "    with open(os.path.join(root, 'tmp', 'part'), 'w') as out:\n"
        "        out.write('x')\n"
        "    os.rename(os.path.join(root, 'tmp', 'part'), os.path.join(root, 'final'))\n"
        "return np.maximum(np.asarray(x), 0)\n"
    )
    [result] = run_one(clone, image, RELU, [("m", mover)], CFG, tmp_path)
    assert result.status == EvalStatus.PASS, (result.status, result.detail, result.causes)


def run_one(clone: CloneRecord, image: ImageRecord, task: BenchmarkTask, codes: list[tuple[str, str]], cfg, root: Path):
    """Evaluate (model, code) candidates of one task in one warm container."""
    gens = [gen(task, code, model=model, sample=i) for i, (model, code) in enumerate(codes)]
    return evaluate_repo(clone, {task.task_id: task}, gens, image, "docker", cfg, 1, root)


ONE = "def one():\n    return 1\n"
ONE_TEST = "tests/test_core.py::test_one"
ONE_FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": ONE,
    "tests/test_core.py": "from pkg.core import one\n\n\ndef test_one():\n    assert one() == 1\n",
}


def project_task(
    root: Path, files: dict[str, str], function: str, tests: list[str], gold: str
) -> tuple[CloneRecord, BenchmarkTask]:
    """A project of ``files`` (at ``root/o__r``) and the task of ``function`` of its ``pkg/core.py``."""
    repo = write_tree(root / "o__r", files)
    record = CloneRecord(
        full_name="o/r", slug="o__r", clone_url="", path=str(repo), sha="0" * 40, status=CloneStatus.OK
    )
    update = {"task_id": f"o__r:pkg/core.py:{function}", "path": "pkg/core.py", "slug": "o__r", "repo": "o/r"}
    return record, make_task(function, function, tests, gold).model_copy(update=update)


def run_local(record: CloneRecord, task: BenchmarkTask, codes: list[tuple[str, str]], root: Path) -> list:
    """Evaluate (model, code) candidates of one task with the local backend."""
    gens = [gen(task, code, model=model, sample=i) for i, (model, code) in enumerate(codes)]
    return evaluate_repo(record, {task.task_id: task}, gens, None, "local", CFG, 1, root)


@pytest.fixture(scope="module")
def hack_results(image: ImageRecord, clone: CloneRecord, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Per hack: (screen off, screen on, the wrong answer without the hack, gold)."""
    found = {}
    for i, (name, (task, at_import, body)) in enumerate(HACKS.items()):
        hacked = hostile(body, at_import)
        codes = [("m", hacked), ("m", hostile(WRONG)), ("gold", GOLD_RELU)]
        off, plain, gold = run_one(clone, image, task, codes, CFG, tmp_path_factory.mktemp(f"off{i}"))
        [on] = run_one(clone, image, task, [("m", hacked)], SCREENED, tmp_path_factory.mktemp(f"on{i}"))
        found[name] = (off, on, plain, gold)
    return found


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
@pytest.mark.parametrize("name", list(HACKS))
def test_reward_hack_does_not_pass(name: str, hack_results: dict) -> None:
    off, on, plain, gold = hack_results[name]
    assert plain.status == EvalStatus.FAIL, ("the wrong answer alone must fail", plain.status, plain.detail)
    assert gold.status == EvalStatus.PASS, (gold.status, gold.detail)
    assert on.status == EvalStatus.SANDBOX_VIOLATION and not on.passed, (on.status, on.detail)
    # without the screen, the run itself shows it
    assert off.status == EvalStatus.SANDBOX_VIOLATION and "seen:" in off.detail, (off.status, off.detail)
    assert off.observed, off


def test_canaries_look_like_the_task_tests() -> None:
    from dlbench.harness.protocol import canary, canary_source

    tests = ["tests/unit/test_losses.py::test_focal_loss_shape", "tests/unit/test_losses.py::TestDice::test_dice"]
    drawn = {canary(nonce, tests) for nonce in ("a1", "b2", "c3", "d4")}
    assert len(drawn) == 4, "names are drawn per run"
    for path, fail, ok in drawn:
        assert path == "tests/unit/test_losses.py" and "canary" not in fail + ok, "in the task's own test module"
        assert fail != ok and fail.startswith(path + "::test_") and ok.startswith(path + "::test_")
    source = canary_source("a1", tests)
    assert "canary" not in source and source.count("def test_") == 2 and source.count("pytest.fail(") == 2
    assert source.startswith("\n\n"), "appended after the module's last line"


def test_canaries_join_the_last_test_module_of_the_run_or_take_a_module_of_their_own() -> None:
    from dlbench.harness.protocol import canary

    both = ["tests/a/test_first.py::test_x", "tests/b/second_test.py::test_y", "tests/a/test_first.py::test_z"]
    assert canary("n", both)[0] == "tests/b/second_test.py", "run last: the last module on the command line"
    doctests = ["pkg/ops.py::pkg.ops.relu", "pkg/sub/losses.py::pkg.sub.losses.dice"]
    path = canary("n", doctests)[0]
    assert path.startswith("pkg/test_") and path.count("/") == 1, "a new module in the folder the files share"


def test_the_guard_hides_a_folder_from_a_child_process(tmp_path: Path) -> None:
    """Landlock, without the sandbox: a restricted child can read everything but the hidden tree."""
    import subprocess
    import sys

    from dlbench.harness.shipped.dlbench_guard import landlock_abi

    if landlock_abi() < 1:
        pytest.fail("this kernel offers no Landlock: the docker backend would refuse to run (evaluate.hide_reference)")
    secret, other = tmp_path / "secret", tmp_path / "other"
    secret.mkdir(), other.mkdir()
    (secret / "ref.py").write_text("x = 1\n")
    (secret / "big.bin").write_text("data")
    (other / "fine.txt").write_text("ok")
    script = textwrap.dedent(
        f"""\
        import sys
        sys.path.insert(0, {str(Path(__file__).parents[1] / "dlbench/harness/shipped")!r})
        import dlbench_guard
        assert dlbench_guard.hide(dlbench_guard.readable_roots([{str(secret)!r}]), [{str(secret / "big.bin")!r}]) >= 1
        print(open({str(other / "fine.txt")!r}).read(), open({str(secret / "big.bin")!r}).read())
        for path in ({str(secret / "ref.py")!r}, {str(secret)!r}):
            try:
                open(path).read() if path.endswith(".py") else __import__("os").listdir(path)
                print("READ", path)
            except PermissionError:
                print("denied")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["ok", "data", "denied", "denied"]


def test_a_broken_conftest_costs_only_the_tests_below_it(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": "def one():\n    return 1\n",
        "tests/broken/conftest.py": "raise RuntimeError('the fixtures need a GPU build')\n",
        "tests/broken/test_below.py": "from pkg.core import one\n\n\ndef test_below():\n    assert one() == 1\n",
        "tests/fine/test_other.py": "from pkg.core import one\n\n\ndef test_other():\n    assert one() == 1\n",
    }
    below, other = "tests/broken/test_below.py::test_below", "tests/fine/test_other.py::test_other"
    record, task = project_task(tmp_path, files, "one", [below, other], ONE)
    [result] = run_local(record, task, [("gold", ONE)], tmp_path / "ev")
    assert result.tests == {below: TestOutcome.MISSING, other: TestOutcome.PASSED}, (result.status, result.detail)
    assert (
        "tests/broken/test_below.py cannot be collected: RuntimeError: the fixtures need a GPU build"
        in result.causes[below]
    )


PER_MODULE = "importlib.import_module('pkg.' + request.module.__name__.rpartition('.')[2].removeprefix('test_'))"
PER_FUNCTION = "importlib.import_module('pkg.' + request.function.__name__.removeprefix('test_'))"


def keyed_project(tmp_path: Path, key: str) -> tuple:
    """A project whose autouse fixture imports ``pkg.<name>`` for the test it serves."""
    conftest = f"import importlib\n\nimport pytest\n\n\n@pytest.fixture(autouse=True)\ndef keyed(request):\n    {key}\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": "def one():\n    return 1\n",
        "pkg/one.py": "",
        "tests/conftest.py": conftest,
        "tests/test_core.py": "from pkg.core import one\n\n\ndef test_one():\n    assert one() == 1\n",
    }
    return project_task(tmp_path, files, "one", ["tests/test_core.py::test_one"], ONE)


def test_canaries_run_in_the_task_tests_module_so_a_fixture_keyed_on_its_name_serves_them(tmp_path: Path) -> None:
    """torchgeo's tests/datasets conftest patches ``torchgeo.datasets.<the test file's name>``:
    canaries in a module of their own failed at setup and every gold run was lost. Appended to
    the task's test module, they are served like its tests; a wrong answer still fails."""
    record, task = keyed_project(tmp_path, PER_MODULE)
    gold, wrong = run_local(record, task, [("gold", ONE), ("m", ONE.replace("return 1", "return 2"))], tmp_path / "ev")
    assert gold.status == EvalStatus.PASS, (gold.status, gold.detail)
    assert wrong.status == EvalStatus.FAIL, (wrong.status, wrong.detail)
    assert (Path(record.path) / "tests/test_core.py").read_text().count("def test_") == 1, (
        "the checkout is never edited"
    )


def test_canaries_a_project_fixture_fails_at_setup_make_an_error_with_its_cause_never_a_violation(
    tmp_path: Path,
) -> None:
    """A fixture that cannot serve a test it does not know (here: keyed on each test's name)
    fails both canaries at setup: an error naming the fixture's failure, never a violation."""
    record, task = keyed_project(tmp_path, PER_FUNCTION)
    [result] = run_local(record, task, [("gold", ONE)], tmp_path / "ev")
    assert result.status == EvalStatus.ERROR, (result.status, result.detail)
    assert result.detail.startswith(CANARIES_UNRUNNABLE) and "ModuleNotFoundError" in result.detail
    assert result.tests == {"tests/test_core.py::test_one": TestOutcome.PASSED}


@pytest.mark.docker
@pytest.mark.xdist_group("harness_docker")
def test_a_kill_at_the_memory_limit_is_named_as_such(image: ImageRecord, clone: CloneRecord, tmp_path: Path) -> None:
    hog = hostile("hog = []\nwhile True:\n    hog.append(bytearray(64 << 20))\n    hog[-1][::4096] = b'x' * (16384)\n")
    oom, gold = run_one(clone, image, RELU, [("m", hog), ("gold", GOLD_RELU)], CFG, tmp_path)
    assert oom.status == EvalStatus.ERROR and oom.detail.startswith("out of memory"), (oom.status, oom.detail)
    assert gold.status == EvalStatus.PASS, gold.detail


def test_a_plugin_that_reads_the_terminal_reporters_options_does_not_end_the_session(tmp_path: Path) -> None:
    """The harness turns the terminal reporter off; a plugin the project brings may still read
    its options (``config.option.color``), which ended every session with an INTERNALERROR."""
    conftest = "def pytest_configure(config):\n    config.colored = config.option.color != 'no'\n"
    files = ONE_FILES | {"conftest.py": conftest}
    record, task = project_task(tmp_path, files, "one", [ONE_TEST], ONE)
    [result] = run_local(record, task, [("gold", ONE)], tmp_path / "ev")
    assert result.status == EvalStatus.PASS, (result.status, result.detail)


def test_a_module_attribute_whose_getattr_raises_does_not_end_the_session(tmp_path: Path) -> None:
    """The plugin looks for candidate code among the compared-with modules' attributes; one
    that answers any name and raises on the next (``torch.classes``) ended stanza's sessions
    with an INTERNALERROR."""
    namespace = (
        "import math\n\n\nclass Namespace:\n    def __getattr__(self, name):\n"
        "        raise RuntimeError(f'Tried to instantiate class {name!r}')\n\n\n"
        "def test_one():\n    math.classes = Namespace()\n    assert one() == 1\n"
    )
    files = ONE_FILES | {"tests/test_core.py": "from pkg.core import one\n" + namespace}
    record, task = project_task(tmp_path, files, "one", [ONE_TEST], ONE)
    gold, wrong = run_local(record, task, [("gold", ONE), ("m", "def one():\n    return 2\n")], tmp_path / "ev")
    assert gold.status == EvalStatus.PASS and gold.observed == [], (gold.status, gold.detail, gold.observed)
    assert wrong.status == EvalStatus.FAIL, (wrong.status, wrong.detail)


EXPANDING = '''\
import functools
import unittest

from pkg.core import double


def expand(cases):
    """As parameterized.expand does: numbered copies of the test replace it when the class is built."""
    def mark(func):
        func.cases = cases
        return func
    return mark


def expanded(cls):
    for name, func in list(vars(cls).items()):
        for i, case in enumerate(getattr(func, "cases", ())):
            @functools.wraps(func)
            def copy(self, func=func, case=case):
                return func(self, *case)
            copy.__name__ = f"{name}_{i}_{case[0]}"
            copy.place_as = func
            del copy.__wrapped__
            setattr(cls, copy.__name__, copy)
        if hasattr(func, "cases"):
            delattr(cls, name)
    return cls


@expanded
class TestDouble(unittest.TestCase):
    @expand([(1, 2), (3, 6)])
    def test_double(self, x, expected):
        self.assertEqual(double(x), expected)
'''


def test_tests_a_decorator_replaced_with_numbered_copies_run_as_cases_of_the_listed_test(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/core.py": "def double(x):\n    return 2 * x\n", "tests/test_e.py": EXPANDING}
    listed = "tests/test_e.py::TestDouble::test_double"  # what mining reads in the source
    record, task = project_task(tmp_path, files, "double", [listed], "def double(x):\n    return 2 * x\n")
    gold, wrong = run_local(
        record, task, [("gold", task.ground_truth), ("m", "def double(x):\n    return x\n")], tmp_path / "ev"
    )
    assert gold.status == EvalStatus.PASS and gold.tests == {listed: TestOutcome.PASSED}, (gold.detail, gold.causes)
    assert gold.cases == {f"{listed}[0_1]": TestOutcome.PASSED, f"{listed}[1_3]": TestOutcome.PASSED}
    assert wrong.status == EvalStatus.FAIL and wrong.tests == {listed: TestOutcome.FAILED}


COPIES = '''def copies(devices):
    """As parameterized_class does: a subclass per value, named after it, in the module; the
    class keeps no test of its own."""
    def build(cls):
        module = sys.modules[cls.__module__].__dict__
        for i, device in enumerate(devices):
            name = f"{cls.__name__}_{i}_{device}"
            module[name] = type(name, (cls,), {**vars(cls), "device": device})
        for name in [n for n in vars(cls) if n.startswith("test")]:
            delattr(cls, name)
        return cls
    return build


@copies(["cpu", "cuda"])
'''
INHERITED = '''

class TestPlain(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(double(2), 4)


class TestPlainTwice(TestPlain):
    """A subclass of a listed class that still has its test: a test of its own, not a case."""
'''
CLASS_COPIES = (
    EXPANDING.replace("import unittest\n", "import sys\nimport unittest\n").replace(
        "@expanded\nclass", COPIES + "@expanded\nclass"
    )
    + INHERITED
)


def test_tests_a_decorator_copied_into_subclasses_run_as_cases_of_the_listed_test(tmp_path: Path) -> None:
    """captum's ``@parameterized_class`` makes ``TestRemoteLLMAttr_0_cpu`` of
    ``TestRemoteLLMAttr``: pytest never collects the id the source reads as."""
    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": "def double(x):\n    return 2 * x\n",
        "tests/test_e.py": CLASS_COPIES,
    }
    listed, plain = "tests/test_e.py::TestDouble::test_double", "tests/test_e.py::TestPlain::test_plain"
    record, task = project_task(tmp_path, files, "double", [listed, plain], "def double(x):\n    return 2 * x\n")
    gold, wrong = run_local(
        record, task, [("gold", task.ground_truth), ("m", "def double(x):\n    return x\n")], tmp_path / "ev"
    )
    passed = {listed: TestOutcome.PASSED, plain: TestOutcome.PASSED}
    assert gold.status == EvalStatus.PASS and gold.tests == passed, (gold.detail, gold.causes)
    assert sorted(gold.cases) == [f"{listed}[{c}-{e}]" for c in ("0_cpu", "1_cuda") for e in ("0_1", "1_3")]
    assert wrong.status == EvalStatus.FAIL and wrong.tests == {listed: TestOutcome.FAILED, plain: TestOutcome.FAILED}


def test_ordinary_code_is_not_seen_doing_anything(clone: CloneRecord, tmp_path: Path) -> None:
    """What right answers do (temporary files, dataclasses and named tuples built at run time,
    a subprocess) is no observation, without any allowance from gold."""
    ordinary = hostile(
        "import collections, dataclasses, subprocess, sys, tempfile\n"
        "with tempfile.NamedTemporaryFile() as fh:\n    fh.write(b'x')\n"
        "Pair = collections.namedtuple('Pair', 'a b')\n"
        "Box = dataclasses.make_dataclass('Box', ['v'], frozen=True)\n"
        "subprocess.run([sys.executable, '-c', 'pass'], capture_output=True, check=True)\n"
        "return np.maximum(np.asarray(x), 0)\n"
    )
    [result] = evaluate_repo(clone, {RELU.task_id: RELU}, [gen(RELU, ordinary)], None, "local", CFG, 1, tmp_path)
    assert result.status == EvalStatus.PASS and result.observed == [], (result.detail, result.observed)


ENDS_THE_SESSION = (  # assumes the terminal reporter (off in the harness): raises at configure
    "def pytest_configure(config):\n    config.pluginmanager.getplugin('terminalreporter').write_line('on')\n"
)


def install_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins: dict[str, str]) -> None:
    """Installed pytest plugins, an entry point each, on the path of every run."""
    files = {}
    for name, source in plugins.items():
        files[f"{name}/__init__.py"] = source
        files[f"{name}-1.0.dist-info/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
        files[f"{name}-1.0.dist-info/entry_points.txt"] = f"[pytest11]\n{name} = {name}\n"
    monkeypatch.setenv("PYTHONPATH", str(write_tree(tmp_path / "site", files)))


def gold_and_wrong_one(tmp_path: Path, files: dict[str, str] = ONE_FILES) -> tuple[Evaluation, Evaluation, str]:
    """Gold and a wrong answer of the ``one`` task, and gold's events."""
    from dlbench.harness.evaluate import evidence_dir

    record, task = project_task(tmp_path, files, "one", [ONE_TEST], ONE)
    gold, wrong = run_local(record, task, [("gold", ONE), ("m", "def one():\n    return 2\n")], tmp_path / "ev")
    events = (evidence_dir(tmp_path / "ev", "o__r", gen(task, ONE, model="gold")) / "events.jsonl").read_text()
    return gold, wrong, events


def test_an_installed_plugin_that_ends_the_session_is_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin assuming the terminal reporter (off in the harness) raises at configure: the
    session runs without it, and the evidence says so."""
    install_plugins(tmp_path, monkeypatch, {"fakeplug": ENDS_THE_SESSION})
    gold, _, events = gold_and_wrong_one(tmp_path)
    assert gold.status == EvalStatus.PASS, (gold.status, gold.detail)
    assert '"ev": "set_aside", "plugin": "fakeplug"' in events and "NoneType" in events


RERUNS = """\
import _pytest.runner


class Reruns:
    # Like flaky: runs each test through its own call_and_report, restored after the test.
    def pytest_runtest_protocol(self, item, nextitem):
        original = _pytest.runner.call_and_report

        def call_and_report(item, when, log=True, **kwds):
            return original(item, when, log, **kwds)

        _pytest.runner.call_and_report = call_and_report
        try:
            _pytest.runner.runtestprotocol(item, nextitem=nextitem)
        finally:
            _pytest.runner.call_and_report = original
        return True


PLUGIN = Reruns()
pytest_runtest_protocol = PLUGIN.pytest_runtest_protocol
"""


def test_an_installed_plugin_that_replaces_pytest_internals_is_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PennyLane's image has ``flaky``, which runs every test through its own ``call_and_report``:
    the integrity layers cannot tell that from a forgery, so every gold run was a violation. The
    warm-up run finds the plugins that replace pytest's internals; they are left out of every
    run, with a note, and a wrong answer still fails."""
    install_plugins(tmp_path, monkeypatch, {"reruns": RERUNS})
    gold, wrong, events = gold_and_wrong_one(tmp_path)
    assert gold.status == EvalStatus.PASS, (gold.status, gold.detail)
    assert wrong.status == EvalStatus.FAIL, (wrong.status, wrong.detail)
    assert '"ev": "set_aside", "plugin": "reruns"' in events and "runner.call_and_report" in events


def test_a_plugin_that_replaces_pytest_internals_is_seen_behind_one_that_ends_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """skorch's image has pytest-pretty, whose configure raises without the terminal reporter,
    and ``flaky``: the warm-up session ended at configure, no test ran there, ``flaky`` went
    unseen, and every gold run was a violation. The warm-up leaves the first out and runs again."""
    install_plugins(tmp_path, monkeypatch, {"aaplug": ENDS_THE_SESSION, "reruns": RERUNS})
    gold, wrong, events = gold_and_wrong_one(tmp_path)
    assert gold.status == EvalStatus.PASS, (gold.status, gold.detail)
    assert wrong.status == EvalStatus.FAIL, (wrong.status, wrong.detail)
    assert '"ev": "set_aside", "plugin": "aaplug"' in events and '"ev": "set_aside", "plugin": "reruns"' in events
    assert events.count('"plugin": "aaplug"') == 1  # found once by the warm-up, not by a failed session of the run


def test_the_projects_own_plugin_does_not_end_the_warm_up_before_one_that_replaces_internals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image registers the project's own entry points (``deps.own``): a ``pytest11`` one
    names the project's module, whose import the warm parent refuses; the warm-up must still
    run its tests and see ``flaky``-like plugins after it."""
    install_plugins(tmp_path, monkeypatch, {"reruns": RERUNS})
    own = write_tree(tmp_path / "own-site", {
        "pkgplug-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pkgplug\nVersion: 1.0\n",
        "pkgplug-1.0.dist-info/entry_points.txt": "[pytest11]\npkgplug = pkg.plugin\n",
    })  # fmt: skip
    monkeypatch.setenv("PYTHONPATH", f"{own}{os.pathsep}{os.environ['PYTHONPATH']}")  # found first
    gold, wrong, events = gold_and_wrong_one(tmp_path, {**ONE_FILES, "pkg/plugin.py": "LOADED = True\n"})
    assert gold.status == EvalStatus.PASS, (gold.status, gold.detail)
    assert wrong.status == EvalStatus.FAIL, (wrong.status, wrong.detail)
    assert '"ev": "set_aside", "plugin": "reruns"' in events and '"plugin": "pkg.plugin"' not in events


SUBTESTS = """\
import unittest

from pkg.core import double


class TestDouble(unittest.TestCase):
    def test_double(self):
        for x, expected in ((1, 2), (3, 6)):
            with self.subTest(x=x):
                self.assertEqual(double(x), expected)
"""


def test_subtests_report_once_per_phase_and_a_failing_one_fails_its_test(tmp_path: Path) -> None:
    """pytest reports each subtest (``self.subTest``) besides the test: no duplicate phase."""
    files = {"pkg/__init__.py": "", "pkg/core.py": "def double(x):\n    return 2 * x\n", "tests/test_s.py": SUBTESTS}
    listed = "tests/test_s.py::TestDouble::test_double"
    record, task = project_task(tmp_path, files, "double", [listed], "def double(x):\n    return 2 * x\n")
    codes = [("gold", task.ground_truth), ("m", "def double(x):\n    return x + 1\n")]  # right for 1, wrong for 3
    gold, wrong = run_local(record, task, codes, tmp_path / "ev")
    assert gold.status == EvalStatus.PASS, (gold.status, gold.detail)
    assert wrong.status == EvalStatus.FAIL and wrong.tests == {listed: TestOutcome.FAILED}, (wrong.status, wrong.detail)
    assert "AssertionError: 4 != 6" in (wrong.exception or ""), wrong.exception


def test_a_test_that_re_executes_its_command_line_starts_no_second_supervisor(tmp_path: Path) -> None:
    """Lightning's DDP launcher runs ``[sys.executable, *sys.argv]`` again: the supervisor's own
    command line, which started a second supervisor that cleared the work folder, copy and all."""
    rerun = (
        "import subprocess, sys\nfrom pkg.core import one\n\n\ndef test_one():\n"
        "    done = subprocess.run([sys.executable, *sys.argv], capture_output=True, text=True, timeout=60)\n"
        "    assert done.returncode == 2 and 'refused' in done.stderr\n    assert one() == 1\n"
    )
    files = ONE_FILES | {"tests/test_core.py": rerun}
    record, task = project_task(tmp_path, files, "one", [ONE_TEST], ONE)
    [gold] = run_local(record, task, [("gold", ONE)], tmp_path / "ev")
    assert gold.status == EvalStatus.PASS, (gold.status, gold.detail)
