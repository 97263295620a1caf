"""iclr25: methods of 19 ICLR 2025 papers, usable and verified.

Each method lives in its own subpackage (``iclr25.mother``, ``iclr25.ies``, ...);
``iclr25 reproduce`` re-runs every paper's central claim offline.
"""

__version__ = "0.1.0"
