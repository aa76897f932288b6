#!/bin/bash
#SBATCH --job-name=llm --nodes=2 --ntasks-per-node=1 --gpus-per-node=8 --time=2-00:00:00
#SBATCH --output=logs/%x-%j.out
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
srun --label torchrun --nnodes "$SLURM_NNODES" --nproc_per_node "$SLURM_GPUS_PER_NODE" \
     --rdzv_id "$SLURM_JOB_ID" --rdzv_backend c10d --rdzv_endpoint "$MASTER_ADDR:$MASTER_PORT" train.py
