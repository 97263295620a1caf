"""Every training verb: the engine options from one definition (iclr25._cli.ENGINE_OPTIONS),
refused in one line where they cannot run, and training from each on-disk format it accepts
(tiny files written here)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from iclr25._cli import ENGINE_OPTIONS, EngineArgs, training_verb
from iclr25.cli import app

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

runner = CliRunner()

#: Every verb that trains a network.
TRAINING_VERBS = (("comm", "fit"), ("cox", "fit"), ("urlost", "fit"), ("v3", "fit"),
                  ("toss", "fit"), ("lowlight", "fit"), ("dcpt", "pretrain"),
                  ("dcpt", "finetune"), ("lsdt", "train"), ("gsd", "train"))
FLAGS = [flag for _, flag, *_ in ENGINE_OPTIONS]


def _run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _one_line_exit_2(r) -> None:
    assert r.exit_code == 2 and r.output.count("\n") == 1 and r.output.startswith("error: "), \
        r.output


def _command(group: str, verb: str):
    import importlib

    import typer.main

    return typer.main.get_command(importlib.import_module(f"iclr25.{group}.cli").app
                                  ).commands[verb]


@pytest.mark.parametrize(("group", "verb"), TRAINING_VERBS)
def test_every_training_verb_has_the_engine_options(group, verb):
    opts = {o for p in _command(group, verb).params for o in p.opts}
    assert set(FLAGS) <= opts


@pytest.mark.parametrize(("group", "verb"), TRAINING_VERBS)
def test_every_training_verb_takes_threads(group, verb):
    # issue 68 walk 5: on a busy 2-core machine `v3 fit` took 43.9 s at torch's default
    # threads and 8.6 s at one (OMP_NUM_THREADS=1), with no option to say so
    opts = {o for p in _command(group, verb).params for o in p.opts}
    assert "--threads" in opts


def test_threads_sets_torchs_threads_for_the_verb_and_restores_them():
    import torch
    import typer

    seen = []
    verb = typer.Typer()

    @verb.command()
    @training_verb
    def fit(engine: EngineArgs = None) -> None:
        seen.append(torch.get_num_threads())

    @verb.command()
    def other() -> None:
        pass

    before = torch.get_num_threads()
    r = runner.invoke(verb, ["fit", "--threads", str(before + 1)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(verb, ["fit"])
    assert r.exit_code == 0, r.output
    assert seen == [before + 1, before] and torch.get_num_threads() == before
    r = runner.invoke(verb, ["fit", "--threads", "0"])
    _one_line_exit_2(r)
    assert "--threads must be >= 1, got 0" in r.output and len(seen) == 2


# -- tiny data in each format ---------------------------------------------------------------

RNG = np.random.default_rng(0)
A = RNG.normal(size=(24, 4)).astype(np.float32)
B = np.tanh(A @ RNG.normal(size=(4, 3))).astype(np.float32)


def _table(columns: dict[str, np.ndarray]):
    """Columns of scalars (1-D), of lists (2-D) or of nested lists (3-D: one (N, F) each)."""
    return pa.table({k: (pa.array(list(v), pa.list_(pa.float32())) if v.ndim == 2 else
                         pa.array(v.tolist()) if v.ndim > 2 else v) for k, v in columns.items()})


def _write(table, path, fmt: str):
    """``table`` as a .parquet file, a folder of two .parquet files, or a save_to_disk
    folder (Arrow stream files named by state.json)."""
    if fmt == "parquet":
        pq.write_table(table, path.with_suffix(".parquet"), row_group_size=10)
        return path.with_suffix(".parquet")
    path.mkdir()
    half = table.num_rows // 2
    if fmt == "parquet-folder":
        pq.write_table(table.slice(0, half), path / "part-0.parquet")
        pq.write_table(table.slice(half), path / "part-1.parquet")
        return path
    files = []
    for i, part in enumerate((table.slice(0, half), table.slice(half))):
        with pa.ipc.new_stream(path / f"data-{i}.arrow", table.schema) as w:
            w.write_table(part)
        files.append({"filename": f"data-{i}.arrow"})
    (path / "state.json").write_text(json.dumps({"_data_files": files}))
    return path


TABLES = ("parquet", "parquet-folder", "hf")


@pytest.mark.parametrize("fmt", TABLES)
def test_comm_fit_trains_from_each_table_format(tmp_path, fmt):
    a = _write(_table({f"a{i}": A[:, i] for i in range(4)}), tmp_path / "a", fmt)
    b = _write(_table({"b": B}), tmp_path / "b", fmt)
    r = _run("comm", "fit", a, b, "--out", tmp_path / "m.safetensors", "--epochs", 1,
             "--batch-size", 8, "--dim", 4)
    assert r.exit_code == 0 and (tmp_path / "m.safetensors").exists(), r.output


def test_comm_fit_trains_from_a_folder_of_images(tmp_path):
    pytest.importorskip("PIL")
    import torch

    from iclr25.datasets.images import save_image

    (tmp_path / "img").mkdir()
    for i in range(24):
        save_image(torch.rand(3, 4, 4, generator=torch.Generator().manual_seed(i)),
                   tmp_path / "img" / f"{i:02d}.png")
    np.save(tmp_path / "b.npy", B)
    r = _run("comm", "fit", tmp_path / "img", tmp_path / "b.npy", "--out",
             tmp_path / "m.safetensors", "--epochs", 1, "--batch-size", 8, "--dim", 4)
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("fmt", TABLES)
def test_cox_fit_trains_from_each_table_format(tmp_path, fmt):
    y = np.arange(24) % 2
    z = (A + 2.0 * y[:, None]).astype(np.float32)
    oom = _write(_table({"x": B}), tmp_path / "x", fmt)
    im = _write(_table({"z": z}), tmp_path / "z", fmt)
    np.savetxt(tmp_path / "ya.csv", y, fmt="%d")
    np.savetxt(tmp_path / "p.csv", np.stack([np.arange(6), np.arange(6)], 1), fmt="%d",
               delimiter=",")
    r = _run("cox", "fit", "--oom", oom, "--im", im, "--im-labels", tmp_path / "ya.csv",
             "--pairs", tmp_path / "p.csv", "--out", tmp_path / "m.pt", "--steps", 3)
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("fmt", TABLES)
def test_urlost_fit_trains_from_each_table_format(tmp_path, fmt):
    X = np.concatenate([A, A + 0.1 * B[:, :1]], axis=1)
    data = _write(_table({"x": X}), tmp_path / "x", fmt)
    r = _run("urlost", "fit", data, "--clusters", 2, "--neighbors", 2, "--epochs", 1,
             "--dim", 8, "--out", tmp_path / "m.safetensors")
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("fmt", TABLES)
def test_v3_fit_trains_from_each_table_format(tmp_path, fmt):
    seqs = RNG.normal(size=(8, 4, 6)).astype(np.float32)      # (B, N, F), N x F per row
    data = _write(_table({"seq": seqs}), tmp_path / "s", fmt)
    r = _run("v3", "fit", data, "--codes", 2, "--epochs", 1, "--batch-size", 4,
             "--out", tmp_path / "m.pt")
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("fmt", TABLES)
def test_toss_fit_trains_from_each_table_format(tmp_path, fmt):
    data = _write(pa.table({"a": A[:, 0], "b": A[:, 1], "t": B[:, 0], "u": B[:, 1]}),
                  tmp_path / "d", fmt)
    r = _run("toss", "fit", data, "--targets", "t,u", "--epochs", 1, "--n-neighbors", 4,
             "--out", tmp_path / "m.safetensors")
    assert r.exit_code == 0 and "2 inputs, 2 targets" in r.output, r.output


def _minari(tmp_path, monkeypatch, obs: int, act: int, env_id: str):
    minari = pytest.importorskip("minari")
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("h5py")
    from minari.data_collector import EpisodeBuffer

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    eps = [EpisodeBuffer(id=i, observations=RNG.normal(size=(9, obs)).astype(np.float32),
                         actions=RNG.uniform(-1, 1, size=(8, act)).astype(np.float32),
                         rewards=RNG.normal(size=8).tolist(), terminations=[False] * 8,
                         truncations=[False] * 7 + [True], infos={}) for i in range(3)]
    with pytest.warns(UserWarning):
        minari.create_dataset_from_buffers("test/demo-v0", eps, env=gym.make(env_id),
                                           algorithm_name="random", data_format="hdf5")
    return tmp_path / "minari" / "test" / "demo-v0"


def test_lsdt_train_trains_from_a_minari_folder(tmp_path, monkeypatch):
    data = _minari(tmp_path, monkeypatch, 3, 1, "Pendulum-v1")
    r = _run("lsdt", "train", data, "--steps", 2, "--hidden", 8, "--n-blocks", 1,
             "--context", 2, "--batch-size", 4, "--out", tmp_path / "m.safetensors")
    assert r.exit_code == 0, r.output


def test_gsd_train_trains_from_a_minari_folder(tmp_path, monkeypatch):
    data = _minari(tmp_path, monkeypatch, 3, 1, "Pendulum-v1")
    r = _run("gsd", "train", data, "--env", "Pendulum-v1", "--iterations", 1, "--num-envs", 2,
             "--out", tmp_path / "p.safetensors")
    assert r.exit_code == 0, r.output


def test_image_verbs_train_from_a_folder_of_images(tmp_path):
    pytest.importorskip("PIL")
    import torch

    from iclr25.datasets.images import save_image

    (tmp_path / "img").mkdir()
    for i in range(2):
        save_image(torch.rand(3, 16, 16, generator=torch.Generator().manual_seed(i)),
                   tmp_path / "img" / f"{i}.png")
    r = _run("lowlight", "fit", tmp_path / "img", "--steps", 1, "--crop", 8, "--width", 4,
             "--out", tmp_path / "l.safetensors")
    assert r.exit_code == 0, r.output
    r = _run("dcpt", "pretrain", tmp_path / "img", "--kinds", "noise,blur", "--steps", 1,
             "--width", 4, "--size", 8, "--batch", 2, "--out", tmp_path / "d.safetensors")
    assert r.exit_code == 0, r.output
    r = _run("dcpt", "finetune", tmp_path / "d.safetensors", tmp_path / "img",
             "--degradation", "noise", "--steps", 1, "--size", 8, "--batch", 2,
             "--out", tmp_path / "f.safetensors")
    assert r.exit_code == 0, r.output


# -- refusals, before any work ----------------------------------------------------------------


def test_a_data_path_of_no_known_format_names_the_formats(tmp_path):
    from iclr25.datasets.files import FORMATS

    (tmp_path / "empty").mkdir()
    np.save(tmp_path / "b.npy", B)
    for args in (("comm", "fit", tmp_path / "empty", tmp_path / "b.npy"),
                 ("urlost", "fit", tmp_path / "empty")):
        r = _run(*args, "--out", tmp_path / "m.safetensors")
        _one_line_exit_2(r)
        assert all(f in r.output for f in FORMATS)


def _verb_args(tmp_path, group: str, verb: str) -> list:
    """Arguments that pass every check before the engine's (files that exist)."""
    np.save(tmp_path / "a.npy", A)
    np.savez(tmp_path / "xy.npz", X=A, Y=B)
    out = ["--out", tmp_path / "m.safetensors"]
    if group == "dcpt":
        return [verb, tmp_path, *out] if verb == "pretrain" else \
            [verb, tmp_path / "m.safetensors", tmp_path, "--degradation", "noise", *out]
    return {"comm": ["fit", tmp_path / "a.npy", tmp_path / "a.npy", *out],
            "cox": ["fit", "--oom", tmp_path / "a.npy", "--im", tmp_path / "a.npy",
                    "--im-labels", tmp_path / "a.npy", *out],
            "urlost": ["fit", tmp_path / "a.npy", *out],
            "v3": ["fit", tmp_path / "a.npy", *out],
            "toss": ["fit", tmp_path / "xy.npz", *out],
            "lowlight": ["fit", tmp_path, *out],
            "lsdt": ["train", tmp_path / "xy.npz", *out],
            "gsd": ["train", tmp_path / "xy.npz", *out]}[group]


