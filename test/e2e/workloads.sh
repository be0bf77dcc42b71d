#!/usr/bin/env bash
# Workloads end to end (issue 5, acceptance 1): the real kubectl against a
# 3-member litek8s cluster on 127.0.0.1 (ports chosen at run time) whose
# members run with --simulated-nodes 3, so that the leader's scheduler binds
# pods to sim-node-0..2 and the simulated kubelets run them (Running and
# Ready with a pod IP; a Job's pods Succeed after a second). The commands
# are spread over the three members. Sections:
#
#   nodes        the simulated nodes register and are Ready
#   deployment   create, rollout status, pods Running on sim nodes with IPs
#   rollout      scale, set image, rollout history, rollout undo
#   cascade      delete deployment removes its ReplicaSets and Pods
#   jobs         create job, a completions 3 / parallelism 2 Job, wait complete
#   service      EndpointSlices and Endpoints list the Ready pods' IPs
#   namespace    deleting a namespace removes its contents, then itself
#   nodes again  still Ready after all of it
#
# Usage: test/e2e/workloads.sh [path/to/node-binary]
#   Without an argument it builds cmd/node. Exits non-zero on the first
#   failure; KEEP_E2E=1 keeps the work dir (member logs, manifests).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
e2e_init workloads "${1:-}"

AGE='[0-9]+[smhd]([0-9]+[smh])?'
IP='[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+'
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
# kube-apiserver 1.33+ sends this warning with every v1 Endpoints request;
# it is the one line of stderr a successful invocation may print.
EP_WARNING='Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice'
out=
why=

# run MEMBER kubectl-args...: one kubectl invocation that must exit 0 with
# nothing on stderr (but $EP_WARNING); its stdout is left in $out.
run() {
  local m=$1; shift
  local rc=0 err
  echo "+ k$m $*"
  out=$(k "$m" "$@" 2>"$work/stderr") || rc=$?
  [ "$rc" = 0 ] || fail "k$m $*: exit $rc: $(cat "$work/stderr") $out"
  err=$(grep -vxF "$EP_WARNING" "$work/stderr" || true)
  [ -z "$err" ] || fail "k$m $*: unexpected stderr: $err"
}

# query MEMBER kubectl-args...: for the checks polled by eventually: stdout in
# $got, or false with kubectl's stderr in $why.
query() {
  local m=$1; shift
  got=$(k "$m" "$@" 2>"$work/qerr") || { why="k$m $*: $(cat "$work/qerr")"; return 1; }
}

# expect LINE MEMBER kubectl-args...: run, and stdout must be exactly LINE.
expect() {
  local want=$1; shift
  run "$@"
  [ "$out" = "$want" ] || fail "k$*: want '$want', got: $out"
}

# eventually SECONDS FUNC ARGS...: call FUNC until it succeeds (a failing
# FUNC says why in $why); fail after SECONDS.
eventually() {
  local secs=$1; shift
  local end=$((SECONDS + secs))
  while :; do
    why=
    "$@" && return 0
    [ "$SECONDS" -lt "$end" ] || fail "not so after ${secs}s: $*: $why"
    sleep 0.2
  done
}

# rollout MEMBER DEPLOYMENT [kubectl-flags...]: rollout status finishes
# within 60 s.
rollout() {
  local m=$1 d=$2; shift 2
  run "$m" "$@" rollout status "deployment/$d" --timeout=60s
  [ "$(tail -n 1 <<<"$out")" = "deployment \"$d\" successfully rolled out" ] || fail "rollout status $d: $out"
}

# sorted WORDS...: the words one per line, sorted.
sorted() { tr ' ' '\n' <<<"$*" | sed '/^$/d' | sort; }

# nodes_ready MEMBER: sim-node-0..2 exist and are Ready; records each node's
# InternalIP in node_ip.
declare -A node_ip
nodes_ready() {
  local got name ready addr n=0
  query "$1" get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}' || return 1
  while read -r name ready addr; do
    [[ $name =~ ^sim-node-[012]$ ]] || continue
    [ "$ready" = True ] || { why="$name Ready=$ready"; return 1; }
    [[ $addr =~ ^$IP$ ]] || { why="$name InternalIP '$addr'"; return 1; }
    node_ip[$name]=$addr
    n=$((n + 1))
  done <<<"$got"
  [ "$n" = 3 ] || { why="want sim-node-0..2 Ready, got: $got"; return 1; }
}

