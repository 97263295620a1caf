import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import grad, vmap

from iclr25._format import num
from iclr25.crh import POWER_LAWS, RELATIONS, AlignmentProbe, alignment_score


def make_model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3))


def make_data(n=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 6, generator=g), torch.randint(0, 3, (n,), generator=g)


def batches(X, y, size):
    return [(X[i:i + size], y[i:i + size]) for i in range(0, len(X), size)]


def cov(v, normalize=True, center=True):
    v = v.double()
    if normalize:
        norm = v.norm(dim=1, keepdim=True)
        v = torch.where(norm > 0, v / norm, v)  # zero vectors (dead ReLU rows) stay zero
    m = v.T @ v / len(v)
    if center:
        mu = v.mean(0)
        m = m - torch.outer(mu, mu)
    return m


def reference(model, X, y, layer_index):
    """Per-sample g_b by torch.func (a vmap of grad), independent of the probe's hooks."""
    layers = list(model)
    head, lin, tail = layers[:layer_index], layers[layer_index], layers[layer_index + 1:]
    h_a = nn.Sequential(*head)(X) if head else X

    def loss_of_hb(hb, target):
        return F.cross_entropy(nn.Sequential(*tail)(hb)[None], target[None])

    h_b = lin(h_a)
    g_b = -vmap(grad(loss_of_hb))(h_b, y)
    W = lin.weight
    return dict(H_a=cov(h_a), H_b=cov(h_b), G_b=cov(g_b), G_a=cov(g_b @ W),
                Z_a=(W.T @ W).double(), Z_b=(W @ W.T).double())


@pytest.mark.parametrize("layer", [0, 2])
def test_matrices_match_per_sample_reference(layer):
    model, (X, y) = make_model(), make_data()
    res = AlignmentProbe(model, layers=str(layer)).run(batches(X, y, 16))[str(layer)]
    with torch.no_grad():
        ref = reference(model, X, y, layer)
    assert res.n_samples == 40
    for k, m in ref.items():
        assert torch.allclose(res.matrices[k], m, atol=1e-6), k
    for rel, (a, b) in RELATIONS.items():
        assert res.scores[rel] == pytest.approx(float(alignment_score(ref[a], ref[b])), abs=1e-5)
    assert set(res.exponents) == set(POWER_LAWS)


def test_unnormalised_uncentred_moments():
    model, (X, y) = make_model(), make_data()
    res = AlignmentProbe(model, layers="0", normalize=False, center=False).run(batches(X, y, 8))
    assert torch.allclose(res["0"].matrices["H_a"], X.double().T @ X.double() / 40, atol=1e-6)


@pytest.mark.parametrize("normalize", [True, False])
def test_result_invariant_to_loader_batch_size(normalize):
    # float64: a float32 model's outputs move by ~1e-7 with the batch size (matmul blocking)
    model, (X, y) = make_model(1).double(), make_data(60, 1)
    X = X.double()
    probe = AlignmentProbe(model, normalize=normalize)
    a, b, c = probe.run(batches(X, y, 7)), probe.run(batches(X, y, 60)), probe.run(batches(X, y, 1))
    for name in a:
        for k in a[name].matrices:
            assert torch.allclose(a[name].matrices[k], b[name].matrices[k], atol=1e-9)
            assert torch.allclose(a[name].matrices[k], c[name].matrices[k], atol=1e-9)
        for rel in RELATIONS:
            assert a[name].scores[rel] == pytest.approx(b[name].scores[rel], abs=1e-8)


def test_default_layers_are_all_linear_and_model_untouched():
    model, (X, y) = make_model(), make_data()
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    res = AlignmentProbe(model).run(batches(X, y, 10))
    assert list(res) == ["0", "2", "4"]
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    assert model.training and all(m.training for m in model.modules())
    assert res["0"].matrices["H_a"].shape == (6, 6) and res["0"].matrices["H_b"].shape == (5, 5)


def test_frozen_parameters_and_token_inputs():
    model, (X, y) = make_model(), make_data()
    for p in model.parameters():
        p.requires_grad_(False)
    frozen = AlignmentProbe(model, layers=["2"]).run(batches(X, y, 10))["2"]
    for p in model.parameters():
        p.requires_grad_(True)
    live = AlignmentProbe(model, layers=["2"]).run(batches(X, y, 10))["2"]
    assert torch.allclose(frozen.matrices["G_b"], live.matrices["G_b"])

    class Tokens(nn.Module):  # a Linear applied to (batch, tokens, dim) inputs
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(6, 5)
            self.head = nn.Linear(5, 3)

        def forward(self, x):
            return self.head(torch.relu(self.proj(x)).mean(1))

    torch.manual_seed(0)
    m = Tokens()
    Xt = torch.randn(8, 4, 6)
    res = AlignmentProbe(m, layers="proj").run([(Xt, y[:8])])["proj"]
    assert res.n_samples == 32 and res.matrices["H_a"].shape == (6, 6)


