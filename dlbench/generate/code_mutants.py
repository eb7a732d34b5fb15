"""Reference candidates built from the ground truth with libcst: null bodies and mutants.

A mutant is one seeded single-point change inside the function body: a swapped
arithmetic or comparison operator, an integer constant off by one, a dropped statement or
two swapped call arguments. Mutants of one task are distinct and each names its change.
"""

from __future__ import annotations

import ast
import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from dlbench.parsing import PARSE_ERRORS, Unparsable, parse_cst

ARITHMETIC_SWAPS: dict[type[cst.BaseBinaryOp], type[cst.BaseBinaryOp]] = {
    cst.Add: cst.Subtract,
    cst.Subtract: cst.Add,
    cst.Multiply: cst.Divide,
    cst.Divide: cst.Multiply,
    cst.FloorDivide: cst.Multiply,
    cst.Modulo: cst.FloorDivide,
    cst.Power: cst.Multiply,
    cst.MatrixMultiply: cst.Multiply,
}
COMPARISON_SWAPS: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
}


AUGMENTED_SWAPS: dict[type[cst.BaseAugOp], type[cst.BaseAugOp]] = {
    cst.AddAssign: cst.SubtractAssign,
    cst.SubtractAssign: cst.AddAssign,
    cst.MultiplyAssign: cst.DivideAssign,
    cst.DivideAssign: cst.MultiplyAssign,
}
BOOLEAN_SWAPS: dict[type[cst.BaseBooleanOp], type[cst.BaseBooleanOp]] = {cst.And: cst.Or, cst.Or: cst.And}
CALL_SWAPS = {  # called names whose opposite is a classic slip
    "max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum",
    "argmax": "argmin", "argmin": "argmax", "any": "all", "all": "any",
}  # fmt: skip


class MutationError(ValueError):
    """The ground truth cannot be parsed or holds no function definition."""


@dataclass(frozen=True)
class Mutant:
    code: str
    mutation: str  # e.g. "arithmetic: '+' -> '-' at line 3, column 12"


def parse_function(source: str) -> tuple[cst.Module, cst.FunctionDef]:
    """Module of the (dedented) ground truth and its first function definition."""
    try:
        module = parse_cst(textwrap.dedent(source))
    except Unparsable as exc:
        raise MutationError(f"ground truth does not parse: {exc}") from None
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            return module, statement
    raise MutationError("ground truth holds no function definition")


def null_body(source: str) -> str:
    """Same signature and decorators, docstring kept, body ``raise NotImplementedError``."""
    module, func = parse_function(source)
    raise_stmt = cst.SimpleStatementLine([cst.Raise(exc=cst.Name("NotImplementedError"))])
    docstring = _docstring_statement(func)
    body = [docstring, raise_stmt] if docstring is not None else [raise_stmt]
    new_func = func.with_changes(body=cst.IndentedBlock(body=body))
    return module.code_for_node(new_func)


def _docstring_statement(func: cst.FunctionDef) -> cst.BaseStatement | None:
    body = func.body
    if isinstance(body, cst.IndentedBlock) and body.body and func.get_docstring() is not None:
        return body.body[0]
    return None


# ------------------------------------------------------------------ mutation sites

Edit = Callable[[cst.CSTNode], cst.CSTNode]


@dataclass(frozen=True)
class Site:
    """One possible mutation: replace ``node`` (found by identity) by ``edit(node)``."""

    node: cst.CSTNode
    edit: Edit
    label: str


