"""What each platform gives its containers, written from the reference tables
(``reference/kubernetes.md``, ``reference/platforms.md``) — not from the adapters.

Each function returns the containers of one job in the platform's own order, together with
the node order Slurm's view must show (hostnames, node 0 first).
"""

from __future__ import annotations

import json
from typing import Dict, List, NamedTuple, Sequence, Tuple

from tests.platform.harness import Node


class PlatformJob(NamedTuple):
    """The containers and the expected node order (hostnames)."""

    nodes: List[Node]
    order: Tuple[str, ...]


def kubelet_aliases(hostname: str, subdomain: str, namespace: str = "default") -> Tuple[str, ...]:
    """The names a kubelet's /etc/hosts gives a pod with a subdomain (FQDN first)."""
    return (f"{hostname}.{subdomain}.{namespace}.svc.cluster.local", f"{hostname}.{subdomain}")


def pytorchjob(job: str, count: int, nproc: int, legacy: bool = False) -> PlatformJob:
    """training-operator v1: Master 1 + Worker count-1; ``envvar.go``'s variables (§1.3).
    ``legacy``: ≤ v1.6 (WORLD_SIZE = pods, no ``PET_*``)."""
    names = [f"{job}-master-0"] + [f"{job}-worker-{i}" for i in range(count - 1)]
    nodes = []
    for rank, hostname in enumerate(names):
        env = {"PYTHONUNBUFFERED": "1", "MASTER_ADDR": f"{job}-master-0",
               "MASTER_PORT": "23456", "RANK": str(rank)}
        if legacy:
            env.update(PYTHONUNBUFFERED="0", WORLD_SIZE=str(count))
        else:
            env.update(PET_MASTER_ADDR=f"{job}-master-0", PET_MASTER_PORT="23456",
                       WORLD_SIZE=str(count * nproc), PET_NODE_RANK=str(rank),
                       PET_NPROC_PER_NODE=str(nproc), PET_NNODES=str(count))
        nodes.append(Node(hostname, env))
    return PlatformJob(nodes, tuple(names))


def aihub_pytorchjob(job: str, count: int, gpus: int) -> PlatformJob:
    """AI Hub's PyTorchJob (seed 000): WORLD_SIZE = total GPUs, RANK = node index."""
    made = pytorchjob(job, count, gpus)
    for node in made.nodes:
        node.env["WORLD_SIZE"] = str(count * gpus)
    return made


def trainjob(name: str, count: int, nproc: int) -> PlatformJob:
    """Trainer v2 (§4.2): ``PET_*`` only, pods ``<tj>-node-0-<i>`` of the JobSet ``<tj>``."""
    names = [f"{name}-node-0-{i}" for i in range(count)]
    nodes = [Node(h, {"PET_NNODES": str(count), "PET_NPROC_PER_NODE": str(nproc),
                      "PET_NODE_RANK": str(i), "PET_MASTER_ADDR": f"{name}-node-0-0.{name}",
                      "PET_MASTER_PORT": "29500"}, aliases=kubelet_aliases(h, name))
             for i, h in enumerate(names)]
    return PlatformJob(nodes, tuple(names))


def indexed_job(job: str, count: int, subdomain: str) -> PlatformJob:
    """An Indexed Job (§6): ``JOB_COMPLETION_INDEX``, hostname ``<job>-<i>``, subdomain."""
    names = [f"{job}-{i}" for i in range(count)]
    nodes = [Node(h, {"JOB_COMPLETION_INDEX": str(i)}, aliases=kubelet_aliases(h, subdomain))
             for i, h in enumerate(names)]
    return PlatformJob(nodes, tuple(names))


def jobset(name: str, replicated_job: str, count: int) -> PlatformJob:
    """A JobSet (§5.2): one replicated job of one Indexed Job; subdomain = the JobSet."""
    names = [f"{name}-{replicated_job}-0-{i}" for i in range(count)]
    nodes = [Node(h, {"JOB_COMPLETION_INDEX": str(i)}, aliases=kubelet_aliases(h, name))
             for i, h in enumerate(names)]
    return PlatformJob(nodes, tuple(names))


def volcano(job: str, tasks: Sequence[Tuple[str, int]]) -> PlatformJob:
    """A Volcano Job with the svc and env plugins (§7.2): ``VC_<TASK>_HOSTS``/``_NUM`` on
    every pod, ``VC_TASK_INDEX`` (and ``VK_TASK_INDEX``) its index within its task; pods
    ``<job>-<task>-<i>`` reached as ``<pod>.<job>``."""
    shared: Dict[str, str] = {}
    for task, replicas in tasks:
        stem = task.upper().replace("-", "_")
        shared[f"VC_{stem}_HOSTS"] = ",".join(f"{job}-{task}-{i}.{job}" for i in range(replicas))
        shared[f"VC_{stem}_NUM"] = str(replicas)
    nodes: List[Node] = []
    order: List[str] = []
    for task, replicas in tasks:
        for i in range(replicas):
            hostname = f"{job}-{task}-{i}"
            env = dict(shared, VC_TASK_INDEX=str(i), VK_TASK_INDEX=str(i))
            nodes.append(Node(hostname, env, aliases=kubelet_aliases(hostname, job)))
            order.append(hostname)
    return PlatformJob(nodes, tuple(order))