# pods_are MEMBER NAMESPACE SELECTOR N IMAGE: exactly N pods match SELECTOR
# (none of them being deleted), each running IMAGE, Running and Ready on a
# simulated node, with the node's InternalIP as hostIP and a pod IP of its
# own (no two pods share one).
pods_are() {
  local m=$1 ns=$2 sel=$3 n=$4 image=$5 got name img phase ready node ip host del count=0
  query "$m" -n "$ns" get pods -l "$sel" -o jsonpath='{range .items[*]}{.metadata.name} {.spec.containers[0].image} {.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.spec.nodeName} {.status.podIP} {.status.hostIP} {.metadata.deletionTimestamp}{"\n"}{end}' || return 1
  declare -A seen=()
  while read -r name img phase ready node ip host del; do
    [ -n "$name" ] || continue
    count=$((count + 1))
    [ -z "$del" ] || { why="$name is being deleted"; return 1; }
    [ "$img" = "$image" ] || { why="$name runs $img, want $image"; return 1; }
    [ "$phase $ready" = "Running True" ] || { why="$name: phase $phase Ready $ready"; return 1; }
    [[ $node =~ ^sim-node-[012]$ ]] || { why="$name on node '$node'"; return 1; }
    [[ $ip =~ ^$IP$ ]] || { why="$name pod IP '$ip'"; return 1; }
    [ "$host" = "${node_ip[$node]}" ] || { why="$name hostIP $host, $node has ${node_ip[$node]}"; return 1; }
    [ -z "${seen[$ip]:-}" ] || { why="$name and ${seen[$ip]} share $ip"; return 1; }
    seen[$ip]=$name
  done <<<"$got"
  [ "$count" = "$n" ] || { why="want $n pods, got $count: $got"; return 1; }
}

# deploy_done MEMBER NAME N: the Deployment observed its generation and
# reports N replicas, all of them updated, ready and available, with the
# conditions Available True and Progressing NewReplicaSetAvailable.
deploy_done() {
  local m=$1 d=$2 n=$3 got
  query "$m" get deploy "$d" -o jsonpath='{.metadata.generation}/{.status.observedGeneration} {.status.replicas} {.status.updatedReplicas} {.status.readyReplicas} {.status.availableReplicas} {.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Progressing")].reason}' || return 1
  local gen=${got%% *}
  [ "${gen%/*}" = "${gen#*/}" ] || { why="generation/observedGeneration $gen"; return 1; }
  [ "${got#* }" = "$n $n $n $n True NewReplicaSetAvailable" ] \
    || { why="want replicas/updated/ready/available $n, Available True, Progressing NewReplicaSetAvailable; got: $got"; return 1; }
}

# none_left MEMBER NAMESPACE KINDS SELECTOR: get KINDS -l SELECTOR is empty.
none_left() {
  local got
  query "$1" -n "$2" get "$3" -l "$4" -o name || return 1
  [ -z "$got" ] || { why="left: $(tr '\n' ' ' <<<"$got")"; return 1; }
}

