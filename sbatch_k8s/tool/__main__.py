"""``python -m sbatch_k8s.tool`` runs ``sbatch-k8s``."""

from sbatch_k8s.tool.main import main

main()
