"""The Shakespeare next-character LSTM (FedQS §7 NLP task [C]).

``Embedding(80, 8) → 2-layer LSTM, hidden 128 → Linear(128, 80)`` on the last time step; input a
``LongTensor`` of shape ``(B, 80)`` (80 characters over an 80-symbol alphabet), output ``(B, 80)``
logits for the next character. 213,712 parameters.

The recurrent layers are written here as plain batched matmuls instead of ``nn.LSTM`` (whose fused
kernel ``torch.func.vmap`` cannot batch over stacked weights): the input projection of every time
step is one matmul per layer, then each step adds ``h @ W_hhᵀ`` and applies the gates. Parameter
names, shapes, gate order (i, f, g, o) and default initialisation (U(−1/√H, 1/√H) in the same
order) are those of ``nn.LSTM``, so ``LSTM.load_state_dict(nn_lstm.state_dict())`` works and gives
the same outputs up to float rounding.

Stages: ``embed, lstm, head`` (``lstm`` outputs the top layer's last hidden state ``(B, 128)``).
Default split cut: ``embed``.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import torch
from torch import nn

from fedlib.models.staged import StagedModel


class LSTM(nn.Module):
    """Multi-layer LSTM, batch-first, no dropout; ``nn.LSTM``-compatible parameters.

    ``forward(x, state=None)`` with ``x`` of shape ``(B, T, input_size)`` returns
    ``(output, (h_n, c_n))`` like ``nn.LSTM(batch_first=True)``: ``output`` is ``(B, T, H)`` and
    ``h_n, c_n`` are ``(num_layers, B, H)``. With ``last_only=True`` it returns only the top
    layer's last hidden state ``(B, H)`` (what the classifier uses) and skips stacking outputs.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, last_only: bool = False):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.last_only = last_only
        H = hidden_size
        for layer in range(num_layers):
            n_in = input_size if layer == 0 else H
            self.register_parameter(f"weight_ih_l{layer}", nn.Parameter(torch.empty(4 * H, n_in)))
            self.register_parameter(f"weight_hh_l{layer}", nn.Parameter(torch.empty(4 * H, H)))
            self.register_parameter(f"bias_ih_l{layer}", nn.Parameter(torch.empty(4 * H)))
            self.register_parameter(f"bias_hh_l{layer}", nn.Parameter(torch.empty(4 * H)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``nn.LSTM``'s init: every parameter U(−1/√H, 1/√H), in registration order."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def _layer(self, layer: int, x, h, c, keep_sequence: bool):
        w_ih = getattr(self, f"weight_ih_l{layer}")
        w_hh = getattr(self, f"weight_hh_l{layer}")
        bias = getattr(self, f"bias_ih_l{layer}") + getattr(self, f"bias_hh_l{layer}")
        gates_x = torch.matmul(x, w_ih.transpose(0, 1)) + bias  # (B, T, 4H): all steps at once
        w_hh_t = w_hh.transpose(0, 1)
        outputs = []
        # unbind/chunk rather than slicing: the backward of a slice materialises a zero-filled
        # gradient of the whole (B, T, 4H) tensor per step (measured 2x slower, benchmarks/README.md)
        for gates_t in gates_x.unbind(1):
            gates = gates_t + torch.matmul(h, w_hh_t)
            i, f, g, o = gates.chunk(4, dim=-1)
            i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
            c = f * c + i * g
            h = o * torch.tanh(c)
            if keep_sequence:
                outputs.append(h)
        out = torch.stack(outputs, dim=1) if keep_sequence else None
        return out, h, c

    def forward(self, x, state=None):
        B = x.shape[0]
        if state is None:
            zeros = torch.zeros(B, self.hidden_size, dtype=x.dtype, device=x.device)
            h0 = [zeros] * self.num_layers
            c0 = [zeros] * self.num_layers
        else:
            h0, c0 = list(state[0].unbind(0)), list(state[1].unbind(0))
        out = x
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            top = layer == self.num_layers - 1
            out, h, c = self._layer(layer, out, h0[layer], c0[layer],
                                    keep_sequence=not (top and self.last_only))
            h_n.append(h)
            c_n.append(c)
        if self.last_only:
            return h_n[-1]
        return out, (torch.stack(h_n, 0), torch.stack(c_n, 0))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, batch_first=True"
        return s + (", last_only=True" if self.last_only else "")


def lstm(num_classes: int = 80, vocab_size: int = 80, embed_dim: int = 8, hidden: int = 128,
         num_layers: int = 2) -> StagedModel:
    """The FedQS Shakespeare LSTM as a :class:`StagedModel` (see the module docstring)."""
    stages = OrderedDict(
        embed=nn.Embedding(vocab_size, embed_dim),
        lstm=LSTM(embed_dim, hidden, num_layers, last_only=True),
        head=nn.Linear(hidden, num_classes),
    )
    return StagedModel(stages, arch="lstm", default_cut="embed")
