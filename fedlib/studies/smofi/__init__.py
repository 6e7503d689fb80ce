"""SMoFi's tables and ablations (AAAI 2026) as study specs: one module per notebook."""
