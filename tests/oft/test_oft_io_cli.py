"""DIMACS reading (vs networkx) and the ``iclr25 oft solve`` command."""

import warnings

import networkx as nx
import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from iclr25.cli import app
from iclr25.oft import make_layered, min_cost_flow, read_dimacs

DIMACS = """c a small NETGEN-style problem
p min 5 7
n 1 4
n 5 -4
a 1 2 0 3 2
a 1 3 0 4 1
a 2 4 0 2 3
a 3 2 0 1 1
a 3 4 0 5 4
a 4 5 0 4 1
a 2 5 0 2 7
"""


def _nx_from(text):
    G = nx.DiGraph()
    for line in text.splitlines():
        p = line.split()
        if p and p[0] == "p":
            G.add_nodes_from(range(1, int(p[2]) + 1), demand=0)
        elif p and p[0] == "n":
            G.nodes[int(p[1])]["demand"] = -int(p[2])
        elif p and p[0] == "a":
            G.add_edge(int(p[1]), int(p[2]), capacity=int(p[4]), weight=int(p[5]))
    return G


def test_read_dimacs_matches_networkx(tmp_path):
    f = tmp_path / "toy.min"
    f.write_text(DIMACS)
    s, C, cap = read_dimacs(f)
    assert s.tolist() == [4.0, 0, 0, 0, -4.0]
    assert float(C[0, 1]) == 2 and float(cap[0, 1]) == 3 and torch.isinf(C[1, 0])
    F, lg = min_cost_flow(s, C, capacity=cap, log=True)
    assert lg["cost"] == pytest.approx(nx.min_cost_flow_cost(_nx_from(DIMACS)))


@pytest.mark.parametrize("text,msg", [
    ("c nothing\n", "no 'p min"),
    ("p max 3 1\n", ":1: expected 'p min"),
    ("p min 2 1\na 1 3 0 1 1\n", "unknown node 3"),
    ("p min 2 1\nn 7 1\n", "unknown node 7"),
    ("p min 2 1\na 1 2 1 3 1\n", ":2: lower bound"),
    ("p min 2 1\na 1 2 0 x 1\n", ":2:"),
    ("p min 2 1\nq 1\n", ":2: unknown line type"),
    ("n 1 1\np min 2 1\n", "before the 'p min'"),
    ("p min 2 2\na 1 2 0 1 1\na 1 2 0 1 5\n", ":3: parallel arc"),
])
def test_read_dimacs_errors(tmp_path, text, msg):
    f = tmp_path / "bad.min"
    f.write_text(text)
    with pytest.raises(ValueError, match=msg):
        read_dimacs(f)


def test_read_dimacs_missing_file(tmp_path):
    with pytest.raises(ValueError, match="path: cannot read"):
        read_dimacs(tmp_path / "none.min")


