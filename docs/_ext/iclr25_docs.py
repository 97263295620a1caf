"""Pages generated at build time: the API reference from each method's ``__all__``, one page
per method (the paper's abstract, the committed full-scale run first and the quick smoke run
second, both rendered by :func:`iclr25.report.method_lines`, the official-code agreement, the
benchmark against the peer) and the landing page's method table.

Generated files go to ``docs/api/`` and ``docs/methods/`` (ignored by git); the tests import
:func:`api_page` to compare each ``__all__`` with what the reference documents and
:func:`full_run_disagreements` to hold the committed full run to the declared claims.
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

from iclr25._format import cell as fmt

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
DATA = DOCS / "_data"
QUICK = DATA / "quick"
FULL = DATA / "full"
BENCH = ROOT / "benchmarks" / "results.json"
MANIFEST = ROOT / "tests" / "fidelity" / "MANIFEST.toml"
# what re-makes each committed run and the full run's ladder (the method pages and the tests
# quote them)
_LADDER = ("iclr25 ladder --scale full --budgets 0.5,1,2 --draws 3 --jobs 2 "
           "--out docs/_data/full")
REMAKE = {
    "quick": "iclr25 reproduce --scale quick --out docs/_data/quick",
    "full": "iclr25 reproduce --scale full --draws 3 --jobs 2 --out docs/_data/full && "
            + _LADDER,
    "ladder": _LADDER,
}
# extra public modules documented beside the methods (their pages are api/<name>.rst)
SHARED = ("datasets",)


def methods() -> dict[str, Any]:
    """``{method: PAPER}`` in README order."""
    from iclr25 import claims

    return claims.papers()


def site_names() -> dict[str, dict[str, str]]:
    """``{method: {"name", "field", "line"}}`` from ``docs/_data/methods.toml``."""
    return tomllib.loads((DATA / "methods.toml").read_text())


def label(method: str) -> str:
    """A method's title on the site: ``"COX — Towards Out-of-Modal ..."``."""
    return f"{site_names()[method]['name']} — {methods()[method].title}"


def _title(text: str, ch: str = "=") -> list[str]:
    return [text, ch * len(text), ""]


def _is_warning(obj: Any) -> bool:
    return inspect.isclass(obj) and issubclass(obj, Warning)


def _directive(module: str, name: str, obj: Any) -> list[str]:
    target = f"{module}.{name}"
    if _is_warning(obj):  # its docstring says when it is raised; members are Exception's
        return [f".. autoexception:: {target}", "   :show-inheritance:", ""]
    if inspect.isclass(obj):
        return [f".. autoclass:: {target}", "   :members:", "   :show-inheritance:", "",
                f".. minigallery:: {target}", f"   :add-heading: Examples using ``{name}``",
                "   :heading-level: ^", ""]
    if callable(obj) and not isinstance(obj, type):
        kind = "autofunction" if inspect.isroutine(obj) else "autodata"
        return [f".. {kind}:: {target}", "",
                f".. minigallery:: {target}", f"   :add-heading: Examples using ``{name}``",
                "   :heading-level: ^", ""]
    # a constant: its value (its type's docstring would say nothing about it)
    value = repr(obj) if len(repr(obj)) <= 160 else f"<{type(obj).__name__}>"
    short = module.removeprefix("iclr25.")
    return [f".. py:data:: {name}", f"   :value: {value}", "",
            f"   A constant of ``iclr25.{short}``"
            f"{' (the paper record the report cites)' if name == 'PAPER' else ''}.", ""]


def _module_body(module: str) -> list[str]:
    """An autosummary of ``module.__all__`` then one directive per name (warnings last)."""
    mod = importlib.import_module(module)
    names = sorted(mod.__all__, key=lambda n: (_is_warning(getattr(mod, n)), n.lower()))
    lines = [".. currentmodule:: " + module, "", ".. autosummary::", "   :nosignatures:", ""]
    lines += [f"   {n}" for n in names if callable(getattr(mod, n))] + [""]
    for name in names:
        lines += _directive(module, name, getattr(mod, name))
    return lines


