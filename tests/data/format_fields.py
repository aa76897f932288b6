"""The format letters and field names of Slurm 22.05.8's reporting commands, as the real
Slurm of ``tools/real-slurm`` answered them one by one (each printed alone: it answered, or
refused it with "Invalid ... format specification" / "Invalid field requested"). Candidates:
all 52 letters, the names of its man pages, the names later versions added, a bogus one.

Used by ``tests/pod_side/formats/test_field_lists.py`` (our tables know exactly these) and
``tests/conformance/test_format_fields.py`` (each printed on both sides).
"""

from __future__ import annotations

#: A name no version knows.
BOGUS = "Bogus"
#: ``sinfo -o`` letters it knows.
SINFO_LETTERS = tuple((
    "a b c d e f g h l m n o p r s t u v w z A B C D E F G H I L M N O P R S T U V X Y Z").split())
#: ``sinfo -o`` letters it refuses.
SINFO_NO_LETTERS = tuple((
    "i j k q x y J K Q W").split())
#: ``sinfo -O`` names it knows (``All``: every field).
SINFO_NAMES = tuple((
    "All AllocMem AllocNodes Available Cluster Comment Cores CPUs CPUsLoad CPUsState "
    "DefaultTime Disk Extra Features features_act FreeMem Gres GresUsed Groups MaxCPUsPerNode "
    "Memory NodeAddr NodeAI NodeAIOT NodeHost NodeList Nodes OverSubscribe Partition "
    "PartitionName Port PreemptMode PriorityJobFactor PriorityTier Reason Root Size "
    "SocketCoreThread Sockets StateCompact StateLong StateComplete Threads Time TimeStamp "
    "User UserLong Version Weight").split())
#: ``squeue -O`` names it knows (every letter of ``-o`` too).
SQUEUE_NAMES = tuple((
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
    "Wait4Switch WCKey WorkDir CPUsPerTask Gres Shared Tres PackJobId PackJobIdSet "
    "PackJobOffset").split())
#: ``squeue -O`` names it refuses: step names, later versions' names.
SQUEUE_NO_NAMES = tuple((
    "CPUFreq Nodes ResvPort StepID StepName StepState tres-per-step ContainerId CronJob "
    "ExcNodes").split())
#: ``squeue -s -o`` letters it knows.
STEP_LETTERS = tuple((
    "b i j l u A M N P S U").split())
#: ``squeue -s -o`` letters it refuses.
STEP_NO_LETTERS = tuple((
    "a c d e f g h k m n o p q r s t v w x y z B C D E F G H I J K L O Q R T V W X Y Z").split())
#: ``squeue -s -O`` names it knows.
STEP_NAMES = tuple((
    "ArrayJobId ArrayTaskId Cluster Container ContainerId CPUFreq cpus-per-tres Gres JobId "
    "mem-per-tres Network Nodes NumCPUs NumTasks Partition ResvPorts StartTime StepId "
    "StepName StepState TimeLimit TimeUsed tres-bind tres-freq tres-per-job tres-per-node "
    "tres-per-socket tres-per-step tres-per-task UserId UserName").split())
#: ``squeue -s -O`` names it refuses: job names, later versions' names.
STEP_NO_NAMES = tuple((
    "StdErr StdIn StdOut NodeList Name State").split())
#: ``sacct --format`` names (``sacct --helpformat``).
SACCT_NAMES = tuple((
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
    "TRESUsageOutTot UID User UserCPU WCKey WCKeyID WorkDir").split())
