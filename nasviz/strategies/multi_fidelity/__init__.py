"""Multi-fidelity strategies: spend evaluations at low budgets and promote what looks good.

Each strategy asks for :class:`~nasviz.fidelity.FidelityRequest`\\ s (an architecture at a budget of
the objective's ladder, continuing from a lower one where it has one) instead of architectures;
the runner hands them to the objective as they are (:func:`nasviz.runner.run_search`). They read
the ladder and the cost model from the objective in ``attach`` (a
:class:`~nasviz.objectives.fidelity_table.FidelityTableObjective`, or a training objective's
epochs).

==================  ==========================================================================
``base``            :class:`FidelityAware`: the ladder and cost model from ``attach``
``brackets``        :class:`BracketSearch`: successive halving (Jamieson & Talwalkar 2016) and
                    Hyperband (Li et al. 2018, Alg. 1) over any proposer of new architectures;
                    random proposals (``successive-halving``, ``hyperband``)
``bohb``            BOHB (Falkner et al. 2018): Hyperband whose new architectures come from the
                    project's GP and kernels, fitted at the largest budget with enough data
``mf_gp``           a multi-fidelity GP (architecture kernel x fidelity kernel) choosing the
                    architecture and the budget by expected improvement per unit cost
                    (Huang et al. 2006's augmented EI)
``optuna_pruned``   peers: Optuna's TPE with its HyperbandPruner / SuccessiveHalvingPruner
``smac_peer``       peer: SMAC3's multi-fidelity facade (optional package ``smac``)
``dehb_peer``       peer: DEHB (optional package ``dehb``)
==================  ==========================================================================
"""
