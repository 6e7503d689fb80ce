"""fedlib: reproducible FedQS (semi-asynchronous FL) and SMoFi (split FL) on PyTorch."""

__version__ = "0.1.0"

from fedlib.core.errors import FedlibError  # noqa: E402

__all__ = ["FedlibError", "__version__"]
