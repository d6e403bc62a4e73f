"""Symbolic dimensions (shape polymorphism): a shape entry that names a size fixed only at call time.

A ``DimExpr`` is an integer polynomial over dimension variables (``b``, ``2*b + 1``,
``b^2``), whose terms may also hold ``floordiv(e, k)`` and ``mod(e, k)`` of other
expressions. Arithmetic with ints and other ``DimExpr``s gives a ``DimExpr``, or a
plain ``int`` when the result is constant. Every dimension variable is at least 1.

Comparisons follow JAX's rules: ``==`` is structural (``b == 3`` is False: it does
not hold for every ``b``), and an ordering (``>=``, ``<``, ...) answers only when it
holds, or fails, for every value of the variables; otherwise it raises
``InconclusiveDimensionOperation``, as does ``int(b)``.

Concrete shapes never meet this module: avals keep plain ints, and only shapes
that hold a ``DimExpr`` take the symbolic paths.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from minijax.errors import InconclusiveDimensionOperation

__all__ = ["DimExpr", "evaluate_shape", "is_symbolic_dim", "is_symbolic_shape", "parse_dim", "parse_shape", "split_dims"]

_ADVICE = (
    "\nThis error arises for comparison operations with shapes that\n"
    "are non-constant, and the result of the operation cannot be represented as\n"
    "a boolean value for all values of the symbolic dimensions involved.\n\n"
    "Please see https://docs.jax.dev/en/latest/export/shape_poly.html#comparison-of-symbolic-dimensions-is-partially-supported "
    "for more details."
)

# An atom is a variable ("b",) or an operation over expressions ("floordiv", num, den) / ("mod", num, den);
# a monomial is a sorted tuple of (atom, power); an expression maps monomials to non-zero coefficients.
Atom = tuple[Any, ...]
Monomial = tuple[tuple[Atom, int], ...]
DimLike = Union[int, "DimExpr"]


def _atom_str(atom: Atom) -> str:
    if len(atom) == 1:
        return str(atom[0])
    return f"{atom[0]}({atom[1]}, {atom[2]})"


def _atom_key(atom: Atom) -> tuple[Any, ...]:
    return (len(atom), _atom_str(atom))


class DimExpr:
    """A symbolic dimension size: an integer polynomial over dimension variables."""

    __slots__ = ("_terms", "_hash")

    def __init__(self, terms: Mapping[Monomial, int]) -> None:
        self._terms: dict[Monomial, int] = {m: c for m, c in terms.items() if c}
        self._hash = hash(tuple(sorted(self._terms.items(), key=lambda t: str(t))))

    # --- construction ----------------------------------------------------------------------
    @staticmethod
    def var(name: str) -> DimExpr:
        return DimExpr({(((name,), 1),): 1})

    @staticmethod
    def _normal(terms: Mapping[Monomial, int]) -> DimLike:
        clean = {m: c for m, c in terms.items() if c}
        if not clean:
            return 0
        if set(clean) == {()}:
            return clean[()]
        return DimExpr(clean)

    @staticmethod
    def _terms_of(x: DimLike) -> dict[Monomial, int]:
        if isinstance(x, DimExpr):
            return x._terms
        return {(): int(x)} if int(x) else {}

    # --- inspection ------------------------------------------------------------------------
    def variables(self) -> set[str]:
        out: set[str] = set()
        for m in self._terms:
            for atom, _ in m:
                if len(atom) == 1:
                    out.add(atom[0])
                else:
                    for e in atom[1:]:
                        if isinstance(e, DimExpr):
                            out |= e.variables()
        return out

    def as_variable(self) -> str | None:
        """The variable's name when this is a bare variable (``b``), else None."""
        if len(self._terms) == 1:
            ((m, c),) = self._terms.items()
            if c == 1 and len(m) == 1 and m[0][1] == 1 and len(m[0][0]) == 1:
                return str(m[0][0][0])
        return None

    def linear_in_one_variable(self) -> tuple[str, int, int] | None:
        """``(v, k, c)`` when this is ``k*v + c`` (what a variable's value is solved from), else None."""
        var_terms = [(m, k) for m, k in self._terms.items() if m]
        if len(var_terms) != 1:
            return None
        ((mono, k),) = var_terms
        if len(mono) != 1 or mono[0][1] != 1 or len(mono[0][0]) != 1:
            return None
        return str(mono[0][0][0]), k, self._terms.get((), 0)

    def evaluate(self, env: Mapping[str, int]) -> int:
        """The value for the variables' values in ``env``."""
        total = 0
        for m, c in self._terms.items():
            v = c
            for atom, p in m:
                v *= _atom_value(atom, env) ** p
            total += v
        return total

    def substitute(self, env: Mapping[str, DimLike]) -> DimLike:
        """This expression with the variables ``env`` names replaced (by ints or expressions)."""
        total: DimLike = 0
        for m, c in self._terms.items():
            v: DimLike = c
            for atom, p in m:
                if len(atom) == 1:
                    a: DimLike = env.get(atom[0], DimExpr.var(atom[0]))
                else:
                    num, den = (_subst(e, env) for e in atom[1:])
                    a = num // den if atom[0] == "floordiv" else num % den
                for _ in range(p):
                    v = v * a
            total = total + v
        return total

    # --- arithmetic ------------------------------------------------------------------------
    def __add__(self, other: Any) -> DimLike:
        if not _dimlike(other):
            return NotImplemented
        terms = dict(self._terms)
        for m, c in DimExpr._terms_of(other).items():
            terms[m] = terms.get(m, 0) + c
        return DimExpr._normal(terms)

    __radd__ = __add__

    def __neg__(self) -> DimLike:
        return DimExpr._normal({m: -c for m, c in self._terms.items()})

    def __sub__(self, other: Any) -> DimLike:
        if not _dimlike(other):
            return NotImplemented
        result: DimLike = self + (-other)
        return result

    def __rsub__(self, other: Any) -> DimLike:
        if not _dimlike(other):
            return NotImplemented
        result: DimLike = (-self) + other
        return result

    def __mul__(self, other: Any) -> DimLike:
        if not _dimlike(other):
            return NotImplemented
        terms: dict[Monomial, int] = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in DimExpr._terms_of(other).items():
                powers: dict[Atom, int] = dict(m1)
                for atom, p in m2:
                    powers[atom] = powers.get(atom, 0) + p
                m = tuple(sorted(powers.items(), key=lambda t: _atom_key(t[0])))
                terms[m] = terms.get(m, 0) + c1 * c2
        return DimExpr._normal(terms)

    __rmul__ = __mul__

    def _divide_exactly(self, k: DimLike) -> DimLike | None:
        """``self / k`` when every term divides exactly (``k`` an int or a one-term expression), else None."""
        if isinstance(k, DimExpr):
            if len(k._terms) != 1:
                return 1 if k == self else None
            ((km, kc),) = k._terms.items()
        else:
            km, kc = (), int(k)
        if not kc:
            return None
        out: dict[Monomial, int] = {}
        for m, c in self._terms.items():
            powers = dict(m)
            for atom, p in km:
                if powers.get(atom, 0) < p:
                    return None
                powers[atom] -= p
            if c % kc:
                return None
            out[tuple(sorted(((a, p) for a, p in powers.items() if p), key=lambda t: _atom_key(t[0])))] = c // kc
        return DimExpr._normal(out)

    def __floordiv__(self, other: Any) -> DimLike:
        if not _dimlike(other):
            return NotImplemented
        if isinstance(other, int):
            if other == 0:
                raise InconclusiveDimensionOperation(f"Division of '{self}' by dimension 0")
            exact = self._divide_exactly(other)
            if exact is not None:
                return exact
            if other == 1:
                return self
        else:
            exact = self._divide_exactly(other)
            if exact is not None:
                return exact
        return DimExpr({((("floordiv", self, other), 1),): 1})

    def __rfloordiv__(self, other: Any) -> DimLike:
        if not _dimlike(other):
            return NotImplemented
        return DimExpr({((("floordiv", other, self), 1),): 1})

    def __mod__(self, other: Any) -> DimLike:
        if not _dimlike(other):
            return NotImplemented
        if other != 0 and self._divide_exactly(other) is not None:
            return 0
        return DimExpr({((("mod", self, other), 1),): 1})

    def __rmod__(self, other: Any) -> DimLike:
        if not _dimlike(other):
            return NotImplemented
        return DimExpr({((("mod", other, self), 1),): 1})

    def __divmod__(self, other: Any) -> tuple[DimLike, DimLike]:
        return self // other, self % other

    # --- comparison ------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, DimExpr):
            return self._terms == other._terms
        if _dimlike(other):
            return False  # a non-constant expression is not equal to a constant for every value
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return self._hash

    def _bounds(self) -> tuple[float, float]:
        """Lower and upper bounds over all values (every variable >= 1, floordiv/mod terms >= 0)."""
        lo: float = 0
        hi: float = 0
        for m, c in self._terms.items():
            if not m:
                lo += c
                hi += c
                continue
            # a monomial of variables only is >= 1; one holding floordiv/mod is >= 0 (mod(b, k) < k, unbounded else)
            m_lo = 1 if all(len(a) == 1 for a, _ in m) else 0
            if c > 0:
                lo += c * m_lo
                hi = float("inf")
            else:
                hi += c * m_lo
                lo = float("-inf")
        return lo, hi

    def _compare(self, other: Any, op: str) -> bool:
        diff = self - other  # >= 0 decides every ordering
        if isinstance(diff, int):
            lo = hi = float(diff)
        else:
            lo, hi = diff._bounds()
        answers = {">=": (lo >= 0, hi < 0), ">": (lo > 0, hi <= 0), "<=": (hi <= 0, lo > 0), "<": (hi < 0, lo >= 0)}
        true, false = answers[op]
        if true:
            return True
        if false:
            return False
        raise InconclusiveDimensionOperation(f"Symbolic dimension comparison '{self}' {op} '{other}' is inconclusive.{_ADVICE}")

    def __ge__(self, other: Any) -> bool:
        return self._compare(other, ">=") if _dimlike(other) else NotImplemented

    def __gt__(self, other: Any) -> bool:
        return self._compare(other, ">") if _dimlike(other) else NotImplemented

    def __le__(self, other: Any) -> bool:
        return self._compare(other, "<=") if _dimlike(other) else NotImplemented

    def __lt__(self, other: Any) -> bool:
        return self._compare(other, "<") if _dimlike(other) else NotImplemented

    def __int__(self) -> int:
        raise InconclusiveDimensionOperation(f"Symbolic dimension '{self}' used in a context that requires a constant{_ADVICE}")

    __index__ = __int__

    def __float__(self) -> float:
        raise InconclusiveDimensionOperation(f"Symbolic dimension '{self}' used in a context that requires a constant{_ADVICE}")

    # --- printing ----------------------------------------------------------------------------
    def __str__(self) -> str:
        # JAX's order: the syntactically larger terms first (so the constant is last), each
        # term's factors in increasing order.
        parts: list[str] = []
        for m, c in _sorted_terms(self):
            factors = sorted(m, key=functools.cmp_to_key(_factor_power_cmp))
            body = "*".join(_atom_str(a) + (f"^{p}" if p > 1 else "") for a, p in factors)
            mag = abs(c)
            text = body if mag == 1 and body else (f"{mag}*{body}" if body else str(mag))
            if not parts:
                parts.append(("- " if c < 0 else "") + text)
            else:
                parts.append(("- " if c < 0 else "+ ") + text)
        return " ".join(parts)

    __repr__ = __str__

    def __reduce__(self) -> tuple[Any, ...]:
        return (parse_dim, (str(self),))


