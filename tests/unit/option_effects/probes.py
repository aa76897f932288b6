"""One probe per sbatch option: the option with a value, and the options it needs beside it
(``baseline``) to matter. A probe run compares ``sbatch <baseline> <args> job.sh`` with
``sbatch <baseline> job.sh``; ``{files}`` is a directory holding :data:`PROBE_FILES`.

``JOB`` probes are observed in what the backend makes of the job (objects, records, the
runtime's inputs); ``COMMAND`` probes steer sbatch itself and are observed in what sbatch
prints and returns, as a real process.
"""

from __future__ import annotations

from typing import Dict, NamedTuple

#: Files probes name, written into ``{files}``.
PROBE_FILES = {
    "vars.env": "PROBE_VARIABLE=from-file\n",
    "in.txt": "input\n",
    "hosts": "n2\n",
}
#: The script every probe submits (a ``#PBS`` line for ``--ignore-pbs``; exit 3 for
#: ``--wait``).
SCRIPT = "#!/bin/sh\n#PBS -N from-pbs\necho probe\nexit 3\n"


class Probe(NamedTuple):
    """``args``: the option as written; ``baseline``: what both runs also give."""

    args: str
    baseline: str = ""


JOB: Dict[str, Probe] = {
    "account": Probe("--account=physics"),
    "acctg-freq": Probe("--acctg-freq=5"),
    "array": Probe("--array=0-3"),
    "begin": Probe("--begin=now+1hour"),
    "chdir": Probe("--chdir=/tmp"),
    "comment": Probe("--comment=probe"),
    "constraint": Probe("--constraint=a100"),
    "container-image": Probe("--container-image=python:3.11"),
    "container-mounts": Probe("--container-mounts=/shared/data:/data"),
    "container-name": Probe("--container-name=probe"),
    "container-readonly": Probe("--container-readonly"),
    "container-workdir": Probe("--container-workdir=/work"),
    "container-writable": Probe("--container-writable", "--container-readonly"),
    "cpus-per-gpu": Probe("--cpus-per-gpu=2", "--gpus=1"),
    "cpus-per-task": Probe("--cpus-per-task=2"),
    "dependency": Probe("--dependency=singleton"),
    "distribution": Probe("--distribution=cyclic", "-N2 -n3"),
    "error": Probe("--error=probe-%j.err"),
    "exclude": Probe("--exclude=n1"),
    "exclusive": Probe("--exclusive"),
    "export": Probe("--export=NONE"),
    "export-file": Probe("--export-file={files}/vars.env"),
    "get-user-env": Probe("--get-user-env"),
    "gpus": Probe("--gpus=2"),
    "gpus-per-node": Probe("--gpus-per-node=2"),
    "gpus-per-task": Probe("--gpus-per-task=1", "-n2"),
    "gres": Probe("--gres=gpu:2"),
    "hold": Probe("--hold"),
    "input": Probe("--input={files}/in.txt"),
    "job-name": Probe("--job-name=probe"),
    "k8s-contract": Probe("--k8s-contract=pytorchjob"),
    "k8s-kubernetes-version": Probe("--k8s-kubernetes-version=1.27"),
    "k8s-target": Probe("--k8s-target=jobset"),
    "kill-on-invalid-dep": Probe("--kill-on-invalid-dep=yes", "--dependency=singleton"),
    "mem": Probe("--mem=2G"),
    "mem-per-cpu": Probe("--mem-per-cpu=1G"),
    "mem-per-gpu": Probe("--mem-per-gpu=1G", "--gpus=1"),
    "mincpus": Probe("--mincpus=4"),
    "nice": Probe("--nice=10"),
    "no-container-entrypoint": Probe("--no-container-entrypoint"),
    "no-container-mount-home": Probe("--no-container-mount-home"),
    "no-container-remap-root": Probe("--no-container-remap-root"),
    "no-requeue": Probe("--no-requeue"),
    "nodefile": Probe("--nodefile={files}/hosts", "-N1"),
    "nodelist": Probe("--nodelist=n[1-2]"),
    "nodes": Probe("--nodes=2"),
    "ntasks": Probe("--ntasks=3"),
    "ntasks-per-gpu": Probe("--ntasks-per-gpu=2", "--gpus=2"),
    "ntasks-per-node": Probe("--ntasks-per-node=2"),
    "open-mode": Probe("--open-mode=append"),
    "output": Probe("--output=probe-%j.out"),
    "overcommit": Probe("--overcommit", "-n4"),
    "oversubscribe": Probe("--oversubscribe", "--exclusive"),
    "partition": Probe("--partition=other"),
    "prefer": Probe("--prefer=a100"),
    "priority": Probe("--priority=100"),
    "qos": Probe("--qos=high"),
    "requeue": Probe("--requeue", "--no-requeue"),
    "signal": Probe("--signal=USR1@60"),
    "time": Probe("--time=10"),
    "tmp": Probe("--tmp=10G"),
    "tres-per-task": Probe("--tres-per-task=cpu=2"),
    "wait-all-nodes": Probe("--wait-all-nodes=0"),
    "wrap": Probe("--wrap=hostname"),
}

COMMAND: Dict[str, Probe] = {
    "autocomplete": Probe("--autocomplete=--exp"),
    "clusters": Probe("--clusters=all"),
    "help": Probe("--help"),
    "ignore-pbs": Probe("--ignore-pbs"),
    "k8s-export": Probe("--k8s-export=aistation"),
    "k8s-job-id": Probe("--k8s-job-id=4242", "--k8s-print=objects"),
    "k8s-lint": Probe("--k8s-lint"),
    "k8s-print": Probe("--k8s-print=objects"),
    "parsable": Probe("--parsable"),
    "quiet": Probe("--quiet", "--mail-type=END"),
    "test-only": Probe("--test-only"),
    "usage": Probe("--usage"),
    "verbose": Probe("--verbose"),
    "version": Probe("--version"),
    "wait": Probe("--wait"),
}
