"""save_fitted / load_fitted: one file format and one wording for every estimator."""

import json

import pytest
import torch
from safetensors.torch import save_file

from iclr25._io import FITTED_FORMAT, load_fitted, save_fitted


def test_round_trip(tmp_path):
    a = torch.arange(6, dtype=torch.float64).reshape(2, 3).T  # not contiguous
    p = save_fitted(tmp_path / "m.safetensors", "toy.Model", {"k": 3, "name": "x"},
                    {"a": a, "b": torch.tensor([1, 2])}, {"n_seen": 7})
    params, tensors, state = load_fitted(p, "toy.Model")
    assert params == {"k": 3, "name": "x"} and state == {"n_seen": 7}
    assert torch.equal(tensors["a"], a) and tensors["b"].dtype == torch.int64


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "not a file"),
    (lambda p: p.write_bytes(b"\x00\x01garbage" * 10), "not a safetensors file"),
    (lambda p: p.write_bytes(_valid(p)[:40]), "not a safetensors file"),
    (lambda p: save_file({"a": torch.zeros(2)}, str(p)), "not written by iclr25"),
    (lambda p: save_fitted(p, "other.Model", {}, {}), "it holds a other.Model"),
    (lambda p: save_file({"a": torch.zeros(1)}, str(p), metadata={"iclr25": json.dumps(
        {"format": FITTED_FORMAT + 1, "kind": "toy.Model", "params": {}})}), "newer iclr25"),
])
def test_every_bad_file_names_itself(tmp_path, make, message):
    p = tmp_path / "m.safetensors"
    make(p)
    with pytest.raises(ValueError, match=message) as info:
        load_fitted(p, "toy.Model")
    assert str(p) in str(info.value) and "toy.Model" in str(info.value)


def _valid(p):
    save_fitted(p, "toy.Model", {"k": 1}, {"a": torch.zeros(100)})
    data = p.read_bytes()
    p.unlink()
    return data


def test_refuses_what_it_cannot_write(tmp_path):
    with pytest.raises(ValueError, match="JSON-ready"):
        save_fitted(tmp_path / "m.safetensors", "toy.Model", {"f": object()}, {})
    with pytest.raises(ValueError, match="does not exist"):
        save_fitted(tmp_path / "no" / "m.safetensors", "toy.Model", {}, {})
