"""`FedDataset`: one dataset's train/test tensors plus what a model needs to consume them.

Images are kept as ``uint8`` NCHW (4x smaller than float) and turned into model input batch by
batch in :meth:`FedDataset.batch`: scale to [0, 1], optional train-time augmentation (zero-padded
random crop + horizontal flip, the ``RandomCrop(32, padding=4)`` + ``RandomHorizontalFlip()`` of
the FedQS code, spec §7), then normalisation. Augmentation is vectorised over the batch on the
data's device and draws its randomness only from the ``generator`` passed in, so a batch is a
pure function of (indices, generator state).

Text (Shakespeare) is a ``LongTensor`` (n, 80) of symbol ids with the next symbol as label;
tabular data (Adult) is ``float32`` (n, d).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch

from fedlib.core.errors import FedlibError, check_choice

KINDS = ("image", "text", "tabular")
NORMALIZE = ("half", "dataset", "none")


def _move(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _move(v, device) for k, v in value.items()}
    return value


@dataclass
class FedDataset:
    """A federated-learning dataset: centralised train/test tensors (clients are index sets).

    Attributes
    ----------
    name, kind : dataset name and one of ``"image" | "text" | "tabular"``.
    train_x, train_y, test_x, test_y : tensors on one device. Images ``uint8`` (n, C, H, W);
        text ``int64`` (n, 80) symbol ids; tabular ``float32`` (n, d). Labels ``int64`` (n,).
    num_classes : number of label values.
    meta : extra information, e.g. ``classes`` (label names); Shakespeare ``roles``,
        ``train_role``/``test_role`` (role id per sample); Adult ``sex``/``race`` (train) and
        ``test_sex``/``test_race`` codes with their names in ``attributes``.
    mean, std : per-channel (images) or per-feature (tabular) train statistics, used when
        ``normalize == "dataset"``.
    normalize : ``"half"`` (mean = std = 0.5, as the FedQS code), ``"dataset"`` (``mean``/``std``)
        or ``"none"``. Default ``"half"`` for images, ``"none"`` for tabular (FedQS feeds raw
        integer codes); ignored for text. Settable.
    crop_padding : zero padding of the train-time random crop (4; also used at 64 px for
        Tiny-ImageNet, i.e. the same +-4 px jitter). ``0`` disables the crop.
    flip : whether train-time augmentation includes the random horizontal flip.
    """

    name: str
    kind: str
    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int
    meta: dict = field(default_factory=dict)
    mean: tuple = ()
    std: tuple = ()
    normalize: str = ""
    crop_padding: int = 4
    flip: bool = True

    def __post_init__(self):
        check_choice("dataset kind", self.kind, KINDS)
        if not self.normalize:
            self.normalize = "half" if self.kind == "image" else "none"
        check_choice("normalize mode", self.normalize, NORMALIZE)

    # ----------------------------------------------------------------- basic properties
    @property
    def num_train(self) -> int:
        return int(self.train_y.shape[0])

    @property
    def num_test(self) -> int:
        return int(self.test_y.shape[0])

    @property
    def input_shape(self) -> tuple:
        """Shape of one model input: (C, H, W), (80,) or (d,)."""
        return tuple(self.train_x.shape[1:])

    @property
    def device(self) -> torch.device:
        return self.train_x.device

    def split(self, train: bool) -> tuple[torch.Tensor, torch.Tensor]:
        return (self.train_x, self.train_y) if train else (self.test_x, self.test_y)

    def class_counts(self, train: bool = True) -> torch.Tensor:
        """Number of samples per label in the train (or test) split."""
        y = self.train_y if train else self.test_y
        return torch.bincount(y.cpu(), minlength=self.num_classes)

    def to(self, device) -> "FedDataset":
        """A copy with every tensor (including those in ``meta``) on ``device``."""
        device = torch.device(device)
        return dataclasses.replace(
            self,
            train_x=self.train_x.to(device),
            train_y=self.train_y.to(device),
            test_x=self.test_x.to(device),
            test_y=self.test_y.to(device),
            meta=_move(self.meta, device),
        )

    # ----------------------------------------------------------------- batches
    def batch(
        self,
        idx: torch.Tensor,
        train: bool = True,
        generator: torch.Generator | None = None,
        augment: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Model-ready ``(x, y)`` for sample indices ``idx`` of the train (or test) split.

        Images: float32, augmented when ``train and augment`` (randomness from ``generator``
        only; ``None`` falls back to torch's global RNG, which is not reproducible), then
        normalised. Text: int64 ids. Tabular: float32, standardised if ``normalize="dataset"``.
        """
        xs, ys = self.split(train)
        idx = torch.as_tensor(idx, dtype=torch.long).to(xs.device)
        x, y = xs[idx], ys[idx]
        if self.kind == "image":
            if train and augment and (self.crop_padding > 0 or self.flip):
                # crop + flip only move pixels (padding is 0 either way): done on the stored uint8
                # images, the same result as on floats with a quarter of the memory traffic
                x = augment_images(x, self.crop_padding, self.flip, generator)
            x = x.float().div_(255.0)
            x = self._normalise(x, channel_dim=1)
        elif self.kind == "tabular":
            x = self._normalise(x.float(), channel_dim=-1)
        return x, y

    def _normalise(self, x: torch.Tensor, channel_dim: int) -> torch.Tensor:
        if self.normalize == "none":
            return x
        if self.normalize == "half":
            return x.sub_(0.5).div_(0.5) if self.kind == "image" else (x - 0.5) / 0.5
        if not self.mean:
            raise FedlibError(
                f"dataset {self.name!r} has no mean/std for normalize='dataset'",
                "use normalize='half' or 'none'",
            )
        shape = [1] * x.dim()
        shape[channel_dim] = -1
        mean = torch.tensor(self.mean, dtype=x.dtype, device=x.device).view(shape)
        std = torch.tensor(self.std, dtype=x.dtype, device=x.device).view(shape)
        return x.sub_(mean).div_(std)

    def __repr__(self) -> str:  # tensors would flood a notebook cell
        return (
            f"FedDataset({self.name!r}, kind={self.kind}, train={self.num_train}, "
            f"test={self.num_test}, classes={self.num_classes}, input_shape={self.input_shape}, "
            f"device={self.device})"
        )


