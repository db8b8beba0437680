"""pytest plugin (registered through the ``pytest11`` entry point).

Imports nothing heavy unless runtime checking is enabled.
"""
