"""``runtime run [--contract NAME] [-v] [--wait S] job.sh [args…]``: platform mode.

The command of every container of a job another platform started. It reads the platform's
contract (:mod:`.contracts`), agrees on node ranks, builds the job description from the
script's ``#SBATCH`` header (:mod:`.description`), and becomes a node exactly as
``runtime node`` does in our own pods: node 0 runs the script with Slurm's environment, the
other containers serve its ``srun`` steps. The exit code is the job's. Where the platform
starts the command several times per container (ModelArts, Horovod), one instance does all
that and the others wait for its exit code (:mod:`.instances`).
"""

from __future__ import annotations

from parsers.vocabulary import DESCRIPTION_KEY
import grp
import hashlib
import json
import os
import pwd
import sys
import time
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from parsers.input_errors import SlurmInputError
from sbatch_k8s.runtime.file_access import AccessError, needed, prepare_spool
from sbatch_k8s.runtime.contract import ContractError, NodeIdentity
from sbatch_k8s.runtime.agent.node_setup import NodeSettings, platform_environment, settings_from
from sbatch_k8s.runtime.agent.node import run_node, stage_script
from sbatch_k8s.runtime.platform.aistation import is_master
from sbatch_k8s.runtime.platform.contracts import PlatformContract, contract_named, detect, \
    signs_looked_for
from sbatch_k8s.runtime.platform.description import Facts, parse_script, platform_job
from sbatch_k8s.runtime.platform.facts import Container, NotReady, PlatformFacts, job_id_of, \
    this_container
from sbatch_k8s.runtime.platform.instances import Actor, wait_for_actor
from sbatch_k8s.runtime.platform.rendezvous import agree_on_ranks
from sbatch_k8s.runtime.protocol import fresh_loop
from sbatch_k8s.runtime.batch_host.step_server import start as start_step_server

PREFIX = "sbatch-k8s: "
#: A secret the platform's form may set on every container; else the token is derived from
#: the platform's job identity (platform mode then relies on the platform's network).
TOKEN_VARIABLE = "SBATCHK8S_TOKEN"
USAGE = "usage: runtime run [--contract NAME] [-v] [--wait SECONDS] job.sh [args...]"


class RunError(Exception):
    """Platform mode cannot start; ``str()`` is the line to print."""


class RunOptions(NamedTuple):
    """The ``run`` command line."""

    contract: Optional[str]
    verbose: bool
    wait_s: Optional[float]
    script: str
    script_args: List[str]


def parse_run_args(argv: List[str]) -> RunOptions:
    """Options up to the script path; everything after it is the script's."""
    contract, verbose, wait_s = None, False, None
    args = list(argv)
    while args and args[0].startswith("-") and args[0] != "-":
        word = args.pop(0)
        if word == "--":
            break
        if word in ("-v", "--verbose"):
            verbose = True
        elif word in ("--contract", "--wait") and args:
            value = args.pop(0)
            if word == "--contract":
                contract = value
            else:
                try:
                    wait_s = float(value)
                except ValueError:
                    raise RunError(f"--wait {value!r} is not a number of seconds") from None
        elif word.startswith(("--contract=", "--wait=")):
            args.insert(0, word.split("=", 1)[1])
            args.insert(0, word.split("=", 1)[0])
        else:
            raise RunError(f"unexpected option {word}\n{USAGE}")
    if not args:
        raise RunError(f"no batch script given\n{USAGE}")
    return RunOptions(contract, verbose, wait_s, args[0], args[1:])


def say(line: str) -> None:
    """One line on this container's standard error (its log)."""
    sys.stderr.write(PREFIX + line + "\n")
    sys.stderr.flush()


#: How often an adapter is asked again while the platform finishes its contract.
NOT_READY_RETRY_S = 0.5


def wait_bound(options: RunOptions, environ: Mapping[str, str]) -> float:
    """How long this container waits for the platform and the other nodes."""
    if options.wait_s is not None:
        return options.wait_s
    return settings_from("platform", environ).wait_s


def choose_contract(options: RunOptions, container: Container) -> Tuple[PlatformContract, str]:
    """The named or detected contract, and how it was chosen (for ``-v``)."""
    if options.contract:
        return contract_named(options.contract), "named with --contract"
    found = detect(container)
    if found is None:
        raise ContractError("no platform contract recognised in this container (looked "
                            f"for {', '.join(signs_looked_for())}); name one with "
                            "--contract")
    return found, "detected from " + (", ".join(found.needs) or "its hostname")


def read_facts(options: RunOptions, container: Container, wait_s: float,
               chosen: Optional[Tuple[PlatformContract, str]] = None) -> PlatformFacts:
    """The platform's facts under the named or detected contract (asked again while the
    platform has not finished writing them, at most ``wait_s``)."""
    row, how = chosen or choose_contract(options, container)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            facts = row.adapter(container)
            break
        except NotReady as e:
            if time.monotonic() >= deadline:
                raise ContractError(f"{e} after {wait_s:g} s") from None
            time.sleep(NOT_READY_RETRY_S)
    if options.verbose:
        say(f"run: contract {row.name}: {row.summary}, {how}; facts from "
            f"{', '.join(facts.evidence)}")
    return facts


