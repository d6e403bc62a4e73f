"""The error classes minijax raises, named and shaped like JAX's ``jax.errors``.

Each message says what happened and what to do about it; the long
explanations live in ``docs/errors.md`` and the messages link there.
"""

from __future__ import annotations

from typing import Any

# Where messages point. The documentation is the repository's docs/
# directory, which the site (mkdocs.yml) renders page for page; a link is a
# page path under it plus a section anchor, which is the section's heading
# in lower case (``## UnexpectedTracerError`` -> ``#unexpectedtracererror``).
DOCS_ROOT = "docs/"
ERRORS_PAGE = "errors.md"


def docs_link(page: str, section: str) -> str:
    """The link a message gives: ``docs/errors.md#unexpectedtracererror``."""
    return f"{DOCS_ROOT}{page}#{section.lower()}"


def see_docs(page: str, section: str) -> str:
    """The sentence that ends a message: where the documentation explains it."""
    return f"See {docs_link(page, section)} in minijax's documentation."


class JAXTypeError(TypeError):
    """Base of minijax's TypeErrors that carry a link to the errors page."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message}\n{see_docs(ERRORS_PAGE, type(self).__name__)}")


class JAXIndexError(IndexError):
    """An IndexError raised while tracing (e.g. a traced index where a static one is needed)."""


def _shape(tracer: Any) -> str:
    aval = getattr(tracer, "aval", None)
    return aval.str_short(short_dtypes=False) if aval is not None else "?"


def _origin(tracer: Any) -> str:
    """Where the traced value came from: which function, which arguments."""
    describe = getattr(tracer, "_origin_msg", None)
    origin = describe() if callable(describe) else ""
    return f"\n{origin}" if origin else ""


class ConcretizationTypeError(JAXTypeError):
    """A concrete value was needed but the value is abstract (a tracer)."""

    def __init__(self, tracer: Any, context: str = "") -> None:
        super().__init__(
            "Abstract tracer value encountered where concrete value is expected: "
            f"traced array with shape {_shape(tracer)}\n{context}{_origin(tracer)}\n"
            "Python control flow, shapes and Python conversions need concrete "
            "values. Fixes: mark the argument static (static_argnums / "
            "static_argnames on jit), use structured control flow (lax.cond, "
            "lax.while_loop) or a value-level select (jnp.where)."
        )


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` (an ``if`` or ``while``) was applied to a traced value."""

    def __init__(self, tracer: Any) -> None:
        JAXTypeError.__init__(
            self,
            f"Attempted boolean conversion of traced array with shape {_shape(tracer)}."
            f"{_origin(tracer)}\n"
            "Python `if`/`while`/`and`/`or` need a concrete bool, but under a "
            "transformation the value is abstract. Fixes: mark the argument static "
            "(static_argnums / static_argnames on jit), use lax.cond or "
            "lax.while_loop, or compute both branches and select with jnp.where.",
        )


class TracerIntegerConversionError(JAXTypeError):
    """``int()``/``__index__`` was applied to a traced value."""

    def __init__(self, tracer: Any) -> None:
        super().__init__(
            f"The __index__() method was called on traced array with shape {_shape(tracer)}"
            f"{_origin(tracer)}\n"
            "A Python integer is needed (e.g. for a shape, a range or a list "
            "index) but the value is traced. Fix: mark the argument static "
            "(static_argnums / static_argnames) or use lax.dynamic_slice / "
            "jnp.take for traced indices."
        )


class TracerArrayConversionError(JAXTypeError):
    """``np.asarray()`` was applied to a traced value."""

    def __init__(self, tracer: Any) -> None:
        super().__init__(
            "The numpy.ndarray conversion method __array__() was called on "
            f"traced array with shape {_shape(tracer)}{_origin(tracer)}\n"
            "NumPy functions cannot run on traced values. Fix: use minijax.numpy "
            "(jnp) instead of numpy inside transformed functions."
        )


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it and was used later."""

    def __init__(self, message: str) -> None:
        super().__init__(
            f"Encountered an unexpected tracer. {message}\n"
            "A function transformed by minijax stored a traced value outside its "
            "scope (in a global, a closure or an attribute) and it was used after "
            "the transformation finished. Fix: return the value from the "
            "transformed function instead of storing it."
        )


class KeyReuseError(RuntimeError):
    """A PRNG key was used twice where that is checked."""


class JaxRuntimeError(RuntimeError):
    """The runtime (XLA) failed to run a program: out of memory
    (``RESOURCE_EXHAUSTED``), a host callback that raised, ... The message is
    XLA's status text. Raised by the call or, since execution is
    asynchronous, by the first read of a result (``np.asarray``, printing,
    ``block_until_ready``), as JAX raises its ``jax.errors.JaxRuntimeError``."""


class JaxprTypeError(TypeError):
    """A jaxpr is ill formed or ill typed (``minijax.jaxpr_check``); the message names the equation
    and the mismatch."""


class InconclusiveDimensionOperation(Exception):
    """A shape computation could not be decided (symbolic shapes; not supported)."""


__all__ = [
    "DOCS_ROOT",
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "JaxprTypeError",
    "KeyReuseError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "docs_link",
    "see_docs",
]


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index whose value is unknown while tracing (its True count sets the result's shape)."""

    def __init__(self, aval: Any) -> None:
        super().__init__(
            f"Array boolean indices must be concrete; got {aval}\n\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError"
        )


__all__.append("NonConcreteBooleanIndexError")
