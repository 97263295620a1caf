import importlib.util
import json
import os
import re
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from iclr25 import claims
from iclr25.claims import Context, Evidence, Paper, Setting, claim, experiment, scalar
from iclr25.cli import app

runner = CliRunner()


@dataclass(frozen=True)
class S(Setting):
    budget_fields = ()
    n: int


@dataclass
class E(Evidence):
    value: float = scalar("fraction")


@pytest.fixture
def registry(monkeypatch):
    """A registry holding only claims made here, so the CLI never runs real methods."""
    reg = {}
    seen = []
    monkeypatch.setattr(claims, "_CLAIMS", {})
    monkeypatch.setattr(claims, "_EXPERIMENTS", {})
    monkeypatch.setattr(claims, "discover", lambda: reg)
    monkeypatch.setattr(claims, "papers", lambda: {"t": Paper(1, "t", "Toy paper", "A")})
    monkeypatch.setattr(claims, "unavailable_methods", lambda: {})

    def add(cid, value, threshold=0.5):
        def exp(setting: S, ctx: Context) -> E:
            seen.append((cid, ctx.scale.value, ctx.seed, str(ctx.device)))
            if value is None:
                raise RuntimeError("experiment blew up")
            return E(value=value)

        exp.__name__ = cid.replace(".", "_")  # one experiment per claim, each its own id
        exp = experiment(quick=S(1), full=S(2))(exp)

        c = claim(cid, experiment=exp, sentence=f"sentence {cid}", metric="m", unit="fraction",
                  paper_figure="-", threshold=threshold)(lambda ev: ev.value)
        reg[cid] = c

    add.seen = seen
    return add


def test_list(registry):
    from iclr25 import _catalog

    registry("t.good", 1.0)
    shown = _catalog.lines(claims.papers(), claims.discover().values(), {"x": "why"})
    assert shown == [" 1. t: Toy paper", "      t.good  [m >= 0.5 fraction]",
                     "    x: not importable (why)"]
    out = runner.invoke(app, ["list"])  # from the catalog (tests/core/test_catalog.py)
    assert out.exit_code == 0 and out.output.splitlines() == _catalog.listing()


def test_reproduce_writes_report_and_continues_after_error(registry, tmp_path):
    registry("t.good", 1.0)
    registry("t.bad", 0.1)
    registry("t.raises", None)
    out = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--seed", "4"])
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "results.json").read_text())
    status = {r["claim_id"]: r["status"] for r in data["claims"]}
    assert status == {"t.good": "holds", "t.bad": "fails", "t.raises": "error"}
    assert all(r["seed"] == 4 for r in data["experiments"])
    assert "experiment blew up" in (tmp_path / "REPORT.md").read_text()
    assert ("1 holds, 1 fails, 0 unsettled, 0 inconclusive, 0 uninformative, 1 error (quick "
            "scale: a smoke "
            "test") in out.output
    assert "smoke:holds  t.good" in out.output
    env = data["environment"]
    assert env["jobs"] == 1 and env["threads"] >= 1 and env["wall_seconds"] > 0


def test_strict_exit_codes(registry, tmp_path):
    registry("t.good", 1.0)
    registry("t.bad", 0.1)
    out = str(tmp_path)
    assert runner.invoke(app, ["reproduce", "t.good", "--strict", "--out", out]).exit_code == 0
    assert runner.invoke(app, ["reproduce", "t.bad", "--strict", "--out", out]).exit_code == 1


def test_scale_and_device_reach_the_experiment(registry, tmp_path):
    registry("t.good", 1.0)
    out = runner.invoke(app, ["reproduce", "--scale", "full", "--device", "cpu", "--out",
                              str(tmp_path)])
    # full scale: three draws at seeds 0, DRAW_STRIDE and 2 * DRAW_STRIDE
    from iclr25.runner import DRAW_STRIDE

    assert out.exit_code == 0 and registry.seen == [("t.good", "full", d * DRAW_STRIDE, "cpu")
                                                    for d in range(3)]


