#!/usr/bin/env bash
# docker-run.sh IMAGE [ARGS...] - `docker run` a CUDA program under gpumemguard:
# the library (and the libraries it needs) mounted read-only from the host,
# LD_PRELOAD and the limits in the container's environment, the metrics file
# in node_exporter's textfile directory on the host.
#
#   GMG_LIB_DIR=/opt/gpumemguard/lib GMG_LIMIT=20G scripts/deploy/docker-run.sh \
#       vllm/vllm-openai:v0.6.3 --model meta-llama/Llama-3.1-8B-Instruct
#
# GMG_LIB_DIR holds libgpumemguard.so and the libraries it needs, as the image
# of scripts/deploy/Dockerfile has them in /opt/gpumemguard/lib
# (docker cp, or `make install` on the host when the container's glibc is as
# new). The processes of the container share one budget per GPU
# (GPUMEM_GROUP): a container has its own /dev/shm.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 IMAGE [ARGS...]" >&2; exit 2; }
lib_dir=${GMG_LIB_DIR:-/opt/gpumemguard/lib}
textfile=${GMG_TEXTFILE_DIR:-/var/lib/node_exporter/textfile_collector}
limit=${GMG_LIMIT:-20G}
group=${GMG_GROUP:-container}
# pids are the container's own: a name of this run keeps two containers'
# metrics files apart
run=${GMG_RUN_NAME:-docker-$$}
docker=${DOCKER:-docker}
exec "$docker" run --rm --gpus all --shm-size 2g \
    --volume "$lib_dir:/opt/gpumemguard/lib:ro" \
    --volume "$textfile:/textfile" \
    --env LD_PRELOAD=/opt/gpumemguard/lib/libgpumemguard.so \
    --env GPUMEM_LIMIT="$limit" \
    --env GPUMEM_GROUP="$group" \
    --env GPUMEM_METRICS="/textfile/gpumem-$run-%p.prom" \
    "$@"