def api_page(method: str) -> str:
    """The reStructuredText of ``api/<method>.rst``: one autodoc directive per ``__all__`` name."""
    paper = methods()[method]
    lines = [f".. _api-{method}:", "", *_title(f"{site_names()[method]['name']} — iclr25.{method}"),
             f".. automodule:: iclr25.{method}", "   :no-members:", "",
             f"Paper: *{paper.title}* ({paper.authors}, {paper.venue}); "
             f":doc:`user guide <../guide/{method}>`, :doc:`method page <../methods/{method}>`"
             + (f", `arXiv {paper.arxiv} <https://arxiv.org/abs/{paper.arxiv}>`__"
                if paper.arxiv else "")
             + (f", `official code <https://github.com/{paper.code}>`__" if paper.code else "")
             + ".", "", *_module_body(f"iclr25.{method}")]
    return "\n".join(lines) + "\n"


def shared_page(name: str) -> str:
    """``api/<name>.rst`` for a shared package: its ``__all__``, then each public submodule's."""
    pkg = importlib.import_module(f"iclr25.{name}")
    lines = [f".. _api-{name}:", "", *_title(f"iclr25.{name}"),
             f".. automodule:: iclr25.{name}", "   :no-members:", "",
             *_module_body(f"iclr25.{name}")]
    for sub in sorted(p.stem for p in Path(pkg.__file__).parent.glob("*.py")):
        full = f"iclr25.{name}.{sub}"
        if sub.startswith("_") or not getattr(importlib.import_module(full), "__all__", None):
            continue
        lines += [*_title(full, "-"), f".. automodule:: {full}", "   :no-members:", "",
                  *_module_body(full)]
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


# --- the committed runs ----------------------------------------------------------------------

def read_run(scale: str) -> tuple[dict[str, Any], list[Any], list[Any], dict[str, str]] | None:
    """``(environment, experiments, claims, trends)`` of the committed run at ``scale``
    (``docs/_data/<scale>/``), or None where none is committed. ``trends`` come from the
    run's ``ladder.json`` where one sits beside it.
    """
    from iclr25 import ladder, report

    path = DATA / scale / "results.json"
    if not path.exists():
        return None
    env, experiments, results, _ = report.read_results(path)
    lad = DATA / scale / "ladder.json"
    return env, experiments, results, ladder.read_ladder(lad) if lad.exists() else {}


def full_run_disagreements(path: Path | None = None, ladder: Path | None = None) -> list[str]:
    """Where a run's ``results.json`` and the claims declared in the code differ: a claim
    missing from the run or not declared any more, or its metric, threshold or direction
    changed; and, where a ``ladder.json`` exists (default: beside ``path``), where it does
    not cover the run: a claim of the run it has no trend for, one it ladders that the run
    lacks, another scale, or a threshold or direction it laddered that is not declared.
    Empty when they agree.
    """
    from iclr25 import claims, report

    path = Path(path or FULL / "results.json")
    env, _, results, _ = report.read_results(path)
    declared = claims.discover()
    ran = {r.claim_id: r for r in results}
    out = [f"{cid}: declared, not in the run" for cid in declared if cid not in ran]
    out += [f"{cid}: in the run, not declared" for cid in ran if cid not in declared]
    for cid, c in declared.items():
        r = ran.get(cid)
        for what in ("metric", "threshold", "direction"):
            if r is not None and getattr(r, what) != getattr(c, what):
                out.append(f"{cid}: {what} {getattr(r, what)!r} in the run, "
                           f"{getattr(c, what)!r} declared")
    ladder = Path(ladder) if ladder is not None else path.parent / "ladder.json"
    if ladder.exists():
        out += _ladder_disagreements(ladder, env.get("scale"), list(ran), declared)
    return out