# --- JAX's syntactic order of terms and factors (what printing follows) -------------------------
# A variable has size 1, an operation 1 + its operands' sizes; a term sums 1 + power * size over its
# factors; an expression sums 1 + |coefficient| * size over its terms (a constant term has size 0).
# Sizes compare first, then names, then the parts in order.


def _cmp(a: Any, b: Any) -> int:
    return int(a > b) - int(a < b)


def _factor_size(atom: Atom) -> int:
    return 1 if len(atom) == 1 else 1 + sum(_expr_size(o) for o in atom[1:])


def _term_size(m: Monomial) -> int:
    return sum(1 + p * _factor_size(a) for a, p in m)


def _expr_size(e: Any) -> int:
    if not isinstance(e, DimExpr):
        return 1
    return sum(1 + abs(c) * _term_size(m) for m, c in e._terms.items())


def _factor_cmp(a: Atom, b: Atom) -> int:
    c = _cmp(_factor_size(a), _factor_size(b))
    if c or len(a) == 1:
        return c or _cmp(a[0], b[0])
    return _cmp(a[0], b[0]) or _seq_cmp(list(a[1:]), list(b[1:]), _expr_cmp)


def _factor_power_cmp(x: tuple[Atom, int], y: tuple[Atom, int]) -> int:
    return _factor_cmp(x[0], y[0]) or _cmp(x[1], y[1])


