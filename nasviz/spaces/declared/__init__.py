"""Spaces declared without Python: a spec file (:mod:`.spec`), or a table's position columns
(:mod:`.loading`), made into a :class:`~nasviz.spaces.base.SearchSpace` (:mod:`.space`)."""

from nasviz.spaces.declared.loading import read_spec_file, register_spec, register_spec_file, table_spec
from nasviz.spaces.declared.space import DeclaredSpace, space_class
from nasviz.spaces.declared.spec import Position, SpaceSpec, spec_from_data

__all__ = ["DeclaredSpace", "Position", "SpaceSpec", "read_spec_file", "register_spec", "register_spec_file",
           "space_class", "spec_from_data", "table_spec"]
