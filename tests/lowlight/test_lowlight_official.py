"""The official checkpoint reader: a state dict in the layout of the official ``net/lformer.py``
(key names and shapes written out here by hand from that code, random values) loads into our
module and computes what the official forward computes; wrong files are refused by key."""

# ruff: noqa: E741  (I is the paper's name for the enhanced image)
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("skimage")

from iclr25.lowlight import ZeroReferenceEnhancer, frequency_bands  # noqa: E402
from iclr25.lowlight.official import load_official  # noqa: E402

W, LW, LC, NB = 16, 8, 8, 1     # N/R width (a multiple of 16: the prior's groups), L, LCnet


def _block(prefix: str, dim: int, cross: bool = False) -> dict[str, tuple[int, ...]]:
    """One official TransformerBlock / crossTransformerBlock (1 head, bias=False, 2.66)."""
    h = int(dim * 2.66)
    keys = {f"{prefix}.skip_scale": (1, dim, 1, 1), f"{prefix}.skip_scale2": (1, dim, 1, 1),
            f"{prefix}.norm1.body.weight": (dim,), f"{prefix}.norm1.body.bias": (dim,),
            f"{prefix}.attn.temperature": (1, 1, 1)}
    if cross:
        keys |= {f"{prefix}.attn.kv.weight": (2 * dim, dim, 1, 1),
                 f"{prefix}.attn.kv_dwconv.weight": (2 * dim, 1, 3, 3),
                 f"{prefix}.attn.q.weight": (dim, dim, 1, 1),
                 f"{prefix}.attn.q_dwconv.weight": (dim, 1, 3, 3)}
    else:
        keys |= {f"{prefix}.attn.qkv.weight": (3 * dim, dim, 1, 1),
                 f"{prefix}.attn.qkv_dwconv.weight": (3 * dim, 1, 3, 3)}
    keys |= {f"{prefix}.attn.project_out.weight": (dim, dim, 1, 1),
             f"{prefix}.norm2.body.weight": (dim,), f"{prefix}.norm2.body.bias": (dim,),
             f"{prefix}.ffn.project_in.weight": (2 * h, dim, 1, 1),
             f"{prefix}.ffn.dwconv.weight": (2 * h, 1, 3, 3),
             f"{prefix}.ffn.project_out.weight": (dim, h, 1, 1)}
    return keys