# job_done MEMBER NAME SUCCEEDED: the Job is Complete with SUCCEEDED
# successes and no failures, and its pods Succeeded on simulated nodes.
job_done() {
  local m=$1 j=$2 n=$3 name phase node count=0
  run "$m" get job "$j" -o jsonpath='{.status.succeeded}/{.status.failed}/{.status.active} {.status.conditions[?(@.type=="Complete")].status} {.status.startTime} {.status.completionTime}'
  [[ $out =~ ^$n//\ True\ $TS\ $TS$ ]] \
    || fail "job $j: want succeeded/failed/active '$n//', Complete True, startTime and completionTime; got: $out"
  run "$m" get jobs "$j"
  echo "$out"
  grep -qE "^$j +Complete +$n/$n +[0-9]+s +$AGE$" <<<"$out" || fail "job $j table: $out"
  run "$m" get pods -l "batch.kubernetes.io/job-name=$j" -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase} {.spec.nodeName}{"\n"}{end}'
  while read -r name phase node; do
    [ -n "$name" ] || continue
    count=$((count + 1))
    [ "$phase" = Succeeded ] || fail "job $j: pod $name is $phase"
    [[ $node =~ ^sim-node-[012]$ ]] || fail "job $j: pod $name on node '$node'"
  done <<<"$out"
  [ "$count" = "$n" ] || fail "job $j: want $n pods, got: $out"
}

# slices_match MEMBER SERVICE SELECTOR PORT: the Service's EndpointSlices and
# its Endpoints list exactly the IPs of the Ready pods of SELECTOR, on PORT.
slices_match() {
  local m=$1 svc=$2 sel=$3 port=$4 pods slices eps ip ready want got
  query "$m" get pods -l "$sel" -o jsonpath='{range .items[*]}{.status.podIP} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' || return 1
  pods=$got
  want=$(while read -r ip ready; do [ "$ready" = True ] && echo "$ip"; done <<<"$pods" | sort)
  [ -n "$want" ] || { why="no Ready pods: $pods"; return 1; }
  query "$m" get endpointslices -l "kubernetes.io/service-name=$svc" -o jsonpath='{range .items[*].endpoints[*]}{.addresses[0]} {.conditions.ready}{"\n"}{end}' || return 1
  slices=$got
  got=$(while read -r ip ready; do [ "$ready" = true ] && echo "$ip"; done <<<"$slices" | sort)
  [ "$got" = "$want" ] || { why="EndpointSlices list ready $(echo $got), pods $(echo $want)"; return 1; }
  query "$m" get endpointslices -l "kubernetes.io/service-name=$svc" -o jsonpath='{.items[*].ports[*].port}' || return 1
  [ "$got" = "$port" ] || { why="EndpointSlice ports '$got', want $port"; return 1; }
  query "$m" get endpoints "$svc" -o jsonpath='{range .subsets[*].addresses[*]}{.ip}{"\n"}{end}' || return 1
  eps=$got
  got=$(sort <<<"$eps")
  [ "$got" = "$want" ] || { why="Endpoints list $(echo $got), pods $(echo $want)"; return 1; }
  query "$m" get endpoints "$svc" -o jsonpath='{.subsets[*].ports[*].port}' || return 1
  [ "$got" = "$port" ] || { why="Endpoints ports '$got', want $port"; return 1; }
}

member_args=(--simulated-nodes 3)

step "start 3 members with --simulated-nodes 3"
start_cluster
wait_default_namespaces

step "nodes: sim-node-0..2 register and are Ready"
eventually 30 nodes_ready 2
run 3 get nodes
echo "$out"
head -n 1 <<<"$out" | grep -qE '^NAME +STATUS +ROLES +AGE +VERSION$' || fail "nodes table header: $out"
for i in 0 1 2; do
  grep -qE "^sim-node-$i +Ready +<none> +$AGE +v[0-9.]+" <<<"$out" || fail "sim-node-$i not listed Ready: $out"
done

step "deployment: create 5 replicas (member 2), rollout status (member 3)"
expect 'deployment.apps/web created' 2 create deployment web --image=registry.invalid/web:1 --replicas 5
rollout 3 web
eventually 10 pods_are 1 default app=web 5 registry.invalid/web:1
run 1 get pods -o wide -l app=web
echo "$out"
head -n 1 <<<"$out" | grep -qE '^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES$' \
  || fail "pods -o wide header: $out"
[ "$(grep -cE "^web-[a-z0-9]+-[a-z0-9]{5} +1/1 +Running +0 +$AGE +$IP +sim-node-[012] +<none> +<none>$" <<<"$out")" = 5 ] \
  || fail "want 5 rows Running 1/1 with an IP on a sim node: $out"
eventually 10 deploy_done 2 web 5
run 3 get rs -l app=web -o jsonpath='{.items[*].metadata.labels.pod-template-hash}'
[[ $out =~ ^[a-z0-9]+$ ]] || fail "want one ReplicaSet, pod-template-hashes: $out"
hash1=$out

step "rollout: scale to 8 (member 1)"
expect 'deployment.apps/web scaled' 1 scale deployment/web --replicas 8
rollout 2 web
eventually 10 pods_are 3 default app=web 8 registry.invalid/web:1
eventually 10 deploy_done 1 web 8
run 2 get deploy web
echo "$out"
grep -qE "^web +8/8 +8 +8 +$AGE$" <<<"$out" || fail "deployment row after scale: $out"

step "rollout: set image :2 (member 3), rollout status (member 1)"
expect 'deployment.apps/web image updated' 3 set image deployment/web web=registry.invalid/web:2
rollout 1 web
eventually 20 pods_are 2 default app=web 8 registry.invalid/web:2
eventually 10 deploy_done 3 web 8
run 3 get rs -l app=web -o jsonpath='{range .items[*]}{.spec.template.spec.containers[0].image}={.status.replicas} {end}'
[ "$(sorted $out)" = "$(sorted registry.invalid/web:1=0 registry.invalid/web:2=8)" ] || fail "ReplicaSets after set image: $out"
run 2 rollout history deployment/web
echo "$out"
[ "$(sed -n 2p <<<"$out")" = "REVISION  CHANGE-CAUSE" ] || fail "rollout history header: $out"
[ "$(grep -oE '^[0-9]+ ' <<<"$out" | tr -d ' ' | tr '\n' ' ')" = "1 2 " ] || fail "rollout history: want revisions 1 and 2: $out"

step "rollout: undo (member 1), back on :1 with the first ReplicaSet"
expect 'deployment.apps/web rolled back' 1 rollout undo deployment/web
rollout 3 web
eventually 20 pods_are 2 default app=web 8 registry.invalid/web:1
eventually 10 deploy_done 1 web 8
run 1 get pods -l app=web -o jsonpath='{.items[*].metadata.labels.pod-template-hash}'
[ "$(sorted $out | uniq)" = "$hash1" ] || fail "pods after undo: want pod-template-hash $hash1 (the first ReplicaSet), got: $out"
run 2 get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision} {.spec.template.spec.containers[0].image}'
[ "$out" = "3 registry.invalid/web:1" ] || fail "deployment after undo: want revision 3 on :1, got: $out"
run 3 rollout history deployment/web
[ "$(grep -oE '^[0-9]+ ' <<<"$out" | tr -d ' ' | tr '\n' ' ')" = "2 3 " ] || fail "rollout history after undo: want revisions 2 and 3: $out"