def test_cli_solve_min_and_npz(tmp_path):
    f = tmp_path / "toy.min"
    f.write_text(DIMACS)
    out = tmp_path / "flow.npy"
    r = CliRunner().invoke(app, ["oft", "solve", str(f), "--reg", "0.01", "--exact",
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "exact (HiGHS) cost" in r.output and "relative gap" in r.output
    arcs = np.load(out)
    assert arcs.dtype.names == ("tail", "head", "flow", "cost")
    s_, C_, cap_ = read_dimacs(f)
    assert len(arcs) == int((cap_ > 0).sum())  # one row per arc of the file, numbered from 1
    net = np.zeros(5)
    np.add.at(net, arcs["tail"] - 1, arcs["flow"])
    np.add.at(net, arcs["head"] - 1, -arcs["flow"])
    assert np.allclose(net, [4, 0, 0, 0, -4], atol=1e-5)
    assert np.allclose(arcs["cost"], C_.numpy()[arcs["tail"] - 1, arcs["head"] - 1])
    assert arcs["flow"] @ arcs["cost"] == pytest.approx(float(r.output.split()[1]), rel=1e-6)
    s, C = make_layered(3, 2, 3, seed=0)
    z = tmp_path / "p.npz"
    np.savez(z, s=s.numpy(), C=C.numpy())
    csv = tmp_path / "f.csv"
    r = CliRunner().invoke(app, ["oft", "solve", str(z), "--log-domain", "--reg", "0.01",
                                 "--out", str(csv)])
    assert r.exit_code == 0, r.output
    assert csv.read_text().splitlines()[0] == "tail,head,flow,cost"
    rows = np.loadtxt(csv, delimiter=",", skiprows=1)
    n_arcs = int((np.isfinite(C.numpy()) & ~np.eye(8, dtype=bool)).sum())
    assert rows.shape == (n_arcs, 4) and rows[:, :2].min() == 0  # .npz nodes from 0
    assert np.allclose(rows[:, 3], C.numpy()[rows[:, 0].astype(int), rows[:, 1].astype(int)])
    # issue 68: arcs the plan does not use were written as 3.0e-145; now exact zeros, and
    # every written flow is either 0 or above float64's resolution of the total flow
    flows = rows[:, 2]
    assert (flows == 0).any()
    assert flows[flows > 0].min() > np.finfo(np.float64).eps * flows.sum()


def test_cli_an_unconverged_flow_points_to_the_options_and_exact(tmp_path):
    # issue 68: an infeasible network (capacity 1 < supply 4) printed "(see
    # log['balance_violation'])", an API name, with no word that --exact tells
    f = tmp_path / "tight.min"
    f.write_text("p min 3 2\nn 1 4\nn 3 -4\na 1 2 0 1 1\na 2 3 0 1 1\n")
    r = CliRunner().invoke(app, ["oft", "solve", str(f), "--iters", "200"])
    assert r.exit_code == 0, r.output
    (line,) = [x for x in r.output.splitlines() if x.startswith("warning:")]
    assert line == ("warning: OFT-Sinkhorn did not converge in 200 iterations: the flow is off "
                    "balance (below). Raise --iters or --reg; if the capacities cannot carry "
                    "the supply to the demand, no setting helps: --exact checks")
    r = CliRunner().invoke(app, ["oft", "solve", str(f), "--iters", "200", "--exact"])
    assert r.exit_code == 2 and "infeasible" in r.output
    with warnings.catch_warnings():   # one policy for every verb (issue 68 tidy): a user's
        warnings.simplefilter("ignore")   # ignore holds (it printed the warning regardless)
        r = CliRunner().invoke(app, ["oft", "solve", str(f), "--iters", "200"])
    assert r.exit_code == 0 and "warning:" not in r.output, r.output


def test_cli_bad_arguments_exit_2(tmp_path):
    f = tmp_path / "toy.min"
    f.write_text(DIMACS)
    for args, msg in [
        (["oft", "solve", str(tmp_path / "none.min")], "does not exist"),
        (["oft", "solve", str(f), "--out", str(tmp_path / "x.txt")], "--out must end"),
        (["oft", "solve", str(f), "--reg", "0"], "reg"),
    ]:
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 2, r.output
        assert msg in r.output
    bad = tmp_path / "bad.txt"
    bad.write_text("x")
    r = CliRunner().invoke(app, ["oft", "solve", str(bad)])
    assert r.exit_code == 2 and "FILE must end" in r.output


@pytest.mark.parametrize("args, msg", [
    (["--reg", "0"], "error: --reg must lie in (0, inf), got 0.0"),
    (["--reg", "nan"], "error: --reg must lie in (0, inf), got nan"),
    (["--iters", "0"], "error: --iters must lie in [1, inf], got 0"),
])
def test_cli_options_named_as_spelled_before_file_is_read(tmp_path, args, msg):
    # issue 68, walk 11: `--reg 0` said "reg must lie ...", `--iters 0` "numItermax must
    # lie ...", both after FILE was read; a file that cannot be read shows the order
    bad = tmp_path / "bad.min"
    bad.write_text("p min x\n")
    r = CliRunner().invoke(app, ["oft", "solve", str(bad), *args])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [msg]