def _ladder_disagreements(path: Path, scale: str | None, ran: list[str],
                          declared: dict[str, Any]) -> list[str]:
    """:func:`full_run_disagreements`' part for the run's ``ladder.json`` at ``path``."""
    from iclr25.ladder import read_ladder

    try:
        trends = read_ladder(path)
    except ValueError as exc:
        return [str(exc)]
    data = json.loads(path.read_text())
    out = [] if data.get("scale") == scale else [
        f"ladder.json: scale {data.get('scale')!r}, the run's {scale!r}"]
    out += [f"{cid}: in the run, not in ladder.json" for cid in ran if cid not in trends]
    out += [f"{cid}: in ladder.json, not in the run" for cid in trends if cid not in ran]
    for cid, lc in data["claims"].items():
        c = declared.get(cid)
        for what in ("threshold", "direction"):
            if c is not None and lc.get(what) != getattr(c, what):
                out.append(f"{cid}: {what} {lc.get(what)!r} in ladder.json, "
                           f"{getattr(c, what)!r} declared")
    return out


def guide_figures(path: Path | None = None) -> dict[str, Any]:
    """The committed full run's figures that the user guides quote (MyST substitutions):
    ``full_run`` names the run (``{{ full_run }}``), and ``full.<method>.<claim>`` (the
    claim id's two parts) holds one claim's ``verdict`` (its status), ``measured`` (with its
    unit), ``draws`` (the per-draw values), ``threshold`` (with its sign), ``ours``,
    ``baseline`` (its name), ``baseline_value``, ``trivial`` (the trivial arm's value),
    ``brief`` (the report's cause in a few words), ``ladder`` (its trend from the run's
    ``ladder.json``, or that it has none) and ``line`` (verdict, figure, draws and threshold
    in one phrase, "holds at 0.92 (mean of 3 draws: ...; threshold ≥ 0.85)", the figure
    alone in ``figure``). Empty where no full run is committed.
    """
    from iclr25 import report
    from iclr25._format import num, sign, with_unit
    from iclr25.ladder import read_ladder
    from iclr25.verdicts import brief, verdict

    path = Path(path or FULL / "results.json")
    if not path.exists():
        return {}
    env, _, results, _ = report.read_results(path)
    lad = path.parent / "ladder.json"
    trends = read_ladder(lad) if lad.exists() else {}
    full: dict[str, dict[str, dict[str, str]]] = {}
    for r in results:
        draws = ", ".join(num(v) for v in r.draws)
        threshold = f"{sign(r.direction)} {with_unit(r.threshold, r.unit)}"
        measured = with_unit(r.measured, r.unit)
        full.setdefault(r.method, {})[r.claim_id.split(".", 1)[1]] = {
            "verdict": r.status, "measured": measured, "draws": draws,
            "threshold": threshold, "ours": num(r.ours), "baseline": str(r.baseline),
            "baseline_value": num(r.baseline_value), "trivial": num(r.trivial_value),
            "brief": brief(r), "ladder": trends.get(r.claim_id, "not laddered (no trend in "
                                                     "docs/_data/full/ladder.json)"),
            "figure": (figure := f"{measured} (mean of {len(r.draws)} draws: {draws}; "
                                 f"threshold {threshold})"),
            # a verb for the words around it: the verdicts read on the figure are verbs
            # ("holds at"), the others adjectives ("is unsettled at")
            "line": f"{'' if verdict(r.status).on_figure else 'is '}*{r.status}* at {figure}"}
    return {"full": full,
            "full_run": f"the committed full run (`docs/_data/full`, {env.get('draws', 1)} "
                        f"draws, run on {str(env.get('date', '?'))[:10]})"}


def _substitutions(app: Any, config: Any) -> None:
    config.myst_substitutions = {**config.myst_substitutions, **guide_figures()}


def _run_line(env: dict[str, Any]) -> str:
    threads = env.get("threads", env.get("torch_threads"))
    draws = env.get("draws")
    return (f"scale `{env['scale']}`, seed {env['seed']}"
            + (f", {draws} draws" if draws else "")
            + f", device {env['device']}, {threads} torch thread(s) per experiment, training "
            f"budget ×{env.get('budget', 1.0):g}, run on {str(env.get('date', '?'))[:10]}")


