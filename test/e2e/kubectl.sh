#!/usr/bin/env bash
# End-to-end check with the real kubectl against a 3-member litek8s cluster
# on 127.0.0.1 (every port chosen at run time). Usage:
#   test/e2e/kubectl.sh [path/to/node-binary]
# Without an argument it builds cmd/node. Exits non-zero on the first failure;
# every member it starts is stopped on exit.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
e2e_init e2e "${1:-}"

step "start 3 members"
start_cluster

step "default namespaces on every member"
wait_default_namespaces

step "create namespace (on a follower)"
k 2 create namespace e2e | grep -qx 'namespace/e2e created' || fail "create namespace"

step "create configmap --from-literal (on member 3)"
k 3 -n e2e create configmap settings --from-literal=color=blue --from-literal=size=10 \
  | grep -qx 'configmap/settings created' || fail "create configmap"

step "get cm: Table with DATA and AGE columns, on every member"
for m in 1 2 3; do
  out=$(k $m -n e2e get cm)
  echo "$out"
  echo "$out" | head -1 | grep -qE '^NAME +DATA +AGE$' || fail "member $m: header is not NAME DATA AGE: $out"
  echo "$out" | grep -qE '^settings +2 +[0-9]+s$' || fail "member $m: row for settings wrong: $out"
done

step "get cm -o yaml"
out=$(k 1 -n e2e get cm settings -o yaml)
echo "$out" | grep -qx '  color: blue' || fail "yaml lacks data.color: $out"
echo "$out" | grep -qE '^  resourceVersion: "[0-9]+"$' || fail "yaml lacks resourceVersion: $out"
echo "$out" | grep -qE '^  uid: [0-9a-f-]{36}$' || fail "yaml lacks uid: $out"

step "apply -f a Deployment (client-side validation on, via OpenAPI v3)"
cat >"$work/deploy.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: e2e
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 80
YAML
k 2 apply -f "$work/deploy.yaml" | grep -qx 'deployment.apps/web created' || fail "apply deployment"
out=$(k 1 -n e2e get deploy web -o jsonpath='{.spec.replicas} {.metadata.generation} {.spec.strategy.type}')
[ "$out" = "2 1 RollingUpdate" ] || fail "deployment after apply: $out"
out=$(k 3 -n e2e get deploy)
echo "$out"
echo "$out" | head -1 | grep -qE '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$' || fail "deployment table header: $out"

step "replace (PUT) with the current resourceVersion"
k 1 -n e2e get deploy web -o yaml | sed 's/^  replicas: 2$/  replicas: 3/' >"$work/web.yaml"
grep -q '^  replicas: 3$' "$work/web.yaml" || fail "could not edit the manifest"
k 3 replace -f "$work/web.yaml" | grep -qx 'deployment.apps/web replaced' || fail "replace"
out=$(k 2 -n e2e get deploy web -o jsonpath='{.spec.replicas} {.metadata.generation}')
[ "$out" = "3 2" ] || fail "after replace want replicas 3 generation 2, got: $out"

step "replace with a stale resourceVersion is a 409 Conflict"
if out=$(k 1 replace -f "$work/web.yaml" 2>&1); then fail "stale replace succeeded: $out"; fi
echo "$out" | grep -q 'the object has been modified' || fail "stale replace: unexpected error: $out"

step "apply -f again with a change: strategic-merge PATCH through a follower"
sed 's/image: nginx:1.27/image: nginx:1.28/' "$work/deploy.yaml" >"$work/deploy2.yaml"
k 2 apply -f "$work/deploy2.yaml" | grep -qx 'deployment.apps/web configured' || fail "apply changed deployment"
out=$(k 1 -n e2e get deploy web -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.replicas}')
[ "$out" = "nginx:1.28 2" ] || fail "after apply want image nginx:1.28 and replicas 2 (the manifest wins), got: $out"
k 3 apply -f "$work/deploy2.yaml" | grep -qx 'deployment.apps/web unchanged' || fail "apply unchanged"
k 3 -n e2e label cm settings tier=gold | grep -qx 'configmap/settings labeled' || fail "label (merge patch)"
[ "$(k 1 -n e2e get cm -l tier=gold -o name)" = "configmap/settings" ] || fail "label selector after label"

step "get cm -w on member 3 sees writes sent to member 1"
k 3 -n e2e get cm -w >"$work/watch.out" 2>&1 &
watch_pid=$!
pids+=($watch_pid)
wait_for "$work/watch.out" '^settings'
k 1 -n e2e create configmap watched --from-literal=a=b >/dev/null
wait_for "$work/watch.out" '^watched +1 +'
kill "$watch_pid" 2>/dev/null || true

step "delete"
k 2 -n e2e delete configmap settings | grep -qx 'configmap "settings" deleted' || fail "delete"
for m in 1 2 3; do
  if k $m -n e2e get cm settings >/dev/null 2>&1; then fail "member $m still has settings"; fi
done
out=$(k 1 -n e2e get cm settings 2>&1 || true)
echo "$out" | grep -q 'NotFound' || fail "get after delete: $out"
k 1 delete -f "$work/deploy.yaml" | grep -qx 'deployment.apps "web" deleted' || fail "delete -f"

step "every member holds the same objects"
ref=$(k 1 get cm -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}@{.metadata.resourceVersion} {end}')
for m in 2 3; do
  got=$(k $m get cm -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}@{.metadata.resourceVersion} {end}')
  [ "$got" = "$ref" ] || fail "member $m differs: $got vs $ref"
done

echo "PASS: kubectl e2e against 3 members"