class _SiteCollector(cst.CSTVisitor):
    """Collects sites below one function's body (never in decorators or defaults)."""

    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, func: cst.FunctionDef):
        super().__init__()
        self.sites: list[Site] = []
        self.body = func.body
        self.docstring = _docstring_statement(func)
        self.depth = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.body:
            self.depth += 1
        return super().on_visit(node) if self.depth else True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.depth:
            super().on_leave(original_node)
        if original_node is self.body:
            self.depth -= 1

    def _where(self, node: cst.CSTNode) -> str:
        start = self.get_metadata(cst.metadata.PositionProvider, node).start
        return f"line {start.line}, column {start.column + 1}"

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._swap_operator(node, ARITHMETIC_SWAPS, "arithmetic")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._swap_operator(node, AUGMENTED_SWAPS, "arithmetic")

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        self._swap_operator(node, COMPARISON_SWAPS, "comparison")

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._swap_operator(node, BOOLEAN_SWAPS, "boolean")

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Minus | cst.Not):
            label = f"unary: dropped '{_op_text(node.operator)}' at {self._where(node)}"
            self.sites.append(Site(node, lambda n: n.expression, label))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in ("True", "False"):
            flipped = "False" if node.value == "True" else "True"
            label = f"constant: {node.value} -> {flipped} at {self._where(node)}"
            self.sites.append(Site(node, lambda n, v=flipped: n.with_changes(value=v), label))

    def _swap_operator(self, node: cst.CSTNode, swaps: dict, kind: str) -> None:
        swap = swaps.get(type(node.operator))
        if swap is not None:
            new_op = _same_spacing(node.operator, swap)
            label = f"{kind}: '{_op_text(node.operator)}' -> '{_op_text(new_op)}' at {self._where(node)}"
            self.sites.append(Site(node, lambda n, op=new_op: n.with_changes(operator=op), label))

    def visit_Integer(self, node: cst.Integer) -> None:
        self._off_by_one(node, int(node.evaluated_value))

    def visit_Float(self, node: cst.Float) -> None:
        self._off_by_one(node, float(node.evaluated_value))

    def _off_by_one(self, node: cst.Integer | cst.Float, value: float) -> None:
        for delta in (1, -1):
            if value + delta >= 0:  # a negative literal is a unary minus, not a number node
                new = repr(value + delta)
                label = f"constant: {node.value} -> {new} at {self._where(node)}"
                self.sites.append(Site(node, lambda n, v=new: n.with_changes(value=v), label))

    def visit_Call(self, node: cst.Call) -> None:
        self._swap_called_name(node.func)
        positional = [i for i, a in enumerate(node.args) if a.keyword is None and not a.star]
        if len(positional) >= 2:
            i, j = positional[:2]
            first, second = node.args[i].value, node.args[j].value
            if not first.deep_equals(second):
                label = f"arguments: swapped the first two arguments at {self._where(node)}"
                self.sites.append(Site(node, lambda n, i=i, j=j: _swap_args(n, i, j), label))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        droppable = [i for i, s in enumerate(node.body) if s is not self.docstring]
        if len(droppable) < 2:
            return  # dropping the only statement would leave an empty block
        for i in droppable:
            label = f"dropped statement at {self._where(node.body[i])}"
            self.sites.append(Site(node, lambda n, i=i: n.with_changes(body=[*n.body[:i], *n.body[i + 1 :]]), label))

    def _swap_called_name(self, func: cst.BaseExpression) -> None:
        name = func.attr if isinstance(func, cst.Attribute) else func if isinstance(func, cst.Name) else None
        if name is not None and name.value in CALL_SWAPS:
            other = CALL_SWAPS[name.value]
            label = f"call: {name.value} -> {other} at {self._where(func)}"
            self.sites.append(Site(name, lambda n, v=other: n.with_changes(value=v), label))


def _swap_args(call: cst.Call, i: int, j: int) -> cst.Call:
    args = list(call.args)
    args[i], args[j] = args[i].with_changes(value=args[j].value), args[j].with_changes(value=args[i].value)
    return call.with_changes(args=args)


def _same_spacing(old: cst.CSTNode, new_type: type) -> cst.CSTNode:
    return new_type(whitespace_before=old.whitespace_before, whitespace_after=old.whitespace_after)  # type: ignore[attr-defined]


def _op_text(op: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(op).strip()


class _Replace(cst.CSTTransformer):
    def __init__(self, site: Site):
        self.site = site

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        if original_node is self.site.node:
            return self.site.edit(updated_node)
        return updated_node


def mutation_sites(source: str) -> tuple[cst.Module, list[Site]]:
    """The dedented module and every mutation site inside its function's body."""
    module, func = parse_function(source)
    collector = _SiteCollector(func)
    cst.metadata.MetadataWrapper(module, unsafe_skip_copy=True).visit(collector)
    return module, collector.sites


def mutants(source: str, n: int, seed: int | str) -> list[Mutant]:
    """Up to ``n`` distinct, parseable single-point mutants of ``source`` (seeded order)."""
    try:
        return _mutants(source, n, seed)
    except RecursionError:  # libcst's visitors recurse once per nesting level
        raise MutationError("ground truth is nested too deeply to mutate") from None


def _mutants(source: str, n: int, seed: int | str) -> list[Mutant]:
    module, sites = mutation_sites(source)
    original = _normalized(module.code)
    random.Random(str(seed)).shuffle(sites)
    found: list[Mutant] = []
    seen = {original}
    for site in sites:
        if len(found) == n:
            break
        code = module.visit(_Replace(site)).code
        key = _normalized(code)
        if key is not None and key not in seen:
            seen.add(key)
            found.append(Mutant(code, site.label))
    return found


def _normalized(code: str) -> str | None:
    """Code with formatting ignored (None when it does not parse)."""
    try:
        return ast.dump(ast.parse(code))
    except PARSE_ERRORS:
        return None
