"""sbatch-k8s: Slurm's commands over Kubernetes (and, with no cluster, on this machine).

Kept empty on purpose: the pod-side runtime ships this file, and every command imports it.
"""