def _randint(high: int, n: int, generator: torch.Generator | None, device) -> torch.Tensor:
    dev = generator.device if generator is not None else torch.device("cpu")
    return torch.randint(0, high, (n,), generator=generator, device=dev).to(device)


def augment_images(
    x: torch.Tensor, padding: int = 4, flip: bool = True, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Zero-padded random crop (same size) + random horizontal flip of a batch (B, C, H, W).

    Equivalent per image to torchvision ``RandomCrop(H, padding)`` then ``RandomHorizontalFlip()``
    applied before normalisation (padding pixels are 0, i.e. black), but done for the whole batch
    at once: every crop is a window of one strided view of the padded batch, picked with one
    gather. Works on any dtype (fedlib augments the stored uint8 images). Random numbers, in
    order: crop row offsets, crop column offsets, flip bits, each one value per image drawn from
    ``generator``.
    """
    b, c, h, w = x.shape
    dev = x.device
    if padding > 0:
        oy = _randint(2 * padding + 1, b, generator, dev)
        ox = _randint(2 * padding + 1, b, generator, dev)
        x = torch.nn.functional.pad(x, (padding, padding, padding, padding))
    else:
        oy = ox = torch.zeros(b, dtype=torch.long, device=dev)
    windows = x.unfold(2, h, 1).unfold(3, w, 1)  # (B, C, 2p+1, 2p+1, H, W), a view
    out = windows[torch.arange(b, device=dev), :, oy, ox]  # (B, C, H, W)
    if flip:
        do_flip = _randint(2, b, generator, dev).bool()
        out = torch.where(do_flip[:, None, None, None], out.flip(3), out)
    return out
