"""lazytrain.vision against torchvision 0.14: ImageFolder's classes, samples and decoded images
(PIL's), the transforms on tensors (torchvision's antialiased tensor path), the random ones'
reproducibility from lt.manual_seed, loading through DataLoader threads, and the errors."""
import os

import numpy as np
import pytest
import torch
import torchvision
from PIL import Image
from torchvision import transforms as T

import lazytrain as lt
from lazytrain.vision import datasets, transforms


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Three classes (listed out of order), JPEGs of smooth noise in two sizes and both cases of
    extension, and a file that is not an image."""
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(3)
    for cls in ("zebra", "ant", "moth"):
        os.makedirs(root / cls)
        for name, (h, w) in (("b.JPG", (30, 41)), ("a.jpeg", (37, 26))):
            coarse = rng.integers(0, 256, (h // 4 + 2, w // 4 + 2, 3)).astype(np.uint8)
            img = Image.fromarray(coarse).resize((w, h), Image.BILINEAR)
            img.save(root / cls / name, quality=92)
        (root / cls / "notes.txt").write_text("not an image")
    return str(root)


def test_image_folder_is_torchvisions(folder):
    ours = datasets.ImageFolder(folder)
    theirs = torchvision.datasets.ImageFolder(folder, transform=T.ToTensor())
    assert ours.classes == theirs.classes == ["ant", "moth", "zebra"]
    assert ours.class_to_idx == theirs.class_to_idx
    assert ours.samples == theirs.samples and ours.targets == theirs.targets
    assert len(ours) == len(theirs) == 6
    for i in range(len(ours)):
        (x, y), (x_t, y_t) = ours[i], theirs[i]
        assert y == y_t and x.dtype == lt.float32
        # The same libjpeg-turbo decoder: within its IDCT's rounding of one level.
        np.testing.assert_allclose(x.numpy(), x_t.numpy(), atol=1.01 / 255, rtol=0)


def _reference_image(folder):
    return T.ToTensor()(Image.open(os.path.join(folder, "moth", "b.JPG")).convert("RGB"))


PIPELINES = [
    lambda m, **aa: m.Compose([m.Resize(20, **aa), m.CenterCrop(16)]),
    lambda m, **aa: m.Compose([m.Resize((24, 13), **aa), m.CenterCrop((9, 12))]),
    lambda m, **aa: m.Compose([m.CenterCrop((34, 44)), m.Resize(8, **aa)]),  # pads, then shrinks
    lambda m, **aa: m.Compose([m.Resize(50, **aa), m.Normalize([0.485, 0.456, 0.406],
                                                               [0.229, 0.224, 0.225])]),
]


@pytest.mark.parametrize("pipeline", PIPELINES, ids=[str(i) for i in range(len(PIPELINES))])
def test_transforms_are_torchvisions_on_tensors(folder, pipeline):
    x_t = _reference_image(folder)
    want = pipeline(T, antialias=True)(x_t)
    got = pipeline(transforms)(lt.tensor(x_t.numpy()))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5, rtol=0)


def test_random_transforms_follow_the_seed(folder):
    x = lt.vision.io.read_image(os.path.join(folder, "moth", "b.JPG"))

    def draws(seed):
        lt.manual_seed(seed)
        t = transforms.Compose([transforms.RandomResizedCrop(12, scale=(0.2, 0.9)),
                                transforms.RandomHorizontalFlip()])
        return [t(x).numpy() for _ in range(6)]

    first, again, other = draws(5), draws(5), draws(6)
    assert all(a.shape == (3, 12, 12) for a in first)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))
    assert len({a.tobytes() for a in first}) == 6  # each call draws anew
    flip = transforms.RandomHorizontalFlip(p=1.0)(x)
    np.testing.assert_array_equal(flip.numpy(), x.numpy()[:, :, ::-1])
    np.testing.assert_array_equal(transforms.RandomHorizontalFlip(p=0.0)(x).numpy(), x.numpy())
    # A box covering the whole image, resized: torchvision's resized crop of that box.
    whole = transforms.RandomResizedCrop((10, 14), scale=(1.0, 1.0), ratio=(41 / 30, 41 / 30))(x)
    want = T.functional.resized_crop(torch.tensor(x.numpy()), 0, 0, 30, 41, [10, 14],
                                     antialias=True)
    np.testing.assert_allclose(whole.numpy(), want.numpy(), atol=1e-5, rtol=0)


def test_loader_threads_give_the_single_threads_batches(folder):
    t = transforms.Compose([transforms.Resize(20), transforms.CenterCrop(16),
                            transforms.Normalize([0.5] * 3, [0.25] * 3)])
    data = datasets.ImageFolder(folder, transform=t, target_transform=lambda y: y * 10)
    runs = []
    for workers in (0, 2):
        loader = lt.utils.data.DataLoader(data, batch_size=4, shuffle=True, seed=1,
                                          num_workers=workers)
        runs.append([(x.numpy(), y.tolist()) for x, y in loader])
    assert [x.shape for x, _ in runs[0]] == [(4, 3, 16, 16), (2, 3, 16, 16)]
    assert sorted(y for _, ys in runs[0] for y in ys) == [0, 0, 10, 10, 20, 20]
    for (x0, y0), (x2, y2) in zip(*runs):
        np.testing.assert_array_equal(x0, x2)
        assert y0 == y2


def test_errors_name_the_input(folder, tmp_path):
    with pytest.raises(FileNotFoundError, match="No such file or directory"):
        datasets.ImageFolder(tmp_path / "missing")
    with pytest.raises(ValueError, match="has no class folders"):
        datasets.ImageFolder(tmp_path)
    bad = tmp_path / "bad"
    os.makedirs(bad / "cat")
    (bad / "cat" / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    with pytest.raises(ValueError, match="broken.jpg"):
        datasets.ImageFolder(bad)[0]
    with pytest.raises(IndexError, match="index 6 is out of range"):
        datasets.ImageFolder(folder)[6]
    with pytest.raises(TypeError, match="img should be a lazytrain Tensor"):
        transforms.Resize(8)(np.zeros((3, 4, 4), np.float32))
    with pytest.raises(ValueError, match=r"img should be \[C, H, W\], got shape \[4, 4\]"):
        transforms.CenterCrop(2)(lt.zeros(4, 4))
    with pytest.raises(NotImplementedError, match="antialiased bilinear"):
        transforms.Resize(8, interpolation=transforms.InterpolationMode.NEAREST)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        transforms.Normalize([0.5], [0.0])


def test_random_crop_with_padding_is_a_crop_of_torchvisions_padded_image(folder):
    x = lt.vision.io.read_image(os.path.join(folder, "ant", "a.jpeg"))  # [3, 37, 26]
    x_t = torch.tensor(x.numpy())
    padded = T.Pad((4, 2, 1, 3), fill=0.5)(x_t)
    np.testing.assert_array_equal(transforms.Pad((4, 2, 1, 3), fill=0.5)(x).numpy(),
                                  padded.numpy())
    lt.manual_seed(2)
    crop = transforms.RandomCrop(32, padding=4)
    seen = set()
    for _ in range(8):
        got = crop(x).numpy()
        want = T.Pad(4)(x_t).numpy()
        hits = [(i, j) for i in range(want.shape[1] - 31) for j in range(want.shape[2] - 31)
                if np.array_equal(want[:, i:i + 32, j:j + 32], got)]
        assert hits, "not a 32x32 crop of the padded image"
        seen.add(hits[0])
    assert len(seen) > 1  # the position is drawn
    # pad_if_needed pads each short side by the difference on both ends, as torchvision's.
    tall = transforms.RandomCrop((37, 34), pad_if_needed=True, fill=1.0)(x)
    want = T.RandomCrop((37, 34), pad_if_needed=True, fill=1.0)(x_t)
    assert tuple(tall.shape) == tuple(want.shape) == (3, 37, 34)
    with pytest.raises(ValueError, match="Required crop size"):
        transforms.RandomCrop(40)(x)


@pytest.mark.parametrize("padding_mode", ["edge", "reflect", "symmetric"])
def test_padding_modes_are_torchvisions(folder, padding_mode):
    x = lt.vision.io.read_image(os.path.join(folder, "ant", "a.jpeg"))  # [3, 37, 26]
    x_t = torch.tensor(x.numpy())
    for padding in (3, (1, 4), (4, 2, 1, 3)):
        ours = transforms.Pad(padding, padding_mode=padding_mode)
        theirs = T.Pad(padding, padding_mode=padding_mode)
        assert repr(ours) == repr(theirs)
        np.testing.assert_array_equal(ours(x).numpy(), theirs(x_t).numpy())
    crop = transforms.RandomCrop(40, pad_if_needed=True, padding_mode=padding_mode)(x)
    want = T.RandomCrop(40, pad_if_needed=True, padding_mode=padding_mode)(x_t)
    assert tuple(crop.shape) == tuple(want.shape) == (3, 40, 40)
    with pytest.raises(ValueError, match="padding_mode should be constant, edge, reflect or "
                                         "symmetric, got 'wrap'"):
        transforms.Pad(2, padding_mode="wrap")


def test_gaussian_blur_is_torchvisions(folder):
    x = lt.vision.io.read_image(os.path.join(folder, "ant", "a.jpeg"))  # [3, 37, 26]
    x_t = torch.tensor(x.numpy())
    for kernel_size, sigma in ((3, 0.7), ((5, 3), 1.3), (9, 2.5)):
        ours, theirs = transforms.GaussianBlur(kernel_size, sigma), T.GaussianBlur(kernel_size,
                                                                                 sigma)
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(x).numpy(), theirs(x_t).numpy(), rtol=0, atol=1e-6)
    lt.manual_seed(3)
    drawn = transforms.GaussianBlur(5, sigma=(0.1, 2.0))
    first, second = drawn(x).numpy(), drawn(x).numpy()
    assert not np.array_equal(first, second)  # a sigma per call
    lt.manual_seed(3)
    np.testing.assert_array_equal(drawn(x).numpy(), first)
    with pytest.raises(ValueError, match="Kernel size value should be an odd and positive"):
        transforms.GaussianBlur(4)
    with pytest.raises(ValueError, match="sigma values should be positive and of the form"):
        transforms.GaussianBlur(3, sigma=(2.0, 1.0))


@pytest.mark.parametrize("kind,factor", [("brightness", 1.4), ("brightness", 0.3),
                                         ("contrast", 1.7), ("contrast", 0.2),
                                         ("saturation", 1.9), ("saturation", 0.0),
                                         ("hue", 0.23), ("hue", -0.41)])
def test_color_jitter_adjustments_are_torchvisions(folder, kind, factor):
    """A range of one value gives that factor: each adjustment as torchvision's on tensors."""
    import torchvision.transforms.functional as TF
    x_t = _reference_image(folder)
    got = transforms.ColorJitter(**{kind: (factor, factor)})(lt.tensor(x_t.numpy()))
    want = getattr(TF, f"adjust_{kind}")(x_t, factor)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=2e-6, rtol=0)