def test_null_scores_shape_and_seed():
    model, (X, y) = make_model(), make_data()
    res = AlignmentProbe(model, layers="2").run(batches(X, y, 10))["2"]
    n1, n2 = res.null_scores(seed=3, n_draws=5), res.null_scores(seed=3, n_draws=5)
    assert set(n1) == set(RELATIONS) and all(v.shape == (5,) for v in n1.values())
    assert all(torch.equal(n1[k], n2[k]) for k in n1)


def test_errors():
    model, (X, y) = make_model(), make_data()
    with pytest.raises(TypeError, match="not an nn.Linear"):
        AlignmentProbe(model, layers="1")  # the ReLU
    with pytest.raises(ValueError, match="no module named"):
        AlignmentProbe(model, layers=["fc9"])
    with pytest.raises(ValueError, match="empty"):
        AlignmentProbe(model, layers=[])
    with pytest.raises(ValueError, match="no nn.Linear"):
        AlignmentProbe(nn.Sequential(nn.ReLU()))
    with pytest.raises(TypeError, match="nn.Module"):
        AlignmentProbe(lambda x: x)
    with pytest.raises(ValueError, match="reduction='mean'"):
        AlignmentProbe(model, loss_fn=nn.CrossEntropyLoss())
    probe = AlignmentProbe(model, loss_fn=nn.CrossEntropyLoss(reduction="sum"))
    with pytest.raises(ValueError, match="loader is empty"):
        probe.run([])
    with pytest.raises(ValueError, match="loader is empty"):
        probe.run(iter([]))
    with pytest.raises(ValueError, match="loader is empty"):
        probe.run(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X[:0], y[:0])))
    with pytest.raises(TypeError, match=r"\(inputs, targets\)"):
        probe.run([X])
    assert not probe.model[0]._forward_hooks  # hooks removed after an error


def test_input_changed_in_place_after_the_layer_is_still_measured_as_seen():
    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 6)
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            x = x.clone()
            x += self.fc(x)  # overwrites fc's input after fc has read it
            return self.head(x)

    torch.manual_seed(0)
    model, (X, y) = Residual(), make_data()
    for p in model.parameters():
        p.requires_grad_(False)  # nothing saved for backward, so autograd cannot complain
    res = AlignmentProbe(model, layers="fc", normalize=False, center=False).run([(X, y)])["fc"]
    assert torch.allclose(res.matrices["H_a"], X.double().T @ X.double() / len(X), atol=1e-6)


def test_inplace_activation_after_the_layer():
    # the gradient must be taken before ReLU(inplace=True) rewrites the layer's output
    model, (X, y) = make_model(), make_data()
    inplace = nn.Sequential(model[0], nn.ReLU(inplace=True), model[2], nn.Tanh(), model[4])
    a = AlignmentProbe(model, layers="0").run(batches(X, y, 10))["0"]
    b = AlignmentProbe(inplace, layers="0").run(batches(X, y, 10))["0"]
    for k in a.matrices:
        assert torch.allclose(a.matrices[k], b.matrices[k], atol=1e-12), k


def test_a_result_prints_in_a_few_lines():
    # issue 68: printing the results printed six whole d x d matrices per layer
    model, (X, y) = make_model(), make_data()
    res = AlignmentProbe(model, layers="0").run(batches(X, y, 16))
    text = repr(res)
    assert "H_a: (6, 6)" in text and "H_b: (5, 5)" in text and "tensor(" not in text
    assert len(text.splitlines()) == 1
    for rel, score in res["0"].scores.items():
        assert f"{rel}: {num(score)}" in text


def test_null_scores_print_as_a_summary_in_the_number_format():
    # issue 68: printing null_scores printed six raw 100-draw tensors
    model, (X, y) = make_model(), make_data()
    nulls = AlignmentProbe(model, layers="2").run(batches(X, y, 10))["2"].null_scores(
        seed=1, n_draws=20)
    text = repr(nulls)
    assert "tensor(" not in text and len(text.splitlines()) == 1
    assert text.startswith("NullScores(n_draws=20; ")
    for rel, v in nulls.items():
        mean, q95 = float(v.abs().mean()), float(v.abs().quantile(0.95))
        assert nulls.summary()[rel] == {"mean_abs": mean, "q95_abs": q95}
        assert f"{rel}: mean |s| {num(mean)}, q95 {num(q95)}" in text
