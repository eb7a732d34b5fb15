"""Call-graph resolution on small inline source trees, one case per resolution rule."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dlbench.config import MineConfig
from dlbench.mine.api import MineResult, mine


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def mine_tree(root: Path, files: dict[str, str], min_tests: int = 3, **options: str) -> MineResult:
    """Mine ``files`` written to ``root``; ``options`` are further ``mine.*`` settings
    (resolution tests count every call the test makes: ``tested_by`` defaults to ``called``)."""
    repo = write_tree(root / "repo", files)
    cfg = MineConfig(**{"tested_by": "called", **options})
    return mine(repo, "acme/lib", None, min_tests, cfg, root / "cache", dates=False)


def calls_of(result: MineResult) -> dict[str, list[str]]:
    return {record.node_id: record.calls for record in result.calls}


PKG = {
    "pkg/__init__.py": """
        from .core import api
        from . import boxes
        from .models import Model, make_model
    """,
    "pkg/core/__init__.py": "from .impl import *\n",
    "pkg/core/impl.py": """
        def api(x):
            return x
    """,
    "pkg/ops.py": """
        import numpy as np

        def iou(a, b):
            return np.zeros(1)
    """,
    "pkg/boxes.py": """
        from .ops import iou as _iou

        iou = _iou

        def area(b):
            return b
    """,
    "pkg/sub/deep.py": """
        from ..ops import iou

        def deep_iou(a, b):
            return iou(a, b)
    """,
    "pkg/models.py": """
        class Base:
            def __init__(self, n):
                self.n = n

            def forward(self, x):
                return x

            def clone(self) -> "Base":
                return Base(self.n)


        class Model(Base):
            def fit(self, x):
                return self

            @classmethod
            def create(cls, n):
                return cls(n)


        class Plain:
            def run(self):
                return 1


        def make_model(n) -> Model:
            return Model(n)
    """,
}


def test_aliases_reexports_and_module_attribute_calls(tmp_path):
    files = dict(PKG)
    files["tests/test_api.py"] = """
        import numpy as np
        import pkg as vk
        import pkg.boxes
        from pkg import api as the_api
        from pkg.sub import deep
        from pkg.sub.deep import deep_iou as di

        def test_alias():
            assert the_api(np.ones(2)) is not None

        def test_module_attribute():
            vk.boxes.iou(1, 2)

        def test_full_dotted():
            pkg.boxes.area(3)

        def test_relative_import_in_library():
            deep.deep_iou(1, 2)
            di(1, 2)
    """
    calls = calls_of(mine_tree(tmp_path, files))
    assert calls["tests/test_api.py::test_alias"] == ["pkg/core/impl.py:api"]
    assert calls["tests/test_api.py::test_module_attribute"] == ["pkg/ops.py:iou"]
    assert calls["tests/test_api.py::test_full_dotted"] == ["pkg/boxes.py:area"]
    # deep_iou calls iou inside library code: not followed.
    assert calls["tests/test_api.py::test_relative_import_in_library"] == ["pkg/sub/deep.py:deep_iou"]


def test_constructors_and_methods_on_bound_objects(tmp_path):
    files = dict(PKG)
    files["tests/test_models.py"] = """
        from pkg import Model, make_model
        from pkg.models import Plain

        def test_constructor_reaches_inherited_init():
            Model(3)

        def test_class_without_init_reaches_nothing():
            Plain()

        def test_bound_object():
            m = Model(3)
            m.fit(1)

        def test_inherited_method_and_chain():
            Model(2).forward(1)

        def test_library_return_annotation():
            make_model(2).fit(1)

        def test_classmethod_returning_cls():
            Model.create(2).forward(0)

        def test_with_and_annotation():
            with Model(1) as m:
                m.fit(0)
            other: Plain = build()
            other.run()

        def test_method_return_annotation():
            Model(1).clone().forward(2)

        def build():
            return None
    """
    calls = calls_of(mine_tree(tmp_path, files))
    prefix = "tests/test_models.py::"
    assert calls[prefix + "test_constructor_reaches_inherited_init"] == ["pkg/models.py:Base.__init__"]
    assert calls[prefix + "test_class_without_init_reaches_nothing"] == []
    assert calls[prefix + "test_bound_object"] == ["pkg/models.py:Base.__init__", "pkg/models.py:Model.fit"]
    assert calls[prefix + "test_inherited_method_and_chain"] == [
        "pkg/models.py:Base.__init__",
        "pkg/models.py:Base.forward",
    ]
    assert calls[prefix + "test_library_return_annotation"] == ["pkg/models.py:Model.fit", "pkg/models.py:make_model"]
    assert calls[prefix + "test_classmethod_returning_cls"] == [
        "pkg/models.py:Base.forward",
        "pkg/models.py:Model.create",
    ]
    assert calls[prefix + "test_with_and_annotation"] == [
        "pkg/models.py:Base.__init__",
        "pkg/models.py:Model.fit",
        "pkg/models.py:Plain.run",
    ]
    assert calls[prefix + "test_method_return_annotation"] == [
        "pkg/models.py:Base.__init__",
        "pkg/models.py:Base.clone",
        "pkg/models.py:Base.forward",
    ]


def test_helpers_self_methods_and_setup(tmp_path):
    files = dict(PKG)
    files["tests/test_helpers.py"] = """
        import unittest

        from pkg import api, boxes
        from pkg.models import Model


        def helper(x):
            return inner(x)


        def inner(x):
            return api(x)


        def test_uses_helper():
            helper(1)


        class TestWithHelper:
            def make(self):
                return Model(1)

            def test_self_helper(self):
                self.make().fit(0)

            def test_plain(self):
                boxes.area(1)


        class Common(unittest.TestCase):
            def setUp(self):
                self.model = Model(4)

            def test_forward(self):
                self.model.forward(1)


        class TestDerived(Common):
            def test_fit(self):
                self.model.fit(2)
    """
    result = mine_tree(tmp_path, files, tested_by="reached")
    calls = calls_of(result)
    p = "tests/test_helpers.py::"
    assert calls[p + "test_uses_helper"] == ["pkg/core/impl.py:api"]
    assert calls[p + "TestWithHelper::test_self_helper"] == ["pkg/models.py:Base.__init__", "pkg/models.py:Model.fit"]
    assert calls[p + "TestWithHelper::test_plain"] == ["pkg/boxes.py:area"]
    assert calls[p + "Common::test_forward"] == ["pkg/models.py:Base.__init__", "pkg/models.py:Base.forward"]
    # Inherited test methods are collected under the subclass, setUp included.
    assert calls[p + "TestDerived::test_forward"] == ["pkg/models.py:Base.__init__", "pkg/models.py:Base.forward"]
    assert calls[p + "TestDerived::test_fit"] == ["pkg/models.py:Base.__init__", "pkg/models.py:Model.fit"]


def test_fixtures_from_conftest_chain(tmp_path):
    files = dict(PKG)
    files["tests/conftest.py"] = """
        import pytest
        from pkg import Model, api
        from pkg.models import Plain

        @pytest.fixture
        def model() -> Model:
            return Model(1)

        @pytest.fixture
        def data():
            return api(2)

        @pytest.fixture
        def pipeline(model, data):
            yield Plain()

        @pytest.fixture(name="renamed")
        def _renamed_fixture():
            return Model(5)
    """
    files["tests/sub/conftest.py"] = """
        import pytest
        from pkg import boxes

        @pytest.fixture
        def data(data):
            return boxes.area(data)

        @pytest.fixture(autouse=True)
        def always():
            boxes.iou(0, 0)
    """
    files["tests/test_top.py"] = """
        import pytest

        def test_model(model):
            model.fit(1)

        def test_transitive(pipeline):
            pipeline.run()

        def test_renamed(renamed):
            renamed.forward(1)

        @pytest.mark.usefixtures("data")
        def test_usefixtures():
            pass
    """
    files["tests/sub/test_sub.py"] = """
        def test_overridden(data):
            pass
    """
    calls = calls_of(mine_tree(tmp_path, files, tested_by="reached"))
    assert calls["tests/test_top.py::test_model"] == ["pkg/models.py:Base.__init__", "pkg/models.py:Model.fit"]
    assert calls["tests/test_top.py::test_transitive"] == [
        "pkg/core/impl.py:api",
        "pkg/models.py:Base.__init__",
        "pkg/models.py:Plain.run",
    ]
    assert calls["tests/test_top.py::test_renamed"] == ["pkg/models.py:Base.__init__", "pkg/models.py:Base.forward"]
    assert calls["tests/test_top.py::test_usefixtures"] == ["pkg/core/impl.py:api"]
    # The sub-folder's conftest overrides ``data`` (and asks for the outer one) and adds an
    # autouse fixture; neither is visible from tests/test_top.py.
    assert calls["tests/sub/test_sub.py::test_overridden"] == [
        "pkg/boxes.py:area",
        "pkg/core/impl.py:api",
        "pkg/ops.py:iou",
    ]


def test_parametrize_collapse_external_calls_and_min_tests(tmp_path):
    files = dict(PKG)
    files["tests/test_param.py"] = """
        import os
        import numpy as np
        import pytest
        from pkg import api, boxes

        @pytest.mark.parametrize("x, y", [(1, 2), (3, 4)])
        def test_param(x, y):
            api(x)
            np.zeros(3)
            os.path.join("a", "b")

        def test_two():
            api(1)
            boxes.area(1)

        def test_three():
            api(2)
            boxes.area(2)
    """
    result = mine_tree(tmp_path, files)
    param = [t for t in result.tests if t.name == "test_param"]
    assert len(param) == 1 and param[0].parametrized and param[0].node_id == "tests/test_param.py::test_param"
    assert calls_of(result)["tests/test_param.py::test_param"] == ["pkg/core/impl.py:api"]
    functions = {f.qualname: f.tests for f in result.functions}
    # api: 3 tests → a task; area: only 2 tests → left out.
    assert functions == {
        "api": ["tests/test_param.py::test_param", "tests/test_param.py::test_three", "tests/test_param.py::test_two"]
    }


def test_test_support_modules_are_followed_never_targets(tmp_path):
    files = dict(PKG)
    files["tests/__init__.py"] = ""
    files["tests/utils/__init__.py"] = ""
    files["tests/utils/data.py"] = """
        from pkg import api
        from pkg.models import Model

        def make():
            return api(1)

        def model(n):
            return Model(n)

        class Builder:
            def __init__(self):
                self.area = unused()

            def build(self) -> Model:
                return model(2)

        def unused():
            from pkg import boxes
            return boxes.area(0)
    """
    files["tests/test_support.py"] = """
        from pkg import boxes
        from tests.utils.data import Builder, make, model

        def test_a():
            make()
            boxes.area(1)

        def test_helper_types_its_result():
            model(1).fit(0)

        def test_support_class():
            Builder().build().forward(0)
    """
    calls = calls_of(mine_tree(tmp_path, files))
    # tests/utils/data.py runs for the test: what it calls is reached, its own functions never are.
    assert calls["tests/test_support.py::test_a"] == ["pkg/boxes.py:area", "pkg/core/impl.py:api"]
    assert calls["tests/test_support.py::test_helper_types_its_result"] == [
        "pkg/models.py:Base.__init__",
        "pkg/models.py:Model.fit",
    ]
    assert calls["tests/test_support.py::test_support_class"] == [
        "pkg/boxes.py:area",
        "pkg/models.py:Base.__init__",
        "pkg/models.py:Base.forward",
    ]


def test_src_layout_and_namespace_package(tmp_path):
    files = {
        "src/lib/__init__.py": "from .ops import scale\n",
        "src/lib/ops.py": "def scale(x):\n    return x\n",
        "nspkg/tools.py": "def tool():\n    return 1\n",
        "tests/test_layout.py": """
            import lib
            from nspkg.tools import tool

            def test_it():
                lib.scale(2)
                tool()
        """,
    }
    calls = calls_of(mine_tree(tmp_path, files))
    assert calls["tests/test_layout.py::test_it"] == ["nspkg/tools.py:tool", "src/lib/ops.py:scale"]


def test_src_layout_with_a_stray_init_and_a_test_package_of_the_same_name(tmp_path):
    """sparseml: ``src/__init__.py`` makes ``src`` look like a package, and ``tests/sparseml/``
    holds its tests: ``import sparseml`` is still the installed ``src/sparseml`` (1,595 of its
    1,635 tests reached none of its functions, and 40 tasks were mined of them)."""
    files = {
        "src/__init__.py": "",
        "src/lib/__init__.py": "",
        "src/lib/ops.py": "def scale(x):\n    return x\n",
        "tests/__init__.py": "",
        "tests/lib/__init__.py": "",
        "tests/lib/test_ops.py": """
            from lib.ops import scale
            from src.lib import ops

            def test_installed_name():
                scale(2)

            def test_folder_name():
                ops.scale(3)
        """,
    }
    calls = calls_of(mine_tree(tmp_path, files))
    assert calls["tests/lib/test_ops.py::test_installed_name"] == ["src/lib/ops.py:scale"]
    assert calls["tests/lib/test_ops.py::test_folder_name"] == ["src/lib/ops.py:scale"]


def test_imports_inside_test_functions(tmp_path):
    files = dict(PKG)
    files["tests/test_local_import.py"] = """
        def make():
            import pkg
            return pkg.make_model(1)

        def test_local(model=None):
            from pkg.boxes import area as a
            from pkg import models as mm
            a(1)
            mm.Plain().run()
            make().fit(2)
    """
    assert calls_of(mine_tree(tmp_path, files))["tests/test_local_import.py::test_local"] == [
        "pkg/boxes.py:area",
        "pkg/models.py:Model.fit",
        "pkg/models.py:Plain.run",
        "pkg/models.py:make_model",
    ]


def test_calling_a_torch_module_reaches_forward(tmp_path):
    files = {
        "net/__init__.py": "",
        "net/layers.py": """
            import torch
            import torch.nn as nn
            from torch import nn as tnn


            class Block(nn.Module):
                def __init__(self, width):
                    super().__init__()
                    self.width = width

                def forward(self, x):
                    return x


            class Head(tnn.Module):
                def forward(self, x):
                    return x

                def __call__(self, x):
                    return self.forward(x)


            class Plain:
                def forward(self, x):
                    return x


            class Spline(torch.distributions.Transform):
                def _call(self, x):
                    return x
        """,
        "tests/test_net.py": """
            from net.layers import Block, Head, Plain, Spline

            def test_call():
                Block(2)(1)
                head = Head()
                head(1)
                Plain()(1)
                Spline()(1)
        """,
    }
    assert calls_of(mine_tree(tmp_path, files))["tests/test_net.py::test_call"] == [
        "net/layers.py:Block.__init__",
        "net/layers.py:Block.forward",
        "net/layers.py:Head.__call__",
        "net/layers.py:Head.forward",  # a module's own __call__ still ends in torch's, which runs forward
        "net/layers.py:Spline._call",  # a torch distribution's Transform runs _call (pyro's splines)
    ]


def test_test_module_subclasses_of_library_classes(tmp_path):
    files = dict(PKG)
    files["tests/test_subclass.py"] = """
        from pkg.models import Base, Model


        class Tiny(Base):
            def __init__(self):
                super().__init__(1)

            def forward(self, x):
                return super().forward(x) + Model(2).fit(x).n


        class NoInit(Model):
            pass


        def test_tiny():
            Tiny().forward(1)


        def test_no_init():
            NoInit(1).describe = None
    """
    calls = calls_of(mine_tree(tmp_path, files))
    assert calls["tests/test_subclass.py::test_tiny"] == [
        "pkg/models.py:Base.__init__",
        "pkg/models.py:Base.forward",
        "pkg/models.py:Model.fit",
    ]
    assert calls["tests/test_subclass.py::test_no_init"] == ["pkg/models.py:Base.__init__"]


def test_definitions_inside_module_level_blocks(tmp_path):
    files = dict(PKG)
    files["tests/test_guarded.py"] = """
        import sys
        from pkg import api

        if sys.version_info >= (3, 8):
            def test_guarded():
                api(1)
        elif sys.platform == "win32":
            pass
        else:
            def test_old():
                api(2)

        try:
            import numpy
        except ImportError:
            numpy = None
        else:
            def test_in_else():
                api(3)
    """
    calls = calls_of(mine_tree(tmp_path, files))
    assert calls == {
        f"tests/test_guarded.py::{name}": ["pkg/core/impl.py:api"]
        for name in ("test_guarded", "test_old", "test_in_else")
    }


def test_applying_an_autograd_function_reaches_forward(tmp_path):
    """``F.apply(...)`` runs ``F.forward``: torch's ``autograd.Function.apply`` dispatches there."""
    files = {
        "net/__init__.py": "",
        "net/ops.py": """
            import torch
            from torch.autograd import Function


            class RoundSTE(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x.round()

                @staticmethod
                def backward(ctx, grad):
                    return grad


            class Clip(Function):
                @staticmethod
                def forward(ctx, x):
                    return x


            class NotAutograd:
                @staticmethod
                def forward(x):
                    return x
        """,
        "tests/test_ops.py": """
            from net.ops import Clip, NotAutograd, RoundSTE

            def test_apply():
                RoundSTE.apply(1.5)
                Clip().apply(1)
                NotAutograd.apply(1)
        """,
    }
    assert calls_of(mine_tree(tmp_path, files))["tests/test_ops.py::test_apply"] == [
        "net/ops.py:Clip.forward",
        "net/ops.py:RoundSTE.forward",
    ]


