"""padlint: find stale CUDA-graph padding rows before they reach attention metadata.

The static checker (``padlint.analysis``) needs only libcst; the runtime
checker (``padlint.runtime``) needs torch (``pip install padlint[runtime]``).
Importing ``padlint`` patches nothing and imports neither torch nor libcst.
"""

__version__ = "0.1.0"
