# deploy.sh - the deployment recipes of docs/deploy.md: every file
# under scripts/deploy/ is parsed and checked for consistency, the Slurm
# scripts run against the real library, docker-run.sh against a stand-in
# for docker. Sourced by run.sh (uses its helpers).

D=scripts/deploy

# ------------------------------------------------ every file, and the doc
miss=""
for f in "$D"/*; do
    grep -qF "scripts/deploy/$(basename "$f")" docs/deploy.md || miss="$miss $(basename "$f")"
done
for f in $(grep -o 'scripts/deploy/[A-Za-z0-9._-]*[A-Za-z0-9]' docs/deploy.md | sort -u); do
    [ -e "$f" ] || miss="$miss [docs names $f]"
done
# each YAML excerpt of the doc is a piece of a file, word for word
python3 - "$D" >"$WORK/out" 2>&1 <<'PYEOF' || miss="$miss [$(cat "$WORK/out")]"
import glob, re, sys
files = [open(f).read() for f in glob.glob(sys.argv[1] + "/*")]
for block in re.findall(r"```yaml\n(.*?)```", open("docs/deploy.md").read(), re.S):
    if not any(block in f for f in files):
        print("a YAML excerpt of docs/deploy.md is in no file: " + block.splitlines()[0].strip())
        sys.exit(1)
PYEOF
grep -qF "docs/deploy.md" README.md || miss="$miss [README: docs/deploy.md]"
grep -qF "scripts/deploy/" README.md || miss="$miss [README: scripts/deploy/]"
[ -z "$miss" ] && ok "deploy: docs/deploy.md names every file of scripts/deploy/ and nothing else; the README points to both" \
    || bad "deploy files and docs:$miss" /dev/null

# ------------------------------------------------------- the manifests
if python3 -c 'import yaml' 2>/dev/null; then
    python3 - "$D" <<'PYEOF' >"$WORK/out" 2>&1; rc=$?
import glob, json, os, re, shlex, sys, yaml
d = sys.argv[1]
errors = []
def err(f, m): errors.append(f"{os.path.basename(f)}: {m}")
known = re.findall(r'"(GPUMEM_[A-Z_]+)"', open("src/base/config.c").read().split("known[] = {")[1].split("};")[0])

# the Dockerfiles: instructions, stages, where the files go
instr = {"FROM", "RUN", "COPY", "ADD", "ARG", "ENV", "ENTRYPOINT", "CMD", "WORKDIR", "LABEL", "USER", "EXPOSE"}
copied_to = {}
for f in sorted(glob.glob(os.path.join(d, "Dockerfile*"))):
    text = open(f).read().replace("\\\n", " ")
    stages = set()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word not in instr:
            err(f, f"unknown instruction {word}")
        if word == "FROM" and " AS " in rest:
            stages.add(rest.split(" AS ")[1].strip())
        if word == "COPY" and rest.startswith("--from="):
            src = rest.split()[0][7:]
            if src not in stages:
                err(f, f"COPY --from={src}: no such stage")
            copied_to[os.path.basename(f)] = rest.split()[-1]
        if word == "ENTRYPOINT":
            try:
                ep = json.loads(rest)
                copied_to[os.path.basename(f) + ":entrypoint"] = ep[-1].rstrip("/")
            except ValueError:
                err(f, "ENTRYPOINT is not a JSON list")

pods = 0
for f in sorted(glob.glob(os.path.join(d, "*.yaml"))):
    try:
        docs = [x for x in yaml.safe_load_all(open(f)) if x]
    except yaml.YAMLError as e:
        err(f, f"YAML: {e}")
        continue
    for doc in docs:
        kind = doc.get("kind")
        if not doc.get("apiVersion") or not kind or not doc.get("metadata", {}).get("name"):
            err(f, "apiVersion, kind and metadata.name are required")
            continue
        spec = doc["spec"] if kind == "Pod" else doc["spec"]["template"]["spec"]
        if kind != "Pod":
            sel = doc["spec"]["selector"]["matchLabels"]
            labels = doc["spec"]["template"]["metadata"]["labels"]
            if any(labels.get(k) != v for k, v in sel.items()):
                err(f, "the selector does not match the template's labels")
        pods += 1
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for c in spec.get("initContainers", []) + spec["containers"]:
            if not c.get("name") or not c.get("image"):
                err(f, "a container without name or image")
            mounts = {}
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes:
                    err(f, f"{c['name']}: volume {m['name']} is not defined")
                mounts[m["mountPath"]] = volumes.get(m["name"], {})
            env, seen = {}, []
            for e in c.get("env", []):
                n = e["name"]
                if n in env:
                    err(f, f"{c['name']}: {n} twice")
                for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", e.get("value", "")):
                    if ref not in seen:
                        err(f, f"{c['name']}: {n} uses $({ref}), not defined above it")
                if n.startswith("GPUMEM_") and n not in known:
                    err(f, f"{c['name']}: {n} is not a setting of the guard")
                if "value" in e and not isinstance(e["value"], str):
                    err(f, f"{c['name']}: {n}: the value must be a string")
                env[n] = e.get("value", "")
                seen.append(n)
            def mounted(path, want_host=False):
                for mp, vol in mounts.items():
                    if path == mp or path.startswith(mp.rstrip("/") + "/"):
                        return "hostPath" in vol if want_host else True
                return False
            if "LD_PRELOAD" in env:
                lib = env["LD_PRELOAD"]
                if not lib.startswith("/") or not lib.endswith("/libgpumemguard.so"):
                    err(f, f"{c['name']}: LD_PRELOAD={lib}")
                layer = copied_to.get("Dockerfile.app", "")
                if not mounted(lib) and not (layer and lib.startswith(layer + "/")):
                    err(f, f"{c['name']}: {lib} is neither mounted nor in the image layer of Dockerfile.app")
                if not env.get("GPUMEM_LIMIT"):
                    err(f, f"{c['name']}: no GPUMEM_LIMIT")
                print("limits", env.get("GPUMEM_LIMIT", ""), env.get("GPUMEM_ON_LIMIT", "fail"),
                      env.get("GPUMEM_METRICS_INTERVAL", "15"))
            if "GPUMEM_GROUP" in env and not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}", env["GPUMEM_GROUP"]):
                err(f, f"{c['name']}: GPUMEM_GROUP={env['GPUMEM_GROUP']}")
            if "GPUMEM_METRICS" in env:
                mp = env["GPUMEM_METRICS"]
                if not mp.endswith(".prom") or not mounted(os.path.dirname(mp), want_host=True):
                    err(f, f"{c['name']}: GPUMEM_METRICS={mp} is not a .prom file on a host directory")
                if "%p" not in mp:
                    err(f, f"{c['name']}: GPUMEM_METRICS without %p: the processes of a pod would share one file")
        for c in spec.get("initContainers", []):
            target = copied_to.get("Dockerfile:entrypoint")
            if "gpumemguard" in c["image"] and target and target not in [m["mountPath"] for m in c.get("volumeMounts", [])]:
                err(f, f"{c['name']}: the image copies into {target}, which is not mounted")
        if kind == "DaemonSet":
            args = " ".join(a for c in spec["containers"] for a in c.get("args", []))
            m = re.search(r"--collector\.textfile\.directory=(\S+)", args)
            if not m:
                err(f, "node_exporter without --collector.textfile.directory")
for e in errors:
    print("error:", e)
print("pods", pods)
sys.exit(1 if errors else 0)
PYEOF
    lim_ok=1
    while read -r _ limit onlimit interval; do
        env GPUMEM_LIMIT="$limit" GPUMEM_ON_LIMIT="$onlimit" GPUMEM_METRICS_INTERVAL="$interval" LD_PRELOAD="$PRELOAD" \
            "$T/grouptest" size >/dev/null 2>>"$WORK/out" || lim_ok=0
    done < <(grep '^limits ' "$WORK/out")
    if [ $rc = 0 ] && [ $lim_ok = 1 ] && grep -q '^pods [3-9]' "$WORK/out"; then
        ok "deploy: the Kubernetes manifests parse; the preloaded library is mounted or in the image, metrics on a host directory, settings known and accepted by the guard"
    else bad "deploy manifests (rc $rc, limits $lim_ok)" "$WORK/out"; fi
else
    skip "deploy: Kubernetes manifests" "no python3 yaml module"
fi

# -------------------------------------------------------- shell scripts
miss=""
for f in "$D"/*.sh; do bash -n "$f" 2>>"$WORK/err" || miss="$miss $f"; [ -x "$f" ] || miss="$miss $f(not executable)"; done
while read -r key path; do
    [ -f "$D/$(basename "$path")" ] || miss="$miss [$key=$path]"
done < <(sed -n 's/^\(TaskProlog\|Epilog\)=\(.*\)$/\1 \2/p' "$D/slurm.conf.fragment")
[ "$(grep -c '^\(TaskProlog\|Epilog\)=' "$D/slurm.conf.fragment")" = 2 ] || miss="$miss [slurm.conf.fragment]"
[ -z "$miss" ] && ok "deploy: the scripts pass bash -n and are executable; slurm.conf.fragment names them" \
    || bad "deploy scripts:$miss" "$WORK/err"

# --------------------------------------------------------------- Slurm
TP="$ROOT/$D/slurm-taskprolog.sh"
mkdir -p "$WORK/textfile"
prolog() { env -i PATH="$PATH" GMG_SITE_LIB="$ROOT/$B/libgpumemguard.so" GMG_SITE_TEXTFILE_DIR="$WORK/textfile" "$@" \
           bash "$TP"; }
prolog SLURM_JOB_ID=4242 GMG_SITE_LIMIT=40G >"$WORK/p1"
# as docs/deploy.md shows it, with the site's default paths
sed -e "s|$ROOT/$B/libgpumemguard.so|/usr/local/lib/libgpumemguard.so|" \
    -e "s|$WORK/textfile|/var/lib/node_exporter/textfile_collector|" "$WORK/p1" >"$WORK/p1.doc"
awk '/^`slurm-taskprolog.sh` runs/{f=1} f&&/^```$/{n++; next} f&&n==1' docs/deploy.md >"$WORK/p1.want"
other=$($CC -print-file-name=libm.so.6)   # a job's own preload (one that loads into bash harmlessly)
prolog SLURM_JOB_ID=4242 GMG_SITE_LIMIT=40G GPUMEM_LIMIT=2M LD_PRELOAD="$other" GPUMEM_GROUP=mine >"$WORK/p2"
prolog GMG_SITE_LIMIT=40G >"$WORK/p3"
env -i PATH="$PATH" GMG_SITE_LIB=/nonexistent/libgpumemguard.so SLURM_JOB_ID=1 bash "$TP" >"$WORK/p4"
if cmp -s "$WORK/p1.doc" "$WORK/p1.want" && ! grep -qv '^export [A-Z_]*=' "$WORK/p1" \
   && grep -qx "export LD_PRELOAD=$ROOT/$B/libgpumemguard.so $other" "$WORK/p2" \
   && ! grep -q "GPUMEM_LIMIT\|GPUMEM_GROUP" "$WORK/p2" && [ ! -s "$WORK/p3" ] && [ ! -s "$WORK/p4" ]; then
    ok "deploy: the Slurm TaskProlog prints export lines only, as docs/deploy.md shows; keeps the job's LD_PRELOAD, limit and group; silent without a job or the library"
else bad "Slurm TaskProlog" "$WORK/p1"; fi

if [ -z "${GMG_SANITIZER:-}" ]; then
    job="9$$"
    ( eval "$(prolog SLURM_JOB_ID=$job GMG_SITE_LIMIT=8M | sed 's/^export \([A-Z_]*\)=\(.*\)$/export \1="\2"/')"
      "$T/grouptest" info ) >"$WORK/out" 2>"$WORK/err"
    pfiles=$(ls "$WORK/textfile" | grep -c "^gpumem-job$job-[0-9]*\.prom$")
    : >"$WORK/textfile/gpumem-job1$job-1.prom"
    env -i PATH="$PATH" SLURM_JOB_ID=$job GMG_SITE_TEXTFILE_DIR="$WORK/textfile" bash "$ROOT/$D/slurm-epilog.sh"
    left=$(ls "$WORK/textfile" | grep -c "^gpumem-job$job-")
    if [ "$(cat "$WORK/out")" = "free 8388608 total 8388608 devtotal 8388608" ] && [ "$pfiles" = 1 ] && [ "$left" = 0 ] \
       && [ -e "$WORK/textfile/gpumem-job1$job-1.prom" ]; then
        ok "deploy: a task started with the TaskProlog's environment runs guarded (group, 8 MiB budget, metrics file); the Epilog removes that job's files only"
    else bad "Slurm task under the prolog (metrics files $pfiles, left $left)" "$WORK/err"; fi
    rm -f "/dev/shm/gpumemguard-$(id -u)-slurm-job$job"
else
    skip "deploy: a task under the Slurm TaskProlog" "sanitizer build: the prolog preloads the guard alone"
fi

# ---------------------------------------------------------- docker run
printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done\n' >"$WORK/docker"; chmod +x "$WORK/docker"
env DOCKER="$WORK/docker" GMG_RUN_NAME=docker-1234 bash "$D/docker-run.sh" vllm/vllm-openai:v0.6.3 \
    --model meta-llama/Llama-3.1-8B-Instruct >"$WORK/out" 2>&1; rc=$?
awk '/^`docker-run.sh IMAGE/{f=1} f&&/^```$/{n++; next} f&&n==1' docs/deploy.md \
    | python3 -c 'import shlex,sys; print("\n".join(shlex.split(sys.stdin.read().replace("\\\n", " "))[1:]))' >"$WORK/want"
env DOCKER="$WORK/docker" bash "$D/docker-run.sh" >/dev/null 2>&1; rc2=$?
if [ $rc = 0 ] && [ -s "$WORK/want" ] && cmp -s "$WORK/out" "$WORK/want" && [ $rc2 = 2 ]; then
    ok "deploy: docker-run.sh runs exactly the docker command docs/deploy.md shows; without an image it says how to use it"
else bad "docker-run.sh (rc $rc, $rc2)" "$WORK/out"; fi
