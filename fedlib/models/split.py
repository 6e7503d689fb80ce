"""One split-learning training step across the cut, exactly as between two machines (SMoFi §1).

The client runs its part and sends the cut-layer activations ("smashed data") and labels; the
server treats the smashed data as a leaf tensor, computes the loss, back-propagates through its
part and returns the gradient w.r.t. the smashed data; the client back-propagates that gradient
through its part. No autograd graph crosses the cut — only tensors — yet the loss and every
parameter gradient equal those of one forward/backward of the whole model (SMoFi §6 identity 6).

The three pieces are separate so a simulator can put a queue (or a batched server) between them:

>>> acts = client_forward(client, x)                 # on the client
>>> loss, grad = server_step(server, acts.detach(), y, loss_fn)   # on the server
>>> client_backward(acts, grad)                      # back on the client
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor, nn

from fedlib.core.errors import FedlibError


def client_forward(client: nn.Module, x: Tensor) -> Tensor:
    """The client part's forward pass; keep the result for :func:`client_backward`."""
    return client(x)


def server_step(server: nn.Module, smashed: Tensor, y: Tensor,
                loss_fn: Callable[[Tensor, Tensor], Tensor]) -> tuple[Tensor, Tensor]:
    """Server side: forward the received smashed data, ``loss.backward()``, return the cut gradient.

    ``smashed`` is what arrived over the wire (it is detached here and made a leaf that requires
    grad). Accumulates gradients into ``server``'s parameters. Returns ``(loss.detach(), grad)``
    where ``grad`` is d loss / d smashed (the tensor sent back to the client).
    """
    leaf = smashed.detach().requires_grad_(True)
    loss = loss_fn(server(leaf), y)
    if loss.dim() != 0:
        raise FedlibError(f"loss_fn must return a scalar, got shape {tuple(loss.shape)}",
                          "use a reduced loss such as nn.CrossEntropyLoss() (reduction='mean')")
    loss.backward()
    grad = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
    return loss.detach(), grad


def client_backward(activations: Tensor, grad: Tensor) -> None:
    """Client side: back-propagate the returned cut gradient through the client part."""
    if activations.requires_grad:
        activations.backward(grad)


def split_forward_backward(client: nn.Module, server: nn.Module, x: Tensor, y: Tensor,
                           loss_fn: Callable[[Tensor, Tensor], Tensor]) -> tuple[Tensor, Tensor]:
    """Client forward → server forward + backward → client backward, with only tensors crossing.

    Gradients accumulate in the ``.grad`` of both parts' parameters (zero them beforehand as for
    any backward pass). Returns ``(loss, smashed)``: the detached scalar loss and the smashed-data
    leaf tensor the server received, whose ``.grad`` is the gradient sent back to the client.
    """
    activations = client_forward(client, x)
    smashed = activations.detach().requires_grad_(True)
    loss = loss_fn(server(smashed), y)
    if loss.dim() != 0:
        raise FedlibError(f"loss_fn must return a scalar, got shape {tuple(loss.shape)}",
                          "use a reduced loss such as nn.CrossEntropyLoss() (reduction='mean')")
    loss.backward()
    if smashed.grad is None:  # the server output does not depend on the smashed data
        smashed.grad = torch.zeros_like(smashed)
    client_backward(activations, smashed.grad)
    return loss.detach(), smashed
