"""The code of a user-registered algorithm (issue 61): its fingerprint and how to rebuild it elsewhere.

* :func:`fingerprint` — a sha256 over the source of the classes and functions a registration runs
  (each method's source; its bytecode and constants when no source is available). It joins the
  run's config hash, so editing ``aggregate`` and re-running recomputes instead of returning the
  old result. Built-in algorithms carry no fingerprint: their hashes are unchanged.
* :func:`recipe` / :func:`rebuild` — a picklable description of a class or function that a fresh
  process (a sweep's pool worker) turns back into it: ``module:qualname`` when it can be imported
  there, else its source with the globals it reads (notebook cells, ``__main__``). Something that
  cannot travel raises one :class:`FedlibError` naming it.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import hashlib
import importlib
import inspect
import linecache
import pickle
import sys
import textwrap
import types

from fedlib.core.errors import FedlibError

__all__ = ["fingerprint", "recipe", "rebuild", "class_source", "user_code", "importable"]

_SIMPLE = (str, int, float, bool, type(None), bytes)


def user_code(obj) -> bool:
    """Whether ``obj`` (a class or function) is user code rather than fedlib's, Python's or torch's."""
    root = (getattr(obj, "__module__", None) or "").split(".")[0]
    return root not in ("fedlib", "builtins", "torch", "typing", "abc", "dataclasses", "collections")


def _unwrap(value):
    if isinstance(value, (staticmethod, classmethod)):
        return value.__func__
    if isinstance(value, property):
        return value.fget
    return value


def _code_text(code: types.CodeType) -> str:
    """A function's code without its source: bytecode, names and constants (nested code included)."""
    consts = [(_code_text(c) if isinstance(c, types.CodeType) else repr(c)) for c in code.co_consts]
    return f"{code.co_code.hex()}|{code.co_names}|{code.co_varnames}|{consts}"


def _function_text(fn) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return _code_text(fn.__code__)


def _names(code: types.CodeType) -> set[str]:
    """The global names a function's code (nested code included) reads."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _helpers(fn, seen: set) -> list[str]:
    """The texts of the user functions and classes ``fn`` reads as globals (a helper defined beside
    the class in the same cell or module): editing a helper changes the fingerprint too."""
    out = []
    for name in sorted(_names(fn.__code__)):
        value = fn.__globals__.get(name)
        if isinstance(value, (type, types.FunctionType)) and user_code(value):
            out += _parts(value, seen)
    return out


def _parts(obj, seen: set) -> list[str]:
    """The texts that identify ``obj``'s code: a class's own members and user base classes, a
    function's source and the user classes/functions its closure holds."""
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    out = []
    if isinstance(obj, type):
        out.append(f"class {obj.__qualname__}")
        for base in obj.__mro__[1:]:
            if user_code(base):
                out += _parts(base, seen)
        for name in sorted(obj.__dict__):
            value = _unwrap(obj.__dict__[name])
            if isinstance(value, types.FunctionType):
                out.append(f"{name}:{_function_text(value)}")
                out += _helpers(value, seen)
            elif isinstance(value, type) and user_code(value):
                out += _parts(value, seen)
            elif not name.startswith("__") and isinstance(value, _SIMPLE + (tuple,)):
                out.append(f"{name}={value!r}")
        if dataclasses.is_dataclass(obj):
            out += [f"field {f.name}: {f.type} = {f.default!r}" for f in dataclasses.fields(obj)
                    if isinstance(f.default, _SIMPLE)]
    elif isinstance(obj, types.FunctionType):
        out.append(_function_text(obj))
        out += _helpers(obj, seen)
        for cell in obj.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(value, (type, types.FunctionType)) and user_code(value):
                out += _parts(value, seen)
    return out


def fingerprint(*objs) -> str:
    """sha256 (hex) of the code of ``objs`` (classes or functions, see the module docstring)."""
    seen: set = set()
    text = "\n".join(p for obj in objs if obj is not None for p in _parts(obj, seen))
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------------------------------- recipes
def importable(obj) -> bool:
    """Whether a fresh process gets ``obj`` back by importing ``obj.__module__`` and walking its qualname."""
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
    if not mod or mod in ("__main__", "__mp_main__") or "<locals>" in qual:
        return False
    try:
        found = importlib.import_module(mod)
        for part in qual.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return False
    return found is obj