def _run_section(method: str, scale: str, out: Path) -> list[str]:
    """A committed run's part for ``method``, rendered by the report's own functions."""
    from iclr25 import report

    run = read_run(scale)
    if run is None:
        return [f"No {scale} run is committed (`docs/_data/{scale}/results.json`); "
                f"`{REMAKE[scale]}` makes one.", ""]
    env, experiments, results, trends = run
    mine = [r for r in results if r.method == method]
    if not mine:
        return [f"The committed {scale} run has no claim of `{method}`; "
                f"`{REMAKE[scale]}` re-makes it.", ""]
    ids = {r.experiment for r in mine}
    exps = [e for e in experiments if e.id in ids]
    for e in exps:  # figures: copied beside the page, the links made relative to it
        e.figures = [_copy_figure(DATA / scale / f, out / "_figures" / scale)
                     for f in e.figures]
    quick = scale == "quick"
    lines = [f"The committed run `docs/_data/{scale}/results.json` ({_run_line(env)}; "
             f"re-made by `{REMAKE[scale]}`)"
             + (f"; each claim's verdict joined by its trend over {_ladder_line(scale)} "
                f"from `docs/_data/{scale}/ladder.json`" if trends else "") + ":", "",
             *report.summary_table(exps, mine, quick, trends), "",
             *report.method_lines(method, exps, mine, quick, trends, depth=3)]
    ladders = [(r.claim_id, DATA / scale / "figures" / f"ladder.{r.claim_id}.png")
               for r in mine if r.claim_id in trends]
    ladders = [(cid, _copy_figure(f, out / "_figures" / scale)) for cid, f in ladders
               if f.exists()]
    if ladders:
        lines += ["### Over training budgets", "",
                  "Each claim's figure and each arm's value against the training budget "
                  "(× the Setting's budget fields; log axis), the threshold as a line:", ""]
        for cid, src in ladders:
            lines += [f"**`{cid}`**: {trends[cid]}.", "", f"![{cid}: {trends[cid]}]({src})", ""]
    return lines


def _ladder_line(scale: str) -> str:
    """``"training budgets ×0.5, 1, 2 (3 draws per rung)"`` of the run's ``ladder.json``."""
    data = json.loads((DATA / scale / "ladder.json").read_text())
    budgets = ", ".join(f"{b:g}" for b in data.get("budgets", []))
    return f"training budgets ×{budgets} ({data.get('draws', '?')} draw(s) per rung)"


def _copy_figure(src: Path, dst_dir: Path) -> str:
    if not src.exists():
        return src.name
    dst_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst_dir / src.name)
    return f"{dst_dir.parent.name}/{dst_dir.name}/{src.name}"


# an identifier or path (a.b, a_b, a/b, with two letters in a row) or any word of 13
# characters or more (a number at 4 significant figures is at most 10)
_IDENT = re.compile(r"(?<![^\s(])((?=[^\s`|]*[A-Za-z]{2})[\w-]+[./_][^\s`|,;]*[\w)]"
                    r"|[^\s`|]{12,}[^\s`|,;.])")


def _as_code(m: re.Match) -> str:
    word = m.group(1)
    tail = ""
    while word.endswith(")") and word.count(")") > word.count("("):  # an enclosing paren
        word, tail = word[:-1], ")" + tail
    return f"`{word}`{tail}"


def _code(text: str) -> str:
    """Identifiers, paths and long words in ``text`` as code (it may break anywhere, so a
    narrow column wraps them)."""
    return _IDENT.sub(_as_code, text)


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
        commit = f.get("commit", "")
        if re.fullmatch(r"[0-9a-f]{7,40}", commit):  # a real commit; "none: ..." says why not
            src += f" @ {commit[:10]}"
        rows.append([f"`{f['name']}`", f.get("kind", "-"), _code(src),
                     _code(f.get("function", "-")), f.get("tolerance", "-"),
                     f.get("agreement", "-")])
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
    met = {True: " (met)", False: " (missed)"}

    def row(r: dict[str, Any]) -> list[Any]:
        peer = (f"{fmt(r.get('peer'))} ({_code(r['peer_name'])})"
                if r.get("peer_name") not in (None, "", "-") else r.get("peer"))
        target = r.get("target")
        target = "-" if target in (None, "", "-") else f"{fmt(target)}{met.get(r.get('met'), '')}"
        when = ", ".join(x for x in (str(r.get("date") or ""), f"load {fmt(r['load'])}"
                                     if r.get("load") is not None else "") if x)
        return [_code(str(r.get("case"))), r.get("ours"), peer, _code(str(r.get("unit") or "-")),
                r.get("ratio"),
                target, when or None, _code(str(r.get("agreement") or "-"))]

    return ["From `benchmarks/results.json` (`python benchmarks/run_all.py --quick`): *ours* and "
            "*peer* are medians on the same inputs, CPU time unless the unit says otherwise; "
            "*ratio* is how many times better ours is (peer / ours for times and memory, "
            "ours / peer for rates and scores); *target* bounds the ratio; *measured* gives "
            "the date and the machine's load average then; *agreement* is the check that "
            "both gave the same output.", "",
            *_md_table(["case", "ours", "peer", "unit", "ratio", "target", "measured",
                        "agreement"], [row(r) for r in mine])]


