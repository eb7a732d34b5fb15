"""libcst summaries of test-code bodies: the calls each function makes and what it binds.

Test modules and conftest files are parsed with libcst (the project's tool for code that
is resolved or rewritten), without metadata providers: positions come from the ``ast``
summary, and ``PositionProvider`` would cost more than the parse itself. The summary is
symbolic and path-independent (so it is cached by content hash); ``callgraph`` resolves
it against the symbol table. Expressions are kept as small tuples:

- ``("n", "a.b.c")``: a dotted name as written (its head may be a local, a parameter,
  ``self`` or a module-level name);
- ``("call", expr)``: the value returned by calling ``expr``;
- ``("attr", expr, "name")``: an attribute of a value that is not a plain dotted name;
- ``("ann", "C")``: a value annotated as ``C``;
- ``("tuple", (expr | None, ...))``: a tuple display (``return ds, x, y``);
- ``("elt", expr, i)``: element ``i`` of a value (``ds, x, y = make()`` binds ``ds`` to
  ``("elt", ("call", ("n", "make")), 0)``).

Syntax that runs a special method is kept as ``(method, subject, other)``: ``len(x)`` is
``("__len__", x, None)``, ``a * b`` is ``("__mul__", a, b)`` (``b``'s reflected method runs
when ``a``'s class has none), ``x[i]`` is ``("__getitem__", x, None)``. Attribute chains
that are read or assigned (``obj.a.b``) are kept for properties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from dlbench.parsing import Unparsable, cst_module_level, describe, parse_cst

Expr = tuple
# A call's arguments that carry a name: (position or keyword, value), up to a ``*args``.
Args = tuple[tuple[int | str, Expr], ...]

# Builtins that run a special method of their first argument.
BUILTIN_SPECIALS = {
    "len": "__len__",
    "str": "__str__",
    "repr": "__repr__",
    "iter": "__iter__",
    "next": "__next__",
    "bool": "__bool__",
    "abs": "__abs__",
    "hash": "__hash__",
    "float": "__float__",
    "int": "__int__",
    "reversed": "__reversed__",
    "list": "__iter__",
    "tuple": "__iter__",
    "set": "__iter__",
    "sorted": "__iter__",
    "enumerate": "__iter__",
}
_BINARY = {
    cst.Add: "add",
    cst.Subtract: "sub",
    cst.Multiply: "mul",
    cst.Divide: "truediv",
    cst.FloorDivide: "floordiv",
    cst.Modulo: "mod",
    cst.Power: "pow",
    cst.MatrixMultiply: "matmul",
    cst.BitAnd: "and",
    cst.BitOr: "or",
    cst.BitXor: "xor",
    cst.LeftShift: "lshift",
    cst.RightShift: "rshift",
}
_AUGMENTED = {
    cst.AddAssign: "add",
    cst.SubtractAssign: "sub",
    cst.MultiplyAssign: "mul",
    cst.DivideAssign: "truediv",
    cst.FloorDivideAssign: "floordiv",
    cst.ModuloAssign: "mod",
    cst.PowerAssign: "pow",
    cst.MatrixMultiplyAssign: "matmul",
    cst.BitAndAssign: "and",
    cst.BitOrAssign: "or",
    cst.BitXorAssign: "xor",
    cst.LeftShiftAssign: "lshift",
    cst.RightShiftAssign: "rshift",
}
# Comparisons: the left operand's method, else the right operand's reflection.
_COMPARE = {
    cst.Equal: ("__eq__", "__eq__"),
    cst.NotEqual: ("__ne__", "__ne__"),
    cst.LessThan: ("__lt__", "__gt__"),
    cst.GreaterThan: ("__gt__", "__lt__"),
    cst.LessThanEqual: ("__le__", "__ge__"),
    cst.GreaterThanEqual: ("__ge__", "__le__"),
}
_UNARY = {cst.Minus: "__neg__", cst.Plus: "__pos__", cst.BitInvert: "__invert__", cst.Not: "__bool__"}


@dataclass(slots=True)
class BodySummary:
    """What one test-code function (or method) does, symbolically."""

    calls: list[tuple[Expr, Args]] = field(default_factory=list)  # (callee, arguments)
    bindings: dict[str, list[Expr]] = field(default_factory=dict)  # local name -> values
    self_attrs: dict[str, list[Expr]] = field(default_factory=dict)  # self.x -> values
    returns: list[Expr] = field(default_factory=list)  # returned or yielded values
    imports: dict[str, tuple[int, str, str | None]] = field(default_factory=dict)  # local imports
    specials: list[tuple[str, Expr | None, Expr | None]] = field(default_factory=list)  # (method, subject, other)
    reads: list[Expr] = field(default_factory=list)  # attribute chains: properties run when read


def summarize_bodies(source: str) -> dict[str, BodySummary]:
    """Body summaries of a module's functions and its classes' methods, by qualname;
    Unparsable (with the reason) for code libcst cannot take."""
    module = parse_cst(source)
    try:
        return _summarize_module(module)
    except RecursionError as exc:  # libcst's visitors on deep code
        raise Unparsable(describe(exc)) from None


def _summarize_module(module: cst.Module) -> dict[str, BodySummary]:
    found: dict[str, BodySummary] = {}
    for stmt in cst_module_level(module.body):
        if isinstance(stmt, cst.FunctionDef):
            found[stmt.name.value] = _summarize_function(stmt)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef):
                    found[f"{stmt.name.value}.{item.name.value}"] = _summarize_function(item)
    return found


def _summarize_function(node: cst.FunctionDef) -> BodySummary:
    visitor = _BodyVisitor()
    node.body.visit(visitor)
    return visitor.summary


class _BodyVisitor(cst.CSTVisitor):
    """Collects calls, bindings and returns; nested functions count as their parent's body."""

    def __init__(self) -> None:
        super().__init__()
        self.summary = BodySummary()
        self._inner: set[int] = set()  # attribute nodes inside a longer chain (kept whole)
        self._stores: set[int] = set()  # subscripts assigned to (``__setitem__``, not ``__getitem__``)

    def visit_Call(self, node: cst.Call) -> None:
        callee = to_expr(node.func)
        if callee is not None:
            self.summary.calls.append((callee, _arguments(node.args)))
        if isinstance(node.func, cst.Name) and node.func.value in BUILTIN_SPECIALS and node.args:
            self._special(BUILTIN_SPECIALS[node.func.value], node.args[0].value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, to_expr(node.value))
            self._store(target.target)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        """A nested definition's decorator is applied (called) when the body runs."""
        applied = to_expr(node.decorator)
        if applied is not None:
            self.summary.calls.append((applied, ()))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        name = _AUGMENTED.get(type(node.operator))
        if name is not None:  # ``a += b``: ``__iadd__``, else ``__add__`` (the resolver falls back)
            self._special(f"__i{name}__", node.target, node.value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        name = _BINARY.get(type(node.operator))
        if name is not None:
            self._special(f"__{name}__", node.left, node.right)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        name = _UNARY.get(type(node.operator))
        if name is not None:
            self._special(name, node.expression)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        for target in node.comparisons:
            if isinstance(target.operator, cst.In | cst.NotIn):
                self._special("__contains__", target.comparator)
            elif (names := _COMPARE.get(type(target.operator))) is not None:
                self._special(names[0], left, target.comparator)
            left = target.comparator

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if id(node) not in self._stores:
            self._special("__getitem__", node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Attribute):
            self._inner.add(id(node.value))
        if id(node) not in self._inner and (expr := to_expr(node)) is not None:
            self.summary.reads.append(expr)

    def visit_For(self, node: cst.For) -> None:
        self._special("__iter__", node.iter)
        if isinstance(node.iter, cst.List | cst.Tuple):  # ``for cls in [A, B]``: cls is A, then B
            for element in node.iter.elements:
                self._bind(node.target, to_expr(element.value))

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            self._special("__enter__", item.item)
            self._special("__exit__", item.item)

    def _special(self, method: str, subject: cst.BaseExpression, other: cst.BaseExpression | None = None) -> None:
        """Record syntax that runs ``method`` of ``subject`` (or ``other``'s reflection)."""
        pair = (to_expr(subject), to_expr(other) if other is not None else None)
        if pair != (None, None):
            self.summary.specials.append((method, *pair))

    def _store(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Subscript):
            self._stores.add(id(target))
            self._special("__setitem__", target.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        annotation = annotation_dotted(node.annotation.annotation)
        if annotation:
            self._bind(node.target, ("ann", annotation))
        if node.value is not None:
            self._bind(node.target, to_expr(node.value))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, to_expr(node.value))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:  # ``with C(...) as c``: __enter__ usually returns self
            self._bind(node.asname.name, to_expr(node.item))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and (value := to_expr(node.value)) is not None:
            self.summary.returns.append(value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression) and (value := to_expr(node.value)) is not None:
            self.summary.returns.append(value)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.summary.imports[alias.asname.name.value] = (0, dotted, None)
            else:
                top = dotted.split(".")[0]
                self.summary.imports[top] = (0, top, None)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        module = _dotted(node.module) if node.module is not None else ""
        for alias in node.names:
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None
            name = _dotted(alias.name)
            self.summary.imports[local or name] = (len(node.relative), module, name)

    def _bind(self, target: cst.BaseExpression, value: Expr | None) -> None:
        if value is None:
            return
        if isinstance(target, cst.Name):
            self.summary.bindings.setdefault(target.value, []).append(value)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            self.summary.self_attrs.setdefault(target.attr.value, []).append(value)
        elif isinstance(target, cst.Tuple | cst.List):
            for index, element in enumerate(target.elements):
                if isinstance(element, cst.StarredElement):
                    break  # positions after a starred target count from the end
                self._bind(element.value, ("elt", value, index))


def _arguments(args: Sequence[cst.Arg]) -> Args:
    found: list[tuple[int | str, Expr]] = []
    for index, arg in enumerate(args):
        if arg.star:  # ``*args``/``**kwargs``: later positions are unknown
            break
        value = to_expr(arg.value)
        if value is not None:
            found.append((arg.keyword.value if arg.keyword else index, value))
    return tuple(found)


def to_expr(node: cst.BaseExpression) -> Expr | None:
    """Symbolic form of an expression, or None when it carries no usable name."""
    if isinstance(node, cst.Name):
        return ("n", node.value)
    if isinstance(node, cst.Attribute):
        base = to_expr(node.value)
        if base is None:
            return None
        if base[0] == "n":
            return ("n", f"{base[1]}.{node.attr.value}")
        return ("attr", base, node.attr.value)
    if isinstance(node, cst.Call):
        callee = to_expr(node.func)
        return ("call", callee) if callee is not None else None
    if isinstance(node, cst.Await):
        return to_expr(node.expression)
    if isinstance(node, cst.Tuple):
        items = tuple(None if isinstance(e, cst.StarredElement) else to_expr(e.value) for e in node.elements)
        return ("tuple", items) if any(items) else None
    return None


def _dotted(node: cst.BaseExpression) -> str:
    expr = to_expr(node)
    return expr[1] if expr is not None and expr[0] == "n" else ""


def annotation_dotted(node: cst.BaseExpression) -> str | None:
    """Dotted class name of an annotation (``C``, ``m.C`` or the string ``"C"``)."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return text if isinstance(text, str) and all(p.isidentifier() for p in text.split(".")) else None
    expr = to_expr(node)
    return expr[1] if expr is not None and expr[0] == "n" else None
