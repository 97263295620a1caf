"""Fusion, masking, encoder reuse, augmentations, pre-training and the linear probe."""

import numpy as np
import pytest
import torch

from iclr25.comm import (
    BrightnessContrast,
    CoMM,
    Compose,
    FeatureTokenizer,
    FusionTransformer,
    GaussianNoise,
    PatchTokenizer,
    RandomDrop,
    RandomShift,
    conv_encoder,
    features,
    linear_probe,
    mlp_encoder,
    objective_loss,
    pretrain,
)


def _vector_model(widths=(5, 3), dim=16, seed=0):
    enc = [mlp_encoder(w, 4, 16, seed=seed + i) for i, w in enumerate(widths)]
    tok = [FeatureTokenizer(4, dim, seed=seed + 10 + i) for i in range(len(widths))]
    return CoMM(enc, tok, dim, seed=seed)


def _xs(n=12, widths=(5, 3), seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, w, generator=g) for w in widths]


def test_fusion_with_mask_tf_equals_modality_one_alone():
    model = _vector_model().eval()
    xs = _xs()
    tokens = model.encode(xs)
    alone = model.fusion([tokens[0]])
    assert torch.allclose(model.fuse(tokens, [True, False]), alone, atol=1e-6)
    assert torch.allclose(model([xs[0], None]), alone, atol=1e-6)
    emb = model.embeddings(xs)
    assert len(emb) == 3 and torch.allclose(emb[0], alone, atol=1e-6)
    assert torch.allclose(emb[2], model(xs), atol=1e-6)


def test_absent_modality_is_dropped_not_zeroed():
    model = _vector_model().eval()
    tokens = model.encode(_xs())
    dropped = model.fusion([tokens[0], None])
    zeroed = model.fusion([tokens[0], torch.zeros_like(tokens[1])])
    assert not torch.allclose(dropped, zeroed, atol=1e-4)


def test_loss_runs_each_encoder_once_per_view():
    model = _vector_model()
    calls = [0, 0]
    for i, enc in enumerate(model.encoders):
        enc.register_forward_hook(lambda *_, i=i: calls.__setitem__(i, calls[i] + 1))
    xs = _xs()
    loss = model.loss(xs, [x + 0.1 for x in xs])
    assert calls == [2, 2] and loss.ndim == 0 and model.criterion.terms.shape == (3,)
    loss.backward()
    assert all(p.grad is not None for p in model.encoders[0].parameters())


def test_patch_tokenizer_and_conv_encoder_give_nine_tokens():
    enc, tok = conv_encoder(3, seed=0), PatchTokenizer(64, 32, seed=0)
    t = tok(enc(torch.rand(2, 3, 24, 24)))
    assert t.shape == (2, 9, 32)
    out = FusionTransformer(32, seed=0)([t, None, t[:, :4]])
    assert out.shape == (2, 32)


def test_seeded_construction_is_deterministic_and_leaves_global_rng():
    state = torch.random.get_rng_state()
    a, b = _vector_model(seed=3), _vector_model(seed=3)
    assert torch.equal(torch.random.get_rng_state(), state)
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)


def test_model_errors():
    model = _vector_model()
    xs = _xs()
    with pytest.raises(ValueError, match="every modality is absent"):
        model([None, None])
    with pytest.raises(ValueError, match="different batch sizes"):
        model([xs[0], xs[1][:5]])
    with pytest.raises(ValueError, match="xs must hold 2 modalities"):
        model(xs[:1])
    with pytest.raises(TypeError, match="xs\\[0\\] must be a floating"):
        model([torch.ones(12, 5, dtype=torch.long), xs[1]])
    with pytest.raises(ValueError, match="v1\\[1\\] is None"):
        model.loss([xs[0], None], xs)
    with pytest.raises(ValueError, match="same batch size"):
        model.loss(xs, [x[:6] for x in xs])
    with pytest.raises(ValueError, match="at least 2 modalities"):
        CoMM([mlp_encoder(3)], [FeatureTokenizer(8, 16)], 16)
    with pytest.raises(ValueError, match="weights must have one entry"):
        CoMM([mlp_encoder(3), mlp_encoder(3)], [FeatureTokenizer(8, 16)] * 2, 16,
             weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="n_heads must divide"):
        FusionTransformer(10, n_heads=4)
    with pytest.raises(ValueError, match="every modality is absent"):
        FusionTransformer(8)([None])


@pytest.mark.parametrize("aug", [GaussianNoise(0.1), RandomDrop(0.8), RandomShift(2),
                                 BrightnessContrast(0.4, 0.4),
                                 Compose(RandomShift(1), GaussianNoise(0.05))])
def test_augmentations_are_seeded_and_return_new_tensors(aug):
    x = torch.rand(6, 3, 8, 8)
    before = x.clone()
    y1, y2 = aug(x, seed=0), aug(x, seed=0)
    assert torch.equal(y1, y2) and y1.shape == x.shape and torch.equal(x, before)
    assert not torch.equal(aug(x, seed=1), y1)
    y64 = aug(x.double().numpy(), seed=0)
    assert y64.dtype == torch.float64


