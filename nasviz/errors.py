"""The project's error types: every error a user can cause is one of these, with a message that
names what is wrong and where (file, line, field, option), never a bare traceback.

``NasvizError`` is the base. The subclasses also derive from ``ValueError`` so code written
against the standard library's conventions (``except ValueError``) still catches them.
"""

from __future__ import annotations


class NasvizError(Exception):
    """Base class of every error nasviz raises on purpose."""


class ConfigError(NasvizError, ValueError):
    """A configuration that cannot run: an unknown component name, a bad option value, or
    components that do not fit together (a kernel that cannot read the chosen space)."""
