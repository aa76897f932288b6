"""The option table: every sbatch and srun option, in one place.

Each row says how Slurm spells the option (long name, short letter, argument kind), where its
value may also come from (``SBATCH_*`` for sbatch, ``SLURM_*``/``SRUN_*`` for srun), which field
of :class:`parsers.jobspec.JobSpec` / :class:`parsers.steps.StepRequest` receives it, how its value
is read (``kind``, see :mod:`parsers.option_values`), and how well sbatch-k8s supports it per
command:

* ``honoured`` — does what Slurm does;
* ``approximated`` — does something close, and says what with a warning;
* ``ignored`` — accepted so scripts keep working, with a warning that it has no effect;
* ``rejected`` — refused with an error, because running without it would mislead.

A row may say that one backend does less than the others (``kubernetes=("R", why)``): the
parser applies the row's own level, and that backend applies its own — it refuses what the
table rejects there and warns about what it ignores or approximates there (see
:mod:`parsers.backend_support`). srun runs inside jobs with the same runtime on every backend,
so only sbatch's level varies per backend. ``tests/unit/option_effects`` proves that every
option honoured or approximated on a backend changes what that backend does.

The getopt parser, ``--help``, ``sbatch --k8s-lint`` and the README's compatibility matrix are all
derived from this table. Rows follow Slurm's ``slurm_opt.c`` (26.05) plus the pyxis container
options and our ``--k8s-*`` extensions.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

from parsers.platforms.target_names import profiles_in_words, targets_in_words

HONOURED = "honoured"
APPROXIMATED = "approximated"
IGNORED = "ignored"
REJECTED = "rejected"
SUPPORT_LEVELS = (HONOURED, APPROXIMATED, IGNORED, REJECTED)

#: Argument kinds, as getopt_long knows them.
NO_ARG = "none"
REQUIRED = "required"
OPTIONAL = "optional"

SBATCH = "sbatch"
SRUN = "srun"
COMMANDS = (SBATCH, SRUN)

#: The backends that run jobs: this machine, or a Kubernetes cluster.
LOCAL = "local"
KUBERNETES = "kubernetes"
BACKENDS = (LOCAL, KUBERNETES)

_LEVEL_CODES = {"H": HONOURED, "A": APPROXIMATED, "I": IGNORED, "R": REJECTED, "-": None}
_ARG_CODES = {"0": NO_ARG, "1": REQUIRED, "?": OPTIONAL}


class Option:
    """One row of the table. Immutable by convention; built once at import."""

    __slots__ = (
        "long", "short", "arg", "kind", "field", "support", "env", "note", "aliases", "const",
        "hidden", "on_backend",
    )

    def __init__(
        self,
        long: str,
        short: Optional[str],
        arg: str,
        kind: str,
        field: Optional[str],
        support: Dict[str, Optional[str]],
        env: Dict[str, Tuple[str, ...]],
        note: str,
        aliases: Tuple[str, ...] = (),
        const: object = None,
        hidden: bool = False,
        on_backend: Optional[Dict[str, Tuple[str, str]]] = None,
    ) -> None:
        self.long = long
        self.short = short
        self.arg = arg
        self.kind = kind
        self.field = field
        self.support = support
        self.env = env
        self.note = note
        self.aliases = aliases
        self.const = const
        self.hidden = hidden
        #: backend → (sbatch's level there, why), where that backend does less.
        self.on_backend: Dict[str, Tuple[str, str]] = dict(on_backend or {})

    def level(self, command: str, backend: Optional[str] = None) -> Optional[str]:
        """Support level for ``command`` (on ``backend`` when given), or None when the command
        has no such option."""
        if backend is not None and command == SBATCH and backend in self.on_backend:
            return self.on_backend[backend][0]
        return self.support.get(command)

    def note_on(self, backend: Optional[str] = None) -> str:
        """What the option becomes (on ``backend`` when given)."""
        if backend is not None and backend in self.on_backend:
            return self.on_backend[backend][1]
        return self.note

    def differs_on(self, backend: str) -> bool:
        """Whether ``backend`` does less with the option than the row's own level says."""
        return backend in self.on_backend

    def spelled(self) -> str:
        """``-t, --time`` as help text shows it."""
        return f"-{self.short}, --{self.long}" if self.short else f"--{self.long}"

    def __repr__(self) -> str:
        return f"Option(--{self.long})"


