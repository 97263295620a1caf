"""Pages generated at build time: the API reference from each method's ``__all__`` and one
page per method (the paper's abstract, the committed quick reproduction rendered by the code
``iclr25 report`` uses, the official-code agreement, the benchmark against the peer, limits).

Generated files go to ``docs/api/`` and ``docs/methods/`` (ignored by git); the tests import
:func:`api_page` to compare each ``__all__`` with what the reference documents.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shutil
from pathlib import Path
from typing import Any

import tomllib

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
DATA = DOCS / "_data"
QUICK = DATA / "quick" / "results.json"
BENCH = ROOT / "benchmarks" / "results.json"
MANIFEST = ROOT / "tests" / "fidelity" / "MANIFEST.toml"


def methods() -> dict[str, Any]:
    """``{method: PAPER}`` in README order."""
    from iclr25 import claims

    return claims.papers()


def _title(text: str, ch: str = "=") -> list[str]:
    return [text, ch * len(text), ""]


def _directive(module: str, name: str, obj: Any) -> list[str]:
    target = f"{module}.{name}"
    if inspect.isclass(obj):
        return [f".. autoclass:: {target}", "   :members:", "   :show-inheritance:", ""]
    if callable(obj) and not isinstance(obj, type):
        kind = "autofunction" if inspect.isroutine(obj) else "autodata"
        return [f".. {kind}:: {target}", ""]
    # a constant: its value (its type's docstring would say nothing about it)
    value = repr(obj) if len(repr(obj)) <= 160 else f"<{type(obj).__name__}>"
    return [f".. py:data:: {name}", f"   :value: {value}", "",
            f"   A constant of ``iclr25.{module.split('.')[1]}``"
            f"{' (the paper record the report cites)' if name == 'PAPER' else ''}.", ""]


def api_page(method: str) -> str:
    """The reStructuredText of ``api/<method>.rst``: one autodoc directive per ``__all__`` name."""
    mod = importlib.import_module(f"iclr25.{method}")
    paper = mod.PAPER
    lines = [f".. _api-{method}:", "", *_title(f"{paper.number}. iclr25.{method}"),
             f".. automodule:: iclr25.{method}", "   :no-members:", "",
             f"Paper: *{paper.title}* ({paper.authors}, {paper.venue}); "
             f":doc:`method page <../methods/{method}>`"
             + (f", `arXiv {paper.arxiv} <https://arxiv.org/abs/{paper.arxiv}>`__"
                if paper.arxiv else "")
             + (f", `official code <https://github.com/{paper.code}>`__" if paper.code else "")
             + ".",
             "", ".. currentmodule:: iclr25." + method, "",
             ".. autosummary::", "   :nosignatures:", ""]
    names = sorted(mod.__all__, key=str.lower)
    lines += [f"   {n}" for n in names if callable(getattr(mod, n))] + [""]
    for name in names:
        lines += _directive(f"iclr25.{method}", name, getattr(mod, name))
    return "\n".join(lines) + "\n"


def _md_table(columns: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table as the report writes one (numbers to 4 significant figures), then a
    blank line."""
    from iclr25._format import md_table

    return [*md_table(columns, rows), ""]


def verdicts_list() -> str:
    """The reStructuredText list of :data:`iclr25.verdicts.VERDICTS` that ``reproducing.rst``
    and ``architecture.rst`` include (``api/verdicts.inc``)."""
    from iclr25.verdicts import VERDICTS

    items = [f"- **{v.name}**: {v.meaning}." for v in VERDICTS]
    return "\n".join([f"A claim comes to one of {len(VERDICTS)} verdicts:", "", *items, ""])


def _reproduction(method: str, out: Path) -> list[str]:
    """The quick report's section for ``method``, rendered by :func:`iclr25.report.render`."""
    if not QUICK.exists():
        return ["No committed quick `results.json` was found (`docs/_data/quick/`); run "
                "`iclr25 reproduce --scale quick --out docs/_data/quick` to make one.", ""]
    from iclr25 import report

    env, experiments, results, papers = report.read_results(QUICK)
    mine = [r for r in results if r.method == method]
    if not mine:
        return [f"The committed quick run has no claim of `{method}`.", ""]
    ids = {r.experiment for r in mine}
    exps = [e for e in experiments if e.id in ids]
    for e in exps:  # figures: copied beside the page, the links made relative to it
        e.figures = [_copy_figure(f, out) for f in e.figures]
    # the run's wall time is the whole run's, not this method's: each experiment shows its own
    env = {k: v for k, v in env.items() if k not in ("wall_seconds", "experiment_seconds")}
    text = report.render(env, exps, mine, papers, out)
    body = text.split("\n## Environment")[0]
    # the method's section only (its paper line is on this page already), headings one deeper
    section = body.split("\nClaims:\n", 1)[1] if "\nClaims:\n" in body else body
    table = body.split("\n## ")[0].split("\n", 2)[2]  # the summary table, without the title
    lines = [table.strip(), "", "### Claims", "", section.strip(), ""]
    return [re.sub(r"^### ", "#### ", ln) for ln in "\n".join(lines).splitlines()]


