"""Sphinx configuration of the iclr25 site.

Built by ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (README).
"""

import os
import sys
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
# every example runs at build time on one torch thread, so its time is its CPU time
os.environ.setdefault("OMP_NUM_THREADS", "1")

import iclr25  # noqa: E402

project = "iclr25"
author = "iclr25 contributors"
copyright = "2026, iclr25 contributors"
release = version = getattr(iclr25, "__version__", "0.1.0")

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_click",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "iclr25_docs",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_data", "_ext", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]

# docstrings are Google style (Args/Returns/Raises), with shapes and defaults in the text
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True  # an Attributes section must not document a field twice
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False
autosummary_generate = False
add_module_names = False
myst_heading_anchors = 3
# the user guides quote the committed full run through {{ full.<method>.<claim>.<field> }}
# (iclr25_docs.guide_figures fills myst_substitutions from docs/_data/full/results.json)
myst_enable_extensions = ["substitution"]

sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "show_memory": False,
    "min_reported_time": 0,
    "abort_on_example_error": False,
    # "Examples using X" on the API pages (the minigallery directives iclr25_docs writes)
    "doc_module": ("iclr25",),
    "backreferences_dir": "api/backreferences",
    "reference_url": {"iclr25": None},
}

html_theme = "pydata_sphinx_theme"
html_title = "iclr25"
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "show_toc_level": 2,
    # the method pages give the column its full width: their evidence is wide tables
    "secondary_sidebar_items": {"**": ["page-toc"],
                                **{f"methods/{m}": [] for m in tomllib.loads(
                                    (HERE / "_data" / "methods.toml").read_text())}},
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["iclr25.css"]
