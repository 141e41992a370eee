"""The interface every search space implements, and the representations kernels read from it.

A :class:`SearchSpace` turns strings into :class:`~nasviz.arch.Architecture` objects and back,
samples, mutates and (when finite) enumerates them, says when two of them are the same
architecture (:meth:`SearchSpace.canonical_key`), builds the network the trainer trains, and
provides the *representations* the kernels read. Each representation is declared in
:attr:`SearchSpace.representations`; a kernel declares the ones it needs (the ``reads``
capability of its registry entry), so the registry knows which kernels fit which spaces
without trying them:

==================  ==========================================================  ==================
representation      what the space provides                                     read by
==================  ==========================================================  ==================
``labelled-dag``    the reduced multigraph of labelled operations               WL, TW, path, OT,
                    (:meth:`Architecture.reduced`)                               GW, edit, OTMANN
``operation-tree``  :meth:`operation_groups`: the first level of the TW          TW, OT
                    operation tree (which labels are alike)
``layers``          :meth:`layer_kinds`: each label's OTMANN layer kind and       OTMANN, edit
                    :meth:`label_mismatch`; widths or cell channels give masses
``paths``           the number of input -> output paths stays small enough to     path
                    enumerate (cells; not 32-node random graphs)
``operation-slots`` :meth:`slots` / :meth:`from_slots`: a fixed tuple of          the Compare page's
                    operation choices, every slot with the same choices          parallel coordinates,
                    (NB201's six edges); implies ``categorical-parameters``     Interpretability
``categorical-``    :meth:`parameter_choices` / :meth:`to_parameters` /          Optuna (sampler and
``parameters``      :meth:`from_parameters`: the architecture as named           peers), the slot and
                    categorical parameters, as an Optuna user writes it (NB201:  Hamming kernels,
                    its slots; NB101: 21 edge bits and 5 vertex operations);    gradient-guided
                    :meth:`parameter_label`: the node label a choice puts in     mutation
                    the graph (gradient-guided mutation reads its WL gradient)
``modifiers``       :meth:`mutate` is NASBOT's compound mutation over its nine   ``nasbot-ea``
                    modifiers (paper 001 Table 6, App. B.2)                      pool
``morphisms``       Auto-Keras's function-preserving morphisms apply             ``autokeras-tree``
                    (:meth:`sample_morphs`, :meth:`apply_morphs`,                pool, ``bfs-morph``,
                    :meth:`morph_network`; paper 003 Sec. 3.3)                   warm starts
==================  ==========================================================  ==================

Spaces are registered in :data:`nasviz.components.SPACES`; :func:`nasviz.spaces.get_space`
returns the instance for a name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Mapping, Sequence

import numpy as np

from nasviz.arch import Architecture
from nasviz.errors import ConfigError

if TYPE_CHECKING:
    from nasviz.spaces.morphs import Morph, MorphResult

LABELLED_DAG = "labelled-dag"
OPERATION_TREE = "operation-tree"
LAYERS = "layers"
PATHS = "paths"
OPERATION_SLOTS = "operation-slots"
PARAMETERS = "categorical-parameters"
MODIFIERS = "modifiers"
MORPHISMS = "morphisms"

#: Every representation a space may declare (see the module docstring).
REPRESENTATIONS: tuple[str, ...] = (LABELLED_DAG, OPERATION_TREE, LAYERS, PATHS, OPERATION_SLOTS, PARAMETERS, MODIFIERS,
                                    MORPHISMS)


@dataclass(frozen=True)
class DrawableGraph:
    """What the architecture views draw: nodes with text, edges with multiplicity.

    ``labels[i]`` is node ``i``'s text (operation, and units for layer networks); ``edges``
    are ``(u, v, multiplicity)``; node 0 is the input and the last node the output.
    """

    labels: tuple[str, ...]
    edges: tuple[tuple[int, int, int], ...]

    @classmethod
    def of(cls, arch: Architecture) -> "DrawableGraph":
        widths = arch.widths or (None,) * arch.n_nodes
        labels = tuple(lab if w is None else f"{lab}:{w}" for lab, w in zip(arch.labels, widths))
        return cls(labels, tuple((u, v, m) for (u, v), m in arch.edge_multiplicities().items()))


class SearchSpace(ABC):
    """A search space (see the module docstring for the representations).

    Subclasses set :attr:`name`, :attr:`description` and :attr:`representations` and implement
    the abstract methods; the optional capabilities raise :class:`~nasviz.errors.ConfigError`
    by default, naming the space and the missing capability.
    """

    #: Registry name, e.g. ``"nb201"``.
    name: ClassVar[str] = ""
    #: One line for help texts and select boxes.
    description: ClassVar[str] = ""
    #: The representations this space provides (subset of :data:`REPRESENTATIONS`).
    representations: ClassVar[frozenset[str]] = frozenset({LABELLED_DAG})
    #: Example architecture strings for help texts and placeholders.
    examples: ClassVar[tuple[str, ...]] = ()
    #: Groups of table columns that together hold one architecture (NAS-Bench-101 writes a cell
    #: as ``matrix`` + ``ops``), tried in order before the single-column names the table loader
    #: knows (``arch``, ``architecture``, ...); :meth:`parse_columns` reads them.
    table_columns: ClassVar[tuple[tuple[str, ...], ...]] = ()
    #: What a benchmark table does with several rows of one architecture unless the caller says
    #: otherwise: ``"refuse"`` (the later rows are bad rows) or ``"average"`` (one row, the mean:
    #: tables whose rows are repeated training runs). See :func:`nasviz.objectives.load_table`.
    table_duplicates: ClassVar[str] = "refuse"
    #: Metric columns a table of this space leads with when it has them (the first found becomes
    #: the table's first metric, the one chosen when none is named): NAS-Bench-101's headline is
    #: the 108-epoch accuracy, though ``nb101_hash_20k.csv`` lists its 4-epoch column first.
    lead_metrics: ClassVar[tuple[str, ...]] = ()

    # ------------------------------------------------------------------ strings
    @abstractmethod
    def parse(self, text: str) -> Architecture:
        """The architecture written as ``text``; ``ValueError`` naming what is wrong and where."""

    @abstractmethod
    def format(self, arch: Architecture) -> str:
        """The string of ``arch`` (inverse of :meth:`parse`)."""

    def parse_columns(self, values: tuple[str, ...]) -> Architecture:
        """The architecture of a table row from the texts of its architecture columns, in the
        order of the :attr:`table_columns` group that matched (one column: :meth:`parse`)."""
        if len(values) != 1:
            raise ValueError(f"the {self.name!r} space reads an architecture from one column, got {len(values)}")
        return self.parse(values[0])

    # ------------------------------------------------------------------ search moves
    @abstractmethod
    def sample(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        """``n`` architectures drawn from the space's sampling distribution (with replacement)."""

    def generate(self, rng: np.random.Generator, n: int = 1) -> list[Architecture]:
        """``n`` architectures drawn as the benchmark's own code draws random architectures for
        surrogate studies (NAS-BOWL's ``random_sampling``, paper 002 §5.1); repeats possible.
        Default: :meth:`sample`. NAS-Bench-101 overrides it: its generator prunes random specs,
        which is not uniform over the unique cells."""
        return self.sample(rng, n)

    @abstractmethod
    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        """One random one-step change of ``arch`` (a member of :meth:`neighbours`)."""

    @abstractmethod
    def neighbours(self, arch: Architecture) -> list[Architecture]:
        """Every architecture one step away from ``arch``."""

    def initial_pool(self) -> list[Architecture]:
        """Where model-based searches start when the space defines it (NASBOT's 10 networks); empty otherwise."""
        return []

    # ------------------------------------------------------------------ identity
    def canonical_key(self, arch: Architecture) -> str:
        """Equal for two architectures exactly when the space considers them the same (default:
        isomorphic reduced graphs, :meth:`Architecture.canonical_key`)."""
        return arch.canonical_key()

    def contains(self, arch: Architecture) -> bool:
        """Whether ``arch`` is a valid member of the space (it survives ``parse(format(arch))``)."""
        try:
            return self.parse(self.format(arch)) == arch
        except ValueError:
            return False

    # ------------------------------------------------------------------ finite spaces
    @property
    def size(self) -> int | None:
        """Number of architectures if the space is finite and enumerable, else ``None``."""
        return None

    def enumerate(self) -> Iterator[Architecture]:
        """Every architecture of a finite space, in a fixed order."""
        raise ConfigError(f"the {self.name!r} space is not finite: it cannot be enumerated")

    # ------------------------------------------------------------------ representations
    # ``labelled-dag`` is :meth:`Architecture.reduced` of the space's architectures: a space
    # shapes it through its labels (zero and identity operations are removed and bypassed).

    def operation_groups(self) -> Mapping[str, tuple[str, ...]]:
        """The ``operation-tree`` representation: group name -> labels that are alike."""
        raise self._missing(OPERATION_TREE)

    def layer_kinds(self) -> Mapping[str, str]:
        """The ``layers`` representation: label -> OTMANN layer kind (``input``, ``output``,
        ``unit``, ``res``, ``fc``, ``pool``, ``decision``)."""
        raise self._missing(LAYERS)

    def label_mismatch(self) -> tuple[tuple[str, ...], np.ndarray]:
        """The ``layers`` representation: labels and the OTMANN label-mismatch matrix between them."""
        raise self._missing(LAYERS)

    def slot_names(self) -> tuple[str, ...]:
        """The ``operation-slots`` representation: the name of each slot (e.g. ``"0->1"``)."""
        raise self._missing(OPERATION_SLOTS)

    def slot_choices(self) -> tuple[str, ...]:
        """The operations a slot may hold."""
        raise self._missing(OPERATION_SLOTS)

    def slots(self, arch: Architecture) -> tuple[str, ...]:
        """The operation in each slot of ``arch``."""
        raise self._missing(OPERATION_SLOTS)

    def from_slots(self, operations: Sequence[str]) -> Architecture:
        """The architecture with these slot operations."""
        raise self._missing(OPERATION_SLOTS)

    def parameter_choices(self) -> dict[str, tuple[str, ...]]:
        """The ``categorical-parameters`` representation: each parameter's name and its choices,
        in parameter order. Default: one parameter per operation slot."""
        if not self.provides(OPERATION_SLOTS):
            raise self._missing(PARAMETERS)
        choices = tuple(self.slot_choices())
        return {name: choices for name in self.slot_names()}

    def to_parameters(self, arch: Architecture) -> dict[str, str]:
        """``arch`` as ``{parameter: choice}``; :meth:`from_parameters` gives ``arch`` back."""
        if not self.provides(OPERATION_SLOTS):
            raise self._missing(PARAMETERS)
        return dict(zip(self.slot_names(), self.slots(arch)))

    def from_parameters(self, params: Mapping[str, str]) -> Architecture | None:
        """The architecture of a full assignment of the parameters, or ``None`` when it describes
        none (an NB101 spec NAS-Bench-101 rejects); ``ValueError`` for a missing parameter or a
        value that is not one of its choices."""
        choices = self.parameter_choices()
        check_parameters(params, choices)
        return self.from_slots([params[name] for name in choices])

    def parameter_label(self, name: str, choice: str) -> str | None:
        """The node label choice ``choice`` of parameter ``name`` puts in the architecture's graph
        (its ``h = 0`` WL feature, which gradient-guided mutation reads), or ``None`` when the
        choice is not a labelled node (an NB101 edge bit). Default: on a space with operation slots
        the choice is the label (NB201's operations); elsewhere ``None``. A space whose labels
        depend on the position (``layer_3:conv``) returns that label."""
        return str(choice) if self.provides(OPERATION_SLOTS) else None

    def possible_morphs(self, arch: Architecture) -> dict[str, list["Morph"]]:
        """The ``morphisms`` representation: every morphism of ``arch`` within the domain, by type
        (``deep``, ``wide``, ``skip``), Omega(f) of paper 003 Alg. 1."""
        raise self._missing(MORPHISMS)

    def sample_morphs(self, arch: Architecture, rng: np.random.Generator, n: int) -> list["MorphResult"]:
        """Up to ``n`` distinct children of ``arch`` by one morphism each (paper 003 App. B sampling)."""
        raise self._missing(MORPHISMS)

    def apply_morphs(self, arch: Architecture, morphs: Sequence["Morph"]) -> list["MorphResult"]:
        """The networks ``morphs`` make from ``arch`` in turn (``ValueError`` for an invalid one)."""
        raise self._missing(MORPHISMS)

    def morph_network(self, network: Any, morphs: Sequence["Morph"], seed: int | None = None) -> Any:
        """The ``torch.nn.Module`` of ``morphs`` applied to ``network`` (built by :meth:`build_network`)
        with function-preserving weight inheritance; ``seed`` seeds the new units' weights."""
        raise self._missing(MORPHISMS)

    # ------------------------------------------------------------------ training and views
    def build_network(self, arch: Architecture, input_shape: tuple[int, ...], n_outputs: int, **options: Any):
        """The ``torch.nn.Module`` the trainer trains for ``arch``: inputs ``(B, *input_shape)``,
        outputs ``(B, n_outputs)``. ``options`` are the space's model options (channels, ...)."""
        raise ConfigError(f"the {self.name!r} space has no network builder: it cannot be trained")

    def network_defaults(self) -> dict[str, Any]:
        """Default model options of :meth:`build_network` (e.g. ``{"channels": 4, "n_cells": 1}``)."""
        return {}

    def training_defaults(self) -> dict[str, Any]:
        """Training settings of :func:`nasviz.objectives.trainer.train_model` for this space's
        networks (default: MLP-style, many small steps)."""
        return {"epochs": 20, "patience": 5, "lr": 0.05, "batch_size": 64}

    def trainable_on(self) -> frozenset[str]:
        """Input kinds the networks accept: ``"image"``, ``"signal"``, ``"tabular"``."""
        return frozenset()

    def drawable(self, arch: Architecture) -> DrawableGraph:
        """The graph the views draw (by default the architecture as given)."""
        return DrawableGraph.of(arch)

    # ------------------------------------------------------------------ helpers
    @classmethod
    def provided_representations(cls) -> frozenset[str]:
        """The representations the space provides: those it declares, and ``categorical-parameters``
        wherever it declares ``operation-slots`` (each slot is a parameter: the defaults of
        :meth:`parameter_choices` and its partners)."""
        declared = frozenset(cls.representations)
        return declared | {PARAMETERS} if OPERATION_SLOTS in declared else declared

    def provides(self, representation: str) -> bool:
        return representation in self.provided_representations()

    def _missing(self, representation: str) -> ConfigError:
        return ConfigError(f"the {self.name!r} space does not provide the {representation!r} representation")

    def __repr__(self) -> str:
        return f"<space {self.name}>"


def check_parameters(params: Mapping[str, str], choices: Mapping[str, Sequence[str]]) -> None:
    """``ValueError`` naming the first parameter of ``choices`` missing from ``params`` or off its choices."""
    for name, allowed in choices.items():
        if name not in params:
            raise ValueError(f"parameter {name!r} is missing")
        if params[name] not in allowed:
            raise ValueError(f"parameter {name!r}: {params[name]!r} is not one of {', '.join(map(str, allowed))}")
