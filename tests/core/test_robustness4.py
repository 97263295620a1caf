"""Issue 70: one test per class of hostile input the earlier sweeps never tried. Each fails on
main 7e1397e (noted per test: what happened there)."""

from __future__ import annotations

import math
import os
import warnings

import click
import pytest
import torch
import typer

from iclr25 import crh, gsd, ies, locodl, los, mother, oft, v3
from iclr25.datasets.molecules import write_xyz
from iclr25.matern import KernelSurface, make_shape
from iclr25.mother.testbed import load_truth

# --- wrong Python type where a structure is expected ---------------------------------------


def test_a_list_of_pairs_is_not_a_mapping_of_parents():
    # main: AttributeError: 'list' object has no attribute 'items'
    with pytest.raises(TypeError, match=r"parents must be a mapping, got list"):
        mother.ModelForest.from_parents([("b", "a")])


def test_none_where_a_model_is_expected():
    # main: AttributeError: 'NoneType' object has no attribute 'parameters'
    with pytest.raises(TypeError, match=r"model must be an nn.Module, got NoneType"):
        ies.record_losses(ies.InstanceEarlyStopping(4), None, torch.randn(4, 3),
                          torch.tensor([0, 1, 0, 1]), torch.arange(4))


def test_an_int_where_a_callable_is_expected():
    # main: "z_dim must lie in [1, inf], got 0", a message about another argument
    with pytest.raises(TypeError, match=r"policy must be a GSDResult or a callable, got int 3"):
        gsd.evaluate(3, "LaneReach-v0", targets=[0.1])


def test_features_in_another_dtype_do_not_reach_the_matrix_multiply():
    # main: RuntimeError: mat1 and mat2 must have the same dtype
    d = gsd.BoundedDiscriminator(2, 1)
    with pytest.raises(ValueError, match=r"obs and act .* does not fit the model"):
        d(torch.zeros(1, 2, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.float64))


# --- integer and boolean dtypes where the mathematics needs floats -------------------------

def test_smoothed_targets_refuse_an_integer_dtype():
    # main: rows of zeros (eps / K truncated), where the rows must sum to 1
    with pytest.raises(TypeError, match=r"dtype must be a floating-point torch.dtype"):
        los.smoothed_targets(torch.tensor([0, 1]), 3, 0.5, dtype=torch.int64)


def test_random_orthogonal_refuses_an_integer_dtype():
    # main: the zero matrix, which is not orthogonal
    with pytest.raises(TypeError, match=r"dtype must be a floating-point"):
        crh.random_orthogonal(3, seed=0, dtype=torch.int64)


def test_boolean_class_counts_are_refused():
    # main: weights [1, 1] from counts read as 1 and 1
    with pytest.raises(TypeError, match=r"counts must be a 1-D real .* got a torch.bool"):
        los.class_balanced_weights(torch.tensor([True, True]))


def test_an_integer_distance_matrix_is_refused():
    # main: clustered as if the integers were distances measured in those units
    D = torch.tensor([[0, 1, 5], [1, 0, 5], [5, 5, 0]])
    with pytest.raises(TypeError, match=r"D must be a 2-D floating-point array, got a torch.int64"):
        mother.cluster_trees(D, 2)


def test_a_string_is_not_an_edge():
    # main: 'ab' read as the edge ('a', 'b'), accuracy 1.0
    with pytest.raises(ValueError, match=r"pred: every edge must be a \(parent, child\) pair"):
        mother.edge_accuracy(["ab"], {"b": "a", "a": None})


# --- files that are corrupt or incomplete ---------------------------------------------------

@pytest.mark.parametrize(("text", "message"), [
    ("", r"tree.json .* is empty, expected a JSON object"),
    ("{", r"tree.json .* is not valid JSON \(line 1, column 2"),
    ('{"names": []}', r"tree.json .* has no key 'parents' \(it holds 'names'\)"),
    ("[1, 2]", r"tree.json .* must hold a JSON object, got a list"),
])
def test_a_broken_tree_json_says_how_it_is_broken(tmp_path, text, message):
    # main: JSONDecodeError, KeyError: 'parents'
    (tmp_path / "tree.json").write_text(text)
    with pytest.raises(ValueError, match=message):
        load_truth(tmp_path)


def test_an_unreadable_tree_json_says_permission_denied(tmp_path, monkeypatch):
    # main: read it (as root) or reported the OS error; never "permission denied" by name
    p = tmp_path / "tree.json"
    p.write_text('{"parents": {"a": null}}')
    real = os.access
    monkeypatch.setattr(os, "access", lambda q, mode, *a, **k: False if os.fspath(q) == str(p)
                        and mode & os.R_OK else real(q, mode, *a, **k))
    with pytest.raises(ValueError, match=r"tree.json .* is not readable \(permission denied\)"):
        load_truth(tmp_path)


