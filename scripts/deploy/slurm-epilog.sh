#!/bin/bash
# slurm-epilog.sh - Slurm Epilog (run by slurmd as root on each node when a
# job ends): the job's metrics files leave node_exporter's textfile
# directory, so that Prometheus stops seeing the job's processes.
textfile=${GMG_SITE_TEXTFILE_DIR:-/var/lib/node_exporter/textfile_collector}
[ -n "${SLURM_JOB_ID:-}" ] || exit 0
case $SLURM_JOB_ID in *[!0-9]*) exit 0 ;; esac
rm -f -- "$textfile"/gpumem-job"$SLURM_JOB_ID"-*.prom
exit 0