def aistation(job: str, count: int, gpus: int, rdzv_id: str) -> PlatformJob:
    """AIStation Master/Worker (seed 003): the platform sets ``MASTER_ADDR`` (here a
    service name of the master container) and ``MASTER_PORT``; the user's form sets
    ``NNODES``, ``NPROC_PER_NODE`` and ``RDZV_ID``. Nothing says which container is which:
    the expected order is the master, then the workers by hostname (the runtime's rule)."""
    env = {"MASTER_ADDR": f"{job}-master", "MASTER_PORT": "29500", "NNODES": str(count),
           "NPROC_PER_NODE": str(gpus), "RDZV_ID": rdzv_id}
    master = Node(f"{job}-master-0", dict(env), aliases=(f"{job}-master",))
    workers = [Node(f"{job}-worker-{i}", dict(env)) for i in range(count - 1)]
    order = (master.hostname,) + tuple(sorted(w.hostname for w in workers))
    return PlatformJob([master] + workers, order)


def task_training_pytorch(job: str, count: int, slots: int) -> PlatformJob:
    """The task-training platform's PyTorch mode (seed 001): ``MASTER_ADDR`` (a name of the
    rank-0 container), ``MASTER_PORT`` 2222, ``WORLD_SIZE`` (nodes, as its wrapper's
    ``--nnodes``), ``RANK`` (node rank), ``SLOTS``; nothing names the other containers."""
    nodes = []
    for rank in range(count):
        env = {"MASTER_ADDR": f"{job}-master", "MASTER_PORT": "2222",
               "WORLD_SIZE": str(count), "RANK": str(rank), "SLOTS": str(slots)}
        nodes.append(Node(f"{job}-{rank}", env,
                          aliases=(f"{job}-master",) if rank == 0 else ()))
    return PlatformJob(nodes, tuple(n.hostname for n in nodes))


def task_training_deepspeed(job: str, count: int, slots: int) -> PlatformJob:
    """PyTorch-DeepSpeed mode: the PyTorch mode's variables plus ``/job/hostfile``
    (``server1 slots=4`` lines, the nodes in rank order)."""
    made = task_training_pytorch(job, count, slots)
    hostfile = "".join(f"{n.hostname} slots={slots}\n" for n in made.nodes)
    nodes = [n._replace(files={"/job/hostfile": hostfile}) for n in made.nodes]
    return PlatformJob(nodes, made.order)


def tf_config(job: str, workers: int, chief: bool = False, namespace: str = "ns") -> PlatformJob:
    """TF_CONFIG (§3; the task-training TensorFlow mode): the cluster's hosts
    ``<job>-<type>-<i>.<ns>.svc:2222``, the task's type and index; AllReduce (no ps)."""
    kinds = ([("chief", 1)] if chief else []) + [("worker", workers)]
    cluster = {kind: [f"{job}-{kind}-{i}.{namespace}.svc:2222" for i in range(n)]
               for kind, n in kinds}
    nodes = []
    for kind, n in kinds:
        for i in range(n):
            config = json.dumps({"cluster": cluster, "task": {"type": kind, "index": i},
                                 "environment": "cloud"})
            hostname = f"{job}-{kind}-{i}"
            nodes.append(Node(hostname, {"TF_CONFIG": config},
                              aliases=(f"{hostname}.{namespace}.svc",)))
    return PlatformJob(nodes, tuple(n.hostname for n in nodes))


def modelarts(job: str, count: int, cards: int, template: int = 2,
              status: str = "completed") -> PlatformJob:
    """ModelArts on Ascend (seed 004): the command runs once per card of each node, with
    ``ASCEND_DEVICE_ID`` (logical card 0…), ``RANK_ID`` (the card's index in the job),
    ``RANK_SIZE`` (cards in the job) and ``RANK_TABLE_FILE=/user/config``, the directory of
    ``jobstart_hccl.json`` (template 2 as ModelArts writes it, or template 1). ``server_id``
    is the server's address (here the container's own)."""
    names = [f"{job}-job-trainjob-{i}" for i in range(count)]
    if template == 2:
        table = {"group_count": "1", "group_list": [{
            "device_count": str(count * cards), "group_name": "job-trainjob",
            "instance_count": str(count), "instance_list": [{
                "devices": [{"device_id": str(d), "device_ip": f"192.1.{n}.{d}"}
                            for d in range(cards)],
                "pod_name": name, "server_id": "{{address:%s}}" % name}
                for n, name in enumerate(names)]}], "status": status}
    else:
        table = {"server_count": str(count), "server_list": [{
            "device": [{"device_id": str(d), "device_ip": f"192.1.{n}.{d}",
                        "rank_id": str(n * cards + d)} for d in range(cards)],
            "server_id": "{{address:%s}}" % name} for n, name in enumerate(names)],
            "status": status, "version": "1.0"}
    files = {"/user/config/jobstart_hccl.json": json.dumps(table)}
    nodes = []
    for n, name in enumerate(names):
        instances = tuple({"ASCEND_DEVICE_ID": str(d), "RANK_ID": str(n * cards + d)}
                          for d in range(cards))
        env = {"RANK_TABLE_FILE": "/user/config", "RANK_SIZE": str(count * cards)}
        nodes.append(Node(name, env, files, instances=instances))
    return PlatformJob(nodes, tuple(names))