def test_a_malformed_dimacs_field_is_named(tmp_path):
    # main: "invalid literal for int() with base 10: 'x'"
    p = tmp_path / "g.min"
    p.write_text("p min 2 1\nn 1 1\nn 2 -1\na 1 x 0 1 1\n")
    with pytest.raises(ValueError, match=r"g.min:4: DST must be an integer, got 'x'"):
        oft.read_dimacs(p)


# --- inconsistent parameters ------------------------------------------------------------------

def test_strong_convexity_above_smoothness_is_refused():
    # main: parameters returned for mu = 2 > L = 1
    with pytest.raises(ValueError, match=r"mu must be <= L"):
        locodl.adiana_params(1.0, 2.0, 1.0, 4)


def test_zero_clients_are_refused():
    # main: ZeroDivisionError
    with pytest.raises(ValueError, match=r"n must be an int in \[1, inf\), got 0"):
        locodl.adiana_params(1.0, 0.1, 1.0, 0)


def _option(module: str, verb: str, opt: str) -> tuple[click.Context, click.Parameter]:
    import importlib

    cmd = typer.main.get_command(importlib.import_module(f"iclr25.{module}.cli").app)
    sub = cmd.commands[verb] if verb else cmd
    return click.Context(sub), next(p for p in sub.params if opt in p.opts)


@pytest.mark.parametrize("opt", ["--n-codes", "--budget"])
def test_gsd_evaluate_refuses_zero_codes(opt):
    # main: --n-codes 0 taken (then replaced by the default); --budget 0 a report of zeros
    ctx, param = _option("gsd", "evaluate", opt)
    with pytest.raises(typer.BadParameter):
        param.process_value(ctx, 0)


def test_a_discriminator_bound_beyond_float32_is_refused():
    # main: accepted; D(s, a) = nan, outside its documented range
    with pytest.raises(ValueError, match=r"clip must be a number in \[0, 3.40282e\+38\]"):
        gsd.BoundedDiscriminator(2, 1, clip=1e39)


def test_the_discriminator_stays_in_its_range_on_huge_inputs():
    d = gsd.BoundedDiscriminator(2, 1, clip=10.0)
    big = torch.full((3, 2), 1e30), torch.full((3, 1), -1e30)
    pure = d.pure(*big)
    assert bool(((pure >= 0) & (pure <= 10.0)).all())


def test_dbtsw_says_why_nan_is_refused(tmp_path):
    # main: "--delta must be >= 0, --p >= 1 and --seed >= 0" (nan is >= 0 is not the reason)
    from typer.testing import CliRunner

    from iclr25.cli import app

    for i in range(2):
        (tmp_path / f"{i}.csv").write_text("0,0\n1,1\n")
    res = CliRunner().invoke(app, ["dbtsw", "distance", str(tmp_path / "0.csv"),
                                   str(tmp_path / "1.csv"), "--delta", "nan"])
    assert res.exit_code == 2
    assert "--delta must be a finite number >= 0, got nan" in res.output


@pytest.fixture(scope="module")
def torus():
    return make_shape("torus", 400, seed=0)[:2]


def _side_agreement(surface: KernelSurface, pts, nrm) -> float:
    """The fraction of off-surface points x ± offset·n the fit puts on their side, measured
    here through the public decision function (normalised units undone)."""
    off = surface.offset / surface.scale_
    Q = torch.cat([pts + off * nrm, pts - off * nrm])
    want = torch.cat([torch.ones(len(pts)), -torch.ones(len(pts))]).double()
    return float((torch.sign(surface.decision_function(Q)) == want).double().mean())


def test_a_nystrom_fit_warns_when_its_occupancy_disagrees(torus):
    from iclr25.matern.surface import NYSTROM_OCCUPANCY

    pts, nrm = torus
    with pytest.warns(RuntimeWarning, match=r"off-surface points on their side"):
        few = KernelSurface(length_scale=0.2, n_centers=120, seed=0).fit(pts, nrm)
    assert _side_agreement(few, pts, nrm) < NYSTROM_OCCUPANCY
    exact = KernelSurface(length_scale=0.2).fit(pts, nrm)
    assert _side_agreement(exact, pts, nrm) == 1.0


def test_a_nystrom_fit_above_the_level_does_not_warn(torus):
    from iclr25.matern.surface import NYSTROM_OCCUPANCY

    pts, nrm = torus
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        good = KernelSurface(length_scale=0.5, n_centers=600, seed=0).fit(pts, nrm)
    if _side_agreement(good, pts, nrm) >= NYSTROM_OCCUPANCY + 0.02:
        assert not [w for w in seen if "off-surface" in str(w.message)]
    else:
        pytest.fail("600 centres should fit the torus's sides")


# --- errors that name the caller's argument -------------------------------------------------