LIVE = {
    "aug/__init__.py": "",
    "aug/base.py": """
        import torch.nn as nn


        class Base(nn.Module):
            def forward(self, x):
                return self.apply_transform(self.prepare(x))

            def prepare(self, x):
                return x

            def apply_transform(self, x):
                raise NotImplementedError


        class Hue(Base):
            def __init__(self, hue):
                super().__init__()
                self.hue = hue

            def apply_transform(self, x):
                return x + self.hue


        class Gamma(Base):
            def apply_transform(self, x):
                return x ** 2
    """,
    "tests/test_aug.py": """
        from aug.base import Hue

        def test_hue():
            aug = Hue(0.1)
            aug(1.0)
    """,
}


def test_transitive_reach_runs_the_overrides_of_the_classes_a_test_builds(tmp_path):
    """The inherited ``forward`` calls ``self.apply_transform``: for a test that builds ``Hue``
    that is ``Hue.apply_transform``; ``Gamma``'s, which no test builds, is not reached."""
    reached = calls_of(mine_tree(tmp_path, LIVE, reach="transitive"))["tests/test_aug.py::test_hue"]
    assert reached == [
        "aug/base.py:Base.apply_transform",
        "aug/base.py:Base.forward",
        "aug/base.py:Base.prepare",
        "aug/base.py:Hue.__init__",
        "aug/base.py:Hue.apply_transform",
    ]
    direct = calls_of(mine_tree(tmp_path / "direct", LIVE))["tests/test_aug.py::test_hue"]
    assert direct == ["aug/base.py:Base.forward", "aug/base.py:Hue.__init__"]


