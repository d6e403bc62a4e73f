"""``jax.extend.core.primitives``: the primitives under the names JAX gives them.

Each name is minijax's primitive of JAX's name (``add_p`` is the primitive
``add``), looked up in minijax's registry. A primitive minijax has not built
(tokens, state references, collectives across devices, ...)
is absent: tests/test_public_names.py lists each with its reason.
"""

from __future__ import annotations

from typing import Any

import minijax.primitives  # noqa: F401  (registers every primitive family)
from minijax.core import Primitive, primitive_registry

# The primitives whose name is not their attribute name without "_p".
_RENAMED = {'add_jaxvals_p': 'add_any', 'linear_solve_p': 'custom_linear_solve', 'remat_p': 'remat2', 'scatter_add_p': 'scatter-add', 'scatter_max_p': 'scatter-max', 'scatter_min_p': 'scatter-min', 'scatter_mul_p': 'scatter-mul'}

# JAX 0.10.2's names, in jax.extend.core.primitives.
_JAX_NAMES = (
    "abs_p",
    "acos_p",
    "acosh_p",
    "add_jaxvals_p",
    "add_p",
    "after_all_p",
    "all_gather_p",
    "all_to_all_p",
    "and_p",
    "approx_top_k_p",
    "argmax_p",
    "argmin_p",
    "asin_p",
    "asinh_p",
    "atan2_p",
    "atan_p",
    "atanh_p",
    "axis_index_p",
    "bessel_i0e_p",
    "bessel_i1e_p",
    "bitcast_convert_type_p",
    "broadcast_in_dim_p",
    "call_p",
    "cbrt_p",
    "ceil_p",
    "cholesky_p",
    "clamp_p",
    "closed_call_p",
    "clz_p",
    "complex_p",
    "concatenate_p",
    "cond_p",
    "conj_p",
    "conv_general_dilated_p",
    "convert_element_type_p",
    "copy_p",
    "cos_p",
    "cosh_p",
    "create_token_p",
    "cumlogsumexp_p",
    "cummax_p",
    "cummin_p",
    "cumprod_p",
    "cumsum_p",
    "custom_jvp_call_p",
    "custom_lin_p",
    "custom_vjp_call_p",
    "device_put_p",
    "digamma_p",
    "div_p",
    "dot_general_p",
    "dynamic_slice_p",
    "dynamic_update_slice_p",
    "eig_p",
    "eigh_p",
    "empty2_p",
    "eq_p",
    "eq_to_p",
    "erf_inv_p",
    "erf_p",
    "erfc_p",
    "exp2_p",
    "exp_p",
    "expm1_p",
    "fft_p",
    "floor_p",
    "gather_p",
    "ge_p",
    "get_p",
    "gt_p",
    "hessenberg_p",
    "householder_product_p",
    "igamma_grad_a_p",
    "igamma_p",
    "igammac_p",
    "imag_p",
    "integer_pow_p",
    "iota_p",
    "is_finite_p",
    "jit_p",
    "le_p",
    "le_to_p",
    "lgamma_p",
    "linear_solve_p",
    "log1p_p",
    "log_p",
    "logistic_p",
    "lt_p",
    "lt_to_p",
    "lu_p",
    "max_p",
    "min_p",
    "mul_p",
    "name_p",
    "ne_p",
    "neg_p",
    "nextafter_p",
    "not_p",
    "or_p",
    "pad_p",
    "pmax_p",
    "pmin_p",
    "polygamma_p",
    "population_count_p",
    "pow_p",
    "ppermute_p",
    "psum_p",
    "qr_p",
    "ragged_all_to_all_p",
    "random_bits_p",
    "random_fold_in_p",
    "random_gamma_p",
    "random_seed_p",
    "random_split_p",
    "real_p",
    "reduce_and_p",
    "reduce_max_p",
    "reduce_min_p",
    "reduce_or_p",
    "reduce_p",
    "reduce_precision_p",
    "reduce_prod_p",
    "reduce_sum_p",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_sum_p",
    "reduce_xor_p",
    "regularized_incomplete_beta_p",
    "rem_p",
    "remat_p",
    "reshape_p",
    "rev_p",
    "rng_bit_generator_p",
    "rng_uniform_p",
    "round_p",
    "rsqrt_p",
    "scan_p",
    "scatter_add_p",
    "scatter_max_p",
    "scatter_min_p",
    "scatter_mul_p",
    "scatter_p",
    "schur_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
    "select_and_scatter_p",
    "select_n_p",
    "sharding_constraint_p",
    "shift_left_p",
    "shift_right_arithmetic_p",
    "shift_right_logical_p",
    "sign_p",
    "sin_p",
    "sinh_p",
    "slice_p",
    "sort_p",
    "sqrt_p",
    "square_p",
    "squeeze_p",
    "stop_gradient_p",
    "sub_p",
    "svd_p",
    "swap_p",
    "tan_p",
    "tanh_p",
    "threefry2x32_p",
    "top_k_p",
    "transpose_p",
    "triangular_solve_p",
    "tridiagonal_p",
    "tridiagonal_solve_p",
    "while_p",
    "xor_p",
    "zeta_p",
)


def _present() -> dict[str, Primitive]:
    found = {}
    for attr in _JAX_NAMES:
        prim = primitive_registry.get(_RENAMED.get(attr, attr.removesuffix("_p")))
        if prim is not None:
            found[attr] = prim
    return found


_PRIMITIVES = _present()
globals().update(_PRIMITIVES)

__all__ = sorted(_PRIMITIVES)


def __getattr__(name: str) -> Any:
    if name in _JAX_NAMES:
        raise AttributeError(
            f"module 'jax.extend.core.primitives' has no attribute {name!r}: minijax has no "
            f"{_RENAMED.get(name, name.removesuffix('_p'))} primitive yet (docs/differences.md)"
        )
    raise AttributeError(f"module 'jax.extend.core.primitives' has no attribute {name!r}")
