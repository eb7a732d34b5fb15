"""Call-graph resolution of what tests run without naming it: classes passed as
``parametrize`` values, objects unpacked from tuples, special methods run by syntax,
properties, and overrides found in Python's method resolution order."""

from __future__ import annotations

from tests.test_mine_callgraph import calls_of, mine_tree

CURVES = {
    "curv/__init__.py": "from .backends import Base, Fast, Slow, Mixed\n",
    "curv/backends.py": """
        class Base:
            def __init__(self, model):
                self.model = model

            def full(self, x):
                return x

            def diag(self, x):
                return x

            @classmethod
            def create(cls, model):
                return cls(model)


        class GGN(Base):
            def full(self, x):
                return x


        class Fast(Base):
            def __init__(self, model):
                super().__init__(model)

            def diag(self, x):
                return x


        class Slow(Base):
            def split(self) -> tuple[float, Fast]:
                return 0.0, Fast(self.model)

            def pair(self) -> "Tuple[float, GGN]":
                return 0.0, GGN(self.model)


        class Mixed(Fast, GGN):
            pass


        def helper(x):
            return x
    """,
}


def test_parametrize_values_are_the_classes_and_functions_a_test_calls(tmp_path):
    files = dict(CURVES)
    files["tests/test_param.py"] = """
        from itertools import product

        import pytest
        from curv import Fast, Slow
        from curv.backends import Mixed, helper
        import curv.backends as be

        flavors = [Fast, Slow]
        more = flavors + [pytest.param(Mixed, marks=pytest.mark.slow)]
        flavors = [Fast]  # rebound: the decorators below see the new list


        @pytest.mark.parametrize("backend", more)
        def test_listed_in_module(backend):
            backend("m").diag(1)


        @pytest.mark.parametrize("backend", flavors)
        def test_rebound(backend):
            backend.create("m")


        @pytest.mark.parametrize("backend, fn", [(be.Slow, helper), pytest.param(Fast, be.helper)])
        def test_two_names(backend, fn):
            obj = backend("m")
            fn(obj.full(1))


        @pytest.mark.parametrize("value", [1, 2])
        def test_constants(value, model):
            value(2)


        @pytest.mark.parametrize("backend, kind", product(flavors, ["a", "b"]))
        def test_product(backend, kind):
            backend("m")


        @pytest.mark.parametrize("pair, n", product([(Slow, helper), (Mixed, be.helper)], [1, 2]))
        def test_tuple_values(pair, n):
            cls, fn = pair
            fn(cls("m"))


        def test_loop_and_alias():
            for cls in [Fast, Slow]:
                cls("m")
            other = Mixed
            other("m").full(1)
            bound = Slow("m").diag
            bound(1)
            fast = Fast("m")
            also = fast.diag
            also(1)
    """
    calls = calls_of(mine_tree(tmp_path, files))
    p = "tests/test_param.py::"
    assert calls[p + "test_listed_in_module"] == [
        "curv/backends.py:Base.__init__",
        "curv/backends.py:Base.diag",
        "curv/backends.py:Fast.__init__",
        "curv/backends.py:Fast.diag",
    ]
    assert calls[p + "test_rebound"] == ["curv/backends.py:Base.create"]
    assert calls[p + "test_two_names"] == [
        "curv/backends.py:Base.__init__",
        "curv/backends.py:Base.full",
        "curv/backends.py:Fast.__init__",
        "curv/backends.py:helper",
    ]
    assert calls[p + "test_constants"] == []
    assert calls[p + "test_product"] == ["curv/backends.py:Fast.__init__"]
    assert calls[p + "test_tuple_values"] == [
        "curv/backends.py:Base.__init__",
        "curv/backends.py:Fast.__init__",
        "curv/backends.py:helper",
    ]
    # Mixed(Fast, GGN): Python's C3 order puts GGN before Base, so GGN.full runs.
    assert calls[p + "test_loop_and_alias"] == [
        "curv/backends.py:Base.__init__",
        "curv/backends.py:Base.diag",
        "curv/backends.py:Fast.__init__",
        "curv/backends.py:Fast.diag",
        "curv/backends.py:GGN.full",
    ]


