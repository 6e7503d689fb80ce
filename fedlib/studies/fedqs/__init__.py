"""FedQS's tables and figures (Li et al., NeurIPS 2025) as study specs: one module per notebook."""
