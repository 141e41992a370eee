"""The registries of the catalogue (:mod:`nasviz.components`) and the built-in search spaces,
kernels, candidate pools, batch selectors, acquisitions, objectives, datasets and dashboard views
registered in them; the strategies are registered in :mod:`nasviz.components.strategy_entries`.

Settings a step's work grows with carry a page range (:attr:`nasviz.registry.Option.page_range`);
the ones the pools and the strategies share are defined here once.
"""

from __future__ import annotations

from typing import Any

from nasviz.registry import Entry, Option, Registry

SPACES: Registry = Registry("search space")
KERNELS: Registry = Registry("kernel")
STRATEGIES: Registry = Registry("strategy")
POOLS: Registry = Registry("candidate pool")
BATCH_SELECTORS: Registry = Registry("batch selector")
ACQUISITIONS: Registry = Registry("acquisition")
OBJECTIVES: Registry = Registry("objective")
DATASETS: Registry = Registry("dataset")
VIEWS: Registry = Registry("dashboard view")

# ----------------------------------------------------------------------------------- spaces
SPACES.register(Entry("nb201", "NAS-Bench-201 cells: 6 edges x 5 operations (15,625 cells)",
                      "nasviz.spaces.nb201:NB201Space", paper="NB201"))
SPACES.register(Entry("layers", "NASBOT / Auto-Keras MLPs: DAGs of dense layers with widths",
                      "nasviz.spaces.mlp:MLPSpace", paper="001 Sec. 2.2"))
SPACES.register(Entry("nb101", "NAS-Bench-101 cells: up to 7 vertices, 3 operations (423,624 cells)",
                      "nasviz.spaces.nb101:NB101Space", paper="NB101"))
SPACES.register(Entry("wired", "randomly wired 32-node DAGs (ER / BA / WS generators), NAS-BOWL's Flowers102 space",
                      "nasviz.spaces.wired:WiredSpace", paper="RWNN"))
SPACES.register(Entry("darts", "DARTS / NAS-Bench-301 cells: a normal and a reduction cell (about 1e18 genotypes)",
                      "nasviz.spaces.darts:DartsSpace", paper="DARTS, NB301"))
SPACES.register(Entry("cnn", "NASBOT / Auto-Keras CNNs: DAGs of conv, res, pool and fc layers (signals or images)",
                      "nasviz.spaces.cnn:CNNSpace", paper="001 App. A, B.1"))

# ---------------------------------------------------------------------------------- kernels
_TW_OPTIONS = (
    Option("ngram", "int", "largest n-gram order of the operation measure", minimum=1),
    Option("cumulative", "bool", "use every order 1..ngram (False: only ngram)"),
    Option("anchored", "bool", "n-grams may start at the input / end at the output"),
    Option("leaf_weight", "float", "a in the tree's edge lengths 1 - a^k, a^k"),
)
_TW = "nasviz.kernels.tw:TreeWassersteinKernel"
KERNELS.register(Entry("tw", "tree-Wasserstein: n-gram operations + in/out-degree", _TW, _TW_OPTIONS,
                       paper="000 Eq. (25)"))
for _n in (1, 2, 3):
    KERNELS.register(Entry(f"tw{_n}g", f"tree-Wasserstein with {_n}-gram operations + in/out-degree", _TW,
                           _TW_OPTIONS, preset={"ngram": _n}, paper="000 Eq. (25)"))
_ARD = Option("ard", "bool", "one lengthscale per parameter (false: one shared, the normalised Hamming distance)")
KERNELS.register(Entry("slots", "which choice each categorical parameter (slot) takes: exponentiated Hamming, one lengthscale per parameter",
                       "nasviz.kernels.slots:SlotKernel", (_ARD,), paper="CoCaBO"))
KERNELS.register(Entry("tw2g-slots", "tree-Wasserstein 2-gram times the slot kernel (structure and which choice each parameter takes)",
                       "nasviz.kernels.slots:TWSlotsKernel", (*_TW_OPTIONS, _ARD), preset={"ngram": 2}, paper="000 Eq. (25)"))
KERNELS.register(Entry("tw2g-hamming", "tree-Wasserstein 2-gram times exp(-l x the share of parameters that differ): one lengthscale",
                       "nasviz.kernels.slots:TWSlotsKernel", (*_TW_OPTIONS, _ARD), preset={"ngram": 2, "ard": False},
                       paper="000 Eq. (25)"))
