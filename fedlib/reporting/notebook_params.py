"""What ``fedlib reproduce -p NAME=VALUE`` may pass to a notebook: its parameters cell's names
(:func:`notebook_parameters`) and, for the names listed here, the type of value (:func:`check_params`)."""

from __future__ import annotations

import json
from pathlib import Path

from fedlib.core.errors import FedlibError
from fedlib.split.smofi import validate_alpha

# what a notebook parameter must hold, by name [D, issue 33]: the parameters cells default most of
# them to None, so their type is stated here (a name not listed takes any YAML value)
_SEEDS = ("seeds", "reduced_seeds", "optimizer_seeds", "official_fednar_seeds")
_COUNTS = ("rounds", "workers", "sync_seeds", "smooth", "timeline_clients", "timeline_k",
           "timeline_ratio", "timeline_rounds", "replay_rounds", "clients", "k", "max_train",
           "max_test", "n_clients", "last", "eval_every", "identity_steps", "sketch_dim", "batch_size",
           "safl_rounds", "split_rounds")
_NAMES = ("tasks", "methods", "reduced_methods", "datasets", "pairs", "partial_pairs", "participations",
          "frameworks", "ablations", "rules", "architectures", "optimizers", "systems", "uploads",
          "variants", "scenarios", "partial_methods", "readings", "reading_methods", "full_tasks",
          "holdout_tasks", "iid_frameworks")
_PER_READING = ("reading_methods",)  # a list of names, or one list per reading
_FLAGS = ("first_moment_only", "snapshot_pair")  # True / False, nothing else [issue 59]
_FRACTIONS = ("client_fraction",)  # a share in (0, 1]
_WORDS = ("model", "model_name", "preset", "safl_preset", "split_preset")
_NUMBERS = ("alpha", "target", "adam_lr", "lr", "momentum", "dirichlet_alpha", "a", "mix")
# parameters that are SMoFi staleness exponents, by notebook (folder, name) [issue 45]: each value must
# pass SMoFi's own rule (fedlib.split.smofi.validate_alpha: < 0) before any notebook runs. (Elsewhere
# ``alphas`` are FedQS's Dirichlet x, checked by the run config.)
SMOFI_ALPHA_PARAMS = {("smofi", "ablations"): "alphas", ("tutorials", "split_learning_and_fusion"): "alpha"}


def param_problem(name: str, value) -> str | None:
    """Why ``value`` cannot be notebook parameter ``name`` (None: it can, or its type is open)."""
    if value is None:
        return None
    is_int = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
    is_num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    items = value if isinstance(value, list) else [value]  # a scalar is a one-element list (apply_knobs)
    if isinstance(value, list) and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
        return "a list without repeats (each repeat would run or list the same thing twice)"
    if name in _FLAGS and not isinstance(value, bool):
        return "true or false"
    if name in _FRACTIONS and not (is_num(value) and 0 < value <= 1):
        return "a number in (0, 1], the share of the clients"
    if name in _WORDS and not isinstance(value, str):
        return "a name"
    if name in _SEEDS and not (items and all(is_int(v) and v >= 0 for v in items)):
        return "a list of integers >= 0, e.g. [0, 1, 2]"
    if name == "seed" and not (is_int(value) and value >= 0):
        return "an integer >= 0"
    if name in _COUNTS and not (is_int(value) and value >= 1):
        return "an integer >= 1"
    if name in _PER_READING and isinstance(value, dict):  # {reading: [names]} (Table 2's reading_methods)
        if value and all(isinstance(k, str) and isinstance(v, list) and v and all(isinstance(x, str) for x in v)
                         for k, v in value.items()):
            return None
        return "a list of names, or {reading: [names]}, e.g. {code-momentum: [fedqs-sgd]}"
    if name in _NAMES and not (items and all(isinstance(v, str) for v in items)):
        return "a list of names, e.g. [a, b]"
    if name in _NUMBERS and not is_num(value):
        return "a number"
    if name in ("alphas", "targets", "client_counts") and not (items and all(is_num(v) for v in items)):
        return "a list of numbers"
    return None


def notebook_parameters(book: Path) -> dict:
    """The names and default values of ``book``'s parameters cell (tagged ``parameters``)."""
    import ast

    try:
        cells = json.loads(book.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError) as err:
        raise FedlibError(f"cannot read notebook {book.name}: {err}") from None
    for cell in cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            src = cell.get("source", "")
            tree = ast.parse("".join(src) if isinstance(src, list) else src)
            out = {}
            for node in tree.body:
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            try:
                                out[target.id] = ast.literal_eval(node.value)
                            except ValueError:
                                out[target.id] = None
            return out
    return {}


def check_params(books: list[Path], params: dict | None) -> None:
    """FedlibError unless every ``-p`` name is a parameter of every selected notebook, of its type,
    before any notebook runs (issue 33: an unknown name used to run the defaults as a variant)."""
    if not params:
        return
    if "profile" in params:
        raise FedlibError("-p profile=... is not a notebook parameter here: the report folder is chosen "
                          "by --profile", f"use --profile {params['profile']}")
    for book in books:
        known = notebook_parameters(book)
        unknown = [n for n in params if n not in known]
        if unknown:
            import difflib

            close = difflib.get_close_matches(unknown[0], list(known), n=1)
            raise FedlibError(f"notebook {book.parent.name}/{book.stem} has no parameter {unknown[0]!r}",
                              (f"did you mean {close[0]}? " if close else "")
                              + f"its parameters: {', '.join(n for n in known if n != 'profile')}")
    for name, value in params.items():
        why = param_problem(name, value)
        if why:
            raise FedlibError(f"notebook parameter {name}={value!r:.80} must be {why}",
                              f"write e.g. -p '{name}=VALUE' with {why}")
    for book in books:
        name = SMOFI_ALPHA_PARAMS.get((book.parent.name, book.stem))
        for value in ([] if params.get(name) is None else
                      params[name] if isinstance(params[name], list) else [params[name]]):
            try:
                validate_alpha(value)
            except FedlibError as err:
                raise FedlibError(f"notebook parameter {name} of {book.parent.name}/{book.stem}: "
                                  f"{err.problem.split(' (')[0]}", err.fix) from None
