"""DCPT's released checkpoints: state dicts in the official basicsr layouts (key names and
shapes written out here by hand from ``basicsr/archs/*_arch.py``, random values) load into
our modules and compute the official forward; wrong files are refused naming the key."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("skimage")

from iclr25.dcpt import load, restore, save  # noqa: E402
from iclr25.dcpt.official import load_official  # noqa: E402

# a tiny NAFNetBaseline: width 8, encoder blocks [1, 2], 1 middle block, decoder [1, 1]
WIDTH, ENC, MID, DEC = 8, (1, 2), 1, (1, 1)


def _nafblock(prefix: str, c: int) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}.beta": (1, c, 1, 1), f"{prefix}.gamma": (1, c, 1, 1),
            f"{prefix}.conv1.weight": (2 * c, c, 1, 1), f"{prefix}.conv1.bias": (2 * c,),
            f"{prefix}.conv2.weight": (2 * c, 1, 3, 3), f"{prefix}.conv2.bias": (2 * c,),
            f"{prefix}.conv3.weight": (c, c, 1, 1), f"{prefix}.conv3.bias": (c,),
            f"{prefix}.sca.1.weight": (c, c, 1, 1), f"{prefix}.sca.1.bias": (c,),
            f"{prefix}.conv4.weight": (2 * c, c, 1, 1), f"{prefix}.conv4.bias": (2 * c,),
            f"{prefix}.conv5.weight": (c, c, 1, 1), f"{prefix}.conv5.bias": (c,),
            f"{prefix}.norm1.weight": (c,), f"{prefix}.norm1.bias": (c,),
            f"{prefix}.norm2.weight": (c,), f"{prefix}.norm2.bias": (c,)}


def _nafnet_keys() -> dict[str, tuple[int, ...]]:
    keys = {"intro.weight": (WIDTH, 3, 3, 3), "intro.bias": (WIDTH,),
            "ending.weight": (3, WIDTH, 3, 3), "ending.bias": (3,)}
    c = WIDTH
    for i, n in enumerate(ENC):
        for j in range(n):
            keys |= _nafblock(f"encoders.{i}.{j}", c)
        keys |= {f"downs.{i}.weight": (2 * c, c, 2, 2), f"downs.{i}.bias": (2 * c,)}
        c *= 2
    for j in range(MID):
        keys |= _nafblock(f"middle_blks.{j}", c)
    for i, n in enumerate(DEC):
        keys[f"ups.{i}.0.weight"] = (2 * c, c, 1, 1)
        c //= 2
        for j in range(n):
            keys |= _nafblock(f"decoder{i}.{j}", c)
    return keys


def _state(keys: dict[str, tuple[int, ...]], seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {k: torch.randn(s, generator=g) * 0.2 + (1.0 if "norm" in k and "weight" in k
                                                     else 0.0) for k, s in keys.items()}


# --- DCPT's NAFNetBaseline forward, written from nafnet_arch.py with F.* ----------------------

def _ln(x, sd, p):
    mu, var = x.mean(1, keepdim=True), (x - x.mean(1, keepdim=True)).pow(2).mean(1, keepdim=True)
    return sd[p + ".weight"].view(1, -1, 1, 1) * (x - mu) / (var + 1e-6).sqrt() + \
        sd[p + ".bias"].view(1, -1, 1, 1)


def _conv(x, sd, p, **kw):
    return F.conv2d(x, sd[p + ".weight"], sd.get(p + ".bias"), **kw)


def _block(inp, sd, p):
    x = _conv(_conv(_ln(inp, sd, p + ".norm1"), sd, p + ".conv1"), sd, p + ".conv2",
              padding=1, groups=sd[p + ".conv2.weight"].shape[0])
    a, b = x.chunk(2, 1)
    x = a * b
    x = x * _conv(F.adaptive_avg_pool2d(x, 1), sd, p + ".sca.1")
    y = inp + _conv(x, sd, p + ".conv3") * sd[p + ".beta"]
    a, b = _conv(_ln(y, sd, p + ".norm2"), sd, p + ".conv4").chunk(2, 1)
    return y + _conv(a * b, sd, p + ".conv5") * sd[p + ".gamma"]


def _nafnet_forward(inp, sd):
    x = _conv(inp, sd, "intro", padding=1)
    encs = []
    for i, n in enumerate(ENC):
        for j in range(n):
            x = _block(x, sd, f"encoders.{i}.{j}")
        encs.append(x)
        x = _conv(x, sd, f"downs.{i}", stride=2)
    for j in range(MID):
        x = _block(x, sd, f"middle_blks.{j}")
    for i, skip in enumerate(encs[::-1]):
        x = F.pixel_shuffle(F.conv2d(x, sd[f"ups.{i}.0.weight"]), 2) + skip
        for j in range(DEC[i]):
            x = _block(x, sd, f"decoder{i}.{j}")
    return _conv(x, sd, "ending", padding=1) + inp


def _x(h: int = 16, w: int = 20, seed: int = 1) -> torch.Tensor:
    return torch.rand(1, 3, h, w, generator=torch.Generator().manual_seed(seed))


def test_nafnet_layout_loads_and_computes_the_official_forward(tmp_path):
    sd = _state(_nafnet_keys())
    torch.save({"params": sd}, tmp_path / "dcpt_nafnet_5d.pth")
    ck = load_official(tmp_path / "dcpt_nafnet_5d.pth", backbone="nafnet")
    net = ck.model
    assert (net.width, net.enc_blocks, net.middle_blocks, net.dec_blocks) == \
        (WIDTH, ENC, MID, DEC)
    x = _x()
    with torch.no_grad():
        torch.testing.assert_close(net(x), _nafnet_forward(x, sd), atol=1e-5, rtol=1e-5)
        # a side that is not a multiple of 4: reflect-padded as the official test pads
        y = _x(14, 18)
        ref = _nafnet_forward(F.pad(y, (0, 2, 0, 2), mode="reflect"), sd)[..., :14, :18]
        torch.testing.assert_close(net(y), ref, atol=1e-5, rtol=1e-5)
    # our API: tiled restoration, save + load (rebuilt without passing a model), feature taps
    save(net, tmp_path / "m.safetensors", layers=ck.layers)
    back = load(tmp_path / "m.safetensors")
    torch.testing.assert_close(restore(back.model, x[0], tile=16, overlap=4),
                               restore(net, x[0], tile=16, overlap=4))
    assert back.layers == ("decoders.1", "decoders.0")


def test_params_ema_is_preferred_and_prefixes_removed(tmp_path):
    sd, other = _state(_nafnet_keys(), 0), _state(_nafnet_keys(), 7)
    torch.save({"params": other, "params_ema": sd}, tmp_path / "w.pth")
    torch.save({"state_dict": {f"module.{k}": v for k, v in sd.items()}}, tmp_path / "m.pth")
    x = _x()
    with torch.no_grad():
        ref = _nafnet_forward(x, sd)
        for f in ("w.pth", "m.pth"):
            out = load_official(tmp_path / f, "nafnet").model(x)
            torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
        raw = load_official(tmp_path / "w.pth", "nafnet", key="params").model(x)
        torch.testing.assert_close(raw, _nafnet_forward(x, other), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("change, message", [
    (lambda sd: sd.pop("decoder1.0.conv4.bias"), "missing key 'decoder1.0.conv4.bias'"),
    (lambda sd: sd.update({"encoders.1.1.sca.1.weight": torch.zeros(16, 8, 1, 1)}),
     "key 'encoders.1.1.sca.1.weight' has shape (16, 8, 1, 1), expected (16, 16, 1, 1)"),
    (lambda sd: sd.update({"decoders.0.0.beta": torch.zeros(1, 16, 1, 1)}),
     "unexpected key 'decoders.0.0.beta'"),
    (lambda sd: sd.pop("intro.weight"), "missing key 'intro.weight'"),
])
def test_a_wrong_checkpoint_is_refused_naming_the_key(tmp_path, change, message):
    sd = _state(_nafnet_keys())
    change(sd)
    torch.save(sd, tmp_path / "bad.pth")
    with pytest.raises(ValueError) as info:
        load_official(tmp_path / "bad.pth", "nafnet")
    assert message in str(info.value)


def test_unknown_backbone_and_foreign_files(tmp_path):
    with pytest.raises(ValueError, match="backbone must be one of nafnet, restormer"):
        load_official(tmp_path / "x.pth", "promptir")
    (tmp_path / "x.pth").write_bytes(b"\x00\x01garbage")
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_official(tmp_path / "x.pth", "nafnet")


def test_cli_convert_then_restore(tmp_path):
    import numpy as np
    from PIL import Image
    from typer.testing import CliRunner

    from iclr25.dcpt.cli import app

    torch.save({"params_ema": _state(_nafnet_keys())}, tmp_path / "dcpt_nafnet_5d.pth")
    runner = CliRunner()
    r = runner.invoke(app, ["convert", str(tmp_path / "dcpt_nafnet_5d.pth"),
                            "--backbone", "nafnet", "--out", str(tmp_path / "m.safetensors")])
    assert r.exit_code == 0, r.output
    img = (np.random.default_rng(0).random((20, 28, 3)) * 255).astype(np.uint8)
    Image.fromarray(img).save(tmp_path / "in.png")
    r = runner.invoke(app, ["restore", str(tmp_path / "m.safetensors"),
                            str(tmp_path / "in.png"), str(tmp_path / "out.png")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out.png").is_file()
    for args in (["--backbone", "nafnet", "--out", str(tmp_path / "n.safetensors")],
                 ["--backbone", "swinir", "--out", str(tmp_path / "n.safetensors")]):
        (tmp_path / "bad.pth").write_text("not a checkpoint")
        r = runner.invoke(app, ["convert", str(tmp_path / "bad.pth"), *args])
        assert r.exit_code == 2
        assert len(r.output.strip().splitlines()) == 1


# --- DCPT's Restormer: dim 8, blocks [1, 1, 1, 1], 1 refinement block, heads [1, 2, 2, 4] ----
DIM, BLOCKS, HEADS, REFINE = 8, (1, 1, 1, 1), (1, 2, 2, 4), 1


def _tblock(prefix: str, c: int, heads: int) -> dict[str, tuple[int, ...]]:
    h = int(c * 2.66)
    return {f"{prefix}.norm1.body.weight": (c,), f"{prefix}.attn.temperature": (heads, 1, 1),
            f"{prefix}.attn.qkv.weight": (3 * c, c, 1, 1),
            f"{prefix}.attn.qkv_dwconv.weight": (3 * c, 1, 3, 3),
            f"{prefix}.attn.project_out.weight": (c, c, 1, 1),
            f"{prefix}.norm2.body.weight": (c,),
            f"{prefix}.ffn.project_in.weight": (2 * h, c, 1, 1),
            f"{prefix}.ffn.dwconv.weight": (2 * h, 1, 3, 3),
            f"{prefix}.ffn.project_out.weight": (c, h, 1, 1)}


def _restormer_keys() -> dict[str, tuple[int, ...]]:
    d = DIM
    keys: dict[str, tuple[int, ...]] = {"patch_embed.proj.weight": (d, 3, 3, 3)}

    def seq(name, c, n, heads):
        for j in range(n):
            keys.update(_tblock(f"{name}.body.{j}", c, heads))

    seq("encoder_level1", d, BLOCKS[0], HEADS[0])
    keys["down1_2.body.0.weight"] = (d // 2, d, 3, 3)
    seq("encoder_level2", 2 * d, BLOCKS[1], HEADS[1])
    keys["down2_3.body.0.weight"] = (d, 2 * d, 3, 3)
    seq("encoder_level3", 4 * d, BLOCKS[2], HEADS[2])
    keys["down3_4.body.0.weight"] = (2 * d, 4 * d, 3, 3)
    seq("latent", 8 * d, BLOCKS[3], HEADS[3])
    keys["up4_3.body.0.weight"] = (16 * d, 8 * d, 3, 3)
    keys["reduce_chan_level3.weight"] = (4 * d, 8 * d, 1, 1)
    seq("decoder_level3", 4 * d, BLOCKS[2], HEADS[2])
    keys["up3_2.body.0.weight"] = (8 * d, 4 * d, 3, 3)
    keys["reduce_chan_level2.weight"] = (2 * d, 4 * d, 1, 1)
    seq("decoder_level2", 2 * d, BLOCKS[1], HEADS[1])
    keys["up2_1.body.0.weight"] = (4 * d, 2 * d, 3, 3)
    seq("decoder_level1", 2 * d, BLOCKS[0], HEADS[0])
    seq("refinement", 2 * d, REFINE, HEADS[0])
    keys["output.weight"] = (3, 2 * d, 3, 3)
    return keys


def _tb(x, sd, p):
    def bfln(z, w):
        return z / torch.sqrt(z.var(1, keepdim=True, unbiased=False) + 1e-6) * w.view(1, -1, 1, 1)

    B, C, H, W = x.shape
    t = sd[p + ".attn.temperature"]
    heads = t.shape[0]
    qkv = F.conv2d(F.conv2d(bfln(x, sd[p + ".norm1.body.weight"]), sd[p + ".attn.qkv.weight"]),
                   sd[p + ".attn.qkv_dwconv.weight"], padding=1, groups=3 * C)
    q, k, v = (a.reshape(B, heads, C // heads, H * W) for a in qkv.chunk(3, 1))
    q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    out = (F.relu(q @ k.transpose(-2, -1) * t) @ v).reshape(B, C, H, W)
    x = x + F.conv2d(out, sd[p + ".attn.project_out.weight"])
    a, b = F.conv2d(F.conv2d(bfln(x, sd[p + ".norm2.body.weight"]),
                             sd[p + ".ffn.project_in.weight"]),
                    sd[p + ".ffn.dwconv.weight"], padding=1,
                    groups=sd[p + ".ffn.dwconv.weight"].shape[0]).chunk(2, 1)
    return x + F.conv2d(F.gelu(a) * b, sd[p + ".ffn.project_out.weight"])


def _restormer_forward(inp, sd):
    def seq(x, name):
        j = 0
        while f"{name}.body.{j}.norm1.body.weight" in sd:
            x = _tb(x, sd, f"{name}.body.{j}")
            j += 1
        return x

    def conv3(x, name):
        return F.conv2d(x, sd[name], padding=1)

    e1 = seq(conv3(inp, "patch_embed.proj.weight"), "encoder_level1")
    e2 = seq(F.pixel_unshuffle(conv3(e1, "down1_2.body.0.weight"), 2), "encoder_level2")
    e3 = seq(F.pixel_unshuffle(conv3(e2, "down2_3.body.0.weight"), 2), "encoder_level3")
    lat = seq(F.pixel_unshuffle(conv3(e3, "down3_4.body.0.weight"), 2), "latent")
    d3 = torch.cat([F.pixel_shuffle(conv3(lat, "up4_3.body.0.weight"), 2), e3], 1)
    d3 = seq(F.conv2d(d3, sd["reduce_chan_level3.weight"]), "decoder_level3")
    d2 = torch.cat([F.pixel_shuffle(conv3(d3, "up3_2.body.0.weight"), 2), e2], 1)
    d2 = seq(F.conv2d(d2, sd["reduce_chan_level2.weight"]), "decoder_level2")
    d1 = torch.cat([F.pixel_shuffle(conv3(d2, "up2_1.body.0.weight"), 2), e1], 1)
    d1 = seq(seq(d1, "decoder_level1"), "refinement")
    return conv3(d1, "output.weight") + inp


def test_restormer_layout_loads_and_computes_the_official_forward(tmp_path):
    sd = _state(_restormer_keys())
    torch.save({"params": _state(_restormer_keys(), 3), "params_ema": sd},
               tmp_path / "dcpt_restormer_5d.pth")
    ck = load_official(tmp_path / "dcpt_restormer_5d.pth", backbone="restormer")
    net = ck.model
    assert (net.dim, net.num_blocks, net.heads, net.num_refinement_blocks) == \
        (DIM, BLOCKS, HEADS, REFINE)
    x = _x(16, 24)
    with torch.no_grad():   # float64: ReLU attention on random weights grows to ~1e3
        sd64 = {k: v.double() for k, v in sd.items()}
        torch.testing.assert_close(net.double()(x.double()), _restormer_forward(x.double(), sd64),
                                   atol=1e-9, rtol=1e-9)
    net.float()
    save(net, tmp_path / "m.safetensors", layers=ck.layers)
    back = load(tmp_path / "m.safetensors")
    torch.testing.assert_close(restore(back.model, x), restore(net, x))


def test_restormer_refuses_a_nafnet_file_naming_the_key(tmp_path):
    torch.save(_state(_nafnet_keys()), tmp_path / "n.pth")
    with pytest.raises(ValueError, match="missing key 'patch_embed.proj.weight'"):
        load_official(tmp_path / "n.pth", "restormer")
    sd = _state(_restormer_keys())
    sd["decoder_level2.body.0.attn.temperature"] = torch.ones(4, 1, 1)
    torch.save(sd, tmp_path / "r.pth")
    with pytest.raises(ValueError, match=r"key 'decoder_level2.body.0.attn.temperature' has "
                                         r"shape \(4, 1, 1\), expected \(2, 1, 1\)"):
        load_official(tmp_path / "r.pth", "restormer")
