"""How many of the job's GPUs a step holds on each of its nodes, or Slurm's refusal.

As slurmctld's step GRES checks (``gres_stepmgr``'s step state validation and allocation),
observed on a real Slurm 22.05:

* a step asks for GPUs with ``--gres=gpu:k``/``--gpus-per-node=k`` (k on every node),
  ``--gpus-per-task=k`` (k for each of its tasks on a node) or ``--gpus=k`` (k in all: one
  on each node first, the rest to the first nodes while they have GPUs left); srun's input
  environment carries the job's ``SLURM_GPUS*``, so a step inherits them;
* a step that asks for none gets all of its nodes' GPUs, unless the job holds GPUs it did not
  ask for (``--exclusive``);
* what the job cannot give is refused with Slurm's lines: ``Step requested GRES but job
  doesn't have GRES``, ``… is more than the job's …``, ``… is less than the requested min
  nodes=…``, then ``Unable to create step for job N: Invalid generic resource (gres)
  specification``.

Which ids the step gets is node 0's business (:mod:`sbatch_k8s.runtime.batch_host.step_registry`):
the lowest ones no other step holds, as Slurm binds them.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import SlurmInputError
from parsers.slurm_env import node_gpu_ids
from parsers.step_layout import StepLayout
from parsers.steps import EXIT_SRUN_ERROR, StepRequest


def _unable(job_id: int, *first: str) -> SlurmInputError:
    return SlurmInputError(*first, f"Unable to create step for job {job_id}: Invalid generic "
                           "resource (gres) specification", exit_code=EXIT_SRUN_ERROR)


def _text_count(text: Optional[str]) -> int:
    """GPUs in a job's ``--gpus*`` text as the description keeps it (``4``, ``a100:2,v100:1``)."""
    total = 0
    for item in (text or "").split(","):
        last = item.rsplit(":", 1)[-1].strip()
        if last.isdigit():
            total += int(last)
    return total


def _job_total(desc: Mapping[str, Any]) -> Optional[int]:
    """The job's GPUs in all, when it asked for a count for the whole job (``--gpus``) or
    per task (``--gpus-per-task`` × tasks)."""
    if desc.get("gpus"):
        return _text_count(desc["gpus"])
    if desc.get("gpus_per_task") and desc.get("ntasks"):
        return _text_count(desc["gpus_per_task"]) * int(desc["ntasks"])
    return None


def _job_per_node(desc: Mapping[str, Any]) -> Optional[int]:
    """The job's GPUs per node, when it asked for them so (``--gpus-per-node``, ``--gres``)."""
    if desc.get("gpus_per_node"):
        return _text_count(desc["gpus_per_node"])
    if desc.get("gpus_requested") and not desc.get("gpus") and not desc.get("gpus_per_task"):
        return int(desc.get("gpus_per_node_count") or 0) or None
    return None


def _counts(items: Sequence[Any]) -> int:
    return sum(int(getattr(item, "count", 0)) for item in items)


def _spread(total: int, available: Sequence[int], job_id: int) -> Tuple[int, ...]:
    """``--gpus=k`` over the step's nodes: one each, then the rest to the first nodes."""
    counts = [1] * len(available)
    if any(a < 1 for a in available):
        raise _unable(job_id)
    left = total - len(available)
    for i, have in enumerate(available):
        take = min(have - counts[i], left)
        counts[i] += take
        left -= take
    if left:
        raise _unable(job_id)
    return tuple(counts)


def step_gpu_counts(request: StepRequest, layout: StepLayout,
                    desc: Mapping[str, Any]) -> Tuple[int, ...]:
    """GPUs the step holds on each of its nodes (in ``layout``'s order); SlurmInputError
    with Slurm's lines when the job cannot give them."""
    job_id = int(desc["job_id"])
    available = [len(node_gpu_ids(desc, i)) for i in layout.node_indices]
    per_node = sum(g.count for g in request.gres if getattr(g, "name", "") == "gpu") or \
        _counts(request.gpus_per_node)
    per_task = _counts(request.gpus_per_task)
    total = _counts(request.gpus)
    if not (per_node or per_task or total):
        wanted = desc.get("gpus_requested", True)
        return tuple(available) if wanted else (0,) * len(available)
    job_has = sum(len(node_gpu_ids(desc, i)) for i in range(int(desc.get("node_count") or
                                                                 len(desc["cpus_per_node"]))))
    if not job_has:
        raise _unable(job_id, "Step requested GRES but job doesn't have GRES")
    if total:
        job_total = _job_total(desc)
        if job_total is not None and total > job_total:
            raise _unable(job_id, f"Step requested gres=gpu:{total} is more than the job's "
                                  f"gres=gpu:{job_total}")
        if total < len(available):
            raise _unable(job_id, f"Step requested gres=gpu:{total} is less than the requested "
                                  f"min nodes={len(available)}")
    if per_node:
        if any(per_node > have for have in available):
            job_per_node = _job_per_node(desc)
            first: List[str] = [
                f"Step requested gres_per_node=gpu:{per_node} is more than the job's "
                f"gres_per_node=gpu:{job_per_node}"] if job_per_node else []
            raise _unable(job_id, *first)
        counts = tuple(per_node for _ in available)
    elif per_task:
        counts = tuple(per_task * len(ranks) for ranks in layout.ranks)
        if any(c > have for c, have in zip(counts, available)):
            raise _unable(job_id)
    else:
        return _spread(total, available, job_id)
    if total > sum(available):
        raise _unable(job_id)
    return counts
