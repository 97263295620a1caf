"""
OFT — Solve a min-cost flow problem from a DIMACS file with OFT-Sinkhorn
========================================================================

Min-cost flow instances are usually exchanged as DIMACS ``.min`` files (the format NETGEN
writes). :func:`iclr25.oft.read_dimacs` reads one into dense supplies, costs and capacities;
:func:`iclr25.oft.oft_sinkhorn` solves the entropic min-cost flow by the matrix scalings of
OFT-Sinkhorn (Shi et al., ICLR 2025), which run batched on a GPU; and
:func:`iclr25.oft.min_cost_flow` gives the exact optimum to compare with.

Here we write a DIMACS file for a small road network: 60 towns on a random geometric graph
(networkx), two warehouses supplying eight shops, roads costed by their length with a
capacity each.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np

from iclr25 import oft

rng = np.random.default_rng(0)
G = nx.random_geometric_graph(60, 0.25, seed=0)
pos = nx.get_node_attributes(G, "pos")
supply = {0: 40, 1: 40}
supply.update({v: -10 for v in rng.choice(np.arange(2, 60), 8, replace=False).tolist()})

lines = ["c a road network: towns, roads costed by length (x100), capacity 25 each way",
         f"p min {G.number_of_nodes()} {2 * G.number_of_edges()}"]
lines += [f"n {v + 1} {s}" for v, s in supply.items()]
for u, v in G.edges:
    cost = round(100 * float(np.hypot(*np.subtract(pos[u], pos[v]))))
    lines += [f"a {u + 1} {v + 1} 0 25 {cost}", f"a {v + 1} {u + 1} 0 25 {cost}"]
path = Path(tempfile.mkdtemp()) / "roads.min"
path.write_text("\n".join(lines) + "\n")
print(f"{path.name}: {len(supply)} nodes with supply or demand, {2 * G.number_of_edges()} arcs")

# %%
# Read it and solve: the entropic flow, then the exact one.
s, C, capacity = oft.read_dimacs(path)
F, log = oft.oft_sinkhorn(s, C, reg=1e-3, capacity=capacity, log=True)
F_exact = oft.min_cost_flow(s, C, capacity=capacity)
print(f"OFT-Sinkhorn cost {log['cost']:.1f} in {log['n_iter']} iterations; "
      f"exact {oft.flow_cost(F_exact, C):.1f}")
print({k: f"{v.item():.1e}" for k, v in
       oft.flow_violations(F, s, capacity=capacity).items()})

# %%
# The flow on the map: line width is the flow on each road.
fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
for ax, flow, title in ((axes[0], F, "OFT-Sinkhorn"), (axes[1], F_exact, "exact (HiGHS)")):
    nx.draw_networkx_edges(G, pos, ax=ax, edge_color="lightgray")
    used = [(u, v) for u, v in zip(*np.nonzero(flow.numpy() > 0.5), strict=True)]
    widths = [flow[u, v].item() / 8 for u, v in used]
    nx.draw_networkx_edges(nx.DiGraph(used), pos, ax=ax, width=widths, edge_color="C0",
                           arrows=False)
    colours = ["C3" if supply.get(v, 0) > 0 else "C2" if supply.get(v, 0) < 0 else "k"
               for v in G.nodes]
    nx.draw_networkx_nodes(G, pos, ax=ax, node_size=[60 if v in supply else 8 for v in G],
                           node_color=colours)
    ax.set_title(f"{title}: cost {oft.flow_cost(flow, C):.0f}")
plt.show()
