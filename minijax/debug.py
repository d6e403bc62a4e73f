"""``minijax.debug``: print values and call Python from inside traced programs (JAX's ``jax.debug``).

``print`` and ``callback`` bind the ``debug_print`` and ``debug_callback``
primitives (``minijax.primitives.callbacks``): eagerly they run at once, under
``jit`` the compiled program calls back into Python when it reaches them, with
the values it computed. Both accept any Python objects among their arguments;
array-likes become operands of the primitive, everything else (strings, ...)
is passed through unchanged.

Both have JAX's two call forms: ``debug.print("x={x}", x=x, ordered=True)``
and ``debug.print(ordered=True)("x={x}", x=x)``. With ``ordered=True`` the
prints of one program happen in program order; without it a compiled program
may run them in any order (XLA does).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import string
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from minijax import core, tree_util
from minijax.array import Array
from minijax.backend import default_device
from minijax.debugger import breakpoint  # noqa: A004  (jax.debug.breakpoint: its own module)
from minijax.mesh import Sharding, SingleDeviceSharding
from minijax.primitives.callbacks import (
    DebugEffect as DebugEffect,
    OrderedDebugEffect as OrderedDebugEffect,
    debug_callback_p,
    debug_effect,
    debug_print_p,
    merge_static,
    ordered_debug_effect,
    split_static,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------
# debug.callback


def debug_callback(
    callback: Callable[..., Any] | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Call ``callback(*args, **kwargs)`` when the program reaches this point.

    The callback receives minijax Arrays in place of the traced values. Its
    return value is ignored. ``ordered=True`` keeps it in program order
    relative to the other ordered callbacks. ``partitioned`` is accepted for
    JAX's signature; with one device there is nothing to partition.
    Called with options only (``debug.callback(ordered=True)``), returns the
    function to call with the callback and its arguments.
    """
    effect = ordered_debug_effect if ordered else debug_effect

    def _debug_callback(callback: Callable[..., Any], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(callback):
            raise TypeError(
                "debug.callback: the first argument must be callable, but got an object of type "
                f"{type(callback).__name__}."
            )
        in_tree, dynamic, static = split_static(c_args, c_kwargs)

        def _flat_callback(*values: Any) -> None:
            call_args, call_kwargs = merge_static(in_tree, values, static)
            callback(*call_args, **call_kwargs)

        debug_callback_p.bind(*dynamic, callback=_flat_callback, effect=effect, partitioned=partitioned)

    if callback is not None:
        _debug_callback(callback, *args, **kwargs)
        return None
    _reject_two_call_arguments("debug.callback", args, kwargs)
    return _debug_callback


callback = debug_callback


# ---------------------------------------------------------------------------
# debug.print and debug.log


class _FormatChecker(string.Formatter):
    """Walks a format string the way ``str.format`` will, formatting nothing,
    to report arguments no replacement field uses (at trace time, not when printing)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: set[int | str], args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(
                f"debug.print: unused positional arguments: {unused}. Every argument needs a "
                "replacement field in the format string, such as {} or {0}."
            )
        unused_names = [k for k in kwargs if k not in used_args]
        if unused_names:
            raise ValueError(
                f"debug.print: unused keyword arguments: {unused_names}. Are you passing an f-string "
                '(f"{x}")? Formatting happens when the program runs: pass a plain string and the '
                'values, as in debug.print("{x}", x=x).'
            )


_format_checker = _FormatChecker()


def _has_placeholders(fmt: str) -> bool:
    return any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))


def _user_log_record(level: int) -> logging.LogRecord:
    """A record pointing at the user's line that called debug.log."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(package_dir):
        frame = frame.f_back
    return logger.makeRecord(logger.name, level, frame.f_code.co_filename, frame.f_lineno, "", (), None)


def print(  # noqa: A001  (the public name is JAX's)
    fmt: str | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    _use_logging: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Print ``fmt.format(*args, **kwargs)`` when the program reaches this point.

    Formatting happens then, on the computed values (so write
    ``print("x={x}", x=x)``, not an f-string). A format string without
    replacement fields prints followed by the values, separated by spaces
    (pass ``skip_format_check=True`` to give it values). ``ordered=True``
    keeps the prints of a program in program order. NumPy's print options at
    the time of the call apply to the arrays. Called with options only
    (``print(ordered=True)``), returns the function to call with the format.
    """

    def _debug_print(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not isinstance(fmt, str):
            raise TypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}.")
        if not skip_format_check:
            _format_checker.format(fmt, *c_args, **c_kwargs)
        in_tree, dynamic, static = split_static(c_args, c_kwargs)
        debug_print_p.bind(
            *dynamic,
            fmt=fmt,
            ordered=ordered,
            partitioned=partitioned,
            in_tree=in_tree,
            static_args=tuple(static.items()),
            np_printoptions=tuple(np.get_printoptions().items()),
            has_placeholders=_has_placeholders(fmt),
            logging_record=_user_log_record(logging.INFO) if _use_logging else None,
        )

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    _reject_two_call_arguments("debug.print", args, kwargs)
    return _debug_print


# debug.log: like print, but the message goes to this module's logger at INFO level.
log = functools.partial(print, _use_logging=True)


def _reject_two_call_arguments(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args or kwargs:
        raise TypeError(
            f"{name} received unexpected arguments in the two-call form: {args=} {kwargs=}. "
            f"Pass only options to the first call, as in {name}(ordered=True)(...)."
        )




# ---------------------------------------------------------------------------
# Shardings, drawn (sharding, issue 17)


def inspect_array_sharding(value: Any, *, callback: Callable[[Sharding], None]) -> None:
    """Call ``callback`` with each array's sharding. Under a transformation minijax
    knows no shardings (it traces for one device), so only concrete arrays are accepted."""
    for leaf in tree_util.tree_leaves(value):
        if isinstance(leaf, core.Tracer):
            raise NotImplementedError(
                "minijax.debug.inspect_array_sharding under jit or another transformation: minijax's traced "
                "values carry no sharding. Call it on a concrete array (outside jit)."
            )
        callback(leaf.sharding if type(leaf) is Array else SingleDeviceSharding(default_device()))


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Draw how ``arr`` (1-D or 2-D) is split over devices, with ``rich``."""
    if isinstance(arr, core.Tracer):
        raise NotImplementedError("visualize_array_sharding needs a concrete array: traced values carry no sharding in minijax.")
    sharding = arr.sharding if type(arr) is Array else SingleDeviceSharding(default_device())
    visualize_sharding(np.shape(arr), sharding, **kwargs)


def visualize_sharding(shape: Sequence[int], sharding: Sharding, *, use_color: bool = True, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map: Any = None) -> None:  # fmt: skip
    """Draw the blocks of an array of ``shape`` laid out by ``sharding``: one cell per
    distinct block, labelled with the devices holding it, sized in proportion to the block."""
    if importlib.util.find_spec("rich") is None:
        raise ValueError("`visualize_sharding` requires `rich` to be installed.")
    import rich.align
    import rich.box
    import rich.console
    import rich.padding
    import rich.style
    import rich.table

    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    console = rich.console.Console(width=max_width)
    colors = _colors(color_map) if use_color and console.color_system is not None else None
    cells = _cells(shape, sharding)
    rows = 1 + max(r for r, _ in cells)
    cols = 1 + max(c for _, c in cells)
    height_unit = int(10 * scale)
    width_unit = int(height_unit * (shape[1] if len(shape) == 2 else 1) / shape[0])
    platform = next(iter(sharding.device_set)).platform.upper()
    table = rich.table.Table(show_header=False, show_lines=colors is None, padding=0, highlight=colors is None,
                             pad_edge=False, box=rich.box.SQUARE if colors is None else None)  # fmt: skip
    for r in range(rows):
        row = []
        for c in range(cols):
            ids, height_frac, width_frac = cells[r, c]
            label = f"{platform} " + ",".join(str(i) for i in sorted(ids))
            # Terminal cells are about 2.5 times as tall as they are wide.
            width = min(max(int(width_frac * width_unit * 2.5), min_width), max_width)
            height = 1 if height_frac is None else int(height_frac * height_unit)
            left, extra = divmod(width - len(label) - 2, 2)
            top, extra_v = divmod(height - 2, 2)
            pad = (top, left + extra, top + extra_v, left)
            style = rich.style.Style()
            if colors is not None:
                pad = (pad[0] + 1, pad[1] + 1, pad[2] + 1, pad[3] + 1)
                background = colors[(r * cols + c) % len(colors)]
                style = rich.style.Style(bgcolor=background, color="black")
            row.append(rich.padding.Padding(rich.align.Align(label, "center", vertical="middle"),
                                            (max(pad[0], 0), max(pad[1], 0), max(pad[2], 0), max(pad[3], 0)),
                                            style=style))  # fmt: skip
        table.add_row(*row)
    console.print(table, end="\n\n")


def _cells(shape: tuple[int, ...], sharding: Sharding) -> dict[tuple[int, int], tuple[set[int], float | None, float]]:
    """(row, column) of each distinct block -> (ids of the devices holding it, its height and width as
    fractions of the array's; height None for a 1-D array, drawn one line high)."""
    cells: dict[tuple[int, int], tuple[set[int], float | None, float]] = {}
    for device, index in sharding.devices_indices_map(shape).items():
        spans = [range(*s.indices(n)) for s, n in zip(index, shape)]
        # A block's position in the grid: how many blocks of its size come before it.
        position = [span.start // max(len(span), 1) for span in spans]
        if len(shape) == 1:
            key, height, width = (0, position[0]), None, len(spans[0]) / shape[0]
        else:
            key, height, width = (position[0], position[1]), len(spans[0]) / shape[0], len(spans[1]) / shape[1]
        ids = cells[key][0] if key in cells else set()
        ids.add(device.id)
        cells[key] = (ids, height, width)
    return cells


def _colors(color_map: Any) -> list[str] | None:
    """Background colors for the cells: from ``color_map`` (a matplotlib colormap), else
    matplotlib's "tab20b" as JAX uses; None (no colors) without matplotlib."""
    if color_map is None:
        try:
            import matplotlib as mpl
        except ModuleNotFoundError:
            return None
        color_map = mpl.colormaps["tab20b"]
    return ["#{:02x}{:02x}{:02x}".format(*(int(255 * v) for v in color_map(i / 20)[:3])) for i in range(20)]

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "breakpoint",
    "callback",
    "debug_callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]
