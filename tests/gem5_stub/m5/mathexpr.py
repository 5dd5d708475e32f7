"""gem5's MathExpr (src/sim/mathexpr.cc), re-implemented rule for rule to read expressions exactly as gem5 does.

Whitespace is dropped; then, from the lowest priority (+ -, then * /, then unary -, then ^), the
expression is split at the rightmost operator outside parentheses whose sides both parse; failing
that, outer parentheses are removed; failing that, a number is whatever prefix C's strtod reads
(so '5.7e' is 5.7); failing that, a variable is a run of letters, digits, '$', '\\', '.', '_'.
Hence '5.7e-10*x' is 5.7 - 10*x, as in gem5.
"""

from __future__ import annotations

import math
import re

_OPS = [  # (binary, priority, char, function)
    (True, 0, "+", lambda a, b: a + b),
    (True, 0, "-", lambda a, b: a - b),
    (True, 1, "*", lambda a, b: a * b),
    (True, 1, "/", lambda a, b: a / b if b != 0 else (math.copysign(math.inf, a) if a != 0 else math.nan)),
    (False, 2, "-", lambda a, b: -b),
    (True, 3, "^", lambda a, b: math.nan if a < 0 and not float(b).is_integer() else a**b),  # std::pow: NaN, not complex
]
# what strtod accepts at the start of a string (decimal forms; gem5 never writes hex or inf here)
_STRTOD = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_VARIABLE = re.compile(r"[A-Za-z0-9$\\._]+")


def parse(expr: str):
    """A tree of tuples: ("num", v), ("var", name) or (op_index, left, right); None where gem5 finds no parse."""
    return _parse("".join(expr.split()))


def _parse(expr: str):
    if not expr:
        return None
    for priority in range(4):
        depth = 0
        for i in range(len(expr) - 1, -1, -1):
            if expr[i] == ")":
                depth += 1
            if expr[i] == "(":
                depth -= 1
            if depth < 0:
                return None
            if depth > 0:
                continue
            for k, (binary, prio, char, _) in enumerate(_OPS):
                if prio != priority or char != expr[i]:
                    continue
                left = _parse(expr[:i]) if binary else None
                right = _parse(expr[i + 1 :])
                if (left and right) or (not binary and right):
                    return (k, left, right)
    if len(expr) >= 2 and expr[0] == "(" and expr[-1] == ")":
        return _parse(expr[1:-1])
    m = _STRTOD.match(expr)
    if m:
        return ("num", float(m.group(0)))
    if _VARIABLE.fullmatch(expr):
        return ("var", expr)
    return None


def variables(tree) -> list[str]:
    if tree is None or tree[0] == "num":
        return []
    if tree[0] == "var":
        return [tree[1]]
    return variables(tree[1]) + variables(tree[2])


def evaluate(tree, lookup) -> float:
    if tree is None:
        return 0.0
    if tree[0] == "num":
        return tree[1]
    if tree[0] == "var":
        return float(lookup(tree[1]))
    k, left, right = tree
    return _OPS[k][3](evaluate(left, lookup), evaluate(right, lookup))