def method_page(method: str, out: Path) -> str:
    """The Markdown of ``methods/<method>.md``: the full run first, the quick smoke run second."""
    paper = methods()[method]
    abstracts = json.loads((DATA / "abstracts.json").read_text())
    links = [f"[arXiv {paper.arxiv}](https://arxiv.org/abs/{paper.arxiv})" if paper.arxiv else "",
             f"[OpenReview](https://openreview.net/forum?id={paper.openreview})"
             if paper.openreview else "",
             f"[official code](https://github.com/{paper.code})" if paper.code else
             "no official code was released"]
    lines = [f"# {label(method)}", "",
             f"{paper.authors}. {paper.venue}. " + " · ".join(x for x in links if x), "",
             f"{{doc}}`User guide <../guide/{method}>` · API: "
             f"{{ref}}`iclr25.{method} <api-{method}>` · example: "
             f"{{ref}}`sphx_glr_auto_examples_plot_{method}.py` · `iclr25 {method} --help`", "",
             "## What the paper claims", "", "> " + abstracts.get(method, "(abstract missing)"), "",
             "## Full-scale reproduction: the evidence", "", *_run_section(method, "full", out),
             "## Quick run: a smoke test", "",
             "Quick scale checks that each pipeline runs end to end on tiny budgets; its "
             "verdicts (marked `smoke:`) say nothing about the paper's claim.", "",
             *_run_section(method, "quick", out),
             "## Agreement with the official code", "", *_agreement(method),
             "## Benchmark against the peer", "", *_benchmark(method)]
    return "\n".join(lines) + "\n"


def _verdict_counts(results: list[Any]) -> str:
    """``"2 hold, 1 fails"``: the verdicts that occur, in the words of the report's count line."""
    from iclr25.verdicts import VERDICTS

    n = [(sum(r.status == v.name for r in results), v) for v in VERDICTS]
    return ", ".join(f"{k} {v.phrase if k == 1 else v.plural}" for k, v in n if k) or "—"


def landing_table(out: Path) -> str:
    """``methods/table.rst.inc``: the landing page's method table and the summary figure."""
    run = read_run("full")
    results = run[2] if run else []
    names = site_names()
    rows = []
    for m, paper in methods().items():
        rows += [f"   * - {paper.number}", f"     - :doc:`{names[m]['name']} <methods/{m}>`",
                 f"     - {names[m]['field']}", f"     - {names[m]['line']}",
                 f"     - {_verdict_counts([r for r in results if r.method == m])}",
                 f"     - :doc:`guide <guide/{m}>` · :ref:`API <api-{m}>`"]
    scale = "full" if run else "quick"
    lines = [".. list-table::", "   :header-rows: 1", "   :class: iclr25-methods", "",
             "   * - #", "     - method", "     - field", "     - what it does",
             "     - verdicts at full scale" if run else "     - verdicts (no full run committed)",
             "     - docs", *rows, ""]
    fig = DATA / scale / "summary.png"
    if fig.exists():
        (out / "_figures").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fig, out / "_figures" / f"summary_{scale}.png")
        lines += [f"Every claim's measured value against its threshold in the committed {scale} "
                  f"run (``docs/_data/{scale}/results.json``; green: the side where it holds):",
                  "", f".. image:: /methods/_figures/summary_{scale}.png",
                  f"   :alt: measured against threshold, {scale} scale", ""]
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:  # unchanged files keep Sphinx's cache
        path.write_text(text)


