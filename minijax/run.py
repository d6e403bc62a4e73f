"""``python -m minijax.run script.py [args]`` (or ``minijax run``): run a JAX program on minijax.

The script (or, with ``-m module``, a module, as ``python -m`` runs it) runs
as ``__main__`` with ``minijax.compat``'s alias installed, so its ``import
jax`` gives minijax. ``sys.argv`` is the script and its arguments, as under
``python script.py``.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

from minijax import compat

USAGE = "usage: minijax run [-m module | script.py] [args ...]"


def run(argv: Sequence[str]) -> int:
    """Run ``argv`` (``[script, *args]`` or ``["-m", module, *args]``) with the alias; the exit status."""
    args = list(argv)
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        print(USAGE, file=sys.stderr if not args or args[0] == "-m" else sys.stdout)
        return 0 if args and args[0] in ("-h", "--help") else 2
    try:
        compat.install()
    except compat.RealJaxError as error:
        print(f"minijax run: {error}", file=sys.stderr)
        return 2
    try:
        if args[0] == "-m":
            sys.argv = [args[1], *args[2:]]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = args
            sys.path.insert(0, _script_dir(args[0]))  # as `python script.py` puts the script's folder first
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def _script_dir(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


def main() -> int:
    return run(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
