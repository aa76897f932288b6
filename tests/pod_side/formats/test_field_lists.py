"""Every format letter and field name Slurm 22.05 knows is one of ours, every one it refuses
is refused here: sinfo ``-o``/``-O``, squeue ``-o``/``-O`` for jobs and (``-s``) steps, sacct
``--format`` (issue 18, item 4).

The lists were recorded from the real Slurm 22.05.8 of ``tools/real-slurm``: each letter and
each name of its man pages (and the names later versions added, and a bogus one) printed
alone, and sorted by whether it answered or refused ("Invalid ... format specification",
"Invalid field requested"). ``tests/conformance/test_format_fields.py`` compares what each
one prints with the real one's output.
"""

from __future__ import annotations

import pytest

from parsers.errors import SlurmInputError
from parsers.formats.sacct import parse_format as parse_sacct_format
from parsers.formats.sinfo_table import sinfo_field_by_letter, sinfo_field_by_name
from parsers.formats.squeue_fields import job_field_by_letter, job_field_by_name
from parsers.formats.squeue_steps import step_field_by_letter, step_field_by_name

SINFO_LETTERS = (
    "a b c d e f g h l m n o p r s t u v w z A B C D E F G H I L M N O P R S T U V X Y Z").split()
SINFO_NO_LETTERS = (
    "i j k q x y J K Q W").split()
SINFO_NAMES = (
    "All AllocMem AllocNodes Available Cluster Comment Cores CPUs CPUsLoad CPUsState "
    "DefaultTime Disk Extra Features features_act FreeMem Gres GresUsed Groups MaxCPUsPerNode "
    "Memory NodeAddr NodeAI NodeAIOT NodeHost NodeList Nodes OverSubscribe Partition "
    "PartitionName Port PreemptMode PriorityJobFactor PriorityTier Reason Root Size "
    "SocketCoreThread Sockets StateCompact StateLong StateComplete Threads Time TimeStamp "
    "User UserLong Version Weight").split()
SQUEUE_NAMES = (
    "Account AccrueTime admin_comment AllocNodes AllocSID ArrayJobID ArrayTaskID AssocID "
    "BatchFlag BatchHost BoardsPerNode BurstBuffer BurstBufferState Cluster ClusterFeature "
    "Command Comment Contiguous Container Cores CoreSpec cpus-per-task cpus-per-tres Deadline "
    "DelayBoot Dependency DerivedEC EligibleTime EndTime exit_code Feature GroupID GroupName "
    "HetJobID HetJobIDSet HetJobOffset JobArrayID JobID LastSchedEval Licenses MaxCPUs "
    "MaxNodes MCSLabel mem-per-tres MinCpus MinMemory MinTime MinTmpDisk Name Network Nice "
    "NodeList NTPerBoard NTPerCore NTPerNode NTPerSocket NumCPUs NumNodes NumTasks Origin "
    "OriginRaw OverSubscribe Partition PendingTime PreemptTime Prefer Priority PriorityLong "
    "Profile QOS Reason ReasonList Reboot ReqNodes ReqSwitch Requeue Reservation ResizeTime "
    "RestartCnt SchedNodes SCT SelectJobInfo SiblingsActive SiblingsActiveRaw SiblingsViable "
    "SiblingsViableRaw Sockets SPerBoard StartTime State StateCompact STDERR STDIN STDOUT "
    "SubmitTime system_comment Threads TimeLeft TimeLimit TimeUsed tres-alloc tres-bind "
    "tres-freq tres-per-job tres-per-node tres-per-socket tres-per-task UserID UserName "
    "Wait4Switch WCKey WorkDir").split()
SQUEUE_NO_NAMES = (
    "CPUFreq Nodes ResvPort StepID StepName StepState tres-per-step Bogus ContainerId CronJob "
    "ExcNodes").split()
STEP_LETTERS = (
    "b i j l u A M N P S U").split()
STEP_NO_LETTERS = (
    "a c d e f g h k m n o p q r s t v w x y z B C D E F G H I J K L O Q R T V W X Y Z").split()
STEP_NAMES = (
    "ArrayJobId ArrayTaskId Cluster Container ContainerId CPUFreq cpus-per-tres Gres JobId "
    "mem-per-tres Network Nodes NumCPUs NumTasks Partition ResvPorts StartTime StepId StepName "
    "StepState TimeLimit TimeUsed tres-bind tres-freq tres-per-job tres-per-node "
    "tres-per-socket tres-per-step tres-per-task UserId UserName").split()
