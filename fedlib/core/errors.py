"""One exception type for every user-facing problem: what is wrong, and how to fix it."""


class FedlibError(ValueError):
    """A problem with the user's input or environment.

    The message names the problem; ``fix`` (optional) says what to do about it.
    The CLI prints ``str(err)`` and exits with status 2, without a traceback.
    """

    def __init__(self, problem: str, fix: str | None = None):
        self.problem = problem
        self.fix = fix
        super().__init__(problem if not fix else f"{problem}\n  fix: {fix}")


def check(condition: bool, problem: str, fix: str | None = None) -> None:
    """Raise :class:`FedlibError` unless ``condition`` holds."""
    if not condition:
        raise FedlibError(problem, fix)


def closest(name, choices, n: int = 3) -> list[str]:
    """The ``n`` names of ``choices`` closest to ``name`` (difflib), best first; [] if none is close."""
    import difflib

    return difflib.get_close_matches(str(name), [str(c) for c in choices], n=n, cutoff=0.5)


def check_choice(kind: str, value, choices) -> None:
    """Reject ``value`` unless it is one of ``choices``, listing the valid ones."""
    choices = sorted(choices)
    if value not in choices:
        raise FedlibError(f"unknown {kind} {value!r}", f"use one of: {', '.join(map(str, choices))}")
