"""fedlib: reproducible FedQS (semi-asynchronous FL) and SMoFi (split FL) on PyTorch."""

__version__ = "0.1.0"

from fedlib.core.errors import FedlibError  # noqa: E402

__all__ = ["FedlibError", "__version__", "register", "plugin"]


def __getattr__(name):  # the plug-in calls load the training stack only when used (issue 61)
    if name in ("register", "plugin"):
        from fedlib import plugins

        return getattr(plugins, name)
    raise AttributeError(f"module 'fedlib' has no attribute {name!r}")
