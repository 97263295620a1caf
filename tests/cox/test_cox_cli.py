"""``iclr25 cox fit/predict`` on test-written files, and its bad-argument exits."""

import numpy as np
import pytest
from typer.testing import CliRunner

from iclr25.cox.cli import app

runner = CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    Z = rng.normal(size=(40, 8)) + 2.0 * y[:, None]
    X = np.tanh(Z @ rng.normal(size=(8, 5)))
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "A.npy", Z)
    np.savetxt(tmp_path / "ya.csv", y, fmt="%d")
    np.savetxt(tmp_path / "p.csv", np.stack([np.arange(8), np.arange(8)], 1), fmt="%d",
               delimiter=",")
    np.savetxt(tmp_path / "y.csv", np.where(np.arange(40) < 8, y, -1), fmt="%d")
    return tmp_path


def test_fit_then_predict(files):
    t = files
    r = runner.invoke(app, ["fit", "--oom", str(t / "X.npy"), "--im", str(t / "A.npy"),
                            "--im-labels", str(t / "ya.csv"), "--pairs", str(t / "p.csv"),
                            "--labels", str(t / "y.csv"), "--out", str(t / "m.pt"),
                            "--steps", "5"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["predict", str(t / "m.pt"), str(t / "X.npy"), "--out",
                            str(t / "yhat.csv")])
    assert r.exit_code == 0, r.output
    # issue 68 walk 5: it wrote the file in silence, where every other verb says what it wrote
    assert r.output == f"wrote {t / 'yhat.csv'} (40 labels)\n"
    # a header line, as the labels files fit reads: a headerless file lost its first label
    # to pandas.read_csv's header in a new user's walk (issue 68: 47 of 48 rows)
    assert (t / "yhat.csv").read_text().splitlines()[0] == "label"
    yhat = np.loadtxt(t / "yhat.csv", dtype=np.int64, skiprows=1)
    assert yhat.shape == (40,) and set(yhat.tolist()) <= {0, 1}
    r = runner.invoke(app, ["fit", "--oom", str(t / "X.npy"), "--im", str(t / "A.npy"),
                            "--im-labels", str(t / "ya.csv"), "--labels", str(t / "yhat.csv"),
                            "--out", str(t / "m2.pt"), "--steps", "5", "--n-classes", "2"])
    assert r.exit_code == 0, r.output   # the predictions read back as labels, header skipped


def test_fit_pairs_without_labels_then_predict(files):
    t = files  # issue 55: --pairs alone, the OOM rows' labels come from the IM side
    r = runner.invoke(app, ["fit", "--oom", str(t / "X.npy"), "--im", str(t / "A.npy"),
                            "--im-labels", str(t / "ya.csv"), "--pairs", str(t / "p.csv"),
                            "--out", str(t / "m.pt"), "--steps", "5"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["predict", str(t / "m.pt"), str(t / "X.npy")])
    assert r.exit_code == 0, r.output
    assert len(r.output.split()) == 40 and set(r.output.split()) <= {"0", "1"}


@pytest.mark.parametrize(("args", "msg"), [
    (["--oom", "missing.npy"], "--oom"),
    (["--pairs", "bad.csv"], "--pairs"),
    (["--labels", "oob.csv"], "y_oom"),
])
def test_fit_bad_arguments(files, args, msg):
    t = files
    (t / "bad.csv").write_text("a,b\n")
    np.savetxt(t / "oob.csv", np.full(40, 7), fmt="%d")
    base = {"--oom": str(t / "X.npy"), "--im": str(t / "A.npy"),
            "--im-labels": str(t / "ya.csv"), "--pairs": str(t / "p.csv"),
            "--labels": str(t / "y.csv"), "--out": str(t / "m.pt"), "--steps": "2"}
    base.update({args[0]: str(t / args[1])})
    if args[0] == "--labels":
        base["--n-classes"] = "2"
    cmd = ["fit"] + [x for kv in base.items() for x in kv]
    r = runner.invoke(app, cmd)
    assert r.exit_code == 2
    assert msg in r.output


def test_predict_unreadable_model(files):
    (files / "m.pt").write_text("nope")
    r = runner.invoke(app, ["predict", str(files / "m.pt"), str(files / "X.npy")])
    assert r.exit_code == 2 and "path" in r.output



def test_fit_checkpoints_and_resumes_on_the_engine(files):
    # issue 71: `cox fit` passes the engine options to COX.fit
    t = files
    common = ["fit", "--oom", str(t / "X.npy"), "--im", str(t / "A.npy"), "--im-labels",
              str(t / "ya.csv"), "--pairs", str(t / "p.csv"), "--steps", "6"]
    r = runner.invoke(app, [*common, "--out", str(t / "a.pt")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, [*common, "--out", str(t / "b.pt"), "--checkpoint-every", "3"])
    assert r.exit_code == 0 and (t / "b.ckpt").exists(), r.output
    r = runner.invoke(app, [*common, "--out", str(t / "c.pt"), "--resume", str(t / "b.ckpt")])
    assert r.exit_code == 0, r.output
    from iclr25.cox import COX

    X = np.load(t / "X.npy").astype(np.float32)
    probs = [COX.load(t / f"{n}.pt").predict_proba(X) for n in "abc"]
    assert all(np.array_equal(p, probs[0]) for p in probs)   # numpy in, numpy out
    (t / "bad.ckpt").write_bytes((t / "b.ckpt").read_bytes()[:100])
    r = runner.invoke(app, [*common, "--out", str(t / "d.pt"), "--resume", str(t / "bad.ckpt")])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "checkpoint" in r.output
    assert not (t / "d.pt").exists()


#: the API's argument names, which a command-line user cannot pass
_API_WORDS = ("X_oom", "pairs=", "y_oom=", "min_pairs", "floor_used_", "floor=", "raise steps",
              "COX.fit")


def test_fit_warnings_name_the_options_not_the_apis_arguments(files):
    # issue 68 walk: `cox fit` warned "fewer than min_pairs=15 ... Standardise X_oom or give a
    # few pairs (pairs=...)" and "raise steps": names the command line does not have
    t = files
    r = runner.invoke(app, ["fit", "--oom", str(t / "X.npy"), "--im", str(t / "A.npy"),
                            "--im-labels", str(t / "ya.csv"), "--labels", str(t / "y.csv"),
                            "--out", str(t / "m.pt"), "--steps", "5"])
    assert r.exit_code == 0, r.output
    lines = [x for x in r.output.splitlines() if x.startswith("warning: ")]
    assert any(x.endswith("raise --steps.") for x in lines), r.output   # the plateau
    assert any(x.endswith("(--pairs, --labels).") for x in lines), r.output   # the floor
    assert not any(w in r.output for w in _API_WORDS), r.output



def test_fit_prints_its_warnings_under_w_error_and_drops_them_under_ignore(files):
    # issue 68 tidy: one printer, one policy for every verb: under -W error `cox fit` ended
    # in a traceback (exit 1) at its first warning, after the fit
    import warnings

    t = files
    args = ["fit", "--oom", str(t / "X.npy"), "--im", str(t / "A.npy"), "--im-labels",
            str(t / "ya.csv"), "--labels", str(t / "y.csv"), "--out", str(t / "m.pt"),
            "--steps", "5"]
    said = {}
    for action in ("default", "error", "ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter(action)
            r = runner.invoke(app, args)
        assert r.exit_code == 0, (action, r.output)
        said[action] = [x for x in r.stderr.splitlines() if x.startswith("warning: ")]
    assert len(said["default"]) == 2 and said["error"] == said["default"], said
    assert said["ignore"] == []

def test_the_matching_and_naming_warnings_in_the_command_lines_words():
    from iclr25.cox.cli import _cli_words

    matching = ("COX.fit: re-matching round(s) 1, 2 found 2, 7 pair(s), fewer than "
                "min_pairs=15: the previous pairs were kept. Standardise X_oom or give a few "
                "pairs (pairs=...).")
    assert _cli_words(matching) == (
        "re-matching round(s) 1, 2 found 2, 7 pair(s), fewer than 15 (5 per class): the "
        "previous pairs were kept. Standardise the --oom columns or give a few pairs "
        "(--pairs).")
    naming = ("COX.fit: the class names are unconfirmed: ... (level 50%). Give more labelled "
              "rows (y_oom=...) or pairs.")
    assert not any(w in _cli_words(naming) for w in _API_WORDS)
    assert _cli_words(naming).endswith("(--labels) or pairs.")