def _row(
    names: str,
    arg: str,
    kind: str,
    field: Optional[str],
    levels: str,
    note: str,
    sbatch_env: str = "",
    srun_env: str = "",
    aliases: Tuple[str, ...] = (),
    const: object = None,
    hidden: bool = False,
    local: Optional[Tuple[str, str]] = None,
    kubernetes: Optional[Tuple[str, str]] = None,
) -> Option:
    """Build a row from a compact spelling: ``names`` is ``"time/t"``, ``levels`` is two codes
    (sbatch, srun) from ``H A I R -``, the env strings are space-separated variable names;
    ``local``/``kubernetes`` are ``(code, why)`` where that backend does less with sbatch's
    option."""
    long, _, short = names.partition("/")
    support = {SBATCH: _LEVEL_CODES[levels[0]], SRUN: _LEVEL_CODES[levels[1]]}
    env = {SBATCH: tuple(sbatch_env.split()), SRUN: tuple(srun_env.split())}
    on_backend = {backend: (_LEVEL_CODES[code], why) for backend, (code, why) in
                  ((LOCAL, local or ("", "")), (KUBERNETES, kubernetes or ("", ""))) if code}
    return Option(long, short or None, _ARG_CODES[arg], kind, field, support, env, note,
                  aliases, const, hidden, on_backend)


#: Why the local backend does less with an option.
_LOCAL_NODES = "the local backend's nodes are processes on this machine, not chosen by name"
_LOCAL_NO_CONTAINER = "jobs run on this machine, not in a container"
_LOCAL_NO_OBJECTS = "the local backend creates no Kubernetes objects (--k8s-print does)"