def test_a_framework_base_reached_through_an_alias_module_dispatches(tmp_path):
    """``Module`` re-exported from a backend module that aliases ``torch.nn.Module`` is torch's
    (kornia: ``from ._backend import Module``, ``Module = torch.nn.Module``)."""
    files = {
        "lib/__init__.py": "",
        "lib/_backend.py": "import torch\n\nModule = torch.nn.Module\n",
        "lib/core.py": """
            from ._backend import Module


            class ImageModule(Module):
                def __call__(self, *inputs):
                    return super().__call__(*inputs)


            class Rot180(ImageModule):
                def forward(self, x):
                    return x
        """,
        "tests/test_rot.py": """
            from lib.core import Rot180

            def test_rot():
                Rot180()(1)
        """,
    }
    assert calls_of(mine_tree(tmp_path, files))["tests/test_rot.py::test_rot"] == [
        "lib/core.py:ImageModule.__call__",
        "lib/core.py:Rot180.forward",
    ]


HELPERS = {
    "lib/ops.py": """
        def scale(x, k):
            return x * k
    """,
    "tests/utils/helpers.py": """
        from lib.ops import scale

        def make_data(n):
            return [scale(i, 2) for i in range(n)]
    """,
    "tests/conftest.py": """
        import pytest

        @pytest.fixture
        def data():
            return [1]
    """,
    "tests/unit/test_ops.py": """
        from tests.utils.helpers import make_data

        def local_helper():
            return 3

        def test_make_data(data):
            assert make_data(local_helper()) == [0, 2, 4]
    """,
}