def class_source(cls) -> str:
    """The source of class ``cls`` (dedented), found from its methods' code (works for notebook
    cells, where ``inspect.getsource`` of a class fails), else by ``inspect.getsource``."""
    firsts = []
    for value in cls.__dict__.values():
        fn = _unwrap(value)
        if isinstance(fn, types.FunctionType) and fn.__qualname__.startswith(cls.__qualname__ + ".") \
                and linecache.getlines(fn.__code__.co_filename):
            firsts.append((fn.__code__.co_firstlineno, fn.__code__.co_filename))
    if firsts:
        line, filename = min(firsts)
        lines = linecache.getlines(filename)
        start = line - 1
        while start >= 0 and not lines[start].lstrip().startswith(f"class {cls.__name__}"):
            start -= 1
        if start >= 0:
            while start > 0 and lines[start - 1].lstrip().startswith("@"):
                start -= 1
            return textwrap.dedent("".join(inspect.getblock(lines[start:])))
    try:
        return textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError) as err:
        raise FedlibError(f"cannot find the source of {cls.__qualname__} to send it to worker processes ({err})",
                          "define it in an importable module (a .py file), or run with workers=1") from None


def _globals_of(obj) -> dict:
    for value in (obj.__dict__.values() if isinstance(obj, type) else [obj]):
        fn = _unwrap(value)
        if isinstance(fn, types.FunctionType):
            return fn.__globals__
    return vars(sys.modules.get(obj.__module__, types.ModuleType("empty")))


def recipe(obj, _seen: dict | None = None):
    """A picklable recipe of class or function ``obj`` that :func:`rebuild` turns back into it."""
    if importable(obj):
        return ("import", obj.__module__, obj.__qualname__)
    seen = {} if _seen is None else _seen
    if id(obj) in seen:
        return ("ref", obj.__name__)
    seen[id(obj)] = obj
    source = class_source(obj) if isinstance(obj, type) else textwrap.dedent(inspect.getsource(obj))
    glob, needs = _globals_of(obj), {}
    names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    for name in sorted(names - {obj.__name__}):
        if name not in glob:
            continue  # a builtin or a local name
        value = glob[name]
        if isinstance(value, types.ModuleType):
            needs[name] = ("module", value.__name__)
        elif isinstance(value, (type, types.FunctionType)):
            needs[name] = recipe(value, seen)
        else:
            try:
                needs[name] = ("pickle", pickle.dumps(value))
            except Exception:  # noqa: BLE001 - any pickling failure means it cannot travel
                raise FedlibError(
                    f"{obj.__qualname__} reads the global {name!r} ({type(value).__name__}), which cannot be "
                    "sent to worker processes", "define it in an importable module, or run with workers=1") \
                    from None
    return ("source", obj.__name__, source, needs)


def rebuild(rec):
    """The class or function a :func:`recipe` describes (in this process)."""
    kind = rec[0]
    if kind == "attr":  # e.g. a strategy's nested Options class
        return getattr(rebuild(rec[1]), rec[2])
    if kind == "import":
        found = importlib.import_module(rec[1])
        for part in rec[2].split("."):
            found = getattr(found, part)
        return found
    if kind != "source":
        raise FedlibError(f"unknown plug-in recipe {kind!r}")
    _, name, source, needs = rec
    ns = {"__name__": "__main__", "__builtins__": builtins}
    for var, need in needs.items():
        if need[0] == "module":
            ns[var] = importlib.import_module(need[1])
        elif need[0] == "pickle":
            ns[var] = pickle.loads(need[1])
        elif need[0] != "ref":
            ns[var] = rebuild(need)
    filename = f"<fedlib plug-in {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), ns)  # noqa: S102 - the user's own code, from this session
    return ns[name]