def _copy_figure(fig: str, out: Path) -> str:
    src = QUICK.parent / fig
    if not src.exists():
        return fig
    dst = out / "_figures" / Path(fig).name
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return f"_figures/{dst.name}"


def _agreement(method: str) -> list[str]:
    fixtures = [f for f in tomllib.loads(MANIFEST.read_text())["fixture"]
                if f["method"] == method] if MANIFEST.exists() else []
    if not fixtures:
        return ["No fixture of the official code's outputs is recorded for this method.", ""]
    lines = ["Golden fixtures of the official code's outputs on fixed inputs "
             "(`tests/fidelity/MANIFEST.toml`; `tests/fidelity/` recomputes each with iclr25 "
             "and checks it within the tolerance):", ""]
    rows = []
    for f in fixtures:
        src = f.get("official", "-")
        if f.get("commit"):
            src += f" @ {f['commit'][:10]}"
        rows.append([f"`{f['name']}`", f.get("kind", "-"), src, f.get("function", "-"),
                     f.get("tolerance", "-"), f.get("agreement", "-")])
    return lines + _md_table(["fixture", "kind", "official code", "function", "tolerance",
                              "agreement measured"], rows)


def _benchmark(method: str) -> list[str]:
    """Rows of ``benchmarks/results.json`` (``{"runs": ..., "rows": [...]}``) for ``method``."""
    if not BENCH.exists():
        return ["`benchmarks/results.json` is not present in this build, so no benchmark rows "
                f"are shown; `python benchmarks/{method}.py --quick` prints them.", ""]
    data = json.loads(BENCH.read_text())
    rows = data if isinstance(data, list) else data.get("rows", data.get("results", []))
    # a method's extra benchmarks (oft_sparse) are named <method>_<what>
    mine = [r for r in rows if isinstance(r, dict)
            and str(r.get("method")).split("_")[0] == method]
    if not mine:
        run = data.get("runs", {}).get(method, {}) if isinstance(data, dict) else {}
        state = f" (its run ended: {run['status']})" if run.get("status") else ""
        return [f"`benchmarks/results.json` has no row for `{method}`{state}; "
                f"`python benchmarks/{method}.py --quick` prints its table.", ""]
    cols = ["case", "ours", "peer", "peer_name", "unit", "ratio", "target", "met", "load",
            "date", "agreement"]
    met = {True: "met", False: "missed"}
    rows = [[met.get(r.get(c), "-") if c == "met" else "-" if r.get(c) in (None, "") else r[c]
             for c in cols] for r in mine]
    return ["From `benchmarks/results.json` (`python benchmarks/run_all.py --quick`): *ours* and "
            "*peer* are medians on the same inputs, CPU time unless the unit says otherwise; "
            "*ratio* is how many times better ours is (peer / ours for times and memory, "
            "ours / peer for rates and scores); *target* bounds the ratio; *load* is the "
            "machine's load average when the row was measured; *agreement* is the check that "
            "both gave the same output.", "", *_md_table(cols, rows)]


def _limits(method: str) -> list[str]:
    path = DATA / "full_scale.md"
    rows = [ln for ln in path.read_text().splitlines()
            if ln.startswith(f"| {method}.")] if path.exists() else []
    lines = ["At quick scale (above) the verdicts are a smoke test of the pipeline, not evidence. "
             "The full-scale verdicts (`iclr25 reproduce --scale full`, seed 0, CPU, one thread; "
             "the `why` column quotes the ladder's trend over training budgets where one was "
             "run):", ""]
    if not rows:
        return lines + ["No full-scale row is recorded for this method.", ""]
    return lines + ["| claim | full value | verdict | why / ladder trend (budgets) |",
                    "|---|---|---|---|", *rows, ""]