KERNELS.register(Entry("wl", "Weisfeiler-Lehman subtree kernel, depth h by likelihood", "nasviz.kernels.wl:WLKernel", (
    Option("h_max", "int", "largest WL iteration H", minimum=0),
    Option("base", "choice", "base kernel on feature counts", choices=("dot", "oa")),
    Option("normalize", "bool", "cosine-normalise each depth"),
    Option("direction", "choice", "neighbours used in relabelling", choices=("out", "in", "both")),
), paper="002 Eq. (3.1)"))
KERNELS.register(Entry("wl-oa", "Weisfeiler-Lehman with the optimal-assignment base kernel (NAS-BOWL on N101)",
                       "nasviz.kernels.wl:WLKernel", (
    Option("h_max", "int", "largest WL iteration H", minimum=0),
    Option("normalize", "bool", "cosine-normalise each depth"),
    Option("direction", "choice", "neighbours used in relabelling", choices=("out", "in", "both")),
), preset={"base": "oa"}, paper="002 App. E.2"))
KERNELS.register(Entry("otmann", "OTMANN optimal-transport distance ensemble (NASBOT)",
                       "nasviz.kernels.otmann:OTMANNKernel", (
    Option("cell_channels", "int", "channels of every operation in cells without widths", minimum=1),
    Option("structure", "choice", "structural penalty", choices=("paths", "grouped")),
), paper="001 Eq. (4)"))
KERNELS.register(Entry("edit", "Auto-Keras edit distance with a Bourgain embedding", "nasviz.kernels.edit:EditDistanceKernel", (
    Option("cell_width", "int", "width of every layer in cells without widths", minimum=1),
), paper="003 Eq. (3)-(9)"))
KERNELS.register(Entry("path", "path encoding (BANANAS), Laplacian kernel", "nasviz.kernels.path:PathEncodingKernel", (
    Option("binary", "bool", "indicator encoding (False: path counts)"),
), paper="000 Sec. 4.1"))
KERNELS.register(Entry("ot", "plain optimal transport over layers (not PD, jittered)", "nasviz.kernels.ot:OTKernel", (
    Option("nu_str", "float", "weight of the structural cost", minimum=0),
), paper="000 Sec. 4.1"))
KERNELS.register(Entry("gw", "Gromov-Wasserstein between graphs (not PD, jittered)", "nasviz.kernels.ot:GWKernel",
                       paper="000 Sec. 4.1"))
KERNELS.register(Entry("rw", "random-walk graph kernel (GraKeL, labelled, directed, exact geometric)",
                       "nasviz.kernels.graph_kernels:RandomWalkKernel", (
    Option("lamda", "float", "weight lamda^k of walks of length k", minimum=1e-9),
), paper="002 Table 1"))
KERNELS.register(Entry("sp", "shortest-path graph kernel (GraKeL, labelled, directed)",
                       "nasviz.kernels.graph_kernels:ShortestPathKernel", paper="002 Table 1"))
_MLG_OPTIONS = (
    Option("L", "int", "neighbourhood levels", minimum=1),
    Option("P", "int", "eigenvectors kept per level", minimum=1),
    Option("n_samples", "int", "vertices sampled for each level's basis", minimum=1),
    Option("features", "choice", "node features", choices=("onehot", "index")),
    Option("seed", "int", "seed of the vertex samples", minimum=0),
)
KERNELS.register(Entry("mlg", "multiscale Laplacian graph kernel, NAS-BOWL's 'MLP' (GraKeL, undirected)",
                       "nasviz.kernels.graph_kernels:MultiscaleLaplacianKernel", _MLG_OPTIONS, paper="002 Table 1"))
_ADDITIVE_OPTIONS = (
    Option("alpha", "float", "weight of WL (MLP gets 1 - alpha); the start when learned", minimum=0),
    Option("h_max", "int", "largest WL iteration H", minimum=0),
    Option("base", "choice", "WL base kernel on feature counts", choices=("dot", "oa")),
)
KERNELS.register(Entry("wl+mlg", "additive 0.7 WL + 0.3 multiscale Laplacian (NAS-BOWL Eq. B.1)",
                       "nasviz.kernels.additive:AdditiveWLMLGKernel", _ADDITIVE_OPTIONS, paper="002 Eq. (B.1)"))
KERNELS.register(Entry("wl+mlg-ml", "additive WL + multiscale Laplacian, weights by marginal likelihood",
                       "nasviz.kernels.additive:AdditiveWLMLGKernel", _ADDITIVE_OPTIONS, preset={"learn_alpha": True},
                       paper="002 App. B"))

# --------------------------------------------------------------------- pools / batch / acquisition
POOLS.register(Entry("evolution", "evolve top candidates by acquisition, mutate, repeat", "nasviz.candidates:evolution_generator",
                     paper="000 Sec. 3"))