def task_training_horovod(job: str, count: int, slots: int, mpich: bool = False) -> PlatformJob:
    """The task-training platform's Horovod mode (seed 001): OpenMPI's
    ``OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile`` (``server1 slots=4``) or MPICH's
    ``HYDRA_HOST_FILE=/etc/mpi/mpich_hostfile`` (``server1:4``) and ``HYDRA_IFACE=eth0``;
    the command runs under ``mpirun -np <count × slots> -map-by slot``: once per slot, each
    run with the per-process variables mpirun sets (OpenMPI's ``OMPI_COMM_WORLD_*``,
    MPICH's ``PMI_RANK``/``PMI_SIZE``/``MPI_LOCALRANKID``/``MPI_LOCALNRANKS``)."""
    names = [f"{job}-{i}" for i in range(count)]
    if mpich:
        path, variable = "/etc/mpi/mpich_hostfile", "HYDRA_HOST_FILE"
        text = "".join(f"{n}:{slots}\n" for n in names)
    else:
        path, variable = "/etc/mpi/hostfile", "OMPI_MCA_orte_default_hostfile"
        text = "".join(f"{n} slots={slots}\n" for n in names)
    nodes = []
    for n, name in enumerate(names):
        instances = []
        for local in range(slots):
            rank = n * slots + local
            if mpich:
                instances.append({"PMI_RANK": str(rank), "PMI_SIZE": str(count * slots),
                                  "MPI_LOCALRANKID": str(local),
                                  "MPI_LOCALNRANKS": str(slots)})
            else:
                instances.append({"OMPI_COMM_WORLD_RANK": str(rank),
                                  "OMPI_COMM_WORLD_SIZE": str(count * slots),
                                  "OMPI_COMM_WORLD_LOCAL_RANK": str(local),
                                  "OMPI_COMM_WORLD_LOCAL_SIZE": str(slots),
                                  "OMPI_COMM_WORLD_NODE_RANK": str(n)})
        env = {variable: path}
        if mpich:
            env["HYDRA_IFACE"] = "eth0"
        nodes.append(Node(name, env, {path: text}, instances=tuple(instances)))
    return PlatformJob(nodes, tuple(names))


#: What an MpiJob's workers run in this harness instead of ``/usr/sbin/sshd -De``: nothing of
#: the job's own (the launcher's rsh agent brings the command).
SSHD_STAND_IN = ("sleep", "3600")


def aihub_mpijob(job: str, workers: int, slots: int,
                 namespace: str = "default") -> PlatformJob:
    """AI Hub's MpiJob (seed 000) as mpi-operator v2beta1 makes it (§2.2): the launcher
    ``<job>-launcher`` has the hostfile ``/etc/mpi/hostfile`` (``OMPI_MCA_orte_default_hostfile``;
    lines ``<job>-worker-<i>.<job>.<ns>.svc slots=<slotsPerWorker>``) and the OpenMPI
    variables; the workers ``<job>-worker-<i>`` have neither and run only sshd. The command
    runs on the launcher only; Slurm's nodes are the workers."""
    names = [f"{job}-worker-{i}" for i in range(workers)]
    hostfile = "".join(f"{n}.{job}.{namespace}.svc slots={slots}\n" for n in names)
    launcher = Node(f"{job}-launcher", {
        "K_MPI_JOB_ROLE": "launcher", "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
        "OMPI_MCA_orte_set_default_slots": str(slots),
        "NVIDIA_VISIBLE_DEVICES": "", "NVIDIA_DRIVER_CAPABILITIES": ""},
        {"/etc/mpi/hostfile": hostfile}, aliases=kubelet_aliases(f"{job}-launcher", job, namespace))
    nodes = [launcher] + [
        Node(n, {"K_MPI_JOB_ROLE": "worker"}, aliases=kubelet_aliases(n, job, namespace)
             + (f"{n}.{job}.{namespace}.svc",), command=SSHD_STAND_IN)
        for n in names]
    return PlatformJob(nodes, tuple(names))
