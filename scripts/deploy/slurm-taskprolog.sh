#!/bin/bash
# slurm-taskprolog.sh - Slurm TaskProlog: every task of every job runs under
# gpumemguard. slurmd runs it as the job's user before each task, with the
# task's environment; each "export NAME=value" line it prints goes into that
# environment (slurm.conf.fragment shows where it is named).
#
# Per job: the job's tasks on a node share one budget per GPU (GPUMEM_GROUP
# slurm-job<ID>); the budget is the job's own GPUMEM_LIMIT when it set one
# (sbatch --export or its script), else the site's default; each process
# writes its metrics to node_exporter's textfile directory, one file per
# process, removed by slurm-epilog.sh when the job ends.
#
# Site settings (edit here, or set in slurmd's environment):
#   GMG_SITE_LIB           the installed library
#   GMG_SITE_TEXTFILE_DIR  node_exporter's --collector.textfile.directory
#                          (mode 1777, so that every user may write there)
#   GMG_SITE_LIMIT         the default budget per GPU ("" for none)
lib=${GMG_SITE_LIB:-/usr/local/lib/libgpumemguard.so}
textfile=${GMG_SITE_TEXTFILE_DIR:-/var/lib/node_exporter/textfile_collector}
limit=${GMG_SITE_LIMIT:-}

# not installed on this node, or no job: the task runs as it would without
[ -r "$lib" ] && [ -n "${SLURM_JOB_ID:-}" ] || exit 0

case " ${LD_PRELOAD:-} " in
    *" $lib "*|*" $lib:"*|*":$lib "*|*":$lib:"*) ;;     # already there (a step within a step)
    *) echo "export LD_PRELOAD=$lib${LD_PRELOAD:+ $LD_PRELOAD}" ;;
esac
if [ -z "${GPUMEM_LIMIT:-}" ] && [ -n "$limit" ]; then
    echo "export GPUMEM_LIMIT=$limit"
fi
[ -n "${GPUMEM_GROUP:-}" ] || echo "export GPUMEM_GROUP=slurm-job$SLURM_JOB_ID"
if [ -z "${GPUMEM_METRICS:-}" ] && [ -d "$textfile" ] && [ -w "$textfile" ]; then
    echo "export GPUMEM_METRICS=$textfile/gpumem-job$SLURM_JOB_ID-%p.prom"
fi
exit 0