def _official_keys() -> dict[str, tuple[int, ...]]:
    keys: dict[str, tuple[int, ...]] = {}
    for name, dim, cout, cross in (("L_net", LW, 1, False), ("R_net", W, 3, True),
                                   ("N_net", W, 3, False)):
        keys[f"{name}.patch_embed.proj.weight"] = (dim, 3, 3, 3)
        for i in range(NB):
            keys |= _block(f"{name}.encoder.{i}", dim, cross)
        keys[f"{name}.output.weight"] = (cout, dim, 3, 3)
    keys |= {"illp.conv1.weight": (W, 16, 1, 1), "illp.conv1.bias": (W,),
             "illp.depth_conv.weight": (W, W // 16, 5, 5), "illp.depth_conv.bias": (W,),
             "illp.conv2.weight": (3, W, 1, 1), "illp.conv2.bias": (3,),
             "L_enhance_net.patch_embed.proj.weight": (LC, 1, 3, 3)}
    for i in range(2):   # LCnet's transformer layers: in the file, never run
        keys |= _block(f"L_enhance_net.encoder.{i}", LC)
    keys |= {"L_enhance_net.head.1.weight": (LC, 1, 3, 3), "L_enhance_net.head.1.bias": (LC,),
             "L_enhance_net.head.4.weight": (LC, LC, 3, 3), "L_enhance_net.head.4.bias": (LC,),
             "L_enhance_net.head.7.weight": (LC, LC, 3, 3), "L_enhance_net.head.7.bias": (LC,),
             "L_enhance_net.tail.0.weight": (LC // 2, LC, 1, 1),
             "L_enhance_net.tail.0.bias": (LC // 2,),
             "L_enhance_net.tail.2.weight": (1, LC // 2, 1, 1),
             "L_enhance_net.tail.2.bias": (1,)}
    return keys


def _state(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    sd = {}
    for k, shape in _official_keys().items():
        t = torch.randn(shape, generator=g) * 0.2
        if "norm" in k and k.endswith("weight") or "skip_scale" in k:
            t = 1 + t
        sd[k] = t
    sd["L_enhance_net.tail.2.bias"] = torch.tensor([0.7])   # α > 0: ReLU passes it
    return sd


# --- the official forward, written from net/lformer.py with F.* on the state dict ---------

def _ln(x, sd, p):
    mu, var = x.mean(1, keepdim=True), x.var(1, keepdim=True, unbiased=False)
    return (x - mu) / torch.sqrt(var + 1e-5) * sd[p + ".weight"][:, None, None] + \
        sd[p + ".bias"][:, None, None]


def _attend(q, k, v, t):
    B, C, H, W_ = v.shape
    q, k, v = (F.normalize(a.flatten(2), dim=-1) if i < 2 else a.flatten(2)
               for i, a in enumerate((q, k, v)))
    return ((q @ k.transpose(-2, -1)) * t).softmax(-1).matmul(v).reshape(B, C, H, W_)


def _tb(x, sd, p, y=None):
    dw = lambda z, w: F.conv2d(z, w, padding=1, groups=w.shape[0])  # noqa: E731
    h = _ln(x, sd, p + ".norm1.body")
    t = sd[p + ".attn.temperature"]
    if y is None:
        q, k, v = dw(F.conv2d(h, sd[p + ".attn.qkv.weight"]),
                     sd[p + ".attn.qkv_dwconv.weight"]).chunk(3, 1)
    else:
        k, v = dw(F.conv2d(h, sd[p + ".attn.kv.weight"]),
                  sd[p + ".attn.kv_dwconv.weight"]).chunk(2, 1)
        q = F.conv2d(y, sd[p + ".attn.q.weight"])
    x = x * sd[p + ".skip_scale"] + F.conv2d(_attend(q, k, v, t),
                                             sd[p + ".attn.project_out.weight"])
    a, b = dw(F.conv2d(_ln(x, sd, p + ".norm2.body"), sd[p + ".ffn.project_in.weight"]),
              sd[p + ".ffn.dwconv.weight"]).chunk(2, 1)
    return x * sd[p + ".skip_scale2"] + F.conv2d(F.gelu(a) * b,
                                                 sd[p + ".ffn.project_out.weight"])


def _sub(x, sd, name, y=None):
    h = F.conv2d(x, sd[f"{name}.patch_embed.proj.weight"], padding=1)
    for i in range(NB):
        h = _tb(h, sd, f"{name}.encoder.{i}", y)
    return torch.sigmoid(F.conv2d(h, sd[f"{name}.output.weight"], padding=1))


def _official_forward(x, sd):
    X = _sub(x, sd, "N_net") + x
    inp = torch.cat([X, X.mean(1, keepdim=True), frequency_bands(X, seed=0)], 1)
    y = F.conv2d(F.conv2d(inp, sd["illp.conv1.weight"], sd["illp.conv1.bias"]),
                 sd["illp.depth_conv.weight"], sd["illp.depth_conv.bias"], padding=2,
                 groups=16)
    L = _sub(X, sd, "L_net") + X.mean(1, keepdim=True)
    R = _sub(X, sd, "R_net", y) + X
    a = L
    for i in (1, 4, 7):
        a = F.relu(F.conv2d(F.pad(a, (1, 1, 1, 1), mode="reflect"),
                            sd[f"L_enhance_net.head.{i}.weight"],
                            sd[f"L_enhance_net.head.{i}.bias"]))
    a = a.mean((2, 3), keepdim=True)
    a = F.relu(F.conv2d(a, sd["L_enhance_net.tail.0.weight"], sd["L_enhance_net.tail.0.bias"]))
    alpha = F.relu(F.conv2d(a, sd["L_enhance_net.tail.2.weight"],
                            sd["L_enhance_net.tail.2.bias"]))
    return L ** alpha * R, L, R, X


def _x(seed: int = 1) -> torch.Tensor:
    return torch.rand(1, 3, 24, 32, generator=torch.Generator().manual_seed(seed)) * 0.3


def _save(sd, path):
    torch.save(sd, path)
    return path


def test_official_layout_loads_and_computes_the_official_forward(tmp_path):
    sd = _state()
    est = load_official(_save(sd, tmp_path / "LOLv1_test.pth"))
    net = est.model_
    assert (net.width, net.l_width, net.lc_width, net.n_blocks) == (W, LW, LC, NB)
    x = _x()
    with torch.no_grad():
        out = net(x)
        I, L, R, X = _official_forward(x, sd)
    for ours, ref in ((out.denoised, X), (out.illumination, L), (out.reflectance, R),
                      (out.enhanced, I)):
        torch.testing.assert_close(ours, ref, atol=1e-5, rtol=1e-5)
    assert float(out.alpha) > 0
    # the estimator's API: transform (tiled too) and a save/load round trip
    y = est.transform(x[0], check=False)
    torch.testing.assert_close(y, I[0].clamp(0, 1), atol=1e-5, rtol=1e-5)
    est.save(tmp_path / "ours.safetensors")
    back = ZeroReferenceEnhancer.load(tmp_path / "ours.safetensors")
    assert back.model_.curve.activation == "relu"
    torch.testing.assert_close(back.transform(x[0], tile=16), est.transform(x[0], tile=16))


def test_relu_alpha_is_the_official_one():
    """A negative pre-activation gives α = 0 (official ReLU), not softplus's positive α."""
    from iclr25.lowlight.networks import CurveNet

    relu = CurveNet(LC, LC // 2, "relu")
    soft = CurveNet(LC, LC // 2)
    L = torch.rand(1, 1, 16, 16)
    for c in (relu, soft):
        c.head[2].bias.data.fill_(-50.0)
    with torch.no_grad():
        assert float(relu(L)) == 0.0 and float(soft(L)) > 0.0


@pytest.mark.parametrize("wrapper", ["params_ema", "state_dict", "module"])
def test_wrapped_checkpoints_load(tmp_path, wrapper):
    sd, other = _state(0), _state(5)
    if wrapper == "params_ema":   # basicsr: the EMA is the one to use
        obj = {"params": other, "params_ema": sd}
    elif wrapper == "state_dict":
        obj = {"state_dict": sd, "epoch": 3}
    else:
        obj = {f"module.{k}": v for k, v in sd.items()}
    a = load_official(_save(obj, tmp_path / "w.pth")).model_
    b = load_official(_save(sd, tmp_path / "plain.pth")).model_
    torch.testing.assert_close(a(_x()).enhanced, b(_x()).enhanced, atol=0, rtol=0)


def test_safetensors_loads(tmp_path):
    from safetensors.torch import save_file

    sd = _state()
    save_file(sd, str(tmp_path / "w.safetensors"))
    a = load_official(tmp_path / "w.safetensors").model_
    b = load_official(_save(sd, tmp_path / "w.pth")).model_
    torch.testing.assert_close(a(_x()).enhanced, b(_x()).enhanced, atol=0, rtol=0)


@pytest.mark.parametrize("change, message", [
    (lambda sd: sd.pop("R_net.encoder.0.attn.kv.weight"),
     "missing key 'R_net.encoder.0.attn.kv.weight'"),
    (lambda sd: sd.update({"N_net.output.weight": torch.zeros(3, W, 5, 5)}),
     "key 'N_net.output.weight' has shape (3, 16, 5, 5), expected (3, 16, 3, 3)"),
    (lambda sd: sd.update({"D_net.output.weight": torch.zeros(3)}),
     "unexpected key 'D_net.output.weight'"),
    (lambda sd: sd.pop("N_net.patch_embed.proj.weight"),
     "missing key 'N_net.patch_embed.proj.weight'"),
])
def test_a_wrong_checkpoint_is_refused_naming_the_key(tmp_path, change, message):
    sd = _state()
    change(sd)
    with pytest.raises(ValueError) as info:
        load_official(_save(sd, tmp_path / "bad.pth"))
    assert message in str(info.value)


def test_unreadable_or_foreign_files_are_refused(tmp_path):
    (tmp_path / "x.pth").write_text("not a checkpoint")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_official(tmp_path / "x.pth")
    with pytest.raises(ValueError, match="must end in"):
        load_official(tmp_path / "x.txt")
    with pytest.raises(ValueError, match="does not exist"):
        load_official(tmp_path / "none.pth")
    # a checkpoint holding a pickled object (code) is refused by weights_only loading
    torch.save({"params": _state(), "opt": object()}, tmp_path / "obj.pth")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_official(tmp_path / "obj.pth")


def test_cli_convert_then_enhance(tmp_path):
    import numpy as np
    from PIL import Image
    from typer.testing import CliRunner

    from iclr25.lowlight.cli import app

    _save(_state(), tmp_path / "LOLv1_test.pth")
    runner = CliRunner()
    r = runner.invoke(app, ["convert", str(tmp_path / "LOLv1_test.pth"),
                            "--out", str(tmp_path / "m.safetensors")])
    assert r.exit_code == 0, r.output
    img = (np.random.default_rng(0).random((24, 32, 3)) * 60).astype(np.uint8)
    Image.fromarray(img).save(tmp_path / "dark.png")
    r = runner.invoke(app, ["enhance", str(tmp_path / "m.safetensors"),
                            str(tmp_path / "dark.png"), str(tmp_path / "out.png")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out.png").is_file()
    sd = _state()
    sd.pop("illp.conv1.bias")
    _save(sd, tmp_path / "bad.pth")
    r = runner.invoke(app, ["convert", str(tmp_path / "bad.pth"),
                            "--out", str(tmp_path / "n.safetensors")])
    assert r.exit_code == 2
    assert "missing key 'illp.conv1.bias'" in r.output
    assert len(r.output.strip().splitlines()) == 1