@pytest.mark.parametrize("ini", ["", "[pytest]\npython_files = tests/**/*.py\n"], ids=["default", "every-file"])
def test_test_helper_modules_are_candidates_when_asked(tmp_path, ini):
    """The DL-Bench authors made tasks of functions in test helper modules (PennyLane's
    tests/gate_data.py, Laplace's tests/utils.py): with ``mine.test_helpers`` those are
    candidates, reached by the tests that call them; test modules and conftests never are.
    A module the project's ``python_files`` names but that holds no test is a helper too
    (small-text: ``tests/**/*.py``)."""
    files = {**HELPERS, "pytest.ini": ini}
    off = {f.task_id.split(":", 1)[1] for f in mine_tree(tmp_path / "off", files, min_tests=1).functions}
    on = mine_tree(tmp_path / "on", files, min_tests=1, test_helpers=True)
    made = {f.task_id.split(":", 1)[1]: f for f in on.functions}
    assert off == {"lib/ops.py:scale"}  # the helper's own calls still count for the test
    assert set(made) == {"lib/ops.py:scale", "tests/utils/helpers.py:make_data"}
    assert made["tests/utils/helpers.py:make_data"].tests == ["tests/unit/test_ops.py::test_make_data"]


MODULES = {
    "net/layers.py": """
        import torch


        def position_embedding(dim, pos):
            return pos * dim


        class Embedding(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.dim = dim

            def forward(self, x):
                return position_embedding(self.dim, x)


        class Unused(torch.nn.Module):
            def forward(self, x):
                return x
    """,
    "net/model.py": """
        import torch

        from net.layers import Embedding, Unused


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = Embedding(4)
                self.spare = Unused()

            def forward(self, x):
                return self.embed(x)
    """,
    "tests/test_model.py": """
        from net.model import Model

        def test_model():
            assert Model()(2) == 8
    """,
}