POOLS.register(Entry("random", "uniform samples from the space (or the table)", "nasviz.candidates:random_generator"))
# No ``needs``: on a space without categorical parameters naming node labels (or without WL
# gradients) the pool falls back to the space's own mutation and says so in its step state.
POOLS.register(Entry("gradient", "gradient-guided mutation of the best (WL feature gradients of the categorical "
                                 "parameters; the space's own mutation where there are none)",
                     "nasviz.candidates:gradient_generator", paper="002 Sec. 3.2"))
POOLS.register(Entry("mixed", "half mutations of the best, half random", "nasviz.candidates:mixed_generator",
                     paper="002 App. E.2"))
POOLS.register(Entry("exhaustive", "score every candidate of a finite domain or space: the exact argmax",
                     "nasviz.exhaustive:exhaustive_generator", (
    Option("max_candidates", "int", "largest finite set scored whole", minimum=1),
    Option("fallback", "choice", "pool for sets that are infinite or larger", choices=("evolution", "random", "mixed")),
), paper="GP-UCB Thm. 1"))
_ACQ_FRACTION = Option("acq_fraction", "float?", "cap acquisition time at this fraction of a training (none: off)")
# Settings a step's work grows with carry a page range (Option.page_range): what a browser may
# start stays bounded; the command line is not. The annealing bounds keep Auto-Keras's tree search
# to at most log(1e-3) / log(0.95) = 135 expansions of at most 32 children.
_EA_BASE = Option("ea_base", "int", "EA evaluations of the first step", minimum=1, page_range=(None, 2000))
_EA_CAP = Option("ea_cap", "int", "largest EA evaluations per step", minimum=1, page_range=(None, 2000))
_SA_DECAY = Option("r", "float", "simulated annealing decay", minimum=1e-6, page_range=(None, 0.95))
_SA_T_LOW = Option("t_low", "float", "simulated annealing final temperature", minimum=1e-9, page_range=(1e-3, None))
_N_CHILDREN = Option("n_children", "int", "children per tree expansion", minimum=1, page_range=(None, 32))
_N_RESTARTS = Option("n_restarts", "int", "L-BFGS-B starts of each GP fit", minimum=1, page_range=(None, 20))
POOLS.register(Entry("nasbot-ea", "NASBOT's evolutionary acquisition optimiser over its nine modifiers",
                     "nasviz.strategies.nasbot:EAPool", (
    _EA_BASE,
    _EA_CAP,
    _ACQ_FRACTION,
    Option("ea_init", "choice", "where the EA starts", choices=("paper", "observed", "paper+best")),
), capabilities={"needs": frozenset({"modifiers"})}, paper="001 Sec. 4.2, App. B.2"))
POOLS.register(Entry("autokeras-tree", "Auto-Keras's A* + simulated annealing tree search over morphisms",
                     "nasviz.strategies.tree_search:TreeSearchPool", (
    _SA_DECAY,
    _SA_T_LOW,
    _N_CHILDREN,
    _ACQ_FRACTION,
), capabilities={"needs": frozenset({"morphisms"})}, paper="003 Alg. 1"))
BATCH_SELECTORS.register(Entry("topk", "the B best acquisition values (B = 1: the argmax)", "nasviz.batch:topk_selector"))
BATCH_SELECTORS.register(Entry("kdpp-quality", "quality k-DPP: diverse and good (posterior covariance x quality)",
                               "nasviz.batch:kdpp_quality_selector", capabilities={"min_batch": 2, "covariance": True},
                               paper="000 Sec. 3.2"))
BATCH_SELECTORS.register(Entry("kdpp", "k-DPP on the posterior covariance (diversity only)", "nasviz.batch:kdpp_selector",
                               capabilities={"min_batch": 2, "covariance": True}, paper="000 Sec. 4.2"))
BATCH_SELECTORS.register(Entry("bucb", "GP-BUCB / Kriging believer: hallucinate, shrink variance, repeat",
                               "nasviz.batch:bucb_selector", capabilities={"min_batch": 1, "covariance": True},
                               paper="000 Sec. 4.2"))
BATCH_SELECTORS.register(Entry("thompson", "Thompson sampling: argmax of joint posterior draws",
                               "nasviz.batch:thompson_selector", capabilities={"covariance": True}, paper="000 Sec. 4.2"))
BATCH_SELECTORS.register(Entry("random", "B pool members at random (no selector)", "nasviz.batch:random_selector"))
ACQUISITIONS.register(Entry("ucb", "upper confidence bound mu + kappa_t sigma", "nasviz.acquisition:ucb_acquisition", paper="002 App. E.5"))
ACQUISITIONS.register(Entry("ei", "expected improvement over the best observation", "nasviz.acquisition:ei_acquisition",
                            paper="002 Sec. 3"))


