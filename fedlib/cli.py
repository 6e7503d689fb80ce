"""The ``fedlib`` command line. Each subsystem contributes its own sub-commands.

    fedlib data info|fetch NAME          (fedlib.data.cli)
    fedlib bench engine ...              (fedlib.train.bench)
    fedlib run | sweep | presets         (fedlib.experiments.cli)
    fedlib results ... | verify ...      (fedlib.experiments.results.cli)
    fedlib safl schedule ...             (fedlib.safl.cli)
    fedlib split compare ...             (fedlib.experiments.running.compare)
    fedlib reproduce ...                 (fedlib.reproduce)
    fedlib scoreboard [--check]          (fedlib.claims.cli)
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fedlib.core.errors import FedlibError

# module that defines ``register(subparsers)`` for its commands
_COMMAND_MODULES = (
    "fedlib.data.cli",
    "fedlib.train.bench",
    "fedlib.experiments.cli",
    "fedlib.experiments.results.cli",
    "fedlib.safl.cli",
    "fedlib.experiments.running.compare",
    "fedlib.reproduce",
    "fedlib.claims.cli",
)


class _Parser(argparse.ArgumentParser):
    """argparse with fedlib's error line: ``fedlib: error: <problem>`` + fix, exit status 2."""

    def error(self, message):
        self.exit(2, f"fedlib: error: {self.prog}: {message}\n  fix: see `{self.prog} --help`\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fedlib",
        description="fedlib: reproducible FedQS (semi-asynchronous FL) and SMoFi (split FL) on PyTorch.",
    )
    from fedlib import __version__

    parser.add_argument("--version", action="version", version=f"fedlib {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """A sub-command registered without a description gets its one-line help as one, so every
    ``fedlib COMMAND --help`` says what the command does."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                text = helps.get(name)
                if not sub.description and text:
                    sub.description = text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")
                _describe(sub)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help / --version (0) or a usage error (2, already printed)
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except FedlibError as err:
        print(f"fedlib: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fedlib: interrupted (finished work is kept in the result store)", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _closed_pipe()
    except OSError as err:  # the environment refused (permissions, a full disk, a name too long)
        where = f" ({str(err.filename)[:120]})" if err.filename else ""
        print(f"fedlib: error: {err.strerror or err}{where}\n  fix: check that path's permissions and "
              "free space, or point fedlib at another folder", file=sys.stderr)
        return 2
    except MemoryError:
        print("fedlib: error: out of memory\n  fix: lower the sizes asked for (clients, batch size, "
              "data.max_train) or FEDLIB_THREADS", file=sys.stderr)
        return 2


def _closed_pipe() -> int:
    """One line for output written into a pipe whose reader has gone (``fedlib run ... | head -5``):
    name the pipe, not permissions or disk space; stdout is pointed at /dev/null so that Python's
    final flush does not raise again."""
    import os
    import stat

    def is_pipe(fd: int) -> bool:
        try:
            return stat.S_ISFIFO(os.fstat(fd).st_mode)
        except OSError:
            return False

    which = "standard output" if is_pipe(1) or not is_pipe(2) else "standard error"
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except OSError:
        pass
    try:
        print(f"fedlib: error: the pipe on {which} was closed by the command reading it (e.g. `| head`) "
              "before fedlib finished writing\n  fix: let the reader take the whole output (e.g. `| less`), "
              "or redirect it to a file; finished work is kept in the result store", file=sys.stderr)
    except OSError:
        pass
    return 141  # 128 + SIGPIPE, as a shell reports a closed pipe


if __name__ == "__main__":
    raise SystemExit(main())
