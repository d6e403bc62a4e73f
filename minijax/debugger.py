"""``jax.debug.breakpoint``: stop a running program and look at its values in a small debugger, jdb.

How it works: ``breakpoint`` runs while the function is traced. It captures the
caller's Python frames (file, line, source, locals) and hands the traced
values among the locals to a ``debug.callback``; when the compiled program
reaches that point, the callback gets them as concrete arrays, puts them back
into the frames and starts the debugger on them. So ``p y`` in jdb shows the
value ``y`` has at run time, even under ``jit``, ``vmap`` (once per element,
as any debug callback) or inside ``lax.cond``'s branches.

The debugger reads commands from standard input: an expression (or ``p``/``pp``
EXPR) is evaluated in the current frame; ``u``/``up`` and ``d``/``down`` move
between frames, ``l``/``list`` shows the source around the line, ``w``/``where``
the stack; ``c``/``continue`` resumes the program and ``q``/``quit``/``exit`` (or
the end of input) stops it: the program then fails, as JAX's does, with XLA's
runtime error. Other debuggers can be registered (``register_debugger``); the
one with the highest priority is used unless ``backend=`` names one.
"""

from __future__ import annotations

import cmd
import dataclasses
import inspect
import pprint
import sys
import threading
import traceback
from collections.abc import Callable, Hashable, Iterable
from typing import IO, Any

from minijax import core, source_info, tree_util
from minijax.callbacks import pure_callback
from minijax.primitives.autodiff import stop_gradient_p
from minijax.primitives.callbacks import debug_callback_p, debug_effect, ordered_debug_effect

