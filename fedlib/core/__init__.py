"""The ground floor of fedlib: what every layer above may import, importing nothing of fedlib itself.

- :mod:`fedlib.core.errors` — :class:`FedlibError` (problem + fix) and the ``check`` helpers;
- :mod:`fedlib.core.utils` — devices, threads, seeds/generators, atomic file writes;
- :mod:`fedlib.core.state` — model states (``name -> tensor``) and their arithmetic.

Layers (docs/ARCHITECTURE.md): ``core`` → ``data``, ``models`` → ``train`` → ``safl``, ``split``
→ ``experiments``, ``reporting``, the command line.
"""