@pytest.mark.parametrize(("args", "message"), [
    (["t.nope"], "unknown claim or method name(s): t.nope"),
    (["--seed", "-1"], "--seed must be >= 0"),
    (["--device", "tpu"], "--device must be 'cpu' or 'cuda'"),
    (["--scale", "huge"], "huge"),
    (["--jobs", "0"], "--jobs must be between 1 and the"),
    (["--jobs", "-2"], "--jobs must be between 1 and the"),
    (["--jobs", str((os.cpu_count() or 1) + 1)], "--jobs must be between 1 and the"),
    (["--threads", "0"], "--threads must be >= 1"),
])
def test_bad_arguments_exit_2_before_work(registry, tmp_path, args, message):
    registry("t.good", 1.0)
    out = runner.invoke(app, ["reproduce", *args, "--out", str(tmp_path / "r")])
    assert out.exit_code == 2
    assert message in out.output and "Traceback" not in out.output
    assert registry.seen == [] and not (tmp_path / "r").exists()


def test_out_that_is_a_file_exits_2_before_work(registry, tmp_path):
    registry("t.good", 1.0)
    f = tmp_path / "file"
    f.write_text("x")
    out = runner.invoke(app, ["reproduce", "--out", str(f)])
    assert out.exit_code == 2 and "--out must be a directory" in out.output
    assert registry.seen == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_read_only_out_exits_2(registry, tmp_path):
    registry("t.good", 1.0)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        out = runner.invoke(app, ["reproduce", "--out", str(ro)])
        assert out.exit_code == 2 and "not writable" in out.output
    finally:
        ro.chmod(0o700)


def test_report_rerenders_from_results(registry, tmp_path):
    registry("t.good", 1.0)
    runner.invoke(app, ["reproduce", "--out", str(tmp_path / "a")])
    (tmp_path / "a" / "REPORT.md").unlink()
    out = runner.invoke(app, ["report", str(tmp_path / "a" / "results.json")])
    assert out.exit_code == 0, out.output
    assert "`t.good`" in (tmp_path / "a" / "REPORT.md").read_text()
    out = runner.invoke(app, ["report", str(tmp_path / "a" / "results.json"), "--out",
                              str(tmp_path / "b")])
    assert out.exit_code == 0 and (tmp_path / "b" / "REPORT.md").exists()


def test_report_bad_file_exits_2(tmp_path):
    out = runner.invoke(app, ["report", str(tmp_path / "missing.json")])
    assert out.exit_code == 2 and "is not a file" in out.output
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    out = runner.invoke(app, ["report", str(bad)])
    assert out.exit_code == 2 and "not an iclr25 results.json" in out.output


def test_method_commands_table_matches_the_packages():
    import importlib

    from iclr25.cli import METHOD_COMMANDS

    found = {}
    for name in claims.method_packages():
        try:
            module = importlib.import_module(f"iclr25.{name}.cli")
        except ModuleNotFoundError as exc:
            if exc.name == f"iclr25.{name}.cli":
                continue
            raise
        found[name] = module.app.info.help
    assert METHOD_COMMANDS == found


