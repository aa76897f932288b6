"""Platform mode: the runtime as the command of a job another platform started.

``python3 runtime.pyz run [--contract NAME] [-v] job.sh [args…]`` on every container of a
PyTorchJob, TrainJob, Volcano Job, JobSet, Indexed Job (and the platforms built on them:
AI Hub, PAI-DLC), an AIStation, task-training or ModelArts job reads that platform's
contract (:mod:`.contracts`, one adapter per platform), builds the job from the script's
``#SBATCH`` header (:mod:`.description`) and runs it as ``runtime node`` runs our own pods
(:mod:`.run`). Facts: ``reference/platforms.md`` and ``reference/kubernetes.md``. The
platforms' variable names, and how a variable carrying a plain Slurm fact reads back, are the
table of :mod:`parsers.platforms.contract_facts` that also makes the contract profiles; the adapters
read it through :func:`.variables.facts_from_environment`.
"""