__all__ = ["CliDebugger", "DebuggerFrame", "breakpoint", "get_debugger", "register_debugger"]


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One Python frame at the breakpoint: where it is and the variables it sees."""

    filename: str
    locals: dict[str, Any]
    globals: dict[str, Any]
    code_context: list[str] | None
    source: list[str]
    lineno: int
    offset: int | None  # the line's index in ``source``; None: the source is unknown

    @classmethod
    def from_frameinfo(cls, info: inspect.FrameInfo) -> DebuggerFrame:
        try:
            lines, start = inspect.getsourcelines(info.frame)
            source = "".join(lines).split("\n")
            offset: int | None = info.lineno - max(start, 1)  # a module's source starts at line 0
            if offset is not None and offset >= len(source):  # code made by exec/eval: no usable source
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context, source, info.lineno, offset)


def _flatten_frame(frame: DebuggerFrame) -> tuple[list[Any], tuple[Any, ...]]:
    # Only the traced values travel through the program (they are what the callback gets back as
    # concrete arrays); everything else, concrete arrays included, stays in the frame as it is.
    names: list[Hashable] = []
    values: list[Any] = []
    for scope in (frame.locals, frame.globals):
        for name, value in scope.items():
            if isinstance(value, core.Tracer):
                names.append((scope is frame.locals, name))
                values.append(value)
    return values, (frame, tuple(names))


def _unflatten_frame(aux: Any, values: Iterable[Any]) -> DebuggerFrame:
    frame: DebuggerFrame = aux[0]
    names: tuple[tuple[bool, str], ...] = aux[1]
    locals_, globals_ = dict(frame.locals), dict(frame.globals)
    for (is_local, name), value in zip(names, values):
        (locals_ if is_local else globals_)[name] = value
    return dataclasses.replace(frame, locals=locals_, globals=globals_)


tree_util.register_pytree_node(DebuggerFrame, _flatten_frame, _unflatten_frame)


Debugger = Callable[..., None]  # (frames, thread_id, **kwargs) -> None
_debuggers: dict[str, tuple[int, Debugger]] = {}
_one_at_a_time = threading.Lock()  # callbacks may run on several threads


def register_debugger(name: str, debugger: Debugger, priority: int) -> None:
    """Make ``debugger`` available as ``breakpoint(backend=name)``; the highest priority is the default."""
    if name in _debuggers:
        raise ValueError(f'Debugger with name "{name}" already registered.')
    _debuggers[name] = (priority, debugger)


def get_debugger(backend: str | None = None) -> Debugger:
    if backend is not None and backend in _debuggers:
        return _debuggers[backend][1]
    if not _debuggers:
        raise ValueError("No debuggers registered!")
    return max(_debuggers.values(), key=lambda entry: entry[0])[1]


def breakpoint(  # noqa: A001  (the public name is JAX's)
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    **kwargs: Any,
) -> Any:
    """Stop here when the program runs, and start a debugger on the caller's frames.

    ``filter_frames`` leaves out minijax's own frames; ``num_frames`` keeps
    only that many, innermost first. ``ordered`` keeps the breakpoint in
    program order with the other ordered callbacks. With ``token`` (an array
    or pytree of arrays), the breakpoint runs once ``token`` is computed and
    returns it unchanged: use what it returns, or the breakpoint is pruned
    with the rest of the dead code.
    """
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [info for info in infos if not source_info.is_internal_file(info.filename)]
    frames = [DebuggerFrame.from_frameinfo(info) for info in infos]
    del infos  # frame objects keep every local of the stack alive
    if num_frames is not None:
        frames = frames[:num_frames]
    leaves, frames_tree = tree_util.tree_flatten(frames)

    def stop(*values: Any) -> None:
        thread_id = None if threading.current_thread() is threading.main_thread() else threading.get_ident()
        debugger = get_debugger(backend)
        with _one_at_a_time:
            debugger(tree_util.tree_unflatten(frames_tree, list(values)), thread_id, **kwargs)

    if token is None:
        effect = ordered_debug_effect if ordered else debug_effect
        debug_callback_p.bind(*leaves, callback=stop, effect=effect, partitioned=False)
        return None
    # With a token: the breakpoint is a pure callback that returns the token, so it runs after the
    # token is computed and before whatever uses what it returns.
    token, leaves = tree_util.tree_map(stop_gradient_p.bind, (token, leaves))

    def stop_then_pass(tok: Any, *values: Any) -> Any:
        stop(*values)
        return tok

    shapes = tree_util.tree_map(core.get_aval, token)
    return pure_callback(stop_then_pass, shapes, token, *leaves)


class CliDebugger(cmd.Cmd):
    """jdb, the text debugger: pdb's commands for looking, over the frames a breakpoint captured."""

    prompt = "(jdb) "

    def __init__(self, frames: list[DebuggerFrame], thread_id: int | None, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, completekey: str = "tab") -> None:
        super().__init__(completekey=completekey, stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0  # 0: the innermost frame, where the breakpoint is
        self.thread_id = thread_id
        self.intro = "Entering jdb:"

    def evaluate(self, expression: str) -> Any:
        frame = self.frames[self.frame_index]
        return eval(expression, {}, {**frame.globals, **frame.locals})

    def _show(self, expression: str, format_: Callable[[Any], str]) -> None:
        try:
            print(format_(self.evaluate(expression)), file=self.stdout)
        except Exception:
            error = traceback.format_exception_only(*sys.exc_info()[:2])[-1].strip()
            print("***", error, file=self.stdout)

    def default(self, line: str) -> None:
        """Evaluates an expression and prints its repr."""
        self._show(line, repr)

    def do_p(self, arg: str) -> None:
        """p expression
        Evaluates and prints the value of an expression
        """
        self._show(arg, repr)

    def do_pp(self, arg: str) -> None:
        """pp expression
        Evaluates and pretty-prints the value of an expression
        """
        self._show(arg, pprint.pformat)

    def print_context(self, num_lines: int = 2) -> None:
        frame = self.frames[self.frame_index]
        shown = [f"> {frame.filename}({frame.lineno})"]
        if frame.offset is not None:
            for i, line in enumerate(frame.source):
                if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                    shown.append(("->  " if i == frame.offset else "    ") + line)
        print("\n".join(shown), file=self.stdout)

    def do_up(self, arg: str) -> None:
        """u(p)
        Move up a stack frame.
        """
        if self.frame_index == len(self.frames) - 1:
            print("At topmost frame.", file=self.stdout)
        else:
            self.frame_index += 1
        self.print_context()

    do_u = do_up

    def do_down(self, arg: str) -> None:
        """d(own)
        Move down a stack frame.
        """
        if self.frame_index == 0:
            print("At bottommost frame.", file=self.stdout)
        else:
            self.frame_index -= 1
        self.print_context()

    do_d = do_down

    def do_list(self, arg: str) -> None:
        """l(ist)
        List source code for the current file.
        """
        self.print_context(num_lines=5)

    do_l = do_list

    def do_where(self, arg: str) -> None:
        """w(here)
        Prints a stack trace with the most recent frame on the bottom.
        'bt' is an alias for this command.
        """
        shown = ["Traceback:"]
        for frame in reversed(self.frames):
            shown.append(f'  File "{frame.filename}", line {frame.lineno}')
            shown.append("    " + (frame.source[frame.offset].strip() if frame.offset is not None else "<no source>"))
        print("\n".join(shown), file=self.stdout)

    do_w = do_bt = do_where

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue))
        Continue the program's execution.
        """
        return True

    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> bool:
        """q(uit)
        (exit)
        Quit the debugger. The program is given an exit command.
        """
        sys.exit(0)  # inside the program's callback: the program fails (XLA's runtime error), Python goes on

    do_q = do_EOF = do_exit = do_quit

    def run(self) -> None:
        while True:
            try:
                self.cmdloop()
                return
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


def _run_cli_debugger(frames: list[DebuggerFrame], thread_id: int | None, **kwargs: Any) -> None:
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", _run_cli_debugger, -1)