def test_overrides_follow_c3_order_in_a_diamond(tmp_path):
    files = dict(CURVES)
    files["tests/test_mro.py"] = """
        from curv.backends import Mixed

        def test_full():
            backend = Mixed("m")
            backend.full(1)
            backend.diag(1)
    """
    # Depth-first order would give Base.full (Fast's base) before GGN.full.
    assert calls_of(mine_tree(tmp_path, files))["tests/test_mro.py::test_full"] == [
        "curv/backends.py:Fast.__init__",
        "curv/backends.py:Fast.diag",
        "curv/backends.py:GGN.full",
    ]


DATA = {
    "data/__init__.py": "",
    "data/sets.py": """
        class Matrix:
            def __init__(self, n):
                self.n = n

            def __len__(self):
                return self.n

            def __getitem__(self, i):
                return i

            def __setitem__(self, i, v):
                pass

            def __eq__(self, other):
                return True

            def __mul__(self, other):
                return self

            def __iadd__(self, other):
                return self

            def __iter__(self):
                return iter(())

            def __contains__(self, item):
                return False

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def __neg__(self):
                return self

            def __repr__(self):
                return "Matrix"

            @property
            def shape(self) -> "Shape":
                return Shape()

            @shape.setter
            def shape(self, value):
                pass

            def plain(self):
                return 1


        class Scalar:
            def scale(self, other):
                return other

            __rmul__ = scale

            def __add__(self, other):
                return self

            def __gt__(self, other):
                return True


        class Shape:
            @property
            def rank(self):
                return 2
    """,
}


def test_special_methods_run_by_syntax(tmp_path):
    files = dict(DATA)
    files["tests/test_syntax.py"] = """
        from data.sets import Matrix, Scalar

        def test_len_index_compare():
            m = Matrix(3)
            assert len(m) == 3
            m[0] = m[1]
            assert m == Matrix(2)

        def test_operators_and_reflection():
            m = Matrix(1)
            s = Scalar()
            m * 2
            2 * s
            m += m
            -m
            s += 1
            assert 1 < s

        def test_protocols():
            m = Matrix(1)
            for _ in m:
                pass
            assert 3 not in m
            with Matrix(2) as other:
                str(other)

        def test_unknown_objects_run_nothing():
            x = [1, 2]
            assert len(x) == 2 and x[0] * 2
    """
    calls = calls_of(mine_tree(tmp_path, files))
    p = "tests/test_syntax.py::"
    init = "data/sets.py:Matrix.__init__"
    assert calls[p + "test_len_index_compare"] == sorted(
        [
            init,
            "data/sets.py:Matrix.__eq__",
            "data/sets.py:Matrix.__getitem__",
            "data/sets.py:Matrix.__len__",
            "data/sets.py:Matrix.__setitem__",
        ]
    )
    # ``2 * s`` and ``1 < s``: the left operand is no repository object, so s's reflection
    # runs (``__rmul__ = scale``: scale's code); ``s += 1`` falls back to __add__ where the
    # class has no __iadd__.
    assert calls[p + "test_operators_and_reflection"] == sorted(
        [
            init,
            "data/sets.py:Matrix.__iadd__",
            "data/sets.py:Matrix.__mul__",
            "data/sets.py:Matrix.__neg__",
            "data/sets.py:Scalar.__add__",
            "data/sets.py:Scalar.__gt__",
            "data/sets.py:Scalar.scale",
        ]
    )
    # ``str(other)`` runs __repr__ when the class has no __str__.
    assert calls[p + "test_protocols"] == sorted(
        [
            init,
            "data/sets.py:Matrix.__contains__",
            "data/sets.py:Matrix.__enter__",
            "data/sets.py:Matrix.__exit__",
            "data/sets.py:Matrix.__iter__",
            "data/sets.py:Matrix.__repr__",
        ]
    )
    assert calls[p + "test_unknown_objects_run_nothing"] == []


