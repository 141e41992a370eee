"""PyTorch models built from architectures: NAS-Bench-201 cell networks (:mod:`.nb201_net`)
and layer DAGs (:mod:`.layer_net`)."""
