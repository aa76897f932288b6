#!/bin/bash
# cap NAME cmd... : run cmd, save stdout+stderr and rc, and the epoch seconds before/after
cap() { local name=$1; shift; local t0=$(date +%s); "$@" > "$name.out" 2> "$name.err"; echo $? > "$name.rc"; local t1=$(date +%s); echo "$t0 $t1" > "$name.time"; }
export SLURM_CONF=/tmp/real-slurm/etc/slurm.conf
cd /tmp/fmtcap
A=$(sbatch --parsable -N2 --ntasks-per-node=2 -J envlike -o /dev/null --wrap='srun sleep 50')
L=$(sbatch --parsable -t 10 -J lim --comment=hello -o /dev/null --wrap='sleep 50')
X=$(sbatch --parsable --array=1-6%2 -n4 -J arr -o /dev/null --wrap='sleep 50')
H=$(sbatch --parsable -H -t 30 -J held -o /dev/null --wrap='sleep 5')
D=$(sbatch --parsable -d afterok:$H -J dep -o /dev/null --wrap='true')
B=$(sbatch --parsable -N4 -n16 -J big -o /dev/null --wrap='sleep 5')
R=$(sbatch --parsable -H -N2 --ntasks-per-node=2 -c2 --mem=1G --gres=gpu:1 --exclusive -t 1-02:03:04 --comment="a b" -J richjobname -o out-%j.txt -e err-%j.txt --wrap='true')
echo "A=$A L=$L X=$X H=$H D=$D B=$B R=$R" > ids
sleep 4
J=$A,$L,$X,$H,$D,$B,$R
cap squeue-default squeue -j $J
cap squeue-long squeue -l -j $J
cap squeue-r squeue -r -j $J
cap squeue-all squeue -j $J -o '%all'
cap squeue-start squeue --start -j $J
cap squeue-O squeue -j $J -O 'jobid:6,arrayjobid:.5,arraytaskid,name:.4x,state:10|,reasonlist,timelimit:.12,timeleft:.12,endtime,starttime,submittime,mincpus:.4,numcpus:.4,minmemory:.6,command:.9,workdir:12,stdout:.14,dependency:.18,comment'
cap squeue-O-bogus squeue -j $J -O 'jobid,bogus:5x,name:.3|'
cap squeue-o-weird squeue -j $J -o 'pre%.3i|%-5j|%5j|%.20e %.10L %m %c %C %h %n %x %Nend'
cap squeue-steps squeue -s -j $J
cap squeue-steps-O squeue -s -j $J -O 'stepid:.14,stepname:.8,numtasks:.4,numcpus:.4,nodes:.10,starttime,timelimit,arrayjobid:.6,arraytaskid:.5,jobid:.5'
for j in $A $L $X $H $D $R; do cap scontrol-$j scontrol show job $j; cap scontrol-o-$j scontrol -o show job $j; done
cap sacct-default sacct -j $J
cap sacct-wide sacct -j $J -o jobid,jobidraw,jobname%12,state,start,end,elapsed,nodelist,reason,timelimit,ntasks,nnodes,alloccpus,reqcpus,reqmem,submit,eligible,priority,derivedexitcode,exitcode,cluster,workdir%14,partition,user,uid,group,gid,qos,timelimitraw,cputime,cputimeraw,elapsedraw,allocnodes,reqnodes,constraints,layout,flags
cap sacct-p sacct -j $J -p -o jobid,state,exitcode,nodelist,alloctres,reqtres,submitline%30
cap sacct-X-P sacct -X -j $J -P --delimiter=: -o jobid,jobname,state,reason,timelimit,elapsed
cap sacct-b sacct -b -j $J
cap sacct-brief-n sacct -n -X -j $J -o 'jobid%-20,jobname%3,state%-12,exitcode%2'
cap sinfo-default sinfo
cap sinfo-s sinfo -s
cap sinfo-N sinfo -N
cap sinfo-l sinfo -l
cap sinfo-Nl sinfo -Nl
cap sinfo-o sinfo -o '%P %a %l %D %t %T %N %c %m %C %F %G %z %R %E %f %s %w %X %Y %Z %d %g %h %n %r'
scancel $A $L $X $H $D $B $R