step "cascade: delete deployment web (member 2) removes its ReplicaSets and Pods"
expect 'deployment.apps "web" deleted' 2 delete deployment web
eventually 30 none_left 3 default rs,pods app=web
eventually 10 none_left 1 default rs,pods app=web

step "jobs: create job j (member 1), wait complete (member 2)"
expect 'job.batch/j created' 1 create job j --image=registry.invalid/job:1
expect 'job.batch/j condition met' 2 wait --for=condition=complete job/j --timeout=60s
job_done 3 j 1

step "jobs: completions 3, parallelism 2 from a manifest (member 3)"
cat >"$work/job3.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata:
  name: j3
spec:
  completions: 3
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: registry.invalid/job:1
YAML
expect 'job.batch/j3 created' 3 create -f "$work/job3.yaml"
# Until it completes, never more than 2 of its pods are active.
job_active_le_2() {
  local got
  query 1 get job j3 -o jsonpath='{.status.active}/{.status.conditions[?(@.type=="Complete")].status}' || return 1
  [ "${got%%/*}" -le 2 ] 2>/dev/null || [ -z "${got%%/*}" ] || fail "job j3: ${got%%/*} pods active, parallelism is 2"
  [ "${got#*/}" = True ] || { why="not complete: $got"; return 1; }
}
eventually 60 job_active_le_2
expect 'job.batch/j3 condition met' 2 wait --for=condition=complete job/j3 --timeout=60s
job_done 1 j3 3

