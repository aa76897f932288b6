"""``srun`` inside a job is served by node 0's step server: same steps as running it
in-process, signals forwarded, and a fallback when the server cannot be reached."""

from __future__ import annotations

from tests.local.harness import LocalSlurm, shell_wait

# Waits until the step's task has started, then counts the srun process's epoll descriptors:
# an in-process srun runs an event loop (one), a served srun is only a client (none). The
# task runs until they are counted.
EPOLL_PROBE = """
probe() {{
  rm -f started.$1 counted.$1
  {env} srun -N1 -n1 bash -c 'touch started.$1; TASK_WAIT' _ "$1" & pid=$!
  PROBE_WAIT
  echo "$1 epoll=$(ls -l /proc/$pid/fd | grep -c eventpoll)"
  touch counted.$1
  wait $pid
}}
""".replace("TASK_WAIT", shell_wait("[ -e counted.$1 ]")).replace(
    "PROBE_WAIT", shell_wait("[ -e started.$1 ]"))

STEPS = """\
srun -N2 -n4 --label printenv SLURM_PROCID SLURM_STEP_ID SLURM_NODEID | sort
echo hello | srun -N1 -n1 cat
srun -N1 -n1 bash -c 'echo to-err >&2; exit 3'; echo "rc=$?"
srun -N1 -n1 --chdir=/ pwd
"""


def _job(slurm: LocalSlurm, body: str, nodes: int = 2) -> str:
    slurm.script("job.sh", f"#!/bin/bash\n#SBATCH -N{nodes} --ntasks-per-node=2\n{body}")
    done = slurm.run("sbatch", "--wait", "-o", "job.out", "job.sh", timeout=120)
    assert done.returncode == 0, done.stderr + slurm.read("job.out")
    return slurm.read("job.out")


def test_srun_in_a_job_is_served_by_node_0(slurm: LocalSlurm) -> None:
    body = (EPOLL_PROBE.format(env="") + "probe served\n"
            + EPOLL_PROBE.replace("probe()", "probe_alone()").format(env="SBATCHK8S_SERVER=0")
            + "probe_alone in-process\n"
            + 'echo "server=${SBATCHK8S_STEP_SERVER##*/}"\n')
    out = _job(slurm, body)
    assert out.splitlines() == ["served epoll=0", "in-process epoll=1", "server=step.sock"]


def test_served_and_in_process_steps_agree(slurm: LocalSlurm) -> None:
    served = _job(slurm, STEPS)
    alone = _job(slurm, "export SBATCHK8S_SERVER=0\n" + STEPS)
    assert served == alone
    assert served.endswith("hello\nto-err\nsrun: error: 127.0.0.2: task 0: Exited with exit "
                           "code 3\nrc=3\n/\n")
    assert len(served.splitlines()) == 17


def test_signals_reach_a_served_step(slurm: LocalSlurm) -> None:
    body = ("rm -f ready\nsrun -N1 -n1 bash -c 'trap \"echo got TERM; exit 7\" TERM; touch ready; "
            "sleep 120 & wait' & pid=$!\n"
            f"{shell_wait('[ -e ready ]')}\n"
            "kill -TERM $pid; wait $pid; echo \"rc=$?\"\n")
    served = _job(slurm, body, nodes=1)
    alone = _job(slurm, "export SBATCHK8S_SERVER=0\n" + body, nodes=1)
    assert served == alone
    assert served.startswith("srun: forcing job termination\n")
    assert served.endswith("rc=137\n")


def test_an_unreachable_step_server_falls_back(slurm: LocalSlurm) -> None:
    out = _job(slurm, "SBATCHK8S_STEP_SERVER=/nonexistent/step.sock srun -n2 echo ok\n")
    assert out == "ok\nok\n"
