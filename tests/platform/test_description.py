"""The platform description (built pod-side) has the fields, and for the same script and
allocation the values, of the description our translators write (both build it with
parsers.job_description), except where a platform run differs."""

from __future__ import annotations

from parsers.allocation import NodeShape, allocate
from parsers.jobspec import SubmitContext
from sbatch_k8s.runtime.platform.description import PLATFORM_OUTPUT, Facts, parse_script, \
    platform_job
from parsers.job_description import describe_job

SCRIPT = """#!/bin/bash
#SBATCH --job-name=llm --nodes=2 --ntasks-per-node=2 --gpus-per-node=4 --time=10
#SBATCH --cpus-per-task=3 --mem=8G --signal=USR1@60 --open-mode=append -o logs/%x-%j.out
srun true
"""
FACTS = Facts(job_id=4242, cluster_name="pytorchjob", node_count=2, gpus_per_node=4,
              cpus_per_node=None, cwd="/work", host="llm-master-0", user="root", uid=0,
              gid=0, group="root")
ENVIRON = {"MASTER_ADDR": "llm-master-0", "HF_TOKEN": "secret"}


def test_same_fields_and_values_as_the_translators():
    built = platform_job("job.sh", SCRIPT, ["a1"], ENVIRON, FACTS)
    job = parse_script("job.sh", SCRIPT, ["a1"], ENVIRON)
    context = SubmitContext(cwd="/work", host="llm-master-0", user="root", uid=0, gid=0,
                            group="root")
    ours = describe_job(job, allocate(job, NodeShape()), context, 4242, "pytorchjob", "/work",
                        ENVIRON)
    assert set(built.description) == set(ours)
    differing = {k for k in ours if built.description[k] != ours[k]}
    assert differing == set(), {k: (built.description[k], ours[k]) for k in differing}
    assert built.warnings == ()


def test_platform_facts_win_over_the_directives_with_a_warning():
    facts = FACTS._replace(node_count=3, gpus_per_node=2)
    built = platform_job("job.sh", SCRIPT, [], {}, facts)
    desc = built.description
    assert desc["node_count"] == 3 and desc["gpus_per_node"] == "2"
    assert desc["tasks_per_node"] == [2, 2, 2]
    assert built.warnings == (
        "the script asks for 2 node(s); the platform started 3: the job runs on 3",
        "the script asks for 4 GPU(s) per node; the platform gives 2")


def test_default_output_is_the_containers_stdout_and_array_is_ignored():
    built = platform_job("job.sh", "#!/bin/bash\n#SBATCH --array=0-3\ntrue\n", [], {},
                         FACTS._replace(gpus_per_node=None))
    assert built.description["output"] == PLATFORM_OUTPUT
    assert built.description["array"] is None
    assert "--array has no effect in platform mode: the platform runs one job" in \
        built.warnings