step "service: deployment api (member 3) exposed (member 1)"
expect 'deployment.apps/api created' 3 create deployment api --image=registry.invalid/api:1 --replicas 3 --port 8080
expect 'service/api exposed' 1 expose deployment api --port 80 --target-port 8080
rollout 2 api
eventually 10 pods_are 2 default app=api 3 registry.invalid/api:1
eventually 20 slices_match 1 api app=api 8080
run 2 get endpointslices -l kubernetes.io/service-name=api
echo "$out"
grep -qE "^api-[a-z0-9]{5} +IPv4 +8080 +$IP,$IP,$IP +$AGE$" <<<"$out" || fail "endpointslices table: $out"
run 3 get endpoints api
echo "$out"
row=$(sed -n 2p <<<"$out")
[[ $row =~ ^api\ +([^ ]+)\ +$AGE$ ]] || fail "endpoints row: $out"
listed=${BASH_REMATCH[1]}
run 3 get pods -l app=api -o jsonpath='{range .items[*]}{.status.podIP}:8080 {end}'
[ "$(sorted "${listed//,/ }")" = "$(sorted $out)" ] || fail "endpoints row lists $listed, pods: $out"

step "service: scale api to 4 (member 2), the endpoints follow"
expect 'deployment.apps/api scaled' 2 scale deployment/api --replicas 4
rollout 3 api
eventually 10 pods_are 1 default app=api 4 registry.invalid/api:1
eventually 10 deploy_done 2 api 4
eventually 20 slices_match 3 api app=api 8080

step "namespace: x with a deployment, configmaps, a job and a service"
expect 'namespace/x created' 1 create namespace x
expect 'deployment.apps/d created' 2 -n x create deployment d --image=registry.invalid/d:1 --replicas 3 --port 80
expect 'configmap/c1 created' 3 -n x create configmap c1 --from-literal=a=1
expect 'configmap/c2 created' 1 -n x create configmap c2 --from-literal=a=2
expect 'job.batch/jx created' 2 -n x create job jx --image=registry.invalid/job:1
expect 'service/d exposed' 3 -n x expose deployment d --port 80
rollout 1 d -n x
expect 'job.batch/jx condition met' 2 -n x wait --for=condition=complete job/jx --timeout=60s
run 3 -n x get deploy,rs,pods,jobs,svc,cm,endpointslices -o name
echo "$out"
for want in deployment.apps/d job.batch/jx service/d configmap/c1 configmap/c2; do
  grep -qx "$want" <<<"$out" || fail "namespace x lacks $want: $out"
done
[ "$(grep -c '^replicaset.apps/d-' <<<"$out")" = 1 ] || fail "namespace x: want one ReplicaSet: $out"
[ "$(grep -c '^pod/' <<<"$out")" = 4 ] || fail "namespace x: want 3 + 1 pods: $out"
[ "$(grep -c '^endpointslice.discovery.k8s.io/d-' <<<"$out")" = 1 ] || fail "namespace x: want an EndpointSlice: $out"

step "namespace: delete ns x --wait (member 2), then NotFound (member 3)"
expect 'namespace "x" deleted' 2 delete namespace x --wait --timeout=60s
echo "+ k3 get namespace x"
rc=0
got=$(k 3 get namespace x 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "namespace x still exists: $got"
[ "$got" = 'Error from server (NotFound): namespaces "x" not found' ] || fail "get ns x after delete: $got"
for m in 1 2 3; do
  run "$m" -n x get deploy,rs,pods,jobs,svc,cm,endpointslices,endpoints -o name
  [ -z "$out" ] || fail "member $m: namespace x still holds: $out"
done

step "nodes again: still Ready (member 1)"
eventually 10 nodes_ready 1
run 1 get nodes
echo "$out"
[ "$(grep -cE "^sim-node-[012] +Ready +<none> +$AGE +v[0-9.]+" <<<"$out")" = 3 ] || fail "nodes table: $out"

echo "PASS: workloads e2e against 3 members with simulated nodes"