def method_page(method: str, out: Path) -> str:
    """The Markdown of ``methods/<method>.md``."""
    paper = methods()[method]
    abstracts = json.loads((DATA / "abstracts.json").read_text())
    links = [f"[arXiv {paper.arxiv}](https://arxiv.org/abs/{paper.arxiv})" if paper.arxiv else "",
             f"[OpenReview](https://openreview.net/forum?id={paper.openreview})"
             if paper.openreview else "",
             f"[official code](https://github.com/{paper.code})" if paper.code else
             "no official code was released"]
    lines = [f"# {paper.number}. {paper.title}", "",
             f"{paper.authors}. {paper.venue}. " + " · ".join(x for x in links if x), "",
             f"API: {{ref}}`iclr25.{method} <api-{method}>` · example: "
             f"{{ref}}`sphx_glr_auto_examples_plot_{method}.py` · "
             f"`iclr25 {method} --help`", "",
             "## What the paper claims", "", "> " + abstracts.get(method, "(abstract missing)"), "",
             "## What our reproduction measured", "",
             "The committed quick run (`docs/_data/quick/results.json`, made by "
             "`iclr25 reproduce --scale quick --out docs/_data/quick`), rendered by the code of "
             "`iclr25 report`:", "", *_reproduction(method, out),
             "## Agreement with the official code", "", *_agreement(method),
             "## Benchmark against the peer", "", *_benchmark(method),
             "## Known limits", "", *_limits(method)]
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # unchanged files keep Sphinx's cache
        path.write_text(text)


def generate(app: Any = None) -> None:
    """Write ``api/*.rst``, ``methods/*.md`` and ``cli.rst`` under ``docs/``."""
    names = list(methods())
    api, meth = DOCS / "api", DOCS / "methods"
    for m in names:
        _write(api / f"{m}.rst", api_page(m))
        _write(meth / f"{m}.md", method_page(m, meth))
    _write(api / "verdicts.inc", verdicts_list())
    toc = ["   " + m for m in names]
    _write(api / "index.rst", "\n".join([
        ".. _api:", "", *_title("API reference"),
        "Every public name of every method, grouped by method: each method's ``__all__``, "
        "with signatures, shapes and defaults from the docstrings. The command line is on "
        ":doc:`its own page <cli>`.", "", ".. toctree::", "   :maxdepth: 1", "",
        *toc, "   cli", ""]))
    _write(api / "cli.rst", "\n".join([
        *_title("Command line"),
        "Every verb of ``iclr25``, from its ``--help``. Each method's verbs are under "
        "``iclr25 <method>``.", "",
        ".. click:: iclr25_cli_doc:command", "   :prog: iclr25", "   :nested: full", ""]))
    _write(meth / "index.md", "\n".join([
        "# Methods", "",
        "One page per paper: what it claims, what our reproduction measured, how it agrees "
        "with the official code, its benchmark against the peer a user would otherwise pick, "
        "and its known limits.", "", "```{toctree}", ":maxdepth: 1", "", *names, "```", ""]))


# --- docstrings written as plain text with math: make them safe reStructuredText -------------
# ``|x|`` is a norm, not a substitution; ``alpha_`` a fitted attribute, not a link; ``*shape``
# a star, not emphasis. Literals, roles, links, doctests and literal blocks are left alone.
_KEEP = re.compile(r"(``.+?``|:[\w:+-]+:`[^`]*`|`[^`]*`_{0,2})")
_LITERAL_END = re.compile(r"(``[^`]+``)(?=[^\s\\.,:;!?)\]}'\"/`-])")


def _escape(text: str) -> str:
    parts = _KEEP.split(text)
    for i in range(0, len(parts), 2):
        t = parts[i].replace("|", "\\|")
        t = re.sub(r"(?<![\\*])\*\*?(?=[A-Za-z_(])(?![^*\n]*\*)",
                   lambda m: "\\*" * len(m.group()), t)
        t = re.sub(r"(\w*[A-Za-z0-9])_(?=\W|$)", r"\1\\_", t)
        parts[i] = t
    return _LITERAL_END.sub(r"\1\\ ", "".join(parts))


def rst_safe(lines: list[str]) -> list[str]:
    """``lines`` of a docstring (after napoleon) with stray RST markup escaped."""
    out, block, indent = [], None, 0
    for ln in lines:
        s = ln.strip()
        ind = len(ln) - len(ln.lstrip())
        if block == "doctest" and not s:
            block = None
        elif block == "literal" and s and ind <= indent:
            block = None
        if block is None and s.startswith(">>>"):
            block = "doctest"
        if block or s.startswith(("..", ">>>")) or not s:
            out.append(ln)
        else:
            out.append(_escape(ln))
        if block is None and s.endswith("::") and not s.startswith(".."):
            block, indent = "literal", ind
        elif block is None and s.startswith(".. code") :
            block, indent = "literal", ind
    return out


def _process_docstring(app: Any, what: str, name: str, obj: Any, options: Any,
                       lines: list[str]) -> None:
    lines[:] = rst_safe(lines)


def _skip(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    # scikit-learn's generated metadata-routing setters say nothing about the method
    if name.startswith("set_") and name.endswith("_request") or name == "get_metadata_routing":
        return True
    return None


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", _process_docstring, priority=900)
    app.connect("autodoc-skip-member", _skip)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