def _read_script(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    except OSError:
        return None


def _user_facts() -> Dict[str, Any]:
    uid, gid = os.getuid(), os.getgid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return {"user": user, "uid": uid, "gid": gid, "group": group}


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def job_token(facts: PlatformFacts, environ: Mapping[str, str]) -> bytes:
    """The token every container of the job derives alike."""
    secret = environ.get(TOKEN_VARIABLE, "")
    text = f"sbatch-k8s platform token\0{facts.job_key}\0{secret}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest().encode()


def write_job_dir(settings: NodeSettings, desc: Dict[str, Any], script: str,
                  token: bytes) -> None:
    """The job directory ``runtime node`` would have had mounted: description, script,
    token."""
    with needed("write the job directory", settings.job_dir):
        os.makedirs(settings.job_dir, mode=0o700, exist_ok=True)
        _write_private(settings.token_file, token)
        _write_private(os.path.join(settings.job_dir, "script"),
                       script.encode("utf-8", "surrogateescape"))
        _write_private(os.path.join(settings.job_dir, DESCRIPTION_KEY),
                       json.dumps(desc, sort_keys=True).encode())


def _node_count(facts: PlatformFacts, options: RunOptions, text: Optional[str],
                environ: Mapping[str, str]) -> int:
    if facts.count is not None:
        return facts.count
    if text is None:
        raise RunError(f"cannot read the batch script {options.script}: the node count "
                       f"of a {facts.contract} job comes from its #SBATCH --nodes")
    from parsers.allocation import NodeShape, allocate

    job = parse_script(options.script, text, options.script_args, environ)
    return allocate(job, NodeShape()).node_count


def passed_on(options: RunOptions) -> List[str]:
    """The ``run`` arguments a launcher gives the runs it starts (all but the contract)."""
    words = ["-v"] if options.verbose else []
    if options.wait_s is not None:
        words += ["--wait", f"{options.wait_s:g}"]
    return words + ["--", options.script] + options.script_args


def start(options: RunOptions, environ: Mapping[str, str]) -> int:
    """Become this container's node of the platform job (or, where the platform starts the
    command several times per container, wait for the instance that does); the exit
    code."""
    container = this_container(environ)
    wait_s = wait_bound(options, environ)
    chosen = choose_contract(options, container)
    facts = read_facts(options, container, wait_s, chosen)
    if chosen[0].launch is not None:
        return chosen[0].launch(facts, container, passed_on(options), wait_s,
                                job_token(facts, environ))
    if facts.instance is None:
        return become_node(options, environ, container, facts)
    variable, number = facts.instance
    if number != 0:
        if options.verbose:
            say(f"run: {variable}={number}: the instance with {variable}=0 runs the job")
        return wait_for_actor(facts.job_key, f"{variable}=0", wait_s)
    actor = Actor(facts.job_key)
    actor.open()
    code = 1
    try:
        code = become_node(options, environ, container, facts)
    except SlurmInputError as e:
        code = e.exit_code
        raise
    finally:
        actor.finish(code)
    return code


def become_node(options: RunOptions, environ: Mapping[str, str], container: Container,
                facts: PlatformFacts) -> int:
    """This container's node of the platform job; the exit code."""
    text = _read_script(options.script)
    job_env = platform_environment(environ)
    count = _node_count(facts, options, text, job_env)
    settings = settings_from(facts.contract, environ)
    if options.wait_s is not None:
        settings.wait_s = options.wait_s
    if facts.index is None or facts.rendezvous:
        master = facts.index == 0 if facts.index is not None else \
            is_master(container, str(facts.master_addr))
        facts = agree_on_ranks(facts, container, settings.port, settings.wait_s, master)
    index = int(facts.index)  # type: ignore[arg-type]
    identity: NodeIdentity = facts.identity(count, index, container.hostname,
                                            container.resolve)
    job_id = job_id_of(facts.job_key)
    if options.verbose:
        say(f"run: node {index} of {count} ({identity.name}), job id {job_id} from "
            f"{facts.job_key}")
    settings.index = index
    settings.job_dir = os.path.join(settings.spool, "job")
    settings.token_file = os.path.join(settings.job_dir, "token")
    settings.workers_exit_as_job = True
    desc: Dict[str, Any] = {"job_id": job_id, "node_count": count}
    if text is None and index == 0:
        raise RunError(f"cannot read the batch script {options.script}")
    if text is not None:
        built = platform_job(options.script, text, options.script_args, job_env, Facts(
            job_id=job_id, cluster_name=facts.contract, node_count=count,
            gpus_per_node=facts.gpus_per_node, cpus_per_node=None,
            cwd=os.getcwd(), host=identity.names[0], **_user_facts()))
        desc = built.description
        if facts.task_variables:
            desc["contract_variables"] = facts.task_variables
        if index == 0:
            for warning in built.warnings:
                say(f"warning: {warning}")
    prepare_spool(settings.spool)
    write_job_dir(settings, desc, text or "", job_token(facts, environ))
    if index == 0:
        stage_script(settings)
    server = None
    if index == 0 and environ.get("SBATCHK8S_SERVER") != "0":
        server = start_step_server(settings.spool)
    try:
        code = fresh_loop().run_until_complete(
            run_node(settings, environ, desc, identity, server.path if server else None))
    except OSError as e:
        raise RunError(f"cannot listen on {identity.bind_host}:{settings.port}: "
                       f"{e.strerror or e}") from e
    finally:
        if server is not None:
            server.stop()
    if code != 0 and index != 0:
        say(f"error: run: job {job_id}: this node ends with exit code {code} (the batch "
            f"output is in the log of node 0, {identity.names[0]})")
    return code


def main(argv: List[str], environ: Mapping[str, str]) -> int:
    """``runtime run …``: one clear line and a non-zero exit on every failure to start."""
    try:
        options = parse_run_args(argv)
        return start(options, environ)
    except SlurmInputError as e:
        sys.stderr.write(e.render("sbatch"))
        return e.exit_code
    except (RunError, ContractError, AccessError) as e:
        say(f"error: run: {e}")
        return 2 if str(e).endswith(USAGE) else 1
