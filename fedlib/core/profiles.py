"""The report profiles, one home for every layer: the scales a report runs at (``fedlib.reporting.profiles``
says what each is; ``fedlib.experiments`` labels runs with the first three, or ``custom``)."""

#: the profiles a report can be executed at, cheapest first
REPORT_PROFILES = ("smoke", "cpu", "paper", "long")