def test_a_dataclass_field_is_named_as_spelled():
    # main: "scale must lie in (0, inf)"
    with pytest.raises(ValueError, match=r"^relevance_scale must"):
        gsd.GSDConfig(relevance_scale=0)


def test_a_negative_learning_rate_is_refused_naming_it():
    # main: accepted; torch's "Invalid learning rate" only once training built its optimiser
    with pytest.raises(ValueError, match=r"^policy_lr must be a number in \(0, inf\)"):
        gsd.GSDConfig(policy_lr=-1e-3)


def test_k_zero_is_refused_as_k_not_as_sklearn_n_clusters():
    # main: scikit-learn's InvalidParameterError about 'n_clusters'
    with pytest.raises(ValueError, match=r"^k must be an int in \[1, inf\), got 0"):
        v3.kmeans_codes(torch.randn(2, 3, 4), k=0)


def test_atoms_of_another_length_are_named(tmp_path):
    # main: "zip() argument 2 is longer than argument 1"
    with pytest.raises(ValueError, match=r"pos must be \(N, 3\) .* N = len\(z\) = 2 atoms"):
        write_xyz(tmp_path / "x.xyz", [1, 6], torch.zeros(3, 3))
    assert not (tmp_path / "x.xyz").exists()


def test_nan_is_refused_as_a_number_out_of_range():
    with pytest.raises(ValueError, match=r"gamma must be a number in \[0, 1\], got nan"):
        gsd.GSDConfig(gamma=math.nan)


# --- dcpt, lowlight, lsdt (the packages swept last) -----------------------------------------

def _lsdt_history(model, actions_dtype=torch.float32):
    B, K = 2, 3
    return (torch.zeros(B, K, 1), torch.zeros(B, K, model.obs_dim),
            torch.zeros(B, K, model.act_dim, dtype=actions_dtype),
            torch.zeros(B, K, dtype=torch.int64))


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool])
def test_lsdt_refuses_integer_and_boolean_actions(dtype):
    # main: the actions were cast to float and the model answered
    from iclr25 import lsdt

    model = lsdt.LongShortDecisionTransformer(2, 1, hidden=8, n_blocks=1, context=3)
    with pytest.raises(TypeError, match=r"^actions must be a (3-D )?floating-point"):
        model(*_lsdt_history(model, dtype))
    with pytest.raises(TypeError, match=r"^actions must be a (3-D )?floating-point"):
        model.get_action(*_lsdt_history(model, dtype))
    with pytest.raises(TypeError, match=r"^action must be a floating-point"):
        lsdt.DelayedCueEnv().step(1)
    good = _lsdt_history(model)
    with pytest.raises(TypeError, match=r"^actions must be a (3-D )?floating-point"):
        from iclr25.datasets.control import OfflineDataset
        OfflineDataset(torch.zeros(2, 2), torch.ones(2, 1, dtype=dtype), torch.zeros(2),
                       torch.tensor([False, True]), torch.tensor([False, False]))
    assert model.get_action(*good).shape == (2, 1)


def test_lsdt_get_action_reads_lists_as_forward_does():
    # main: TypeError: list indices must be integers or slices, not tuple
    from iclr25 import lsdt

    model = lsdt.LongShortDecisionTransformer(2, 1, hidden=8, n_blocks=1, context=3).eval()
    history = _lsdt_history(model)
    want = model.get_action(*history)
    assert torch.equal(model.get_action(*(h.tolist() for h in history)), want)


def test_lsdt_zero_heads_are_refused_naming_them():
    # main: ZeroDivisionError: integer modulo by zero
    from iclr25 import lsdt

    with pytest.raises(ValueError, match=r"^n_heads must be an int in \[1, inf\), got 0"):
        lsdt.LongShortMixer(8, 0, 4)


def test_lowlight_relight_refuses_an_8_bit_image():
    # main: an integer image in 0..255 was raised to 1/gamma and clamped: all ones, silently
    from iclr25 import lowlight

    with pytest.raises(TypeError, match=r"^x must be a floating-point array"):
        lowlight.relight(torch.full((1, 3, 4, 4), 40, dtype=torch.uint8), 1.3)


def test_a_feature_tap_refuses_an_int_for_its_layers():
    # main: TypeError: 'int' object is not iterable
    from iclr25 import dcpt

    with pytest.raises(TypeError, match=r"^layers must be a str or a list of str, got int 3"):
        dcpt.FeatureTap(dcpt.UNet(width=4), 3)


def test_the_dcpt_probe_says_when_too_few_images_are_split():
    # main: scikit-learn's "With n_samples=1, test_size=0.33 and train_size=None, the
    # resulting train set will be empty"
    from iclr25 import dcpt

    net = dcpt.UNet(width=4)
    with pytest.raises(ValueError, match=r"^lq: 1 image\(s\) split by test_size=0.33"):
        dcpt.feature_probe(net, torch.rand(1, 3, 8, 8), torch.tensor([0]),
                           layers=net.tap_layers)


