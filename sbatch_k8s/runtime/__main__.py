"""``python -m sbatch_k8s.runtime <command> …`` (the zipapp's ``__main__`` does the same)."""

from sbatch_k8s.runtime.main import main

main()