def _term_cmp(m1: Monomial, m2: Monomial) -> int:
    # the factors largest first
    key = functools.cmp_to_key(_factor_power_cmp)
    f1, f2 = sorted(m1, key=key, reverse=True), sorted(m2, key=key, reverse=True)
    return _cmp(_term_size(m1), _term_size(m2)) or _seq_cmp(f1, f2, _factor_power_cmp)


def _sorted_terms(e: Any) -> list[tuple[Monomial, int]]:
    terms = list(e._terms.items()) if isinstance(e, DimExpr) else [((), int(e))]
    def pair(x: tuple[Monomial, int], y: tuple[Monomial, int]) -> int:
        return _term_cmp(x[0], y[0]) or _cmp(x[1], y[1])

    return sorted(terms, key=functools.cmp_to_key(pair), reverse=True)


def _expr_cmp(x: Any, y: Any) -> int:
    c = _cmp(_expr_size(x), _expr_size(y))
    if c:
        return c

    def pair(s: tuple[Monomial, int], o: tuple[Monomial, int]) -> int:
        return _term_cmp(s[0], o[0]) or _cmp(s[1], o[1])

    return _seq_cmp(_sorted_terms(x), _sorted_terms(y), pair)


def _seq_cmp(s1: Sequence[Any], s2: Sequence[Any], elem: Any) -> int:
    for a, b in zip(s1, s2):
        c = int(elem(a, b))
        if c:
            return c
    return _cmp(len(s1), len(s2))


