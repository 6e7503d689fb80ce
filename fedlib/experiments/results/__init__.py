"""What a run leaves: the crash-safe result store (``store``: :class:`ResultStore`; its files and
checksums ``store_files``; ``results list/show/rm`` ``store_admin``; file access that never leaves
the root ``store_safe``), the repository's ledger of the runs the reports read (``ledger``), where a
result was made (``provenance``), re-keying an older store (``rehash``), and the ``fedlib results``
and ``fedlib verify`` commands (``cli``).

    from fedlib.experiments.results import ResultStore, Ledger
"""

from fedlib.experiments.results.ledger import Ledger
from fedlib.experiments.results.store import CorruptResultWarning, ResultStore, RunResult

__all__ = ["ResultStore", "RunResult", "CorruptResultWarning", "Ledger"]
