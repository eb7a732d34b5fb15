"""Which special method Python runs for syntax, as the call graph resolves it.

``bodies`` records syntax as ``(method, subject, other)``; here are the rules that turn
one into the method a class defines: the fallbacks Python takes when the class lacks the
method (``a += b`` runs ``__add__`` without ``__iadd__``; ``a != b`` runs ``__eq__``
through ``object.__ne__``; ``not x`` runs ``__len__`` without ``__bool__``; iterating
uses ``__getitem__`` without ``__iter__``) and the reflected method of the right operand
(``a * b`` runs ``b.__rmul__`` when ``a``'s class has no ``__mul__``).
"""

from __future__ import annotations

_FALLBACKS = {
    "__ne__": ("__eq__",),
    "__bool__": ("__len__",),
    "__iter__": ("__getitem__",),
    "__contains__": ("__iter__", "__getitem__"),
    "__str__": ("__repr__",),
    "__int__": ("__index__",),
}
_INPLACE = frozenset(
    f"__i{name}__"
    for name in (
        "add",
        "sub",
        "mul",
        "truediv",
        "floordiv",
        "mod",
        "pow",
        "matmul",
        "and",
        "or",
        "xor",
        "lshift",
        "rshift",
    )
)
_REFLECTED_COMPARISONS = {
    "__eq__": "__eq__",
    "__ne__": "__ne__",
    "__lt__": "__gt__",
    "__gt__": "__lt__",
    "__le__": "__ge__",
    "__ge__": "__le__",
}


def candidates(method: str) -> tuple[str, ...]:
    """``method`` and what Python runs instead when a class does not define it, in order."""
    if method in _INPLACE:
        return (method, f"__{method[3:]}")
    return (method, *_FALLBACKS.get(method, ()))


def reflection(method: str) -> str:
    """The right operand's method for a binary operator or comparison: ``__mul__`` →
    ``__rmul__``, ``__iadd__`` → ``__radd__``, ``__lt__`` → ``__gt__``."""
    if method in _REFLECTED_COMPARISONS:
        return _REFLECTED_COMPARISONS[method]
    name = method[3:-2] if method in _INPLACE else method[2:-2]
    return f"__r{name}__"
