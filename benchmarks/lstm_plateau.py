"""How many plain SGD steps the FedQS Shakespeare LSTM needs to leave the space-only plateau.

    python benchmarks/lstm_plateau.py --lr 0.8 --batch 10 --steps 1000

Centralised training on the whole Shakespeare training set (one thread), test accuracy on the first
1,000 test windows every 100 steps. An untrained LSTM first learns to predict the most frequent next
character (a space, ~18 % of targets) and sits there; this script measured where it leaves, which
chose the ``safl-shakespeare-cpu`` overlay (B = 10, lr 0.8, 20 local steps; see the overlay).
Measured on a 2-core AMD EPYC (2026-12-05): lr 0.8 leaves the plateau after ~500 steps with B = 50
and ~400–600 with B = 10, a B = 10 step costing ~0.4x a B = 50 step.
"""

from __future__ import annotations

import argparse
import time

import torch

from fedlib.data import load_dataset
from fedlib.models import build_model


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lr", type=float, default=0.8)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--clip", type=float, default=20.0, help="gradient-norm clip (the FedQS presets' 20)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    ds = load_dataset("shakespeare")
    gen = torch.Generator().manual_seed(0)
    model = build_model("lstm", ds.num_classes, seed=0)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    tx, ty = ds.test_x[:1000], ds.test_y[:1000]
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, ds.num_train, (args.batch,), generator=gen)
        loss = torch.nn.functional.cross_entropy(model(ds.train_x[idx]), ds.train_y[idx])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        if step % 100 == 0:
            with torch.no_grad():
                acc = (model(tx).argmax(1) == ty).float().mean().item()
            print(f"step {step}: loss {loss.item():.3f}, test accuracy {acc:.3f} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