@pytest.mark.parametrize(("group", "verb"), TRAINING_VERBS)
@pytest.mark.parametrize(("flags", "says"), [
    (["--devices", "4096"], "--devices=4096 but this machine has"),
    (["--precision", "bf16"], "--precision must be one of 32, bf16-mixed, 16-mixed"),
])
def test_engine_options_that_cannot_run_are_one_line(tmp_path, group, verb, flags, says):
    r = _run(group, *_verb_args(tmp_path, group, verb), *flags)
    _one_line_exit_2(r)
    assert says in r.output
    assert not (tmp_path / "m.ckpt").exists()


def test_the_options_go_to_the_keywords_the_training_call_takes(tmp_path, capsys):
    import typer

    from iclr25._cli import EngineArgs

    out = tmp_path / "m.safetensors"

    def named(X, devices=1, precision="32"):
        pass

    def everything(X, **engine: Unpack[EngineOptions]):  # noqa: F821 (the API's spelling)
        pass

    def none(X):
        pass

    args = EngineArgs(precision="bf16-mixed", checkpoint_every=3)
    assert EngineArgs().for_(none, out, "x fit") == {}
    run = args.for_(everything, out, "x fit")
    assert run["precision"] == "bf16-mixed" and run["checkpoint"] == tmp_path / "m.ckpt"
    assert set(run) == {n for n, *_ in ENGINE_OPTIONS} - {"checkpoint_every"} | {
        "checkpoint", "checkpoint_every"}
    assert EngineArgs(precision="bf16-mixed").for_(named, out, "x fit") == {
        "devices": 1, "precision": "bf16-mixed"}
    # what the call cannot take is refused, naming the flags, not dropped
    with pytest.raises(typer.Exit) as err:
        args.for_(named, out, "x fit")
    assert err.value.exit_code == 2
    assert capsys.readouterr().err == ("error: `iclr25 x fit` does not take --checkpoint-every "
                                       "yet (its training loop is not on the engine)\n")


def test_resuming_a_verb_on_another_table_is_one_line_naming_the_dataset(tmp_path):
    table = pa.table({"a": A[:, 0], "b": A[:, 1], "t": B[:, 0], "u": B[:, 1]})
    data = _write(table, tmp_path / "d", "parquet")
    common = ["--targets", "t,u", "--epochs", 1, "--n-neighbors", 4, "--out",
              tmp_path / "m.safetensors"]
    r = _run("toss", "fit", data, *common, "--checkpoint-every", 2)
    assert r.exit_code == 0 and (tmp_path / "m.ckpt").exists(), r.output
    (tmp_path / "m.ckpt").rename(tmp_path / "keep.ckpt")
    other = _write(table.set_column(0, "a", pa.array(A[:, 2])), tmp_path / "o", "parquet")
    r = _run("toss", "fit", other, *common, "--resume", tmp_path / "keep.ckpt")
    _one_line_exit_2(r)
    assert "resume: the checkpoint was trained with dataset" in r.output
    r = _run("toss", "fit", data, *common, "--resume", tmp_path / "keep.ckpt")
    assert r.exit_code == 0, r.output
