"""The Kubernetes backend: jobs as workloads (Indexed Job, JobSet, PyTorchJob, MPIJob) and
their pods, job history as record ConfigMaps.

The reporting core (:mod:`.state`, :mod:`.pod_view`, :mod:`.workload_view`, :mod:`.records`,
:mod:`.record_steps`) is pure: functions over the JSON dicts the API server returns, with no
client import, so it is fast and tested without a cluster. The modules that talk to the API
server sit beside it.
"""