# ------------------------------------------------------------------------ objectives / data
OBJECTIVES.register(Entry("table", "look values up in a benchmark table (CSV)", "nasviz.objectives.table:load_table"))
OBJECTIVES.register(Entry("train", "train every proposed architecture for real (PyTorch)",
                          "nasviz.objectives.training:TrainingObjective"))
for _name, _description, _task, _kind in (
    ("digits", "8x8 handwritten digits, 10 classes (scikit-learn)", "classification", "image"),
    ("wine", "178 wines, 13 features, 3 classes (scikit-learn)", "classification", "tabular"),
    ("breast_cancer", "569 tumours, 30 features, 2 classes (scikit-learn)", "classification", "tabular"),
    ("diabetes", "442 patients, 10 features, regression (scikit-learn)", "regression", "tabular"),
    ("friedman1", "Friedman's 1991 benchmark function, 10 features, regression", "regression", "tabular"),
    ("mnist1d", "MNIST-1D: 5,000 signals of length 40, 10 classes, generated from mnist1d's templates",
     "classification", "signal"),
):
    DATASETS.register(Entry(_name, _description, "nasviz.objectives.datasets:load_dataset", preset={"name": _name},
                            capabilities={"task": _task, "input": _kind}))
for _name, _description in (
    ("mnist", "MNIST: 28x28 digits, 60,000 + 10,000 (a folder in torchvision's layout)"),
    ("fashion_mnist", "Fashion-MNIST: 28x28 clothes, 60,000 + 10,000 (a folder in torchvision's layout)"),
    ("cifar10", "CIFAR-10: 32x32 colour images, 50,000 + 10,000 (a folder in torchvision's layout)"),
):
    DATASETS.register(Entry(_name, _description, "nasviz.objectives.datasets:load_dataset", preset={"name": _name},
                            capabilities={"task": "classification", "input": "image", "folder": True}))


# --------------------------------------------------------------------------- dashboard views
# The Search page's tabs, in this order; ``title`` is the tab's label. Each view decides from the
# run's typed step state and these registries' capabilities whether it applies (nasviz.dashboard.views).
for _name, _title, _description, _factory in (
    ("pool", "Candidate pool", "the step's candidate pool embedded by the GP kernel's own distance, coloured by "
                               "posterior mean, the chosen batch starred", "pool:PoolView"),
    ("hyperparameters", "Hyperparameters", "the GP's learned hyperparameters over the steps, bounds hit and chosen "
                                           "floors named",
     "hyperparameters:HyperparameterView"),
    ("distances", "Distances", "any fitting kernel's distance components between the evaluated architectures",
     "distances:DistanceView"),
    ("features", "WL features", "WL feature gradients: sub-structures that push the GP's prediction up or down",
     "features:FeatureGradientView"),
    ("selection", "Selected architectures", "graphs of the architectures the latest step chose",
     "selection:SelectionView"),
    ("evaluations", "Evaluations", "every evaluation as a table: sort, filter, open one on the Architectures page",
     "evaluations:EvaluationView"),
    ("curves", "Learning curves", "per-epoch validation curves of the evaluated architectures (live training, or a "
                                  "table's <metric>_epoch_<E> columns)", "curves:LearningCurveView"),
):
    VIEWS.register(Entry(_name, _description, f"nasviz.dashboard.views.{_factory}", capabilities={"title": _title}))


# ----------------------------------------------------------------------------------- plugins
#: The entry-point group of each registry: a package adds components under these (:mod:`nasviz.plugins`).
PLUGIN_GROUPS: dict[str, Registry] = {
    "nasviz.spaces": SPACES, "nasviz.kernels": KERNELS, "nasviz.strategies": STRATEGIES, "nasviz.pools": POOLS,
    "nasviz.batch_selectors": BATCH_SELECTORS, "nasviz.acquisitions": ACQUISITIONS, "nasviz.objectives": OBJECTIVES,
    "nasviz.datasets": DATASETS, "nasviz.views": VIEWS,
}


def load_plugins() -> tuple[Any, ...]:
    """Load the entry points of :data:`PLUGIN_GROUPS` and ``NASVIZ_PLUGINS``, once per process;
    returns the :class:`nasviz.plugins.PluginProblem` of each plugin that was skipped. Runs by
    itself at the first read of any registry; entry points of processes call it first thing."""
    from nasviz.plugins import load

    return load(PLUGIN_GROUPS)