def _safetensors(path, metadata):
    """A file with a width-4 UNet's weights and ``metadata``."""
    from safetensors.torch import save_file

    from iclr25.dcpt import UNet

    weights = {f"model.{k}": v for k, v in UNet(width=4).state_dict().items()}
    save_file(weights, str(path), metadata=metadata)
    return path


@pytest.mark.parametrize(("meta", "message"), [
    ('{"unet": ', r"metadata is corrupt"),
    ('["unet"]', r"metadata is not a JSON object"),
    ('{"unet": {"wdth": 4}}', r"UNet configuration in its metadata is invalid"),
    ('{"unet": {"width": 4}, "classifier": 3}', r"classifier configuration .* is invalid"),
])
def test_a_damaged_dcpt_checkpoint_says_how(tmp_path, meta, message):
    # main: JSONDecodeError / AttributeError / TypeError from UNet(**config)
    from iclr25 import dcpt

    p = _safetensors(tmp_path / "c.safetensors", {"iclr25.dcpt": meta})
    with pytest.raises(ValueError, match=message):
        dcpt.load(p)


@pytest.mark.parametrize("load", ["dcpt", "lsdt"])
def test_checkpoint_readers_tell_missing_folder_and_unreadable_apart(tmp_path, monkeypatch,
                                                                       load):
    # main: dcpt said "is not a file" for a missing file, lsdt "does not exist" for a folder,
    # and both read a denied file into the parser's error
    import importlib

    read = importlib.import_module(f"iclr25.{load}").load
    with pytest.raises(ValueError, match=r"does not exist"):
        read(tmp_path / "missing.safetensors")
    with pytest.raises(ValueError, match=r"is not a file"):
        read(tmp_path)
    p = _safetensors(tmp_path / "denied.safetensors", {})
    real = os.access
    monkeypatch.setattr(os, "access", lambda q, mode, *a, **k: False if os.fspath(q) == str(
        p) else real(q, mode, *a, **k))
    with pytest.raises(ValueError, match=r"permission denied"):
        read(p)


# --- nondeterminism --------------------------------------------------------------------------

def test_a_unet_is_built_from_its_seed_and_leaves_the_global_rng_alone():
    # main: UNet() drew its weights from the global RNG (two calls, two networks)
    from iclr25 import dcpt

    state = torch.random.get_rng_state()
    a, b, c = dcpt.UNet(width=4), dcpt.UNet(width=4), dcpt.UNet(width=4, seed=1)
    assert torch.equal(torch.random.get_rng_state(), state)
    pa, pb, pc = (torch.cat([p.flatten() for p in m.parameters()]) for m in (a, b, c))
    assert torch.equal(pa, pb)
    assert not torch.equal(pa, pc)


def test_dcpt_pretrain_twice_with_one_seed_restores_bit_for_bit():
    # main: two runs of pretrain(UNet(), ..., seed=0) restored differently
    from iclr25 import dcpt
    from iclr25.datasets.images import AllInOnePairs, load_image

    image = load_image("astronaut", max_side=32)
    x = torch.rand(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    outs = []
    for _ in range(2):
        torch.rand(5)  # the global RNG moves between the runs, as in any session
        pairs = AllInOnePairs([image], ("noise", "blur"), size=16, batch_size=4, seed=0)
        res = dcpt.pretrain(dcpt.UNet(width=4), pairs, n_classes=2, steps=2,
                            num_res_blocks=1, seed=3)
        with torch.no_grad():
            outs.append(res.model.eval()(x))
    assert torch.equal(outs[0], outs[1])


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_v3_mpd_backward_on_repeated_rows_is_deterministic(two_threads):
    # main: advanced indexing's backward (index_put_ with accumulate) adds with atomics on
    # two CPU threads: the gradient of repeated rows changed from run to run
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 64, generator=g)[torch.randint(3, (4, 96), generator=g)]
    grads = []
    for _ in range(4):
        leaf = x.clone().requires_grad_(True)
        v3.mpd(leaf).sum().backward()
        grads.append(leaf.grad)
    assert all(torch.equal(grads[0], gr) for gr in grads[1:])


def test_v3_fits_twice_at_two_threads_bit_for_bit(two_threads):
    # main: a maximum parameter difference of 4.4e-3 after 3 epochs at 2 threads
    from iclr25.datasets.views import digit_sequences

    X, _, _ = digit_sequences(250, seed=0)
    fits = [v3.V3(epochs=3, seed=0).fit(X).model_ for _ in range(2)]
    pa, pb = (torch.cat([p.detach().flatten() for p in m.parameters()]) for m in fits)
    assert torch.equal(pa, pb)