def test_color_jitter_draws_its_order_and_grayscale_is_torchvisions(folder):
    import itertools
    import torchvision.transforms.functional as TF
    x_t = _reference_image(folder)
    jitter = transforms.ColorJitter(brightness=(1.2, 1.2), contrast=(0.6, 0.6),
                                    saturation=(1.5, 1.5), hue=(0.1, 0.1))
    assert repr(jitter) == repr(T.ColorJitter((1.2, 1.2), (0.6, 0.6), (1.5, 1.5), (0.1, 0.1)))
    assert repr(transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)) == repr(T.ColorJitter(0.4, 0.4,
                                                                                  0.4, 0.1))
    fns = [lambda x: TF.adjust_brightness(x, 1.2), lambda x: TF.adjust_contrast(x, 0.6),
           lambda x: TF.adjust_saturation(x, 1.5), lambda x: TF.adjust_hue(x, 0.1)]
    orders = set()
    lt.manual_seed(5)
    for _ in range(12):
        got = jitter(lt.tensor(x_t.numpy())).numpy()
        matches = []
        for order in itertools.permutations(range(4)):
            want = x_t
            for i in order:
                want = fns[i](want)
            if np.abs(got - want.numpy()).max() < 2e-6:
                matches.append(order)
        assert matches  # some order of torchvision's four adjustments
        orders.add(matches[0])
    assert len(orders) > 1  # the order is drawn
    for n in (1, 3):
        np.testing.assert_allclose(
            transforms.Grayscale(n)(lt.tensor(x_t.numpy())).numpy(),
            T.Grayscale(n)(x_t).numpy(), atol=1e-6, rtol=0)
    gray = [transforms.RandomGrayscale(0.5)(lt.tensor(x_t.numpy())) for _ in range(20)]
    kinds = {bool(np.allclose(g.numpy()[0], g.numpy()[1])) for g in gray}
    assert kinds == {True, False} and all(tuple(g.shape) == (3, 30, 41) for g in gray)
    with pytest.raises(ValueError, match=r"hue values should be between \(-0.5, 0.5\)"):
        transforms.ColorJitter(hue=(0.2, 0.7))
