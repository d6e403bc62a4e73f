"""Elementwise primitives: unary and binary math, comparisons, bitwise ops, conversions.

Each primitive is defined here once with its shape/dtype rule; its jvp,
transpose and batching rules join it here as those transforms arrive.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minijax import dtypes
from minijax.core import ShapedArray
from minijax.primitives.common import (
    ANY,
    FLOAT,
    NUMERIC,
    naryop_abstract_eval,
    standard_primitive,
    unop_abstract_eval,
)


def _binop(name: str, classes: Any) -> Any:
    return standard_primitive(name, naryop_abstract_eval(name, classes))


def _unop(name: str, classes: Any) -> Any:
    return standard_primitive(name, unop_abstract_eval(name, classes))


def _compare_rule(name: str) -> Any:
    base = naryop_abstract_eval(name, ANY)

    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        out = base(x, y)
        return ShapedArray(out.shape, np.bool_, weak_type=False)

    return rule


add_p = _binop("add", NUMERIC)
mul_p = _binop("mul", NUMERIC)
sin_p = _unop("sin", FLOAT)
gt_p = standard_primitive("gt", _compare_rule("gt"))


def _convert_element_type_rule(x: ShapedArray, *, new_dtype: Any, weak_type: bool, sharding: Any = None) -> ShapedArray:
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(new_dtype), weak_type=weak_type)


convert_element_type_p = standard_primitive("convert_element_type", _convert_element_type_rule)