def _dimlike(x: Any) -> bool:
    return isinstance(x, (int, DimExpr)) and not isinstance(x, bool) or _is_np_int(x)


def _is_np_int(x: Any) -> bool:
    return type(x).__module__ == "numpy" and hasattr(x, "dtype") and x.dtype.kind in "iu" and getattr(x, "ndim", 1) == 0


def _subst(e: Any, env: Mapping[str, DimLike]) -> DimLike:
    return e.substitute(env) if isinstance(e, DimExpr) else int(e)


def _atom_value(atom: Atom, env: Mapping[str, int]) -> int:
    if len(atom) == 1:
        if atom[0] not in env:
            raise KeyError(f"the dimension variable '{atom[0]}' has no value")
        return int(env[atom[0]])
    num, den = (e.evaluate(env) if isinstance(e, DimExpr) else int(e) for e in atom[1:])
    return num // den if atom[0] == "floordiv" else num % den


def is_symbolic_dim(d: Any) -> bool:
    return isinstance(d, DimExpr)


def is_symbolic_shape(shape: Iterable[Any]) -> bool:
    return any(isinstance(d, DimExpr) for d in shape)


def evaluate_shape(shape: Sequence[Any], env: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(d.evaluate(env) if isinstance(d, DimExpr) else int(d) for d in shape)


# --- parsing ------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_.]*)|(//|\*\*|[-+*^(),%]))")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"syntax error in symbolic dimension {text!r} at position {pos}")
        out.append(m.group(m.lastindex or 0))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, tok: str | None = None) -> str:
        t = self.peek()
        if t is None or (tok is not None and t != tok):
            raise ValueError(f"syntax error in symbolic dimension {self.text!r}: expected {tok or 'a term'}")
        self.i += 1
        return t

    def expr(self) -> DimLike:
        sign = -1 if self.peek() == "-" and self.take() else 1
        v: DimLike = sign * self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            t = self.term()
            v = v + t if op == "+" else v - t
        return v

    def term(self) -> DimLike:
        v = self.power()
        while self.peek() in ("*", "//", "%"):
            op = self.take()
            f = self.power()
            v = v * f if op == "*" else (v // f if op == "//" else v % f)
        return v

    def power(self) -> DimLike:
        v = self.atom()
        if self.peek() in ("^", "**"):
            self.take()
            p = self.atom()
            if not isinstance(p, int):
                raise ValueError(f"syntax error in symbolic dimension {self.text!r}: a power must be an integer")
            out: DimLike = 1
            for _ in range(p):
                out = out * v
            return out
        return v

    def atom(self) -> DimLike:
        t = self.take()
        if t.isdigit():
            return int(t)
        if t == "(":
            v = self.expr()
            self.take(")")
            return v
        if t in ("floordiv", "mod", "max", "min") and self.peek() == "(":
            self.take("(")
            a = self.expr()
            self.take(",")
            b = self.expr()
            self.take(")")
            if t == "floordiv":
                return a // b
            if t == "mod":
                return a % b
            raise ValueError(f"symbolic dimension {self.text!r}: {t}(...) is not supported by minijax")
        if t[0].isalpha() or t[0] == "_":
            return DimExpr.var(t)
        raise ValueError(f"syntax error in symbolic dimension {self.text!r} at {t!r}")


def parse_dim(text: str) -> DimLike:
    """A dimension from its text: ``3``, ``b``, ``2*b + 1``, ``floordiv(b, 2)``..."""
    p = _Parser(text)
    v = p.expr()
    if p.peek() is not None:
        raise ValueError(f"syntax error in symbolic dimension {text!r} at {p.peek()!r}")
    return v


def split_dims(text: str) -> list[str]:
    """The dimensions' texts of a comma-separated shape (parentheses around it optional)."""
    spec = text.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    parts: list[str] = []
    depth, cur = 0, ""
    for ch in spec:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_shape(text: str) -> tuple[DimLike, ...]:
    """A shape from a comma-separated list of dimensions (parentheses optional)."""
    return tuple(parse_dim(p) for p in split_dims(text))