def generate(app: Any = None) -> None:
    """Write ``api/*.rst``, ``methods/*.md``, ``methods/table.rst.inc`` and ``cli.rst``."""
    names = list(methods())
    api, meth = DOCS / "api", DOCS / "methods"
    for m in names:
        _write(api / f"{m}.rst", api_page(m))
        _write(meth / f"{m}.md", method_page(m, meth))
    for s in SHARED:
        _write(api / f"{s}.rst", shared_page(s))
    _write(meth / "table.rst.inc", landing_table(meth))
    _write(api / "verdicts.inc", verdicts_list())
    toc = ["   " + m for m in names]
    _write(api / "index.rst", "\n".join([
        ".. _api:", "", *_title("API reference"),
        "Every public name of every method, grouped by method: each method's ``__all__``, "
        "with signatures, shapes and defaults from the docstrings, the warnings a call can "
        "emit, a ``[source]`` link and the gallery examples that use it. The shared datasets "
        "and the command line are on their own pages.", "", ".. toctree::", "   :maxdepth: 1",
        "", *toc, *("   " + s for s in SHARED), "   cli", ""]))
    _write(api / "cli.rst", "\n".join([
        *_title("Command line"),
        "Every verb of ``iclr25``, from its ``--help``. Each method's verbs are under "
        "``iclr25 <method>``.", "",
        ".. click:: iclr25_cli_doc:command", "   :prog: iclr25", "   :nested: full", ""]))
    _write(meth / "index.md", "\n".join([
        "# Methods", "",
        "One page per paper: what it claims, the committed full-scale reproduction (the "
        "evidence), the quick smoke run, how it agrees with the official code and its "
        "benchmark against the peer a user would otherwise pick.", "",
        "```{toctree}", ":maxdepth: 1", "", *(f"{label(m)} <{m}>" for m in names), "```", ""]))


# --- docstrings written as plain text with math: make them safe reStructuredText -------------
# ``|x|`` is a norm, not a substitution; ``alpha_`` a fitted attribute, not a link; ``*shape``
# a star, not emphasis. Literals, roles, links, doctests and literal blocks are left alone.
# a literal may run over a line break (a paragraph is escaped as one text)
_KEEP = re.compile(r"(``[^`]+?``|:[\w:+-]+:`[^`]*`|`[^`]*`_{0,2})", re.S)
_LITERAL = re.compile(r"``[^`]+``", re.S)
# a literal must end before a word character: ``x``\ s (the escaped space renders as nothing)
_GLUED = re.compile(r"[^\s\\.,:;!?)\]}'\"/`-]")


def _escape(text: str) -> str:
    parts = _KEEP.split(text)
    for i in range(0, len(parts), 2):
        t = parts[i].replace("|", "\\|")
        t = re.sub(r"(?<![\\*])\*\*?(?=[A-Za-z_(])(?![^*\n]*\*)",
                   lambda m: "\\*" * len(m.group()), t)
        t = re.sub(r"(\w*[A-Za-z0-9])_(?=\W|$)", r"\1\\_", t)
        # split() keeps the markup at odd indices: glue-escape after a whole literal only
        if i and _LITERAL.fullmatch(parts[i - 1]) and _GLUED.match(t):
            t = "\\ " + t
        parts[i] = t
    return "".join(parts)


def rst_safe(lines: list[str]) -> list[str]:
    """``lines`` of a docstring (after napoleon) with stray RST markup escaped.

    Runs of plain lines (a paragraph, a field's text) are escaped together, so that an
    inline literal broken over two lines stays one literal; doctests, literal blocks and
    directives are left alone.
    """
    out, run, block, indent = [], [], None, 0

    def flush() -> None:
        if run:
            out.extend(_escape("\n".join(run)).split("\n"))
            run.clear()

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
            flush()
            out.append(ln)
        else:
            run.append(ln)
        if block is None and s.endswith("::") and not s.startswith(".."):
            flush()
            block, indent = "literal", ind
        elif block is None and s.startswith(".. code"):
            block, indent = "literal", ind
    flush()
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
    app.connect("config-inited", _substitutions)
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", _process_docstring, priority=900)
    app.connect("autodoc-skip-member", _skip)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