def test_properties_read_and_assigned(tmp_path):
    files = dict(DATA)
    files["tests/test_props.py"] = """
        from data.sets import Matrix

        def test_read_chain():
            m = Matrix(2)
            assert m.shape.rank == 2

        def test_assign():
            m = Matrix(2)
            m.shape = None

        def test_method_is_not_a_property():
            m = Matrix(2)
            f = m.plain
    """
    calls = calls_of(mine_tree(tmp_path, files))
    p = "tests/test_props.py::"
    init = "data/sets.py:Matrix.__init__"
    assert calls[p + "test_read_chain"] == [init, "data/sets.py:Matrix.shape", "data/sets.py:Shape.rank"]
    assert calls[p + "test_assign"] == [init, "data/sets.py:Matrix.shape"]
    assert calls[p + "test_method_is_not_a_property"] == [init]


def test_objects_unpacked_from_returned_tuples(tmp_path):
    files = dict(CURVES)
    files["tests/__init__.py"] = ""
    files["tests/utils.py"] = """
        from curv import Fast

        def make(n):
            backend = Fast(n)
            if n:
                return backend, n
            return backend
    """
    files["tests/test_tuples.py"] = """
        from curv import Slow
        from curv.backends import Mixed, helper
        from tests.utils import make

        def test_unpacked():
            backend, n = make(1)
            backend.diag(n)

        def test_display_and_loop():
            a, (b, c) = Slow("m"), (1, 2)
            a.full(1)
            for cls, fn in [(Mixed, helper)]:
                fn(cls("m"))

        def test_library_tuple_annotation():
            loss, backend = Slow("m").split()
            backend.diag(loss)
            loss, other = Slow("m").pair()
            other.full(loss)

        def test_other_positions_and_stars():
            n, backend = make(1)
            backend.diag(1)
            first, *rest, last = make(1)
            last.full(1)
    """
    calls = calls_of(mine_tree(tmp_path, files))
    p = "tests/test_tuples.py::"
    assert calls[p + "test_unpacked"] == ["curv/backends.py:Fast.__init__", "curv/backends.py:Fast.diag"]
    assert calls[p + "test_display_and_loop"] == [
        "curv/backends.py:Base.__init__",
        "curv/backends.py:Base.full",
        "curv/backends.py:Fast.__init__",
        "curv/backends.py:helper",
    ]
    assert calls[p + "test_library_tuple_annotation"] == [
        "curv/backends.py:Base.__init__",
        "curv/backends.py:Fast.diag",
        "curv/backends.py:GGN.full",
        "curv/backends.py:Slow.pair",
        "curv/backends.py:Slow.split",
    ]
    # ``backend`` is element 1 here (an int); after a starred target positions are unknown.
    assert calls[p + "test_other_positions_and_stars"] == ["curv/backends.py:Fast.__init__"]


