"""``sbatch --k8s-print``: a submission plan as the manifests a cluster would get.

Nothing is contacted or created: the job id is ``--k8s-job-id`` (1 without), the Kubernetes
minor ``--k8s-kubernetes-version`` (:data:`PRINT_KUBERNETES_MINOR` without).
"""

from __future__ import annotations

import secrets

from sbatch_k8s.user_messages import print_warning
from sbatch_k8s.submission_plan import SubmissionPlan, now_iso

#: The Kubernetes minor ``--k8s-print`` renders for without ``--k8s-kubernetes-version``.
PRINT_KUBERNETES_MINOR = 29


def print_manifests(plan: SubmissionPlan) -> str:
    """The manifests as YAML, complete for ``kubectl apply --server-side -f -`` (a
    client-side apply cannot keep the runtime ConfigMap in its 256 kB
    ``last-applied-configuration`` annotation): the shared runtime ConfigMap first (left out
    with ``--k8s-print=objects``, for namespaces that have it), then the job's objects. The
    render's warnings go to stderr unless ``-Q``."""
    from parsers.option_values import K8S_PRINT_OBJECTS, kubernetes_minor
    from sbatch_k8s.manifest_yaml import dump_manifests
    from sbatch_k8s.runtime_bundle import build_bundle, bundle_digest, bundle_hash
    from translators import RenderInputs, render
    from translators.objects import runtime_config_map

    submit = plan.submit
    bundle = build_bundle()
    runtime_hash = bundle_hash(bundle)
    version = submit.k8s_kubernetes_version
    inputs = RenderInputs(
        job=plan.job, allocation=plan.allocation, context=plan.context,
        partition=plan.partition, cluster_name=plan.config.cluster_name,
        job_id=submit.k8s_job_id or 1, token=secrets.token_hex(16), runtime_hash=runtime_hash,
        runtime_digest=bundle_digest(bundle), submit_time=now_iso(),
        target=submit.k8s_target or plan.partition.target,
        kubernetes_minor=kubernetes_minor(version) if version else PRINT_KUBERNETES_MINOR)
    result = render(inputs)
    if not submit.quiet:
        for note in result.warnings:
            print_warning("sbatch", note)
    manifests = list(result.manifests)
    if submit.k8s_print != K8S_PRINT_OBJECTS:
        manifests.insert(0, runtime_config_map(runtime_hash, bundle))
    return dump_manifests(manifests)