def test_transitive_reach_follows_modules_held_in_attributes(tmp_path):
    """Models are built of modules held in attributes: ``self.embed(x)`` in ``Model.forward``
    runs ``Embedding.forward`` (set in ``__init__`` as ``self.embed = Embedding(4)``), which
    runs ``position_embedding`` (torchgeo's DOFA). ``Unused``, held but never called, is not."""
    reached = calls_of(mine_tree(tmp_path, MODULES, reach="transitive"))["tests/test_model.py::test_model"]
    assert "net/layers.py:Embedding.forward" in reached and "net/layers.py:position_embedding" in reached
    assert "net/layers.py:Unused.forward" not in reached


HANDED = {
    "fit/__init__.py": "",
    "fit/losses.py": """
        class Loss:
            def __init__(self, particles=1):
                self.particles = particles

            def loss_and_grads(self, x):
                return self._loss(x)

            def _loss(self, x):
                return x


        class Unbuilt:
            def loss_and_grads(self, x):
                return -x
    """,
    "fit/svi.py": """
        class SVI:
            def __init__(self, loss):
                self.loss_and_grads = loss.loss_and_grads

            def step(self, x):
                return self.loss_and_grads(x)
    """,
    "tests/test_svi.py": """
        from fit.losses import Loss
        from fit.svi import SVI

        def test_step():
            assert SVI(Loss()).step(2) == 2
    """,
}


def test_transitive_reach_follows_bound_methods_an_object_was_handed(tmp_path):
    """``SVI`` keeps the bound method of the loss it was handed and calls it in ``step``
    (pyro): the test built a ``Loss``, so its ``loss_and_grads`` and what that calls run;
    ``Unbuilt``'s method of the same name does not."""
    reached = calls_of(mine_tree(tmp_path, HANDED, reach="transitive"))["tests/test_svi.py::test_step"]
    assert {"fit/losses.py:Loss.loss_and_grads", "fit/losses.py:Loss._loss"} <= set(reached)
    assert "fit/losses.py:Unbuilt.loss_and_grads" not in reached
