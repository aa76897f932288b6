"""Target ``indexed-job`` (the default): a ``batch/v1`` Indexed Job plus a headless Service.

Documents per unit, in creation order: ConfigMap, Secret, Service (gangs only: an array run as
one Indexed Job needs no peer names), Volcano PodGroup (gang = volcano), Job. Pods resolve as
``<name>-<i>.<name>``; the Service selects them by the job-id label.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List

from translators.batch_job import job_spec
from translators.objects import (
    headless_service,
    job_config_map,
    pod_group,
    token_secret,
    uses_pod_group,
    workload_metadata,
)
from translators.pod import pod_template

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit


def render_unit(plan: "JobPlan", unit: "Unit") -> List[Dict[str, Any]]:
    """The manifests of one unit."""
    container = plan.traits.container
    gang = not unit.indexed_array
    volcano = uses_pod_group(plan)
    template = pod_template(plan, unit, container, subdomain=unit.name if gang else None,
                            pod_group=unit.name if volcano else None)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": workload_metadata(plan, unit),
           "spec": job_spec(plan, unit, template, container)}
    docs = [job_config_map(plan, unit), token_secret(plan, unit)]
    if gang:
        docs.append(headless_service(plan, unit))
    if volcano:
        docs.append(pod_group(plan, unit))
    docs.append(job)
    return docs
