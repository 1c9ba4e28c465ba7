#!/usr/bin/env bash
# The Slurm scripts without Slurm: their #SBATCH lines ask for one task per GPU with cores, and
# TESSERA_DRY_RUN=1 shows the srun command and environment they would run (the values checked
# below); where sbatch exists, sbatch --test-only checks them against the cluster too.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fail=0
check() { if ! grep -qE -- "$2" <<<"$3"; then echo "slurm_check: $1: no '$2' in:"; echo "$3"; fail=1; fi; }
for s in "$here"/launch/slurm/*.sbatch; do
  name=$(basename "$s")
  bash -n "$s" || { echo "slurm_check: $name: syntax"; fail=1; }
  head=$(grep '^#SBATCH' "$s")
  check "$name" '--ntasks-per-node=[0-9]+' "$head"
  check "$name" '--(gpus-per-task=1|gpus-per-node=[0-9]+)' "$head"
  check "$name" '--cpus-per-task=[0-9]+' "$head"
done
s=$here/launch/slurm/multinode.sbatch
out=$(env -u NCCL_SOCKET_IFNAME -u UCX_TLS TESSERA_DRY_RUN=1 SLURM_CPUS_PER_TASK=16 NCCL_IB_HCA=mlx5_0 bash "$s" prog --n 64)
check multinode '^srun --mpi=pmix --cpu-bind=cores --gpus-per-task=1 --gpu-bind=closest prog --n 64 $' "$out"
check multinode '^NCCL_NVLS_ENABLE=0$' "$out"
check multinode '^OMP_NUM_THREADS=16$' "$out"
check multinode '^OMPI_MCA_pml=ucx$' "$out"
check multinode '^UCX_TLS=rc,sm,self,cuda_copy,cuda_ipc$' "$out"
check multinode '^NCCL_IB_HCA=mlx5_0$' "$out"  # the site's settings pass through
check multinode '^NCCL_SOCKET_IFNAME=\^lo,docker$' "$out"
out=$(TESSERA_DRY_RUN=1 NCCL_NVLS_ENABLE=1 UCX_TLS=tcp bash "$s")
check "multinode (overrides)" '^NCCL_NVLS_ENABLE=1$' "$out"
check "multinode (overrides)" '^UCX_TLS=tcp$' "$out"
check "multinode (overrides)" 'build/apps/tessera_hello $' "$out"
if command -v sbatch >/dev/null; then
  for s in "$here"/launch/slurm/*.sbatch; do sbatch --test-only "$s" || fail=1; done
fi
(( fail == 0 )) && echo "slurm_check: passed"
exit "$fail"
