"""lax.padtype_to_pads: the pads each padding name gives."""

import pytest

from minijax import lax


def test_same_covers_the_input_with_ceil_outputs():
    # in 5, window 3, stride 2: 3 outputs need (3-1)*2+3 = 7 positions, 2 pads, split evenly.
    assert lax.padtype_to_pads((5, 6), (3, 3), (2, 1), "SAME") == [(1, 1), (1, 1)]


def test_odd_total_goes_high_for_same_and_low_for_same_lower():
    assert lax.padtype_to_pads((5,), (4,), (1,), "SAME") == [(1, 2)]
    assert lax.padtype_to_pads((5,), (4,), (1,), "same_lower") == [(2, 1)]


def test_same_never_pads_negatively():
    # A window smaller than the stride leaves gaps; nothing to pad.
    assert lax.padtype_to_pads((7,), (1,), (3,), "SAME") == [(0, 0)]


def test_valid_pads_nothing():
    assert lax.padtype_to_pads((9, 9, 9), (2, 2, 2), (1, 1, 1), "VALID") == [(0, 0)] * 3


def test_unknown_name_is_refused_like_jax():
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        lax.padtype_to_pads((5,), (3,), (1,), "FULL")
