"""Entry point: `onnxstudio [FILE...]` opens the window; `onnxstudio CMD ...` works headless."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import gc
import io
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from onnxstudio import __version__
from onnxstudio.commands import COMMANDS, load
from onnxstudio.concurrency.child import run_child
from onnxstudio.errors import describe_failure


def _command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of command ``name`` alone: building every command's parser would import
    what they all need (diff and split pull in a tenth of a second of modules)."""
    parser = argparse.ArgumentParser(prog="onnxstudio", description="Work with ONNX models.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=f"onnxstudio {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    load(name).add_parser(sub)
    return parser


def _gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="onnxstudio",
        description="Open ONNX models in the onnxstudio window. "
        f"Headless commands: {', '.join(COMMANDS)} (onnxstudio COMMAND --help).",
    )
    parser.add_argument("files", nargs="*", help="models to open (none: the sample model)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=f"onnxstudio {__version__}")
    parser.add_argument("--install-desktop", action="store_true",
                        help="register the app and the .onnx file type for this user")
    parser.add_argument("--uninstall-desktop", action="store_true",
                        help="undo --install-desktop")
    parser.add_argument("--new-instance", action="store_true",
                        help="do not hand files to an already running window")
    return parser


# Commands that read a whole graph once and end. The cyclic collector would rescan the
# ~1M objects of a 100k-node graph a dozen times for garbage it rarely finds (a fifth of
# `export`'s time on dag100k), so it pauses while they run.
WHOLE_GRAPH_COMMANDS = frozenset({"info", "export", "extract", "diff", "split", "cost"})


def main(argv: Sequence[str] | None = None) -> int:
    # numpy's OpenBLAS starts a thread per core that spins 0.1 s of CPU at import, on the
    # core a window's open or a command's fork needs; the only BLAS call here is one
    # vector dot product (runner/compare.py).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args_list = list(sys.argv[1:] if argv is None else argv)
    child = run_child(args_list)
    if child is not None:
        return child
    first = next((a for a in args_list if a != "--debug"), None)
    quiet_gc = False
    if first in COMMANDS:
        args = _command_parser(first).parse_args(args_list)
        handler = load(args.command).run
        quiet_gc = args.command in WHOLE_GRAPH_COMMANDS and gc.isenabled()
    else:
        refusal = _unknown_command(first)
        args = _gui_parser().parse_args(args_list)
        if args.install_desktop or args.uninstall_desktop:
            from onnxstudio.desktop_integration.install import run as handler
        else:
            if refusal:
                print(f"onnxstudio: {refusal}", file=sys.stderr)
                return 2
            handler = _run_window
    if first in COMMANDS and argv is None:
        signal.signal(signal.SIGTERM, _terminated)
    if quiet_gc:
        gc.disable()  # see WHOLE_GRAPH_COMMANDS
    code = _run(handler, args)
    if quiet_gc:
        if argv is None:  # the process' own command line: it ends here
            _end_process(code)
        gc.enable()  # main() called in-process (tests, scripts) leaves the collector on
    return code


WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _unknown_command(first: str | None) -> str | None:
    """A word that is no command and no file (``infoo``) is a mistyped command: said in
    one line, rather than opening the window with an error tab."""
    if first is None or not WORD.fullmatch(first) or os.path.exists(first):
        return None
    close = difflib.get_close_matches(first, COMMANDS, n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'?" if close else f"commands: {', '.join(COMMANDS)}"
    return f"unknown command '{first}' ({hint})"


def _run_window(args: argparse.Namespace) -> int:
    """The window, its Qt imports inside ``_run``: a missing display or system library is
    one line naming what to install, not a traceback or Qt's abort. Files go to a running
    window first, before the window's own imports (onnx, onnxruntime, every panel: 4 s
    under load) that a hand-over never uses."""
    if args.files and not args.new_instance and _handed_over(args.files):
        print(f"onnxstudio: opened {len(args.files)} file(s) in the running window",
              file=sys.stderr)
        return 0
    from onnxstudio.system_libraries import check_window_can_open

    check_window_can_open()
    from onnxstudio.ui.app import run_app

    return run_app(args)


def _handed_over(files: list[str]) -> bool:
    """Whether a running window took ``files``. Qt that cannot load (a missing system
    library) is no running window: the check that follows names what to install."""
    try:
        from onnxstudio.ui.single_instance import hand_over
    except ImportError:
        return False
    return hand_over(files)


def _run(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        code = int(handler(args))
        sys.stdout.flush()  # a closed pipe shows here rather than at exit
        return code
    except BrokenPipeError:  # `onnxstudio info M | head`: end quietly, like other tools
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"onnxstudio: {describe_failure(exc)}", file=sys.stderr)
        return 2


def _terminated(_signum: int, _frame: object) -> NoReturn:
    """SIGTERM ends a command as an exception does, so its cleanups run (a temporary
    file where there are no unnamed ones; forks end by themselves with this process)."""
    raise SystemExit(128 + signal.SIGTERM)


def _end_process(code: int) -> NoReturn:
    """Exit without the interpreter's teardown, which frees a whole graph's objects one
    by one for nothing: 0.25 s after BERT-96's export, 0.95 s after dag100k's. Nothing
    is left to do at exit: the output was written and closed, forks were waited for."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to say
            stream.flush()
    os._exit(code)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):  # not a real file (tests)
        pass