def _imports_after(argv):
    import subprocess
    import sys

    code = ("import sys; from iclr25.cli import app\n"
            "try:\n    app(" + repr(argv) + ")\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(m for m in sys.modules if m == 'torch' "
            "or m.startswith('iclr25.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip().splitlines()[-1].split()


def test_help_imports_no_method_nor_torch():
    loaded = _imports_after(["--help"])
    assert "torch" not in loaded
    assert not [m for m in loaded if m.split(".")[1] in claims.method_packages()]


def test_method_help_imports_that_method_only():
    loaded = _imports_after(["kmeans", "--help"])
    methods = {m.split(".")[1] for m in loaded if m != "torch"} & set(claims.method_packages())
    assert methods == {"kmeans"}


@pytest.mark.parametrize("argv", [["list"], ["locodl", "--help"], ["locodl", "fit", "--help"],
                                  ["mother", "make-zoo", "--help"]])
def test_list_and_method_help_import_no_torch(argv):
    # issue 55: `list` read the registry (every claim module, torch: 6 s of CPU) and a
    # method's help ran its package's __init__ (torch: 2 s)
    loaded = _imports_after(argv)
    assert "torch" not in loaded, loaded
    if argv == ["list"]:
        assert not [m for m in loaded if m.split(".")[1] in claims.method_packages()]


@pytest.mark.parametrize("method", sorted(m for m in claims.method_packages()
                                          if importlib.util.find_spec(f"iclr25.{m}.cli")))
def test_every_method_and_verb_help_imports_no_torch(method):
    # issue 68: dbtsw, gsd and lsdt help (and their 7 verb helps) imported torch (1.3-1.6 s)
    import subprocess
    import sys

    code = ("import sys; from iclr25.cli import app\n"
            "def run(argv):\n    try:\n        app(argv)\n    except SystemExit:\n        pass\n"
            f"run([{method!r}, '--help'])\n"
            f"sub = sys.modules['iclr25.{method}.cli'].app\n"
            "verbs = [c.name or c.callback.__name__ for c in sub.registered_commands]\n"
            f"for v in verbs:\n    run([{method!r}, v, '--help'])\n"
            "print(len(verbs), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1].split()
    assert out[1] == "False", (method, out)


def test_cli_spellings_match_the_api():
    # spelt in the cli modules so that help imports no torch: one vocabulary, checked here
    import typing

    from iclr25.dbtsw import cli as dbtsw_cli
    from iclr25.dbtsw.distance import DEFAULT_SEED
    from iclr25.gsd import cli as gsd_cli
    from iclr25.gsd.training import Regularizer

    assert dbtsw_cli.DEFAULT_SEED == DEFAULT_SEED
    assert typing.get_args(gsd_cli.Regularizer) == typing.get_args(Regularizer)


def test_a_package_deferred_for_help_initialises_on_first_use():
    import subprocess
    import sys

    code = ("import sys; from iclr25.cli import _method_app\n"
            "_method_app('kmeans', ['--help'])\n"
            "import iclr25.kmeans as k\n"
            "before = 'torch' in sys.modules, type(k).__name__\n"
            "print(*before, k.PAPER.short, type(k).__name__, 'torch' in sys.modules, "
            "callable(k.ConsistentKMeans))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "_Deferred", "kmeans", "module", "True", "True"]


def test_a_warning_at_the_command_line_is_one_line_without_a_source_path():
    # issue 68: COX's warning printed a site-packages path and the source line
    import subprocess
    import sys

    code = ("import warnings, iclr25.cli as c\n"
            "c.app = lambda: warnings.warn('the objective has not reached a plateau')\n"
            "c.main()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stderr == "warning: the objective has not reached a plateau\n"


def _verbs_with_required_params():
    """``[method, verb]`` of every method verb that has a required option or argument."""
    import typer

    from iclr25.cli import METHOD_COMMANDS

    for m in METHOD_COMMANDS:
        cmd = typer.main.get_command(importlib.import_module(f"iclr25.{m}.cli").app)
        for verb, sub in (getattr(cmd, "commands", None) or {m: cmd}).items():
            if any(p.required for p in sub.params):
                yield [m, verb]


@pytest.mark.parametrize("args", [
    ["reproduce", "--seed", "abc"], ["nonsuch"], ["--bogus"], ["list", "--bogus"],
    *_verbs_with_required_params()], ids=" ".join)
def test_a_usage_error_is_one_line_with_exit_2_never_a_box(args):
    # issue 68: a missing required option (and every other click usage error) printed
    # typer's framed box over several lines
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "╭" not in result.output and "Traceback" not in result.output
    assert lines[0].endswith("--help`")


@pytest.mark.parametrize("args", [["ies"], ["los", "--help"], ["crh", "fit", "x.npy"]],
                         ids=" ".join)
def test_a_method_without_a_command_line_says_so(args):
    # issue 68: `iclr25 ies` (a name `iclr25 list` prints) answered "No such command 'ies'"
    from iclr25._catalog import PAPERS
    from iclr25.cli import METHOD_COMMANDS

    assert {"ies", "los", "crh"} == {row[0] for row in PAPERS} - set(METHOD_COMMANDS)
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.output == (f"error: {args[0]} has no command line: use its Python API "
                             f"(`from iclr25 import {args[0]}`; its user guide shows how)\n")


def test_a_missing_option_names_it_and_the_verbs_help():
    result = runner.invoke(app, ["comm", "embed", "m.safetensors", "x.npy"], prog_name="iclr25")
    assert result.exit_code == 2
    assert result.output == ("error: Missing option '--out'; see `iclr25 comm embed "
                             "--help`\n"), result.output


def _docstring_help():
    """``(argv, raw help)`` of every command of the CLI, its help as the source wrote it."""
    import typer

    from iclr25.cli import METHOD_COMMANDS

    for verb, cmd in typer.main.get_command(app).commands.items():
        yield [verb], cmd.help, cmd.epilog
    for m in METHOD_COMMANDS:
        cmd = typer.main.get_command(importlib.import_module(f"iclr25.{m}.cli").app)
        for verb, sub in (getattr(cmd, "commands", None) or {cmd.name: cmd}).items():
            yield [m, verb], sub.help, sub.epilog


def test_help_joins_a_docstrings_lines_and_keeps_its_paragraphs():
    # issue 68: typer's rich help kept the docstring's line breaks, so at any width a
    # paragraph broke mid-sentence where the source did (`reproduce --help`: "--jobs" / "only
    # changes how many"); at 300 columns every paragraph (all shorter) must be one line
    import inspect

    from iclr25.cli import _ROLE, _role_text

    checked = 0
    for argv, text, epilog in _docstring_help():
        result = runner.invoke(app, [*argv, "--help"], env={"COLUMNS": "300"})
        assert result.exit_code == 0, (argv, result.output)
        lines = result.output.splitlines()
        for part in (text, epilog):
            for para in inspect.cleandoc(part or "").split("\n\n"):
                one = " ".join(_ROLE.sub(_role_text, para).split())
                if one and len(one) < 280:
                    assert any(one in line for line in lines), (argv, one, result.output)
                    checked += "\n" in para
    assert checked >= 5  # paragraphs the source broke over lines were among them


def test_no_sphinx_role_survives_in_any_help():
    # issue 68: `cox predict --help` printed "(:meth:`COX.predict` on a Dataset)"; every
    # verb's help (and its options') prints a role as its text
    role = re.compile(r":(?:py:)?(?:meth|func|class|attr|mod|data|obj|exc):`")
    with_roles = 0
    for argv, text, epilog in _docstring_help():
        result = runner.invoke(app, [*argv, "--help"], env={"COLUMNS": "300"})
        assert result.exit_code == 0, (argv, result.output)
        assert not role.search(result.output), (argv, result.output)
        with_roles += bool(role.search(f"{text} {epilog}"))
    assert with_roles >= 3  # the sources do use roles (cox/comm/toss/urlost/v3 readers)


def test_every_option_and_argument_says_what_it_is():
    # issue 68: 28 options over 8 methods' verbs showed no help at all (`urlost fit`'s
    # --clusters --epochs --dim --seed, `locodl fit --tol`, `gsd evaluate --budget`, ...)
    import typer

    from iclr25.cli import METHOD_COMMANDS

    bare = []
    for m in METHOD_COMMANDS:
        cmd = typer.main.get_command(importlib.import_module(f"iclr25.{m}.cli").app)
        for verb, sub in (getattr(cmd, "commands", None) or {m: cmd}).items():
            bare += [f"{m} {verb} {p.opts[0]}" for p in sub.params
                     if p.name != "help" and not (getattr(p, "help", None) or "").strip()]
    assert not bare, bare


def test_a_role_prints_as_sphinx_shows_its_text():
    from iclr25.cli import _paragraphs

    text = (":meth:`COX.predict`, :func:`~iclr25.datasets.files.open_dataset`,\n"
            ":class:`the rows <iclr25.cox.rows.Rows>`, :py:func:`!a.b` and ``code``.")
    assert _paragraphs(text) == ("COX.predict, open_dataset, the rows, a.b and ``code``.")


def test_a_bracketed_default_in_an_options_help_is_printed():
    # rich read "[default: 1]" in an option's help as a markup tag and dropped it
    result = runner.invoke(app, ["reproduce", "--help"], env={"COLUMNS": "300"})
    assert "(1 .. number of cores) [default: 1]." in result.output, result.output
    assert "pip install 'iclr25[cluster]')" in result.output


def test_paragraphs_join_lines_but_keep_lists_code_and_keep_as_is_blocks():
    from iclr25.cli import _paragraphs

    text = ("One\n    two.\n\n    Three\n    four [default: 1].\n\n    - a\n    - b\n\n"
            "    Code::\n\n        x = 1\n        y = 2\n\n    \bkeep\n    as is")
    assert _paragraphs(text) == ("One two.\n\nThree four \\[default: 1].\n\n- a\n- b\n\n"
                                 "Code::\n\n    x = 1\n    y = 2\n\n\bkeep\nas is")
    assert _paragraphs("iclr25\\[cluster] and y[, clients]") == "iclr25\\[cluster] and y[, clients]"
