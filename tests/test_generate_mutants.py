"""Reference candidates: null bodies and seeded single-point mutants (libcst)."""

from __future__ import annotations

import ast

import pytest

from dlbench.generate.code_mutants import MutationError, mutants, mutation_sites, null_body

SOURCE = '''@torch.no_grad()
def normalize(x, eps=1e-6, axis=0):
    """Scale ``x`` to unit norm along ``axis``."""
    norm = (x * x).sum(axis) ** 0.5
    if norm < eps:
        return x
    return clip(x / (norm + eps), 1, -1)
'''


def test_null_keeps_signature_decorators_and_docstring():
    code = null_body(SOURCE)
    assert code == (
        '@torch.no_grad()\ndef normalize(x, eps=1e-6, axis=0):\n    """Scale ``x`` to unit norm along ``axis``."""\n'
        "    raise NotImplementedError\n"
    )


def test_null_of_an_indented_method_without_docstring():
    assert null_body("    def forward(self, x: int) -> int:\n        return x\n") == (
        "def forward(self, x: int) -> int:\n    raise NotImplementedError\n"
    )


def test_mutants_are_distinct_parseable_labelled_single_changes():
    found = mutants(SOURCE, 8, seed=0)
    assert len(found) == 8 and len({m.code for m in found}) == 8
    original = ast.dump(ast.parse(SOURCE))
    for m in found:
        tree = ast.parse(m.code)
        assert ast.dump(tree) != original
        assert tree.body[0].name == "normalize" and m.code.startswith(
            "@torch.no_grad()\ndef normalize(x, eps=1e-6, axis=0):"
        )
        kinds = {"arithmetic", "comparison", "constant", "arguments", "unary", "boolean", "call"}
        assert m.mutation.split(":")[0] in kinds or m.mutation.startswith("dropped")


def test_every_mutation_kind_is_available():
    _, sites = mutation_sites(SOURCE)
    kinds = {s.label.split(":")[0].split(" ")[0] for s in sites}
    assert kinds == {"arithmetic", "comparison", "constant", "arguments", "dropped", "unary"}


def test_augmented_boolean_call_and_flag_mutations():
    source = (
        "def step(self, grads, clip=True):\n"
        "    for p, g in grads:\n"
        "        if clip and not self.frozen:\n"
        "            g = np.maximum(g, 0.5)\n"
        "        p -= self.lr * g\n"
    )
    labels = {m.mutation.rsplit(" at ", 1)[0]: m.code for m in mutants(source, 100, seed=0)}
    assert "p += self.lr * g" in labels["arithmetic: '-=' -> '+='"]
    assert "if clip or not self.frozen:" in labels["boolean: 'and' -> 'or'"]
    assert "if clip and self.frozen:" in labels["unary: dropped 'not'"]
    assert "np.minimum(g, 0.5)" in labels["call: maximum -> minimum"]
    assert "np.maximum(g, 1.5)" in labels["constant: 0.5 -> 1.5"]
    assert "clip=True" in labels["call: maximum -> minimum"]  # defaults are never mutated


def test_examples_of_each_kind():
    found = mutants(SOURCE, 100, seed=1)
    by_label = {m.mutation: m.code for m in found}
    assert len(by_label) == len(found)  # every label names its own change
    assert any("norm <= eps" in c for c in by_label.values())
    assert any("(x * x).sum(axis) ** 0.5" not in c and "(x / x)" in c for c in by_label.values())
    assert any("clip(1, x / (norm + eps), -1)" in c for c in by_label.values())
    assert any("clip(x / (norm + eps), 2, -1)" in c for c in by_label.values())
    assert any("if norm < eps" not in c for c in by_label.values())
    assert all("@torch.no_grad()" in c and "eps=1e-6, axis=0" in c for c in by_label.values())  # never outside the body
    assert all('"""Scale' in c for c in by_label.values())  # the docstring is never the dropped statement


def test_seeded_and_capped_by_what_the_function_allows():
    assert mutants(SOURCE, 5, seed=3) == mutants(SOURCE, 5, seed=3)
    assert [m.code for m in mutants(SOURCE, 5, seed=3)] != [m.code for m in mutants(SOURCE, 5, seed=4)]
    few = mutants("def f(a):\n    return a + 1\n", 10, seed=0)
    assert sorted(m.mutation for m in few) == [
        "arithmetic: '+' -> '-' at line 2, column 12",
        "constant: 1 -> 0 at line 2, column 16",
        "constant: 1 -> 2 at line 2, column 16",
    ]
    assert mutants("def f():\n    pass\n", 3, seed=0) == []


def test_unparsable_ground_truth_is_a_clear_error():
    with pytest.raises(MutationError, match="does not parse"):
        mutants("def f(:\n", 1, seed=0)
    with pytest.raises(MutationError, match="no function"):
        null_body("x = 1\n")


@pytest.mark.parametrize(
    "body",
    ["x = " + "(" * 2500, "x = " + "-" * 200_000 + "1", "x = '\udcff'", "x = " + " and ".join(["a"] * 20_000)],
    ids=["unclosed", "minuses", "surrogate", "and-chain"],
)
def test_pathological_ground_truth_is_a_mutation_error_not_a_crash(body):
    source = f"def f(a):\n    {body}\n"
    with pytest.raises(MutationError, match="ground truth does not parse"):
        null_body(source)
    with pytest.raises(MutationError):
        mutants(source, n=2, seed=0)


def test_ground_truth_too_deep_for_libcsts_visitors_is_a_mutation_error():
    source = "def f(a):\n    return " + " + ".join(["a"] * 2000) + "\n"  # parses; visiting it recurses 2000 deep
    with pytest.raises(MutationError, match="nested too deeply"):
        mutants(source, n=2, seed=0)