def test_library_decorator_wrappers_and_decorator_factories(tmp_path):
    # ignite's metrics: ``@sync_all_reduce(...)`` wraps ``compute`` in a function that calls
    # ``get_world_size()`` first; ``@engine.on(event)`` applies the decorator ``on`` returns,
    # which calls ``self.add_event_handler``. Their frames are library code nobody names.
    files = {
        "eng/__init__.py": "",
        "eng/dist.py": """
            def get_world_size():
                return 1

            def barrier():
                return None
        """,
        "eng/metrics.py": """
            from functools import wraps
            from eng import dist

            def sync_all_reduce(*attrs):
                dist.barrier()  # runs once, when the class is defined

                def wrapper(func):
                    @wraps(func)
                    def inner(self):
                        dist.get_world_size()
                        return func(self)
                    return inner
                return wrapper

            def checked(cls):
                class Checked(cls):
                    def compute(self):
                        dist.barrier()
                        return super().compute()
                return Checked

            class Metric:
                @sync_all_reduce("total")
                def compute(self):
                    return 0

                def reset(self):
                    return None
        """,
        "eng/engine.py": """
            class Engine:
                def on(self, event):
                    def decorator(f):
                        self.add_event_handler(event, f)
                        return f
                    return decorator

                def add_event_handler(self, event, f):
                    return None
        """,
        "tests/test_eng.py": """
            from eng.engine import Engine
            from eng.metrics import Metric, checked


            @checked
            class Custom:
                def compute(self):
                    return 1


            def test_class_decorator():
                Custom().compute()

            def test_wrapped_method():
                Metric().compute()
                Metric().reset()

            def test_decorator_factory():
                engine = Engine()

                @engine.on("done")
                def handler(e):
                    pass
        """,
    }
    calls = calls_of(mine_tree(tmp_path, files))
    assert calls["tests/test_eng.py::test_wrapped_method"] == [
        "eng/dist.py:get_world_size",
        "eng/metrics.py:Metric.compute",
        "eng/metrics.py:Metric.reset",
    ]
    # A class decorator's nested class wraps every method of the decorated (test) class.
    assert calls["tests/test_eng.py::test_class_decorator"] == ["eng/dist.py:barrier"]
    assert calls["tests/test_eng.py::test_decorator_factory"] == [
        "eng/engine.py:Engine.add_event_handler",
        "eng/engine.py:Engine.on",
    ]


def test_helpers_see_the_classes_their_callers_pass(tmp_path):
    # small-text's query-strategy tests: ``self._query(strategy)`` calls ``strategy.query(...)``
    files = dict(CURVES)
    files["tests/__init__.py"] = ""
    files["tests/utils.py"] = """
        def run(backend, x=0, *, kind=None):
            kind.full(x)
            return backend.diag(x)
    """
    files["tests/test_args.py"] = """
        from curv import Fast, Slow
        from curv.backends import GGN
        from tests.utils import run

        class TestArgs:
            def _query(self, strategy):
                return strategy.full(1)

            def test_method_helper(self):
                self._query(Slow("m"))

            def test_function_helper(self):
                run(Fast("m"), kind=GGN("m"))

            def test_unknown_argument(self):
                self._query(object())
    """
    calls = calls_of(mine_tree(tmp_path, files))
    p = "tests/test_args.py::TestArgs::"
    assert calls[p + "test_method_helper"] == ["curv/backends.py:Base.__init__", "curv/backends.py:Base.full"]
    assert calls[p + "test_function_helper"] == [
        "curv/backends.py:Base.__init__",
        "curv/backends.py:Fast.__init__",
        "curv/backends.py:Fast.diag",
        "curv/backends.py:GGN.full",
    ]
    assert calls[p + "test_unknown_argument"] == []


def test_enum_members_are_instances_of_their_class(tmp_path):
    # ignite's ``Events.EPOCH_COMPLETED(every=2)``: the members of an Enum subclass whose
    # repository base defines ``__call__``/``__eq__``.
    files = {
        "ev/__init__.py": "",
        "ev/events.py": """
            from enum import Enum

            class Filtered:
                def __call__(self, every=None):
                    return self

                def __eq__(self, other):
                    return True

                __hash__ = object.__hash__

            class EventEnum(Filtered, Enum):
                pass

            class Events(EventEnum):
                STARTED = "started"
                COMPLETED = "completed"

                def describe(self):
                    return self.value

            class Plain:
                LIMIT = 3
        """,
        "tests/test_ev.py": """
            from ev.events import Events, Plain

            def test_members():
                Events.COMPLETED(every=2)
                assert Events.STARTED == Events.STARTED
                Events.describe(Events.STARTED)

            def test_plain_class_attribute():
                Plain.LIMIT(1)
        """,
    }
    calls = calls_of(mine_tree(tmp_path, files))
    assert calls["tests/test_ev.py::test_members"] == [
        "ev/events.py:Events.describe",
        "ev/events.py:Filtered.__call__",
        "ev/events.py:Filtered.__eq__",
    ]
    assert calls["tests/test_ev.py::test_plain_class_attribute"] == []
