"""Sphinx configuration of tswarp's API reference (make docs; CI builds it with -W).

The reference is built from the docstrings of the installed package (autodoc imports
tswarp, so `pip install .` first, as `make docs` does); numpydoc renders their sections.
"""

import tswarp

project = "tswarp"
author = "the tswarp developers"
copyright = "2026, the tswarp developers"
release = version = tswarp.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.intersphinx", "numpydoc"]
autodoc_default_options = {"members": False, "undoc-members": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()  # the docstrings' own style; sections are parsed strictly
nitpicky = False
intersphinx_mapping = {}
html_theme = "alabaster"
html_title = f"tswarp {release}"
exclude_patterns = ["_build"]
suppress_warnings = []
