"""What a config override touches (issue 33, split from :mod:`fedlib.experiments.config`): a nested
dict merges into its section as ``RunConfig.replace`` does, and a key the run never reads (``data.alpha``
on ``partition=sex``, ``model.cut`` on a SAFL run) is refused, since changing it would only store a
duplicate of the same run under another hash."""

from __future__ import annotations

from fedlib.core.dataclass_io import deep_merge, set_path
from fedlib.core.errors import check

__all__ = ["merge_path", "leaf_keys", "unread_keys", "refuse_unread"]


def merge_path(d: dict, key: str, value) -> None:
    """``set_path``, except that a dict given for a section merges into it key by key."""
    node = d
    for part in key.split(".")[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    last = key.split(".")[-1]
    if isinstance(value, dict) and isinstance(node, dict) and isinstance(node.get(last), dict):
        set_path(d, key, deep_merge(node[last], value))
    else:
        set_path(d, key, value)


def leaf_keys(key, value) -> set:
    """The dotted keys an override sets: ``("data", {"alpha": 1})`` -> ``{"data.alpha"}``."""
    if isinstance(value, dict) and key != "options" and not str(key).startswith("options."):
        return {k for sub, v in value.items() for k in leaf_keys(f"{key}.{sub}", v)}
    return {str(key)}


def unread_keys(cfg, data_paradigms) -> dict:
    """Keys of a validated SAFL / split config that its run never reads -> why (issue 33). The
    hash still covers them (presets are hashed as they are), so changing one would store a
    duplicate run: :meth:`RunConfig.with_overrides` and :meth:`RunConfig.replace` refuse that."""
    if cfg.paradigm not in data_paradigms:
        return {}
    d, out = cfg.data, {}
    if d.partition != "dirichlet":
        out["data.alpha"] = f"only partition=dirichlet reads it (this run's is {d.partition!r})"
    if d.partition != "shards":
        out["data.shards_per_client"] = f"only partition=shards reads it (this run's is {d.partition!r})"
    if d.partition != "role":
        out["data.roles"] = f"only partition=role reads it (this run's is {d.partition!r})"
    if d.validation == "none":
        out["data.val_frac"] = "no validation split is taken (data.validation=none)"
    if cfg.paradigm != "split":
        out["model.cut"] = f"only split FL cuts the model (this run is {cfg.paradigm})"
    if cfg.paradigm == "safl" and cfg.safl.delays != "uniform":
        out["safl.ratio"] = f"only safl.delays=uniform reads it (this run's are {cfg.safl.delays!r})"
    return out


def refuse_unread(old, new, touched: set, data_paradigms) -> None:
    """Refuse a change of a key in ``touched`` that ``new``'s run never reads (``data_paradigms``: the
    paradigms whose runs read the data, model and SAFL sections)."""
    unread = unread_keys(new, data_paradigms)
    for key in sorted(touched & set(unread)):
        section, _, name = key.partition(".")
        before, after = getattr(getattr(old, section), name), getattr(getattr(new, section), name)
        check(before == after,
              f"{key}={after!r} is not read by this run: {unread[key]}; changing it would only store "
              "a duplicate of the same run under another hash",
              f"leave {key} out (or also set the setting that reads it)")