# Kinds (value readers) are defined in parsers.option_values. Notes say what the option
# becomes on Kubernetes / in the runtime; for ignored options, why it has no effect there.
OPTIONS: Tuple[Option, ...] = (
    _row("accel-bind", "1", "string", "accel_bind", "-I", "no accelerator binding inside pods",
         srun_env=""),
    _row("account/A", "1", "string", "account", "HH",
         "label sbatch-k8s.io/account; SLURM_JOB_ACCOUNT", "SBATCH_ACCOUNT", "SLURM_ACCOUNT"),
    _row("acctg-freq", "1", "acctg_freq", "acctg_freq", "HH",
         "interval of the per-task usage sampling (sacct/sstat usage fields)",
         "SBATCH_ACCTG_FREQ", "SLURM_ACCTG_FREQ"),
    _row("array/a", "1", "array", "array", "H-",
         "one Kubernetes Job per array task; %limit caps how many run at once",
         "SBATCH_ARRAY_INX"),
    _row("async", "0", "flag", "async_", "-I", "no burst-buffer stage-in"),
    _row("autocomplete", "1", "string", "autocomplete", "HH",
         "prints the options that complete the given prefix"),
    _row("batch", "1", "string", "batch_features", "I-",
         "the batch script always runs on node 0", "SBATCH_BATCH"),
    _row("bb", "1", "string", "burst_buffer", "II", "no burst buffers on Kubernetes",
         "SBATCH_BURST_BUFFER", "SLURM_BURST_BUFFER"),
    _row("bbf", "1", "string", "burst_buffer_file", "II", "no burst buffers on Kubernetes"),
    _row("bcast", "?", "string", "bcast", "-I",
         "the executable is not copied; nodes share the image"),
    _row("bcast-exclude", "1", "string", "bcast_exclude", "-I", "see --bcast"),
    _row("begin/b", "1", "begin", "begin", "AA",
         "the job stays pending (reason BeginTime) until the begin time"),
    _row("cluster-constraint", "1", "string", "cluster_constraint", "II",
         "one cluster only", "SBATCH_CLUSTER_CONSTRAINT", "SLURM_CLUSTER_CONSTRAINT"),
    _row("chdir/D", "1", "string", "chdir", "HH",
         "working directory of the batch script / tasks (shared volume from the partition)",
         srun_env="SLURM_REMOTE_CWD SLURM_WORKING_DIR"),
    _row("clusters/M", "1", "string", "clusters", "HH",
         "the one configured cluster, by its name or all; another name is refused as Slurm "
         "refuses a cluster its database does not know",
         "SBATCH_CLUSTERS SLURM_CLUSTERS", "SLURM_CLUSTERS"),
    _row("cluster", "1", "string", "clusters", "HH", "see --clusters", hidden=True),
    _row("comment", "1", "string", "comment", "HH", "annotation sbatch-k8s.io/comment"),
    _row("compress", "?", "string", "compress", "-I", "see --bcast"),
    _row("constraint/C", "1", "string", "constraint", "AA",
         "node affinity on feature labels (& and | only; counts and [...] are dropped)",
         "SBATCH_CONSTRAINT", "SLURM_CONSTRAINT"),
    _row("consolidate-segments", "0", "flag", "consolidate_segments", "II",
         "no topology segments", "SBATCH_CONSOLIDATE_SEGMENTS", "SLURM_CONSOLIDATE_SEGMENTS"),
    _row("container", "1", "string", "container", "RR",
         "OCI bundles are not run; use --container-image", "SBATCH_CONTAINER", "SRUN_CONTAINER"),
    _row("container-id", "1", "string", "container_id", "II", "see --container",
         "SBATCH_CONTAINER_ID", "SRUN_CONTAINER_ID"),
    _row("container-type", "1", "string", "container_type", "II", "see --container",
         "SBATCH_CONTAINER_TYPE", "SRUN_CONTAINER_TYPE"),
    _row("context", "1", "string", "context", "II", "no SELinux context"),
    _row("contiguous", "0", "flag", "contiguous", "II", "pods are not placed contiguously"),
    _row("core-spec/S", "1", "string", "core_spec", "II", "no specialized cores",
         "SBATCH_CORE_SPEC", "SLURM_CORE_SPEC"),
    _row("cores-per-socket", "1", "int", "cores_per_socket", "II", "no socket layout in pods",
         srun_env="SLURM_NCORES_PER_SOCKET"),
    _row("cpu-bind", "1", "string", "cpu_bind", "-A",
         "none is what pods do; other bindings are not applied", srun_env="SLURM_CPU_BIND",
         aliases=("cpu_bind",)),
    _row("cpu-freq", "1", "string", "cpu_freq", "II", "no CPU frequency control",
         "SBATCH_CPU_FREQ_REQ", "SLURM_CPU_FREQ_REQ"),
    _row("cpus-per-gpu", "1", "int", "cpus_per_gpu", "HH", "CPU request = GPUs x value",
         "SBATCH_CPUS_PER_GPU", "SLURM_CPUS_PER_GPU"),
    _row("cpus-per-task/c", "1", "int", "cpus_per_task", "HH",
         "CPU request = value x tasks per node; SLURM_CPUS_PER_TASK",
         srun_env="SLURM_CPUS_PER_TASK"),
    _row("deadline", "1", "begin", "deadline", "II", "no deadline scheduling"),
    _row("debugger-test", "0", "flag", "debugger_test", "-I", "no parallel debugger support"),
    _row("delay-boot", "1", "time", "delay_boot_min", "II", "nodes are never rebooted",
         "SBATCH_DELAY_BOOT", "SLURM_DELAY_BOOT"),
    _row("dependency/d", "1", "dependency", "dependency", "HH",
         "the job stays pending until its dependencies are satisfied",
         srun_env="SLURM_DEPENDENCY"),
    _row("disable-status/X", "0", "flag", "disable_status", "-H",
         "Ctrl-C forwards SIGINT at once", srun_env="SLURM_DISABLE_STATUS"),
    _row("distribution/m", "1", "distribution", "distribution", "HH",
         "task layout over nodes (block, cyclic, plane, arbitrary); SLURM_DISTRIBUTION",
         "SBATCH_DISTRIBUTION", "SLURM_DISTRIBUTION"),
    _row("epilog", "1", "string", "epilog", "-H", "run by srun after the step",
         srun_env="SLURM_EPILOG"),
    _row("error/e", "1", "filename", "error", "HH", "stderr file pattern, written by the runtime",
         "SBATCH_ERROR", "SRUN_ERROR SLURM_STDERRMODE"),
    _row("exact", "0", "flag", "exact", "-H", "step gets exactly the CPUs it asked for",
         srun_env="SLURM_EXACT"),
    _row("exclude/x", "1", "hostlist", "exclude", "HH",
         "node anti-affinity on kubernetes.io/hostname / step placement",
         local=("I", _LOCAL_NODES)),
    _row("exclusive", "?", "exclusive", "exclusive", "AH",
         "whole nodes: pods request the partition's node_cpus and node_gpus (where they are "
         "not set, the CPUs and GPUs of its smallest Ready node, read from the cluster) and "
         "keep other jobs' pods off their nodes; on the local backend the job takes this "
         "machine's whole pool ([local] cpus and gpus)",
         "SBATCH_EXCLUSIVE", "SLURM_EXCLUSIVE"),
    _row("export", "1", "export", "export", "HH",
         "environment of the batch script and tasks", "SBATCH_EXPORT",
         "SLURM_EXPORT_ENV SRUN_EXPORT_ENV"),
    _row("export-file", "1", "string", "export_file", "I-",
         "the file is not read yet: give the variables with --export"),
    _row("external", "0", "flag", "external", "R-", "no external jobs on Kubernetes"),
    _row("external-launcher", "?", "flag", "external_launcher", "-H",
         "mpirun's own launcher step; runs like --overlap",
         srun_env="SLURM_EXTERNAL_LAUNCHER"),
    _row("extra", "1", "string", "extra", "II", "no node extra-data matching"),
    _row("extra-node-info/B", "1", "string", "extra_node_info", "II", "no socket layout in pods"),
    _row("get-user-env", "?", "string", "get_user_env", "I-",
         "the job gets the submission environment (as --export says), never a fresh login "
         "environment", "SBATCH_GET_USER_ENV"),
    _row("gid", "1", "string", "gid", "R-", "jobs run as the submitting user only"),
    _row("gpu-bind", "1", "string", "gpu_bind", "II", "GPU binding is per pod",
         "SBATCH_GPU_BIND", "SLURM_GPU_BIND"),
    _row("gpu-freq", "1", "string", "gpu_freq", "II", "no GPU frequency control",
         "SBATCH_GPU_FREQ", "SLURM_GPU_FREQ"),
    _row("gpus/G", "1", "gpus", "gpus", "HH",
         "GPUs spread over the nodes (resource from the partition); SLURM_GPUS",
         "SBATCH_GPUS", "SLURM_GPUS"),
    _row("gpus-per-node", "1", "gpus", "gpus_per_node", "HH",
         "GPU limit per pod; typed GPUs select nodes by the partition's GPU label",
         "SBATCH_GPUS_PER_NODE", "SLURM_GPUS_PER_NODE"),
    _row("gpus-per-socket", "1", "gpus", "gpus_per_socket", "II", "no socket layout in pods",
         "SBATCH_GPUS_PER_SOCKET", "SLURM_GPUS_PER_SOCKET"),
    _row("gpus-per-task", "1", "gpus", "gpus_per_task", "HH",
         "GPU limit = value x tasks per node; each task sees its own CUDA_VISIBLE_DEVICES",
         "SBATCH_GPUS_PER_TASK", "SLURM_GPUS_PER_TASK"),
    _row("gres", "1", "gres", "gres", "HH",
         "gpu → the partition's GPU resource; other names → extended resources by config",
         "SBATCH_GRES", "SLURM_GRES"),
    _row("gres-flags", "1", "string", "gres_flags", "II", "no GRES binding policy",
         "SBATCH_GRES_FLAGS", "SLURM_GRES_FLAGS"),
    _row("help/h", "0", "flag", "help", "HH", "prints this help"),
    _row("het-group", "1", "string", "het_group", "-R", "no heterogeneous jobs",
         aliases=("pack-group",)),
    _row("hint", "1", "string", "hint", "II", "no task binding hints",
         "SBATCH_HINT SLURM_HINT", "SLURM_HINT"),
    _row("hold/H", "0", "flag", "hold", "HI",
         "created suspended (reason JobHeldUser) until scontrol release"),
    _row("ignore-pbs", "0", "flag", "ignore_pbs", "H-",
         "#PBS lines are never translated (a warning says so without this option)",
         "SBATCH_IGNORE_PBS"),
    _row("ignore-signals", "1", "string", "ignore_signals", "-I", "srun forwards every signal"),
    _row("immediate/I", "?", "int0", "immediate_s", "-H",
         "the step fails when the nodes are busy instead of waiting"),
    _row("input/i", "1", "filename", "input", "HH", "stdin file pattern",
         "SBATCH_INPUT", "SRUN_INPUT SLURM_STDINMODE"),
    _row("interactive", "0", "flag", "interactive", "-I", "ignored, as by Slurm outside salloc"),
    _row("jobid", "1", "string", "jobid", "-H", "run the step inside the given (own) job",
         srun_env="SLURM_JOB_ID"),
    _row("job-name/J", "1", "string", "job_name", "HH",
         "object names <name>-<jobid>; SLURM_JOB_NAME", "SBATCH_JOB_NAME", "SLURM_JOB_NAME"),
    _row("kill-on-bad-exit/K", "?", "int0", "kill_on_bad_exit", "-H",
         "a task failing ends the whole step", srun_env="SLURM_KILL_BAD_EXIT"),
    _row("kill-on-invalid-dep", "1", "yesno", "kill_on_invalid_dep", "H-",
         "a job whose dependency can never be met is cancelled"),
    _row("label/l", "0", "flag", "label", "-H", "prefix output lines with the task rank",
         srun_env="SLURM_LABELIO"),
    _row("licenses/L", "1", "string", "licenses", "II", "no license counting"),
    _row("mail-type", "1", "mail_type", "mail_type", "II", "no mail is sent"),
    _row("mail-user", "1", "string", "mail_user", "II", "no mail is sent"),
    _row("mcs-label", "1", "string", "mcs_label", "II", "no MCS labels"),
    _row("mem", "1", "memory", "mem_per_node_mb", "HH",
         "memory request and limit per pod (0 = no limit)", "SBATCH_MEM_PER_NODE",
         "SLURM_MEM_PER_NODE"),
    _row("mem-bind", "1", "string", "mem_bind", "II", "no NUMA binding in pods",
         "SBATCH_MEM_BIND", "SLURM_MEM_BIND"),
    _row("mem-per-cpu", "1", "memory", "mem_per_cpu_mb", "HH",
         "memory request = value x CPUs per pod", "SBATCH_MEM_PER_CPU", "SLURM_MEM_PER_CPU"),
    _row("mem-per-gpu", "1", "memory", "mem_per_gpu_mb", "HH",
         "memory request = value x GPUs per pod", "SBATCH_MEM_PER_GPU", "SLURM_MEM_PER_GPU"),
    _row("mem-update", "1", "string", "mem_update", "II", "memory limits are fixed per pod"),
    _row("mincpus", "1", "int", "mincpus", "HH", "CPU request per pod is at least this"),
    _row("mpi", "1", "string", "mpi", "-A",
         "no PMI server: tasks get Slurm's rank variables; mpirun inside the job works",
         srun_env="SLURM_MPI_TYPE"),
    _row("msg-timeout", "1", "int", "msg_timeout_s", "-I", "launch timeouts are fixed"),
    _row("multi-prog", "0", "flag", "multi_prog", "-H",
         "the command is a configuration file of per-task programs",
         srun_env="SLURM_SRUN_MULTI"),
    _row("network", "1", "string", "network", "II", "no interconnect configuration",
         "SBATCH_NETWORK", "SLURM_NETWORK"),
    _row("nice", "?", "nice", "nice", "AI", "adjusts the priority recorded for the job"),
    _row("no-allocate/Z", "0", "flag", "no_allocate", "-R", "no allocation-free steps"),
    _row("no-kill/k", "?", "no_kill", "no_kill", "II",
         "a lost pod always ends the job on Kubernetes", "SBATCH_NO_KILL", "SLURM_NO_KILL"),
    _row("no-requeue", "0", "flag", "requeue", "H-",
         "backoffLimit 0: a failed pod fails the job; a lost node or an evicted pod ends "
         "it (NODE_FAIL/PREEMPTED)", "SBATCH_NO_REQUEUE", const=False),
    _row("nodefile/F", "1", "string", "nodefile", "II",
         "the file is not read yet: name the nodes with --nodelist"),
    _row("nodelist/w", "1", "hostlist", "nodelist", "HH",
         "node affinity on kubernetes.io/hostname / step placement",
         local=("A", "the job gets as many nodes as the list names; " + _LOCAL_NODES)),
    _row("nodes/N", "1", "nodes", "nodes", "HH",
         "pods of the job (completions = parallelism = nodes)",
         srun_env="SLURM_JOB_NUM_NODES"),
    _row("ntasks/n", "1", "int", "ntasks", "HH",
         "sizes the allocation: tasks per pod and the pod count",
         srun_env="SLURM_NPROCS SLURM_NTASKS"),
    _row("ntasks-per-core", "1", "int", "ntasks_per_core", "II", "no core layout in pods",
         srun_env="SLURM_NTASKS_PER_CORE"),
    _row("ntasks-per-gpu", "1", "int", "ntasks_per_gpu", "AA", "tasks = GPUs x value",
         srun_env="SLURM_NTASKS_PER_GPU"),
    _row("ntasks-per-node", "1", "int", "ntasks_per_node", "HH", "tasks per pod",
         srun_env="SLURM_NTASKS_PER_NODE", aliases=("tasks-per-node",)),
    _row("ntasks-per-socket", "1", "int", "ntasks_per_socket", "II", "no socket layout in pods"),
    _row("ntasks-per-tres", "1", "int", "ntasks_per_tres", "II", "see --ntasks-per-gpu",
         srun_env="SLURM_NTASKS_PER_TRES"),
    _row("oom-kill-step", "?", "string", "oom_kill_step", "II",
         "an out-of-memory pod ends the job", srun_env="SLURM_OOM_KILL_STEP"),
    _row("open-mode", "1", "open_mode", "open_mode", "HH", "append or truncate output files",
         "SBATCH_OPEN_MODE", "SLURM_OPEN_MODE"),
    _row("output/o", "1", "filename", "output", "HH",
         "stdout file pattern, written by the runtime", "SBATCH_OUTPUT",
         "SRUN_OUTPUT SLURM_STDOUTMODE"),
    _row("overcommit/O", "0", "flag", "overcommit", "AH",
         "the job is sized as one task per node (pods request fewer CPUs); a step may start "
         "more tasks than it has CPUs", "SBATCH_OVERCOMMIT", "SLURM_OVERCOMMIT"),
    _row("overlap", "?", "flag", "overlap", "-H", "the step shares resources with other steps",
         srun_env="SLURM_OVERLAP"),
    _row("oversubscribe/s", "0", "flag", "oversubscribe", "IH",
         "nodes are always shared unless --exclusive (which it does not undo); steps may "
         "share CPUs"),
    _row("parsable", "0", "flag", "parsable", "HI", "prints only the job id"),
    _row("partition/p", "1", "string", "partition", "HI",
         "namespace, queue, node selector, image and volumes from the partition config",
         "SBATCH_PARTITION", "SLURM_PARTITION"),
    _row("prefer", "1", "string", "prefer", "AI",
         "preferred node affinity on feature labels",
         local=("I", "this machine has no node features")),
    _row("preserve-env/E", "0", "flag", "preserve_env", "-H",
         "SLURM_NNODES/SLURM_NTASKS passed to tasks unchanged"),
    _row("priority", "1", "string", "priority", "II",
         "priority comes from --qos and the partition (Kubernetes) or submission order "
         "(local)"),
    _row("profile", "1", "string", "profile", "II", "no HDF5 profiling",
         "SBATCH_PROFILE", "SLURM_PROFILE"),
    _row("prolog", "1", "string", "prolog", "-H", "run by srun before the step",
         srun_env="SLURM_PROLOG"),
    _row("propagate", "?", "string", "propagate", "II", "pods have their own resource limits"),
    _row("pty", "?", "string", "pty", "-A", "tasks run unbuffered, without a terminal"),
    _row("qos/q", "1", "string", "qos", "HI",
         "priority class per QOS from the config; SLURM_JOB_QOS", "SBATCH_QOS", "SLURM_QOS"),
    _row("quiet/Q", "0", "flag", "quiet", "HH", "no informational messages"),
    _row("quit-on-interrupt", "0", "flag", "quit_on_interrupt", "-H",
         "a single Ctrl-C ends the step"),
    _row("reboot", "0", "flag", "reboot", "II", "nodes are never rebooted"),
    _row("relative/r", "1", "int0", "relative", "-H", "the step starts at this node index"),
    _row("requeue", "?", "requeue", "requeue", "H-",
         "a job ended by a lost node or an evicted/preempted pod is requeued whole "
         "(earlier run in sacct -D, SLURM_RESTART_COUNT raised)",
         "SBATCH_REQUEUE"),
    _row("reservation", "1", "string", "reservation", "II", "no reservations on Kubernetes",
         "SBATCH_RESERVATION", "SLURM_RESERVATION"),
    _row("resources", "1", "string", "resources", "II", "no license counting"),
    _row("resv-ports", "?", "string", "resv_ports", "II", "ports are not reserved",
         srun_env="SLURM_RESV_PORTS"),
    _row("segment", "1", "string", "segment", "II", "no topology segments",
         "SBATCH_SEGMENT_SIZE", "SRUN_SEGMENT_SIZE"),
    _row("send-libs", "?", "string", "send_libs", "-I", "see --bcast"),
    _row("signal", "1", "signal", "signal", "HH",
         "the runtime signals the tasks (or B: the batch shell) before the time limit",
         "SBATCH_SIGNAL", "SLURM_SIGNAL"),
    _row("slurmd-debug", "1", "string", "slurmd_debug", "-I", "no slurmd"),
    _row("sockets-per-node", "1", "int", "sockets_per_node", "II", "no socket layout in pods",
         srun_env="SLURM_NSOCKETS_PER_NODE"),
    _row("spread-job", "0", "flag", "spread_job", "II", "the scheduler places pods",
         "SBATCH_SPREAD_JOB", "SLURM_SPREAD_JOB"),
    _row("spread-segments", "0", "flag", "spread_segments", "II", "no topology segments",
         "SBATCH_SPREAD_SEGMENTS", "SLURM_SPREAD_SEGMENTS"),
    _row("stepmgr", "0", "flag", "stepmgr", "II", "steps are always managed by the runtime"),
    _row("switches", "1", "string", "switches", "II", "no network topology requests",
         "SBATCH_REQ_SWITCH SBATCH_WAIT4SWITCH", "SLURM_REQ_SWITCH SLURM_WAIT4SWITCH"),
    _row("task-epilog", "1", "string", "task_epilog", "-H",
         "run after each task, on its node", srun_env="SLURM_TASK_EPILOG"),
    _row("task-prolog", "1", "string", "task_prolog", "-H",
         "run before each task; its 'export' lines set the task's environment",
         srun_env="SLURM_TASK_PROLOG"),
    _row("test-only", "0", "flag", "test_only", "HI",
         "validates and prints where the job would start; nothing is created"),
    _row("thread-spec", "1", "string", "thread_spec", "II", "no specialized threads",
         "SBATCH_THREAD_SPEC", "SLURM_THREAD_SPEC"),
    _row("threads/T", "1", "int", "threads", "-I", "launch fan-out is fixed"),
    _row("threads-per-core", "1", "int", "threads_per_core", "II", "no thread layout in pods",
         "SBATCH_THREADS_PER_CORE", "SLURM_THREADS_PER_CORE"),
    _row("time/t", "1", "time", "time_limit_min", "HH",
         "activeDeadlineSeconds; tasks get SIGTERM then SIGKILL at the limit",
         "SBATCH_TIMELIMIT", "SLURM_TIMELIMIT"),
    _row("time-min", "1", "time", "time_min_min", "II", "no backfill scheduling"),
    _row("tmp", "1", "memory", "tmp_mb", "HH", "ephemeral-storage request per pod",
         local=("I", "no disk space is set aside on this machine")),
    _row("treewidth", "1", "int", "treewidth", "-I", "launch fan-out is fixed"),
    _row("tres-bind", "1", "string", "tres_bind", "II", "no TRES binding",
         "SBATCH_TRES_BIND", "SLURM_TRES_BIND"),
    _row("tres-per-task", "1", "tres", "tres_per_task", "AA",
         "cpu and gres/gpu counts are honoured as -c and --gpus-per-task; others dropped",
         "SBATCH_TRES_PER_TASK", "SLURM_TRES_PER_TASK"),
    _row("uid", "1", "string", "uid", "R-", "jobs run as the submitting user only"),
    _row("unbuffered/u", "0", "flag", "unbuffered", "-H", "task output is passed on unbuffered",
         srun_env="SLURM_UNBUFFEREDIO"),
    _row("usage", "0", "flag", "usage", "HH", "prints a usage line"),
    _row("use-min-nodes", "0", "flag", "use_min_nodes", "II",
         "a node range always gets its maximum", "SBATCH_USE_MIN_NODES",
         "SLURM_USE_MIN_NODES"),
    _row("verbose/v", "0", "count", "verbose", "HH", "more messages", "SBATCH_DEBUG",
         "SLURM_DEBUG"),
    _row("version/V", "0", "flag", "version", "HH", "prints the version"),
    _row("wait/W", "0", "flag", "wait", "H-",
         "sbatch waits for the job to end and exits with its exit code", "SBATCH_WAIT"),
    _row("wait-all-nodes", "1", "wait_all_nodes", "wait_all_nodes", "I-",
         "the runtime always waits for every node before running the script",
         "SBATCH_WAIT_ALL_NODES"),
    _row("wait-for-children", "0", "flag", "wait_for_children", "-I",
         "task ends with its main process"),
    _row("wckey", "1", "string", "wckey", "II", "no workload characterization keys",
         "SBATCH_WCKEY", "SLURM_WCKEY"),
    _row("whole", "0", "flag", "whole", "-H", "the step gets whole nodes"),
    _row("wrap", "1", "string", "wrap", "H-", "the command becomes a /bin/sh script"),
    _row("x11", "?", "string", "x11", "-R", "no X11 forwarding into pods"),
    # srun's -W takes a value; sbatch's is a flag (row above). Same long name, other command.
    _row("wait/W", "1", "int0", "wait_s", "-H",
         "after the first task ends, wait this long before killing the rest",
         srun_env="SLURM_WAIT"),
    # pyxis (NVIDIA's SPANK plugin) container options: sbatch (pyxis >= 0.12) and srun.
    _row("container-image", "1", "string", "container_image", "HH",
         "the pods' image (sbatch); a step asking for another image than the job's fails",
         local=("I", "jobs run on this machine, not in a container image")),
    _row("container-mounts", "1", "mounts", "container_mounts", "HH",
         "volumes from the partition's volume config mounted at the given paths",
         local=("I", "jobs run on this machine; nothing is mounted")),
    _row("container-workdir", "1", "string", "container_workdir", "HH",
         "working directory inside the container", local=("I", _LOCAL_NO_CONTAINER)),
    _row("container-name", "1", "string", "container_name", "II",
         "each job has one container; named containers are not kept between steps"),
    _row("container-writable", "0", "flag", "container_writable", "HH",
         "container filesystems are writable", local=("I", _LOCAL_NO_CONTAINER)),
    _row("container-readonly", "0", "flag", "container_writable", "AA",
         "the root filesystem is read-only", const=False, local=("I", _LOCAL_NO_CONTAINER)),
    _row("container-mount-home", "0", "flag", "container_mount_home", "II",
         "home is mounted only through the partition's volumes"),
    _row("no-container-mount-home", "0", "flag", "container_mount_home", "II",
         "home is mounted exactly when the partition's volumes mount it", const=False),
    _row("container-remap-root", "0", "flag", "container_remap_root", "II",
         "the partition's run_as decides the user (pod_security)"),
    _row("no-container-remap-root", "0", "flag", "container_remap_root", "II",
         "the partition's run_as decides the user (pod_security)", const=False),
    _row("container-env", "1", "string", "container_env", "II",
         "the job's environment always wins over the image's"),
    _row("container-entrypoint", "0", "flag", "container_entrypoint", "II",
         "the runtime is the entrypoint"),
    _row("no-container-entrypoint", "0", "flag", "container_entrypoint", "II",
         "the image's entrypoint is never run (the runtime is the entrypoint)", const=False),
    _row("container-save", "1", "string", "container_save", "RR",
         "container filesystems are not saved"),
    # sbatch-k8s's own extensions.
    _row("k8s-print", "?", "k8s_print", "k8s_print", "H-",
         "print the Kubernetes manifests and submit nothing: the shared runtime ConfigMap, "
         "then the job's objects (=objects: the job's objects only); create them with "
         "kubectl apply --server-side -f - (the runtime ConfigMap is too big for a "
         "client-side apply)"),
    _row("k8s-lint", "0", "flag", "k8s_lint", "H-",
         "print how each directive maps to Kubernetes and submit nothing"),
    _row("k8s-target", "1", "k8s_target", "k8s_target", "H-", targets_in_words(),
         local=("I", _LOCAL_NO_OBJECTS)),
    _row("k8s-contract", "1", "k8s_contract", "k8s_contract", "H-",
         f"{profiles_in_words()}: beside SLURM_*, every node gets that platform's variables "
         "(and hostfiles, rank table), the batch script node 0's, each srun task its node's "
         "(default: the partition's contract)"),
    _row("k8s-export", "1", "k8s_export", "k8s_export", "H-",
         "print the form of a form-based platform and submit nothing (aistation, "
         "task-training), or write its params file (dlc: <job name>.dlc.params); the "
         "command runs the script with the runtime's bootstrap line"),
    _row("k8s-job-id", "1", "int", "k8s_job_id", "H-", "job id to use with --k8s-print"),
    _row("k8s-kubernetes-version", "1", "k8s_version", "k8s_kubernetes_version", "H-",
         "Kubernetes version (1.N) the manifests are for: version-dependent fields follow it "
         "(default with --k8s-print 1.29; when submitting, the server's)",
         local=("I", _LOCAL_NO_OBJECTS)),
)


