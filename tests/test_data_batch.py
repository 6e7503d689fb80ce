"""FedDataset.batch: vectorised augmentation equals the per-image definition; determinism."""

from __future__ import annotations

import pytest
import torch

from fedlib.data import FedDataset, augment_images
from fedlib.core.errors import FedlibError
from fedlib.core.utils import generator


def _images(n=16, size=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, 256, (n, 3, size, size), generator=g, dtype=torch.uint8)
    y = torch.arange(n) % 10
    return FedDataset("img", "image", x, y, x[:4].clone(), y[:4].clone(), 10,
                      mean=(0.4, 0.5, 0.6), std=(0.2, 0.25, 0.3))


def _reference(x, padding, gen):
    """torchvision RandomCrop(padding) + RandomHorizontalFlip, one image at a time."""
    b, _, h, w = x.shape
    oy = torch.randint(0, 2 * padding + 1, (b,), generator=gen)
    ox = torch.randint(0, 2 * padding + 1, (b,), generator=gen)
    flip = torch.randint(0, 2, (b,), generator=gen)
    out = []
    for i in range(b):
        p = torch.nn.functional.pad(x[i], (padding,) * 4)
        img = p[:, oy[i]:oy[i] + h, ox[i]:ox[i] + w]
        out.append(img.flip(-1) if flip[i] else img)
    return torch.stack(out)


@pytest.mark.parametrize("size, padding", [(32, 4), (64, 4), (8, 2)])
def test_augmentation_equals_per_image_reference(size, padding):
    x = torch.rand(12, 3, size, size)
    got = augment_images(x, padding, True, torch.Generator().manual_seed(7))
    want = _reference(x, padding, torch.Generator().manual_seed(7))
    assert torch.equal(got, want)


def test_augmentation_only_shifts_and_flips():
    x = torch.rand(64, 3, 32, 32)
    out = augment_images(x, 4, True, torch.Generator().manual_seed(0))
    assert out.shape == x.shape
    # every output is a shifted (zero-filled) and possibly mirrored copy of its own input
    for i in range(64):
        found = False
        for flip in (False, True):
            src = x[i].flip(-1) if flip else x[i]
            pad = torch.nn.functional.pad(src, (4,) * 4)
            for dy in range(9):
                for dx in range(9):
                    if torch.equal(pad[:, dy:dy + 32, dx:dx + 32], out[i]):
                        found = True
        assert found


def test_batch_deterministic_given_generator_and_shapes():
    ds = _images()
    idx = torch.tensor([3, 1, 4, 1, 5])
    a, ya = ds.batch(idx, train=True, generator=generator(0, 1, 2))
    b, yb = ds.batch(idx, train=True, generator=generator(0, 1, 2))
    c, _ = ds.batch(idx, train=True, generator=generator(0, 1, 3))
    assert a.shape == (5, 3, 32, 32) and a.dtype == torch.float32
    assert torch.equal(a, b) and torch.equal(ya, yb) and not torch.equal(a, c)
    assert ya.tolist() == ds.train_y[idx].tolist()


def test_global_rng_does_not_matter():
    ds = _images()
    torch.manual_seed(1)
    a, _ = ds.batch(torch.arange(8), train=True, generator=generator(5))
    torch.manual_seed(2)
    b, _ = ds.batch(torch.arange(8), train=True, generator=generator(5))
    assert torch.equal(a, b)


def test_no_augmentation_on_test_or_when_disabled_and_normalisation():
    ds = _images()
    idx = torch.arange(4)
    plain = ds.train_x[idx].float() / 255
    x, _ = ds.batch(idx, train=True, generator=generator(0), augment=False)
    assert torch.allclose(x, (plain - 0.5) / 0.5)  # default "half", as FedQS
    xt, yt = ds.batch(idx, train=False, generator=generator(0))
    assert torch.allclose(xt, (ds.test_x[idx].float() / 255 - 0.5) / 0.5)
    assert torch.equal(yt, ds.test_y[idx])
    ds.normalize = "dataset"
    xd, _ = ds.batch(idx, train=False)
    mean = torch.tensor(ds.mean).view(1, 3, 1, 1)
    std = torch.tensor(ds.std).view(1, 3, 1, 1)
    assert torch.allclose(xd, (ds.test_x[idx].float() / 255 - mean) / std)
    ds.normalize = "none"
    xn, _ = ds.batch(idx, train=False)
    assert torch.allclose(xn, ds.test_x[idx].float() / 255)


def test_crop_padding_attribute_and_flip_off():
    ds = _images()
    ds.crop_padding, ds.flip = 0, False
    x, _ = ds.batch(torch.arange(4), train=True, generator=generator(0))
    assert torch.allclose(x, (ds.train_x[:4].float() / 255 - 0.5) / 0.5)


def test_bad_normalize_and_kind():
    with pytest.raises(FedlibError, match="unknown normalize mode"):
        FedDataset("x", "image", torch.zeros(1, 3, 2, 2, dtype=torch.uint8), torch.zeros(1).long(),
                   torch.zeros(1, 3, 2, 2, dtype=torch.uint8), torch.zeros(1).long(), 2,
                   normalize="minmax")
    with pytest.raises(FedlibError, match="unknown dataset kind"):
        FedDataset("x", "audio", torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.zeros(1), 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_gpu_batches_match_cpu():
    ds = _images()
    gpu = ds.to("cuda")
    idx = torch.arange(16)
    a, _ = ds.batch(idx, train=True, generator=generator(3))
    b, yb = gpu.batch(idx, train=True, generator=generator(3))  # CPU generator, GPU data
    assert b.device.type == "cuda" and torch.allclose(a, b.cpu()) and yb.device.type == "cuda"
