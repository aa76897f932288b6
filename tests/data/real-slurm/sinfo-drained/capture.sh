#!/bin/bash
# Records sinfo/scontrol on ../shared/tools/real-slurm (Slurm 22.05.8, nodes n1-n4 with 4 CPUs
# and 4000 MB each, gpu:4 on n1-n2; partitions debug = n[1-4], gpu = n[1-2]) in the shape
# tests/kube/test_sinfo.py builds: one 1-CPU job on n1, n4 drained ("cordoned"); then n1
# drained too while its job runs (drng-*). Both nodes are resumed and the job cancelled at the
# end. Usage: capture.sh OUTDIR (waits until no other job runs).
export SLURM_CONF=/tmp/real-slurm/etc/slurm.conf
out=$1; mkdir -p $out
for i in $(seq 1 600); do
  if [ -z "$(squeue -h -t R,CG,CF)" ]; then break; fi; sleep 0.5
done
job=$(sbatch --parsable -w n1 -n1 -J shape -o /dev/null --wrap 'sleep 30')
for i in $(seq 1 100); do [ "$(squeue -h -j $job -o %T)" = RUNNING ] && break; sleep 0.1; done
scontrol update nodename=n4 state=drain reason=cordoned
run() { local name=$1; shift; "$@" > $out/$name.txt 2>&1; }
run squeue squeue
run sinfo sinfo
run sinfo-N-l sinfo -N -l
run sinfo-l sinfo -l
run sinfo-s sinfo -s
run sinfo-N sinfo -N
run sinfo-R sinfo -R
run sinfo-R-l sinfo -R -l
run sinfo-o sinfo -o "%P|%a|%l|%D|%t|%T|%N|%c|%m|%G|%C|%F|%A|%E|%z|%O|%e|%d|%w|%X|%Y|%Z|%n"
run sinfo-N-o sinfo -N -o "%N|%P|%t|%c|%m|%G|%C|%E|%O|%e|%d"
run sinfo-O sinfo -O "Partition,NodeList,StateLong,CPUsState,Memory,Gres,Reason"
run sinfo-t-drain sinfo -t drain
run sinfo-t-idle sinfo -t idle
run sinfo-t-mix sinfo -t mix
run sinfo-p-gpu sinfo -p gpu
run sinfo-n-n4 sinfo -n n4
run show-node scontrol show node
run show-node-o scontrol -o show node n4
run show-partition scontrol show partition
scontrol update nodename=n1 state=drain reason=cordoned
run drng-sinfo sinfo
run drng-sinfo-N-l sinfo -N -l
run drng-sinfo-R sinfo -R
run drng-sinfo-t-drain sinfo -t drain
run drng-show-node-n1 scontrol show node n1
scontrol update nodename=n1,n4 state=resume
scancel $job