def options_for(command: str) -> Tuple[Option, ...]:
    """The rows valid for ``command`` (sbatch or srun), in table order."""
    return _BY_COMMAND[command]


def long_names(command: str) -> Dict[str, Option]:
    """Every long spelling (aliases included) valid for ``command`` → its row."""
    return _LONG[command]


def short_names(command: str) -> Dict[str, Option]:
    """Every short letter valid for ``command`` → its row."""
    return _SHORT[command]


def env_sources(command: str) -> Tuple[Tuple[str, Option], ...]:
    """``(variable, row)`` pairs read from the environment, in Slurm's reading order."""
    return _ENV[command]


def find_option(command: str, long: str) -> Option:
    """The row for ``--long`` in ``command``; KeyError if there is none."""
    return _LONG[command][long]


def _index(command: str) -> Tuple[Tuple[Option, ...], Dict[str, Option], Dict[str, Option],
                                  Tuple[Tuple[str, Option], ...]]:
    rows = tuple(o for o in OPTIONS if o.level(command) is not None)
    longs: Dict[str, Option] = {}
    shorts: Dict[str, Option] = {}
    env: List[Tuple[str, Option]] = []
    for o in rows:
        for name in (o.long,) + o.aliases:
            if name in longs:
                raise ValueError(f"option --{name} listed twice for {command}")
            longs[name] = o
        if o.short:
            shorts[o.short] = o
        env.extend((var, o) for var in o.env[command])
    return rows, longs, shorts, tuple(env)


def _build() -> Iterable[Tuple[str, Tuple]]:
    for command in COMMANDS:
        yield command, _index(command)


_BY_COMMAND: Dict[str, Tuple[Option, ...]] = {}
_LONG: Dict[str, Dict[str, Option]] = {}
_SHORT: Dict[str, Dict[str, Option]] = {}
_ENV: Dict[str, Tuple[Tuple[str, Option], ...]] = {}
for _command, (_rows, _longs, _shorts, _env) in _build():
    _BY_COMMAND[_command], _LONG[_command], _SHORT[_command], _ENV[_command] = (
        _rows, _longs, _shorts, _env)
