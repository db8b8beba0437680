"""Runtime modes and the one parser of their spellings (no torch).

Used by the pytest plugin, the vLLM ``general_plugins`` entry point and
:class:`padlint.runtime.checker.Checker`, so ``PADLINT_RUNTIME`` means the
same everywhere.  Importing this module imports neither torch nor numpy:
the plugins parse the mode before deciding to load the checker.
"""

from __future__ import annotations

#: The modes: "strict" raises, "record" collects, "off" checks nothing.
MODES = ("strict", "record", "off")
#: Other spellings of "off" (environment-variable style).
OFF_ALIASES = ("0", "false")


def parse_mode(text: str | None, default: str = "off") -> str:
    """Normalise a mode string: "strict", "record" or "off", case-insensitive, surrounding
    blanks ignored; "0" and "false" mean "off"; None or blank gives ``default``.

    Raises ValueError naming the accepted values (a typo must not silently turn checking off).
    """
    if text is None or not str(text).strip():
        return default
    mode = str(text).strip().lower()
    if mode in OFF_ALIASES:
        return "off"
    if mode not in MODES:
        raise ValueError(f"padlint runtime mode {text!r}: expected strict, record or off (0 and false also mean off)")
    return mode


#: Spellings of a yes/no switch such as ``PADLINT_POISON`` (any case; blank means no).
SWITCH_ON = ("1", "true", "yes", "on")
SWITCH_OFF = ("0", "false", "no", "off")


def parse_switch(text: str | None, name: str) -> bool:
    """A yes/no switch (``PADLINT_POISON``, the ``padlint_poison`` ini option): 1, true,
    yes, on / 0, false, no, off, any case; None or blank is off.  Raises ValueError
    naming ``name`` and the accepted spellings."""
    value = "" if text is None else str(text).strip().lower()
    if value in SWITCH_ON:
        return True
    if value in SWITCH_OFF or not value:
        return False
    raise ValueError(f"{name}={text!r}: expected one of {', '.join(SWITCH_ON)} (on) "
                     f"or {', '.join(SWITCH_OFF)} or empty (off)")
