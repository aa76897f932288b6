"""Test data kept in the repository, so that every test runs from a bare clone.

Each file's source, version and licence are in ``tests/data/README.md``; the paths here are
the only way tests reach them.
"""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent
#: pinned upstream CRDs (gzipped YAML) for offline schema checks of custom resources
CRDS_DIR = DATA_DIR / "crds"
#: the batch script of the design document's opening example (srun --label torchrun …)
TORCHRUN_SCRIPT = DATA_DIR / "llm-torchrun.sh"
#: a 2-node × 2-task job's SLURM_* environment as real Slurm 22.05 gave it
REAL_SLURM_RECORDINGS = DATA_DIR / "real-slurm"
#: sinfo and scontrol show node/partition of real Slurm 22.05 with one node drained
REAL_SLURM_SINFO = REAL_SLURM_RECORDINGS / "sinfo-drained"
#: the option and input-variable lists of the project's Slurm reference
SLURM_SPEC_EXCERPT = DATA_DIR / "slurm-spec" / "options-excerpt.md"