def test_augmentation_known_answers():
    x = torch.rand(4, 3, 6, 6, generator=torch.Generator().manual_seed(0))
    assert torch.equal(RandomShift(0)(x, seed=0), x)
    assert torch.allclose(BrightnessContrast(0.0, 0.0)(x, seed=0), x)
    assert torch.equal(RandomDrop(0.0)(x, seed=0), x)
    assert torch.equal(GaussianNoise(0.0)(x, seed=0), x)
    dot = torch.zeros(1, 1, 7, 7)
    dot[0, 0, 3, 3] = 1.0
    moved = RandomShift(2)(dot, seed=4)
    assert float(moved.sum()) == 1.0  # a centred dot never leaves the image
    dropped = RandomDrop(1.0)(torch.ones(200, 10), seed=0)
    assert 0.3 < float(dropped.mean()) < 0.7  # fraction ~ U[0, 1]: half dropped on average
    with pytest.raises(ValueError, match="std"):
        GaussianNoise(-1.0)
    with pytest.raises(ValueError, match="max_fraction"):
        RandomDrop(1.5)
    with pytest.raises(ValueError, match="x must be 4-D"):
        RandomShift(1)(torch.rand(3, 8, 8))
    with pytest.raises(TypeError, match="x must be a floating"):
        GaussianNoise()(torch.ones(3, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="x contains"):
        GaussianNoise()(torch.full((3, 2), float("nan")))


def _aug():
    return [Compose(GaussianNoise(0.1), RandomDrop(0.5)) for _ in range(2)]


def test_pretrain_is_seeded_and_every_objective_trains():
    xs = _xs(40)
    h = []
    for _ in range(2):
        m = _vector_model()
        h.append(pretrain(m, xs, augment=_aug(), epochs=2, batch_size=16, seed=1))
    assert h[0] == h[1] and len(h[0]) == 2
    for obj in ("cross", "cross_self", "simclr"):
        m = _vector_model()
        hist = pretrain(m, xs, augment=_aug(), objective=obj, epochs=1, batch_size=16)
        assert np.isfinite(hist).all()
        width = 32 if obj.startswith("cross") else 16
        assert features(m, xs, obj).shape == (40, width)
    v = [x + 0.1 for x in xs]
    m = _vector_model()
    assert torch.allclose(objective_loss(m, xs, v, "comm"), m.loss(xs, v))


def test_pretrain_errors():
    m, xs = _vector_model(), _xs(20)
    with pytest.raises(ValueError, match="objective must be one of"):
        pretrain(m, xs, augment=_aug(), objective="clip")
    with pytest.raises(ValueError, match="augment must have one callable"):
        pretrain(m, xs, augment=_aug()[:1])
    with pytest.raises(ValueError, match="different batch sizes"):
        pretrain(m, [xs[0], xs[1][:10]], augment=_aug())
    with pytest.raises(ValueError, match="batch_size"):
        pretrain(m, xs, augment=_aug(), batch_size=1)
    with pytest.raises(ValueError, match="xs\\[0\\] is None"):
        features(m, [None, xs[1]], "cross")


def test_linear_probe_known_answers():
    g = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 40)
    F = np.eye(3)[y] * 5 + 0.1 * g.normal(size=(120, 3))
    assert linear_probe(F, y, F, y) == 1.0
    noise = g.normal(size=(120, 3))
    assert linear_probe(noise[:60], y[:60], noise[60:], y[60:]) < 0.8
    # balanced accuracy: always predicting the majority class scores 0.5 on a binary task
    yb = (np.arange(200) % 10 == 0).astype(np.int64)
    const = np.zeros((200, 2))
    assert linear_probe(const, yb, const, yb) == 0.5
    with pytest.raises(ValueError, match="y_tr must have 120 labels"):
        linear_probe(F, y[:10], F, y)
    with pytest.raises(ValueError, match="same width"):
        linear_probe(F, y, F[:, :2], y)
    with pytest.raises(TypeError, match="y_te must hold integer"):
        linear_probe(F, y, F, y.astype(float))
    with pytest.raises(ValueError, match="at least 2 classes"):
        linear_probe(F, np.zeros(120, dtype=np.int64), F, y)
    with pytest.raises(ValueError, match="F_tr contains"):
        linear_probe(np.full((120, 3), np.nan), y, F, y)


def test_cls_only_last_block_equals_the_full_block():
    fusion = FusionTransformer(16, n_layers=2, seed=0).double()
    t = [torch.randn(3, 5, 16, dtype=torch.float64), torch.randn(3, 2, 16, dtype=torch.float64)]
    x = torch.cat([fusion.cls.expand(3, 1, -1), *t], 1)
    for blk in fusion.blocks:
        x = blk(x)
    assert torch.allclose(fusion(t), fusion.norm(x[:, 0]), atol=1e-10)