STEP_NO_NAMES = "StdErr StdIn StdOut NodeList Name State Bogus".split()
SACCT_NAMES = (
    "Account AdminComment AllocCPUS AllocNodes AllocTRES AssocID AveCPU AveCPUFreq "
    "AveDiskRead AveDiskWrite AvePages AveRSS AveVMSize BlockID Cluster Comment Constraints "
    "ConsumedEnergy ConsumedEnergyRaw Container CPUTime CPUTimeRAW DBIndex DerivedExitCode "
    "Elapsed ElapsedRaw Eligible End ExitCode Flags GID Group JobID JobIDRaw JobName Layout "
    "MaxDiskRead MaxDiskReadNode MaxDiskReadTask MaxDiskWrite MaxDiskWriteNode "
    "MaxDiskWriteTask MaxPages MaxPagesNode MaxPagesTask MaxRSS MaxRSSNode MaxRSSTask "
    "MaxVMSize MaxVMSizeNode MaxVMSizeTask McsLabel MinCPU MinCPUNode MinCPUTask NCPUS NNodes "
    "NodeList NTasks Partition Priority QOS QOSRAW Reason ReqCPUFreq ReqCPUFreqGov "
    "ReqCPUFreqMax ReqCPUFreqMin ReqCPUS ReqMem ReqNodes ReqTRES Reservation ReservationId "
    "Reserved ResvCPU ResvCPURAW Start State Submit SubmitLine Suspended SystemComment "
    "SystemCPU Timelimit TimelimitRaw TotalCPU TRESUsageInAve TRESUsageInMax "
    "TRESUsageInMaxNode TRESUsageInMaxTask TRESUsageInMin TRESUsageInMinNode "
    "TRESUsageInMinTask TRESUsageInTot TRESUsageOutAve TRESUsageOutMax TRESUsageOutMaxNode "
    "TRESUsageOutMaxTask TRESUsageOutMin TRESUsageOutMinNode TRESUsageOutMinTask "
    "TRESUsageOutTot UID User UserCPU WCKey WCKeyID WorkDir").split()


@pytest.mark.parametrize("letter", SINFO_LETTERS)
def test_sinfo_letter(letter: str) -> None:
    assert sinfo_field_by_letter(letter) is not None


@pytest.mark.parametrize("letter", SINFO_NO_LETTERS)
def test_sinfo_refuses_letter(letter: str) -> None:
    assert sinfo_field_by_letter(letter) is None


@pytest.mark.parametrize("name", SINFO_NAMES)
def test_sinfo_name(name: str) -> None:
    assert sinfo_field_by_name(name) is not None or name == "All"


def test_sinfo_refuses_an_unknown_name() -> None:
    assert sinfo_field_by_name("Bogus") is None


@pytest.mark.parametrize("letter", [chr(c) for c in range(ord("A"), ord("z") + 1)
                                    if chr(c).isalpha()])
def test_squeue_letter(letter: str) -> None:
    assert job_field_by_letter(letter) is not None      # squeue has every letter


@pytest.mark.parametrize("name", SQUEUE_NAMES)
def test_squeue_name(name: str) -> None:
    assert job_field_by_name(name) is not None


@pytest.mark.parametrize("name", SQUEUE_NO_NAMES)
def test_squeue_refuses_name(name: str) -> None:
    assert job_field_by_name(name) is None


@pytest.mark.parametrize("letter", STEP_LETTERS)
def test_step_letter(letter: str) -> None:
    assert step_field_by_letter(letter) is not None


@pytest.mark.parametrize("letter", STEP_NO_LETTERS)
def test_step_refuses_letter(letter: str) -> None:
    assert step_field_by_letter(letter) is None


@pytest.mark.parametrize("name", STEP_NAMES)
def test_step_name(name: str) -> None:
    assert step_field_by_name(name) is not None


@pytest.mark.parametrize("name", STEP_NO_NAMES)
def test_step_refuses_name(name: str) -> None:
    assert step_field_by_name(name) is None


@pytest.mark.parametrize("name", SACCT_NAMES)
def test_sacct_name(name: str) -> None:
    assert [spec.name for spec in parse_sacct_format(name)] == [name]


def test_sacct_refuses_an_unknown_name() -> None:
    with pytest.raises(SlurmInputError) as e:
        parse_sacct_format("Bogus")
    assert e.value.lines == ('Invalid field requested: "Bogus"',)
