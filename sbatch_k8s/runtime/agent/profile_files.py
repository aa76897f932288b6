"""A job's contract-profile files on this node: hostfiles, the Ascend rank table.

Every node writes the files of the job's profile (:mod:`parsers.platforms.contract_profiles`) into
``<spool>/contract/`` when it starts, before node 0 runs the batch script, and the profile's
variables name that copy (``OMPI_MCA_orte_default_hostfile``, ``HYDRA_HOST_FILE``,
``RANK_TABLE_FILE``). The spool has the same path in every pod and each pod writes its own
copy; the local backend's nodes share the machine, so node 0's copy (the path every task is
given) is everyone's. The contents are the same on every node.

A file the platform keeps at a fixed path scripts may name literally (the DeepSpeed mode's
``/job/hostfile``, Horovod's ``/etc/mpi/…``) is also written there when the pod can (its
image lets the user create it). Never on the local backend, where ``/`` is the machine's and
shared by every job. When such a file cannot be written and no variable names it, node 0
says so once, on the batch script's standard error, naming the copy.
"""

from __future__ import annotations

import os
from typing import Any, List, Mapping, Sequence

from parsers.platforms.contract_profiles import FILES_DIRECTORY, PROFILES, profile_files
from parsers.platforms.contract_facts import node_facts
from parsers.slurm_env import master_port, node_gpu_ids


def files_directory(spool: str) -> str:
    """Where the profile's files of the job whose spool is ``spool`` are."""
    return os.path.join(spool, FILES_DIRECTORY)


def _write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole (a reader never sees half a file)."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    partial = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}")
    with open(partial, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(partial, 0o644)
    os.replace(partial, path)


def write_profile_files(desc: Mapping[str, Any], names: Sequence[str],
                        addresses: Sequence[str], spool: str, fixed_paths: bool) -> List[str]:
    """Write the files of the job's profile on this node (also at the platform's fixed paths
    when ``fixed_paths`` and writable); the lines node 0 puts on the batch script's stderr."""
    profile = desc.get("contract_profile")
    if profile not in PROFILES:
        return []
    directory = files_directory(spool)
    facts = node_facts(0, names, len(node_gpu_ids(desc, 0)), int(master_port(desc)),
                       int(desc["job_id"]), addresses, "", directory,
                       [node_gpu_ids(desc, i) for i in range(len(names))])
    notes: List[str] = []
    for file, text in profile_files(str(profile), facts).items():
        copy = facts.path_of(file)
        try:
            _write(copy, text)
        except OSError as e:
            notes.append(f"sbatch-k8s: error: contract {profile}: cannot write {copy}: "
                         f"{e.strerror or e}")
            continue
        if file.fixed_path is None:
            continue
        why = "the local backend does not write outside the job's directory"
        if fixed_paths:
            try:
                _write(file.fixed_path, text)
                continue
            except OSError as e:
                why = e.strerror or str(e)
        if not file.named_by:
            notes.append(f"sbatch-k8s: warning: contract {profile}: {file.fixed_path} is not "
                         f"written ({why}); the job's copy is {copy}")
    return notes
