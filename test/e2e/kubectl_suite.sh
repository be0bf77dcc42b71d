#!/usr/bin/env bash
# The kubectl suite (issue 3, acceptance 1 and the kubectl side of 5): real
# kubectl against a 3-member litek8s cluster on 127.0.0.1 (ports chosen at run
# time), the commands spread over the three members. Every counted kubectl
# invocation checks its exit code, its stdout and its stderr against what
# kubectl 1.32 prints against a real kube-apiserver 1.37 with its controller
# manager and scheduler and no nodes (litek8s has no kubelet either): exact
# lines, or regular expressions where a value is generated (uid,
# resourceVersion, ages, timestamps, cluster IPs).
#
# Error cases check the Status as kubectl shows it at -v=0: "Error from
# server (<Reason>): <message>". Two kubectl habits to know: a Status of
# reason Invalid is printed as `The <Kind> "<name>" is invalid: <field>:
# <cause>` (no "(Invalid)"), and `kubectl create configmap|job|...` print
# "error: failed to create <kind>: <message>" (create -f keeps the reason).
# The section "HTTP status codes" checks the codes in the -v=6 request log.
#
# Sections: discovery (api-versions, api-resources), explain, auth can-i,
# namespaces, configmaps and output formats (-o yaml|json|wide|name|jsonpath|
# custom-columns, label and field selectors), secrets, client-side apply /
# diff / edit / replace, server-side apply, patch (strategic, merge, json),
# label / annotate, scale / set image / wait --for=jsonpath, built-in kinds
# (Tables and -o wide of each kind, describe), a CRD (printer columns, short
# names, categories, status subresource, wait --for condition=established),
# get all, get -w, --chunk-size, delete (selectors, dry run, finalizers,
# --cascade), HTTP status codes, CRD deletion, namespace deletion.
#
# Usage: test/e2e/kubectl_suite.sh [path/to/node-binary]
#   Without an argument it builds cmd/node.
#   SUITE_KEEP_GOING=1  record failing checks and go on, print them all at the
#                       end (exit 1 if any); default: stop at the first one.
#   KEEP_E2E=1          keep the work dir (member logs, manifests).
#
# Checks do not depend on how far kube's controllers have got, except where
# the behaviour under test is theirs: garbage collection (--cascade), the
# namespace controller (namespace deletion); the Job row accepts the status
# and duration the Job controller sets. Lists are scoped by label or by name
# because kube's controllers add objects of their own (kube-root-ca.crt, the
# default ServiceAccount, controller revisions, events).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
e2e_init suite "${1:-}"

keep_going=${SUITE_KEEP_GOING:-}
nk=0          # counted kubectl invocations
failures=()   # failed checks (SUITE_KEEP_GOING)
section_name=
cmd=
out= err= rc=0

# Regular expressions for generated values.
AGE='[0-9]+[smhd]([0-9]+[smh])?'
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
UIDRE='[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
RV='[0-9]+'
IP='[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+'

section() {
  section_name=$1
  echo
  echo "=== $1"
}

indent() { sed 's/^/      | /' <<<"$1"; }

# check_fail EXPECTED GOT: one failed check of the last invocation ($cmd).
check_fail() {
  local msg
  msg="[$section_name] $cmd
    expected:
$(indent "$1")
    got:
$(indent "$2")"
  echo "CHECK FAILED: $msg" >&2
  if [ -n "$keep_going" ]; then
    failures+=("$msg")
  else
    exit 1
  fi
}

# line_ok PATTERN LINE: a pattern is the exact line, or with a leading "~" an
# ERE that must match the whole line.
line_ok() {
  if [[ $1 == '~'* ]]; then
    [[ $2 =~ ^(${1:1})$ ]]
  else
    [ "$1" = "$2" ]
  fi
}

# match PATTERNS TEXT: line i of TEXT matches pattern line i; a pattern line
# "..." matches any number of lines (including none).
match() {
  local -a P L
  mapfile -t P <<<"$1"
  mapfile -t L <<<"$2"
  local np=${#P[@]} nl=${#L[@]} i=0 j=0 star=-1 mark=0
  while [ "$j" -lt "$nl" ]; do
    if [ "$i" -lt "$np" ] && [ "${P[i]}" = "..." ]; then
      star=$i; mark=$j; i=$((i + 1))
    elif [ "$i" -lt "$np" ] && line_ok "${P[i]}" "${L[j]}"; then
      i=$((i + 1)); j=$((j + 1))
    elif [ "$star" -ge 0 ]; then
      i=$((star + 1)); mark=$((mark + 1)); j=$mark
    else
      return 1
    fi
  done
  while [ "$i" -lt "$np" ] && [ "${P[i]}" = "..." ]; do i=$((i + 1)); done
  [ "$i" -eq "$np" ]
}

# run MEMBER kubectl-args...: one counted invocation; sets out, err, rc, cmd.
# $filter (optional) is a shell pipeline applied to stdout before checking
# (shown in the report); $efilter the same for stderr.
run() {
  local m=$1; shift
  nk=$((nk + 1))
  cmd="k$m$(printf ' %q' "$@")"
  [ -n "${filter:-}" ] && cmd="$cmd | $filter"
  [ -n "${efilter:-}" ] && cmd="$cmd 2> >($efilter)"
  echo "+ [$nk] $cmd"
  rc=0
  k "$m" "$@" >"$work/out" 2>"$work/err" </dev/null || rc=$?
  if [ -n "${filter:-}" ]; then out=$(bash -c "$filter" <"$work/out" || true); else out=$(cat "$work/out"); fi
  if [ -n "${efilter:-}" ]; then err=$(bash -c "$efilter" <"$work/err" || true); else err=$(cat "$work/err"); fi
  if [ -n "$out" ]; then head -n 12 <<<"$out" | sed 's/^/  | /'; fi
  if [ -n "$err" ]; then head -n 6 <<<"$err" | sed 's/^/  ! /'; fi
  return 0
}

# expect RC MEMBER kubectl-args... <<EOF
#   stdout patterns
#   --- stderr
#   stderr patterns
# EOF
# The invocation must exit with RC and both streams must match (an absent
# part means the stream must be empty).
expect() {
  local want_rc=$1; shift
  local spec want_out="" want_err="" in_err=0 line
  spec=$(cat)
  while IFS= read -r line; do
    if [ "$line" = "--- stderr" ]; then in_err=1; continue; fi
    if [ "$in_err" = 1 ]; then want_err+="$line"$'\n'; else want_out+="$line"$'\n'; fi
  done <<<"$spec"
  want_out=${want_out%$'\n'}
  want_err=${want_err%$'\n'}
  run "$@"
  if [ "$rc" = "$want_rc" ] && match "$want_out" "$out" && match "$want_err" "$err"; then
    return 0
  fi
  local e="exit $want_rc" g="exit $rc"
  if [ -n "${has_mode:-}" ]; then
    e+=$'\nstdout has these lines, in this order:\n'"$(grep -vx '\.\.\.' <<<"$want_out")"
  elif [ -n "$want_out" ]; then
    e+=$'\nstdout:\n'"$want_out"
  fi
  [ -n "$out" ] && g+=$'\nstdout:\n'"$out"
  [ -n "$want_err" ] && e+=$'\nstderr:\n'"$want_err"
  [ -n "$err" ] && g+=$'\nstderr:\n'"$err"
  check_fail "$e" "$g"
}

# expect_out MEMBER args... <<EOF: exit 0, stdout matches, stderr empty.
expect_out() { expect 0 "$@"; }

# expect_has MEMBER args... <<EOF: exit 0, stderr empty, and the pattern
# lines appear in stdout in this order (other lines may come between).
expect_has() {
  local spec p has="..."
  spec=$(cat)
  while IFS= read -r p; do has+=$'\n'"$p"$'\n'"..."; done <<<"$spec"
  has_mode=1 expect 0 "$@" <<<"$has"
}

# expect_stderr MEMBER args... <<EOF: exit 0, stdout empty, stderr matches.
expect_stderr() {
  local spec
  spec=$(cat)
  expect 0 "$@" <<<"--- stderr"$'\n'"$spec"
}

# expect_err REASON MEMBER args... <<EOF: exit 1, stdout empty, and stderr
# is the given text. For a Status error (REASON NotFound, AlreadyExists,
# Conflict, BadRequest, ...) give the message: kubectl prints
# "Error from server (REASON): message". REASON Invalid: give the whole text
# (kubectl prints `The Kind "name" is invalid: field: cause` for a Status of
# reason Invalid). REASON client: an error kubectl itself reports ("error: ...").
expect_err() {
  local reason=$1; shift
  local want
  want=$(cat)
  case $reason in
    Invalid | client) ;;
    *)
      if [[ $want == '~'* ]]; then
        want="~Error from server \\($reason\\): ${want:1}"
      else
        want="Error from server ($reason): $want"
      fi
      ;;
  esac
  expect 1 "$@" <<<"--- stderr"$'\n'"$want"
}

# Background watches: watch_start NAME MEMBER args... (counted invocation),
# watch_until NAME ERE [stderr] (wait up to 20 s for a matching line),
# watch_expect NAME <<EOF (stop it; its stdout must match the patterns).
declare -A watch_pid watch_cmd
watch_start() {
  local name=$1 m=$2; shift 2
  nk=$((nk + 1))
  watch_cmd[$name]="k$m$(printf ' %q' "$@")"
  echo "+ [$nk] ${watch_cmd[$name]} &"
  k "$m" "$@" >"$work/watch-$name.out" 2>"$work/watch-$name.err" </dev/null &
  watch_pid[$name]=$!
  pids+=($!)
}
watch_until() {
  local name=$1 re=$2 file="$work/watch-$1.out" _
  [ "${3:-}" = stderr ] && file="$work/watch-$1.err"
  for _ in $(seq 200); do
    grep -qE "$re" "$file" 2>/dev/null && return 0
    sleep 0.1
  done
  cmd="${watch_cmd[$name]}"
  check_fail "a line matching /$re/ within 20 s ($([ "${3:-}" = stderr ] && echo stderr || echo stdout))" \
    "stdout:"$'\n'"$(cat "$work/watch-$name.out")"$'\n'"stderr:"$'\n'"$(tail -n 5 "$work/watch-$name.err")"
  return 1
}
watch_expect() {
  local name=$1 want
  want=$(cat)
  kill -TERM "${watch_pid[$name]}" 2>/dev/null || true
  wait "${watch_pid[$name]}" 2>/dev/null || true
  cmd="${watch_cmd[$name]}"
  out=$(cat "$work/watch-$name.out")
  sed 's/^/  | /' <<<"$out"
  match "$want" "$out" || check_fail "stdout:"$'\n'"$want" "stdout:"$'\n'"$out"
}

# mf FILE <<EOF: write a manifest into the work dir.
mf() { cat >"$work/$1"; }

# ensure_default_sa MEMBER NS: kube's ServiceAccount admission refuses pods
# until the namespace's "default" ServiceAccount exists (the serviceaccounts
# controller creates it); wait a little for it, create it if nobody does.
# Setup, not a check.
ensure_default_sa() {
  local _
  for _ in $(seq 20); do
    k "$1" -n "$2" get serviceaccount default >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  k "$1" -n "$2" create serviceaccount default >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------------------
section "start 3 members"
start_cluster
wait_default_namespaces

# ---------------------------------------------------------------------------
section "discovery: api-versions, api-resources"

expect_has 1 api-versions <<'EOF'
admissionregistration.k8s.io/v1
apiextensions.k8s.io/v1
apps/v1
authorization.k8s.io/v1
autoscaling/v2
batch/v1
coordination.k8s.io/v1
discovery.k8s.io/v1
events.k8s.io/v1
networking.k8s.io/v1
policy/v1
rbac.authorization.k8s.io/v1
scheduling.k8s.io/v1
storage.k8s.io/v1
v1
EOF

expect_out 2 api-resources --api-group=apps <<'EOF'
~NAME +SHORTNAMES +APIVERSION +NAMESPACED +KIND
~controllerrevisions +apps/v1 +true +ControllerRevision
~daemonsets +ds +apps/v1 +true +DaemonSet
~deployments +deploy +apps/v1 +true +Deployment
~replicasets +rs +apps/v1 +true +ReplicaSet
~statefulsets +sts +apps/v1 +true +StatefulSet
EOF

expect_out 3 api-resources --api-group=rbac.authorization.k8s.io -o name <<'EOF'
clusterrolebindings.rbac.authorization.k8s.io
clusterroles.rbac.authorization.k8s.io
rolebindings.rbac.authorization.k8s.io
roles.rbac.authorization.k8s.io
EOF

expect_out 1 api-resources --api-group=batch -o wide <<'EOF'
~NAME +SHORTNAMES +APIVERSION +NAMESPACED +KIND +VERBS +CATEGORIES
~cronjobs +cj +batch/v1 +true +CronJob +create,delete,deletecollection,get,list,patch,update,watch +all
~jobs +batch/v1 +true +Job +create,delete,deletecollection,get,list,patch,update,watch +all
EOF

expect_out 2 api-resources --namespaced=false --api-group=scheduling.k8s.io <<'EOF'
~NAME +SHORTNAMES +APIVERSION +NAMESPACED +KIND
~priorityclasses +pc +scheduling\.k8s\.io/v1 +false +PriorityClass
EOF

expect_err client 3 get nosuchkinds <<'EOF'
error: the server doesn't have a resource type "nosuchkinds"
EOF

# ---------------------------------------------------------------------------
section "explain (OpenAPI v3)"

expect_out 1 explain configmaps.data <<'EOF'
KIND:       ConfigMap
VERSION:    v1

FIELD: data <map[string]string>


DESCRIPTION:
    Data contains the configuration data. Each key must consist of alphanumeric
    characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use
    the BinaryData field. The keys stored in Data must not overlap with the keys
    in the BinaryData field, this is enforced during validation process.
~ {4}
EOF

expect_out 2 explain deployment.spec.replicas <<'EOF'
GROUP:      apps
KIND:       Deployment
VERSION:    v1

FIELD: replicas <integer>


DESCRIPTION:
    Number of desired pods. This is a pointer to distinguish between explicit
    zero and not specified. Defaults to 1.
~ {4}
EOF

expect 1 3 explain configmaps.nope <<'EOF'
KIND:       ConfigMap
VERSION:    v1
--- stderr
error: field "nope" does not exist
EOF

# ---------------------------------------------------------------------------
section "auth can-i (admin)"

expect_out 1 auth can-i create deployments.apps -n default <<'EOF'
yes
EOF
expect_out 2 auth can-i '*' '*' --all-namespaces <<'EOF'
yes
EOF

# ---------------------------------------------------------------------------
section "namespaces"

expect_out 2 create namespace suite <<'EOF'
namespace/suite created
EOF
expect_err AlreadyExists 3 create namespace suite <<'EOF'
namespaces "suite" already exists
EOF
expect_out 1 get namespace suite <<EOF
~NAME +STATUS +AGE
~suite +Active +$AGE
EOF
expect_out 2 get ns suite -o 'jsonpath={.metadata.labels.kubernetes\.io/metadata\.name} {.spec.finalizers} {.status.phase}' <<'EOF'
suite ["kubernetes"] Active
EOF
expect_err NotFound 3 get namespace nope <<'EOF'
namespaces "nope" not found
EOF
# kubectl create configmap|secret|job|... report server errors as
# "error: failed to create <kind>: <message>"; create -f shows the reason.
expect_err client 1 -n nope create configmap stray --from-literal=a=b <<'EOF'
error: failed to create configmap: namespaces "nope" not found
EOF
mf stray.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: stray
  namespace: nope
EOF
expect_err NotFound 2 create -f "$work/stray.yaml" <<EOF
error when creating "$work/stray.yaml": namespaces "nope" not found
EOF
for ns in suite-apps suite-kinds suite-watch suite-del suite-chunk suite-crd suite-all; do
  k 1 create namespace "$ns" >/dev/null
done

# ---------------------------------------------------------------------------
section "configmaps: create, errors, selectors, output formats"

expect_out 1 -n suite create configmap cm1 --from-literal=color=blue <<'EOF'
configmap/cm1 created
EOF
expect_out 2 -n suite create configmap cm2 --from-literal=color=red --from-literal=size=10 <<'EOF'
configmap/cm2 created
EOF
expect_out 3 -n suite label configmap cm1 cm2 app=suite <<'EOF'
configmap/cm1 labeled
configmap/cm2 labeled
EOF
expect_out 1 -n suite label configmap cm2 tier=b <<'EOF'
configmap/cm2 labeled
EOF
expect_err client 3 -n suite create configmap cm1 --from-literal=x=y <<'EOF'
error: failed to create configmap: configmaps "cm1" already exists
EOF
expect_err NotFound 1 -n suite get configmap nope <<'EOF'
configmaps "nope" not found
EOF
mf bad-name.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: Bad_Name
  namespace: suite
data:
  k: v
EOF
expect_err Invalid 2 create -f "$work/bad-name.yaml" <<'EOF'
The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
EOF

expect_out 3 -n suite get configmaps -l app=suite <<EOF
~NAME +DATA +AGE
~cm1 +1 +$AGE
~cm2 +2 +$AGE
EOF
expect_out 1 -n suite get cm --selector=app=suite -o wide <<EOF
~NAME +DATA +AGE
~cm1 +1 +$AGE
~cm2 +2 +$AGE
EOF
expect_out 2 -n suite get cm -l 'app in (suite),tier!=b' -o name <<'EOF'
configmap/cm1
EOF
expect_out 3 -n suite get cm cm1 -o yaml <<EOF
apiVersion: v1
data:
  color: blue
kind: ConfigMap
metadata:
~  creationTimestamp: "$TS"
  labels:
    app: suite
  name: cm1
  namespace: suite
~  resourceVersion: "$RV"
~  uid: $UIDRE
EOF
expect_out 1 -n suite get cm cm2 -o json <<EOF
{
    "apiVersion": "v1",
    "data": {
        "color": "red",
        "size": "10"
    },
    "kind": "ConfigMap",
    "metadata": {
~        "creationTimestamp": "$TS",
        "labels": {
            "app": "suite",
            "tier": "b"
        },
        "name": "cm2",
        "namespace": "suite",
~        "resourceVersion": "$RV",
~        "uid": "$UIDRE"
    }
}
EOF
expect_has 2 -n suite get cm -l app=suite -o json <<'EOF'
{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "kind": "ConfigMap",
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
EOF
expect_out 3 -n suite get cm -l app=suite -o custom-columns=NAME:.metadata.name,COLOR:.data.color,SIZE:.data.size <<'EOF'
~NAME +COLOR +SIZE
~cm1 +blue +<none>
~cm2 +red +10
EOF
expect_out 1 -n suite get cm -l app=suite -o 'jsonpath={range .items[*]}{.metadata.name}={.data.color}{"\n"}{end}' <<'EOF'
cm1=blue
cm2=red
EOF
expect_out 2 -n suite get cm -l app=suite -o 'jsonpath={.kind} {.apiVersion} {.items[*].metadata.name}' <<'EOF'
List v1 cm1 cm2
EOF
expect_out 3 -n suite get cm --field-selector metadata.name=cm2 -o name <<'EOF'
configmap/cm2
EOF
expect_out 1 get cm -A -l app=suite --field-selector metadata.namespace=suite,metadata.name!=cm2 <<EOF
~NAMESPACE +NAME +DATA +AGE
~suite +cm1 +1 +$AGE
EOF
# kubectl prefixes a list's BadRequest/NotFound message with the selectors
# (cli-runtime EnhanceListError); the server's message follows the colon.
expect_err BadRequest 2 -n suite get cm --field-selector spec.foo=bar <<'EOF'
Unable to find "/v1, Resource=configmaps" that match label selector "", field selector "spec.foo=bar": "spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"
EOF
expect_err BadRequest 3 -n suite get cm -l 'a===b' <<'EOF'
Unable to find "/v1, Resource=configmaps" that match label selector "a===b", field selector "": unable to parse requirement: found '=', expected: identifier
EOF
expect_stderr 1 -n suite get cm -l app=nothing <<'EOF'
No resources found in suite namespace.
EOF
expect_out 2 -n suite describe configmap cm1 <<'EOF'
~Name: +cm1
~Namespace: +suite
~Labels: +app=suite
~Annotations: +<none>

Data
====
color:
----
blue


BinaryData
====

~Events: +<none>
EOF

# ---------------------------------------------------------------------------
section "secrets"

expect_out 2 -n suite create secret generic s1 --from-literal=password=hunter2 --from-literal=user=admin <<'EOF'
secret/s1 created
EOF
expect_out 3 -n suite get secret s1 <<EOF
~NAME +TYPE +DATA +AGE
~s1 +Opaque +2 +$AGE
EOF
expect_out 1 -n suite get secret s1 -o 'jsonpath={.data.password}' <<'EOF'
aHVudGVyMg==
EOF
mf secret.yaml <<'EOF'
apiVersion: v1
kind: Secret
metadata:
  name: s2
  namespace: suite
type: kubernetes.io/basic-auth
stringData:
  username: admin
  password: t0p
EOF
expect_out 2 apply -f "$work/secret.yaml" <<'EOF'
secret/s2 created
EOF
expect_out 3 -n suite get secret s2 -o 'jsonpath={.type} {.data.username} {.data.password}|{.stringData}|' <<'EOF'
kubernetes.io/basic-auth YWRtaW4= dDBw||
EOF

# ---------------------------------------------------------------------------
section "apply (client-side), diff, edit, replace"

mf web.yaml <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: suite-apps
  labels:
    app: web
spec:
  replicas: 0
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
EOF
sed 's/nginx:1.27/nginx:1.28/' "$work/web.yaml" >"$work/web-v2.yaml"

expect_out 1 apply -f "$work/web.yaml" <<'EOF'
deployment.apps/web created
EOF
expect_out 2 apply -f "$work/web.yaml" <<'EOF'
deployment.apps/web unchanged
EOF
expect_out 3 -n suite-apps get deployments -o wide <<EOF
~NAME +READY +UP-TO-DATE +AVAILABLE +AGE +CONTAINERS +IMAGES +SELECTOR
~web +0/0 +0 +0 +$AGE +web +nginx:1\.27 +app=web
EOF
# kubectl diff: a server-side dry-run apply, then `diff -u -N LIVE MERGED`;
# exit 1 when they differ. Only the changed lines are compared (the header
# names temp dirs): generation (bumped by the dry run) and the image. The
# last-applied annotation is not in the dry-run patch (kubectl diff computes
# it without the annotation), so it does not differ.
filter='grep -E "^[-+]" | grep -vE "^(---|\+\+\+) "' expect 1 1 diff -f "$work/web-v2.yaml" <<'EOF'
-  generation: 1
+  generation: 2
-      - image: nginx:1.27
+      - image: nginx:1.28
EOF
expect_out 2 apply -f "$work/web-v2.yaml" <<'EOF'
deployment.apps/web configured
EOF
expect_out 3 diff -f "$work/web-v2.yaml" <<'EOF'
EOF
KUBE_EDITOR="sed -i -e 's/image: nginx:1.28/image: nginx:1.29/'" expect_out 1 -n suite-apps edit deployment web <<'EOF'
deployment.apps/web edited
EOF
KUBE_EDITOR=true expect_stderr 2 -n suite-apps edit deployment/web <<'EOF'
Edit cancelled, no changes made.
EOF
expect_out 3 -n suite-apps get deployment web -o 'jsonpath={.spec.template.spec.containers[0].image} {.metadata.generation}' <<'EOF'
nginx:1.29 3
EOF
k 1 -n suite-apps get deployment web -o yaml >"$work/web-live.yaml"
sed -i 's/^    app: web$/    app: web\n    replaced: "yes"/' "$work/web-live.yaml"
grep -q 'replaced: "yes"' "$work/web-live.yaml" || fail "could not edit web-live.yaml"
expect_out 2 replace -f "$work/web-live.yaml" <<'EOF'
deployment.apps/web replaced
EOF
expect_err Conflict 3 replace -f "$work/web-live.yaml" <<EOF
error when replacing "$work/web-live.yaml": Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again
EOF
expect_out 1 -n suite-apps get deploy -l replaced=yes -o 'jsonpath={.items[*].metadata.name} {.items[*].metadata.generation}' <<'EOF'
web 3
EOF
expect_out 2 -n suite-apps create configmap dry --from-literal=a=b --dry-run=server <<'EOF'
configmap/dry created (server dry run)
EOF
expect_err NotFound 3 -n suite-apps get configmap dry <<'EOF'
configmaps "dry" not found
EOF

# ---------------------------------------------------------------------------
section "apply --server-side"

mf ssa.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
  namespace: suite-apps
data:
  color: blue
  size: "1"
EOF
mf ssa-other.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
  namespace: suite-apps
data:
  color: green
EOF
expect_out 1 apply --server-side -f "$work/ssa.yaml" <<'EOF'
configmap/ssa serverside-applied
EOF
expect_out 2 apply --server-side -f "$work/ssa.yaml" <<'EOF'
configmap/ssa serverside-applied
EOF
expect_out 3 -n suite-apps get cm ssa -o 'jsonpath={.data.color} {.data.size}{range .metadata.managedFields[*]} {.manager}:{.operation}{end}' <<'EOF'
blue 1 kubectl:Apply
EOF
expect_err client 1 apply --server-side --field-manager=suite-other -f "$work/ssa-other.yaml" <<'EOF'
error: Apply failed with 1 conflict: conflict with "kubectl": .data.color
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `--force-conflicts` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts
EOF
expect_out 2 apply --server-side --field-manager=suite-other --force-conflicts -f "$work/ssa-other.yaml" <<'EOF'
configmap/ssa serverside-applied
EOF
expect_out 3 -n suite-apps get cm ssa -o 'jsonpath={.data.color} {.data.size}{range .metadata.managedFields[*]} {.manager}:{.operation}{end}' <<'EOF'
green 1 kubectl:Apply suite-other:Apply
EOF
mf api.yaml <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: suite-apps
spec:
  replicas: 0
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: api
        image: registry.example/api:1
EOF
expect_out 1 apply --server-side -f "$work/api.yaml" <<'EOF'
deployment.apps/api serverside-applied
EOF
expect_out 2 -n suite-apps get deploy api -o 'jsonpath={.spec.strategy.type} {.spec.template.spec.containers[0].imagePullPolicy} {.metadata.managedFields[0].manager}:{.metadata.managedFields[0].operation}' <<'EOF'
RollingUpdate IfNotPresent kubectl:Apply
EOF

# ---------------------------------------------------------------------------
section "patch: strategic, merge, json"

# strategic merge (the default type): containers merge by name; the patch's
# new item goes before the items only the server has (apimachinery's
# strategicpatch normalizeElementOrder)
expect_out 3 -n suite-apps patch deployment web -p '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}' <<'EOF'
deployment.apps/web patched
EOF
expect_out 1 -n suite-apps get deploy web -o 'jsonpath={range .spec.template.spec.containers[*]}{.name}={.image} {end}' <<'EOF'
sidecar=busybox:1.36 web=nginx:1.29 
EOF
expect_out 2 -n suite-apps patch deployment web --type=merge -p '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.29"}]}}}}' <<'EOF'
deployment.apps/web patched
EOF
expect_out 3 -n suite-apps patch deployment web --type=json -p '[{"op":"replace","path":"/spec/replicas","value":1},{"op":"add","path":"/metadata/labels/tier","value":"gold"}]' <<'EOF'
deployment.apps/web patched
EOF
expect_out 1 -n suite-apps get deploy web -o 'jsonpath={.spec.template.spec.containers[*].name} {.spec.replicas} {.metadata.labels.tier}' <<'EOF'
web 1 gold
EOF
expect_out 2 -n suite-apps patch deployment web --type=merge -p '{"spec":{"replicas":1}}' <<'EOF'
deployment.apps/web patched (no change)
EOF
expect_err Invalid 3 -n suite-apps patch deployment web --type=json -p '[{"op":"test","path":"/spec/replicas","value":7},{"op":"replace","path":"/spec/replicas","value":8}]' <<'EOF'
The request is invalid: the server rejected our request due to an error in our request
EOF
expect_err NotFound 1 -n suite-apps patch deployment nope -p '{"spec":{"replicas":1}}' <<'EOF'
deployments.apps "nope" not found
EOF
expect_err Invalid 2 -n suite-apps patch deployment web -p '{"spec":{"selector":{"matchLabels":{"app":"web","extra":"x"}},"template":{"metadata":{"labels":{"app":"web","extra":"x"}}}}}' <<'EOF'
The Deployment "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"web","extra":"x"}}: field is immutable
EOF
mf frozen.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: frozen
  namespace: suite-apps
immutable: true
data:
  k: v
EOF
expect_out 3 create -f "$work/frozen.yaml" <<'EOF'
configmap/frozen created
EOF
expect_err AlreadyExists 2 create -f "$work/frozen.yaml" <<EOF
error when creating "$work/frozen.yaml": configmaps "frozen" already exists
EOF
expect_err Invalid 1 -n suite-apps patch configmap frozen --type=merge -p '{"data":{"k":"changed"}}' <<'EOF'
The ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set
EOF
mf bad-deploy.yaml <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
  namespace: suite-apps
spec:
  replicas: -1
  selector:
    matchLabels:
      app: x
  template:
    metadata:
      labels:
        app: "y"
    spec:
      containers:
      - name: Bad_Container
        image: ""
EOF
expect_err Invalid 2 create -f "$work/bad-deploy.yaml" <<'EOF'
~The Deployment "bad" is invalid: ?
* spec.replicas: Invalid value: -1: must be greater than or equal to 0
* spec.template.metadata.labels: Invalid value: {"app":"y"}: `selector` does not match template `labels`
* spec.template.spec.containers[0].name: Invalid value: "Bad_Container": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
* spec.template.spec.containers[0].image: Required value
EOF

# ---------------------------------------------------------------------------
section "label, annotate"

expect_out 3 -n suite-apps label deployment web team=a <<'EOF'
deployment.apps/web labeled
EOF
expect_err client 1 -n suite-apps label deployment web team=b <<'EOF'
error: 'team' already has a value (a), and --overwrite is false
EOF
expect_out 2 -n suite-apps label deployment web team=b --overwrite <<'EOF'
deployment.apps/web labeled
EOF
expect_out 3 -n suite-apps get deployments -l 'team=b,tier in (gold,silver)' -o name <<'EOF'
deployment.apps/web
EOF
expect_out 1 -n suite-apps label deployment web team- <<'EOF'
deployment.apps/web unlabeled
EOF
expect_out 2 -n suite-apps label deployment web tier=gold <<'EOF'
deployment.apps/web not labeled
EOF
expect_out 3 -n suite-apps annotate deployment web owner=team-a <<'EOF'
deployment.apps/web annotated
EOF
expect_err client 1 -n suite-apps annotate deployment web owner=team-b <<'EOF'
error: --overwrite is false but found the following declared annotation(s): 'owner' already has a value (team-a)
EOF
expect_out 2 -n suite-apps annotate deployment web owner=team-b --overwrite <<'EOF'
deployment.apps/web annotated
EOF
expect_out 3 -n suite-apps get deployment web -o 'jsonpath={.metadata.annotations.owner} {.metadata.labels}' <<'EOF'
team-b {"app":"web","replaced":"yes","tier":"gold"}
EOF

# ---------------------------------------------------------------------------
section "scale, set image, wait --for=jsonpath"

expect_out 1 -n suite-apps scale deployment web --replicas=3 <<'EOF'
deployment.apps/web scaled
EOF
expect_out 2 get --raw /apis/apps/v1/namespaces/suite-apps/deployments/web/scale <<EOF
~\{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":\{"name":"web","namespace":"suite-apps","uid":"$UIDRE","resourceVersion":"$RV","creationTimestamp":"$TS"\},"spec":\{"replicas":3\},"status":\{"replicas":[0-9]+,"selector":"app=web"\}\}
EOF
expect_err client 3 -n suite-apps scale deployment web --current-replicas=2 --replicas=4 <<'EOF'
error: Expected replicas to be 2, was 3
EOF
expect_out 1 -n suite-apps wait deployment/web --for=jsonpath='{.spec.replicas}'=3 --timeout=20s <<'EOF'
deployment.apps/web condition met
EOF
expect_out 2 -n suite-apps set image deployment/web web=nginx:1.30 <<'EOF'
deployment.apps/web image updated
EOF
expect_err client 3 -n suite-apps set image deployment/web nope=busybox:1.36 <<'EOF'
error: unable to find container named "nope"
EOF
# generation: 1 create, 2 apply, 3 edit, 4 strategic, 5 merge, 6 json, 7 scale, 8 set image
expect_out 1 -n suite-apps get deployment web -o 'jsonpath={.spec.replicas} {.spec.template.spec.containers[*].image} {.metadata.generation}' <<'EOF'
3 nginx:1.30 8
EOF
expect_has 2 -n suite-apps describe deployment web <<'EOF'
~Name: +web
~Namespace: +suite-apps
~Labels: +app=web
~ +replaced=yes
~ +tier=gold
~Annotations: +.*
~Selector: +app=web
~Replicas: +3 desired \| [0-9]+ updated \| [0-9]+ total \| [0-9]+ available \| [0-9]+ unavailable
~StrategyType: +RollingUpdate
~Pod Template:
~  Labels: +app=web
~  Containers:
~   web:
~    Image: +nginx:1\.30
EOF

# ---------------------------------------------------------------------------
section "built-in kinds: create, get (Tables, -o wide), describe"

ensure_default_sa 1 suite-kinds
expect_out 2 -n suite-kinds create serviceaccount robot <<'EOF'
serviceaccount/robot created
EOF
expect_out 3 -n suite-kinds create service clusterip svc1 --tcp=80:8080 <<'EOF'
service/svc1 created
EOF
expect_out 1 -n suite-kinds run p1 --image=nginx:1.27 --restart=Never --labels=app=p1 <<'EOF'
pod/p1 created
EOF
expect_out 2 -n suite-kinds create job job1 --image=busybox:1.36 -- /bin/true <<'EOF'
job.batch/job1 created
EOF
expect_out 3 -n suite-kinds create cronjob cron1 --image=busybox:1.36 '--schedule=0 0 1 1 *' -- /bin/true <<'EOF'
cronjob.batch/cron1 created
EOF
expect_out 1 -n suite-kinds create role reader --verb=get,list --resource=configmaps <<'EOF'
role.rbac.authorization.k8s.io/reader created
EOF
expect_out 2 -n suite-kinds create rolebinding reader-binding --role=reader --serviceaccount=suite-kinds:robot <<'EOF'
rolebinding.rbac.authorization.k8s.io/reader-binding created
EOF
expect_out 3 create priorityclass suite-high --value=1000 --description=suite <<'EOF'
priorityclass.scheduling.k8s.io/suite-high created
EOF
expect_out 1 -n suite-kinds create ingress ing1 --rule=suite.example.com/=svc1:80 <<'EOF'
ingress.networking.k8s.io/ing1 created
EOF
p1uid=$(k 1 -n suite-kinds get pod p1 -o 'jsonpath={.metadata.uid}')
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mf kinds.yaml <<EOF
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: rs1
  namespace: suite-kinds
spec:
  replicas: 0
  selector:
    matchLabels:
      app: rs1
  template:
    metadata:
      labels:
        app: rs1
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: suite-kinds
spec:
  replicas: 0
  serviceName: db
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: postgres:17
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ds1
  namespace: suite-kinds
spec:
  selector:
    matchLabels:
      app: ds1
  template:
    metadata:
      labels:
        app: ds1
    spec:
      nodeSelector:
        suite: none
      containers:
      - name: agent
        image: busybox:1.36
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: suite-sc
provisioner: example.com/none
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: suite-kinds
spec:
  storageClassName: suite-sc
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: suite-lock
  namespace: suite-kinds
spec:
  holderIdentity: suite-holder
  leaseDurationSeconds: 30
---
apiVersion: v1
kind: Event
metadata:
  name: p1.suite
  namespace: suite-kinds
involvedObject:
  apiVersion: v1
  kind: Pod
  name: p1
  namespace: suite-kinds
  uid: $p1uid
reason: SuiteCheck
message: checked by the suite
type: Normal
source:
  component: suite
firstTimestamp: "$now"
lastTimestamp: "$now"
count: 1
EOF
expect_out 2 apply -f "$work/kinds.yaml" <<'EOF'
replicaset.apps/rs1 created
statefulset.apps/db created
daemonset.apps/ds1 created
storageclass.storage.k8s.io/suite-sc created
persistentvolumeclaim/data created
lease.coordination.k8s.io/suite-lock created
event/p1.suite created
EOF

expect_out 3 -n suite-kinds get services -o wide <<EOF
~NAME +TYPE +CLUSTER-IP +EXTERNAL-IP +PORT\(S\) +AGE +SELECTOR
~svc1 +ClusterIP +$IP +<none> +80/TCP +$AGE +app=svc1
EOF
expect_out 1 -n suite-kinds get pods -l app=p1 -o wide <<EOF
~NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES
~p1 +0/1 +Pending +0 +$AGE +<none> +<none> +<none> +<none>
EOF
expect_out 2 -n suite-kinds get replicaset rs1 -o wide <<EOF
~NAME +DESIRED +CURRENT +READY +AGE +CONTAINERS +IMAGES +SELECTOR
~rs1 +0 +0 +0 +$AGE +web +nginx:1\.27 +app=rs1
EOF
expect_out 3 -n suite-kinds get statefulsets -o wide <<EOF
~NAME +READY +AGE +CONTAINERS +IMAGES
~db +0/0 +$AGE +db +postgres:17
EOF
expect_out 1 -n suite-kinds get daemonset ds1 <<EOF
~NAME +DESIRED +CURRENT +READY +UP-TO-DATE +AVAILABLE +NODE SELECTOR +AGE
~ds1 +0 +0 +0 +0 +0 +suite=none +$AGE
EOF
# Status and Duration come from the Job controller (Running once it has
# started the Job; kube has no kubelet to run it).
expect_out 2 -n suite-kinds get jobs <<EOF
~NAME +STATUS +COMPLETIONS +DURATION +AGE
~job1 +Running +0/1 +($AGE +)?$AGE
EOF
expect_out 3 -n suite-kinds get cronjobs <<EOF
~NAME +SCHEDULE +TIMEZONE +SUSPEND +ACTIVE +LAST SCHEDULE +AGE
~cron1 +0 0 1 1 \* +<none> +False +0 +<none> +$AGE
EOF
expect_out 1 -n suite-kinds get roles <<EOF
~NAME +CREATED AT
~reader +$TS
EOF
expect_out 2 -n suite-kinds get rolebindings -o wide <<EOF
~NAME +ROLE +AGE +USERS +GROUPS +SERVICEACCOUNTS
~reader-binding +Role/reader +$AGE +suite-kinds/robot
EOF
expect_out 3 -n suite-kinds get serviceaccount robot <<EOF
~NAME +AGE
~robot +$AGE
EOF
expect_out 1 -n suite-kinds get events --field-selector reason=SuiteCheck <<EOF
~LAST SEEN +TYPE +REASON +OBJECT +MESSAGE
~$AGE +Normal +SuiteCheck +pod/p1 +checked by the suite
EOF
expect_out 2 -n suite-kinds get events --field-selector involvedObject.kind=Pod,involvedObject.name=p1,type=Normal -o name <<'EOF'
event/p1.suite
EOF
expect_out 3 -n suite-kinds get leases <<EOF
~NAME +HOLDER +AGE
~suite-lock +suite-holder +$AGE
EOF
expect_out 1 -n suite-kinds get ingress <<EOF
~NAME +CLASS +HOSTS +ADDRESS +PORTS +AGE
~ing1 +<none> +suite\.example\.com +80 +$AGE
EOF
expect_out 2 -n suite-kinds get pvc -o wide <<EOF
~NAME +STATUS +VOLUME +CAPACITY +ACCESS MODES +STORAGECLASS +VOLUMEATTRIBUTESCLASS +AGE +VOLUMEMODE
~data +Pending +suite-sc +<unset> +$AGE +Filesystem
EOF
expect_out 3 get priorityclass suite-high <<EOF
~NAME +VALUE +GLOBAL-DEFAULT +AGE +PREEMPTIONPOLICY
~suite-high +1000 +false +$AGE +PreemptLowerPriority
EOF
expect_out 1 get storageclass suite-sc <<EOF
~NAME +PROVISIONER +RECLAIMPOLICY +VOLUMEBINDINGMODE +ALLOWVOLUMEEXPANSION +AGE
~suite-sc +example\.com/none +Delete +WaitForFirstConsumer +true +$AGE
EOF
expect_out 2 -n suite-kinds get replicasets,statefulsets,daemonsets,cronjobs -o name <<'EOF'
replicaset.apps/rs1
statefulset.apps/db
daemonset.apps/ds1
cronjob.batch/cron1
EOF
expect_out 3 -n suite-kinds scale statefulset db --replicas=2 <<'EOF'
statefulset.apps/db scaled
EOF
expect_out 1 -n suite-kinds get statefulset db -o 'jsonpath={.spec.replicas} {.metadata.generation}' <<'EOF'
2 2
EOF
expect_has 2 -n suite-kinds describe pod p1 <<EOF
~Name: +p1
~Namespace: +suite-kinds
~Labels: +app=p1
~Status: +Pending
~Containers:
~  p1:
~    Image: +nginx:1\.27
~Events:
~  Type +Reason +Age +From +Message
~  ---- +------ +---- +---- +-------
~  Normal +SuiteCheck +$AGE +suite +checked by the suite
EOF
expect_out 3 -n suite-kinds describe role reader <<'EOF'
~Name: +reader
~Labels: +<none>
~Annotations: +<none>
PolicyRule:
~  Resources +Non-Resource URLs +Resource Names +Verbs
~  --------- +----------------- +-------------- +-----
~  configmaps +\[\] +\[\] +\[get list\]
EOF
expect_err client 1 -n suite-kinds wait pod/p1 --for=condition=Ready --timeout=2s <<'EOF'
error: timed out waiting for the condition on pods/p1
EOF

# ---------------------------------------------------------------------------
section "CustomResourceDefinition: printer columns, short names, categories, status"

mf crd.yaml <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.suite.example.com
spec:
  group: suite.example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    listKind: WidgetList
    shortNames: [wd]
    categories: [all, suite]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
    - name: Color
      type: string
      jsonPath: .spec.color
      priority: 1
    - name: Ready
      type: string
      jsonPath: .status.conditions[?(@.type=="Ready")].status
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        description: Widget is the custom kind of the litek8s kubectl suite.
        properties:
          spec:
            type: object
            description: WidgetSpec is the desired state of a Widget.
            required: [size]
            properties:
              size:
                type: integer
                minimum: 1
                description: Size of the widget.
              color:
                type: string
                default: blue
                description: Color of the widget.
          status:
            type: object
            properties:
              conditions:
                type: array
                items:
                  type: object
                  required: [type, status]
                  properties:
                    type:
                      type: string
                    status:
                      type: string
EOF
expect_out 1 apply -f "$work/crd.yaml" <<'EOF'
customresourcedefinition.apiextensions.k8s.io/widgets.suite.example.com created
EOF
expect_out 2 wait --for condition=established crd/widgets.suite.example.com --timeout=20s <<'EOF'
customresourcedefinition.apiextensions.k8s.io/widgets.suite.example.com condition met
EOF
expect_out 3 get crd widgets.suite.example.com -o wide <<EOF
~NAME +SCOPE +VERSIONS +CREATED AT +GROUP +KIND +SHORTNAMES +ESTABLISHED
~widgets\.suite\.example\.com +Namespaced +v1\(storage\) +$TS +suite\.example\.com +Widget +wd +true
EOF
expect_out 1 api-resources --api-group=suite.example.com -o wide <<'EOF'
~NAME +SHORTNAMES +APIVERSION +NAMESPACED +KIND +VERBS +CATEGORIES
~widgets +wd +suite\.example\.com/v1 +true +Widget +delete,deletecollection,get,list,patch,create,update,watch +all,suite
EOF
expect_out 2 explain widgets.spec <<'EOF'
GROUP:      suite.example.com
KIND:       Widget
VERSION:    v1

FIELD: spec <Object>


DESCRIPTION:
    WidgetSpec is the desired state of a Widget.
~ {4}
FIELDS:
  color	<string>
    Color of the widget.

  size	<integer> -required-
    Size of the widget.
EOF
mf widgets.yaml <<'EOF'
apiVersion: suite.example.com/v1
kind: Widget
metadata:
  name: w1
  namespace: suite-crd
spec:
  size: 3
  color: red
---
apiVersion: suite.example.com/v1
kind: Widget
metadata:
  name: w2
  namespace: suite-crd
spec:
  size: 1
status:
  conditions:
  - type: Ready
    status: "True"
---
apiVersion: suite.example.com/v1
kind: Widget
metadata:
  name: w-all
  namespace: suite-all
spec:
  size: 1
EOF
expect_out 3 apply -f "$work/widgets.yaml" <<'EOF'
widget.suite.example.com/w1 created
widget.suite.example.com/w2 created
widget.suite.example.com/w-all created
EOF
mf bad-widget.yaml <<'EOF'
apiVersion: suite.example.com/v1
kind: Widget
metadata:
  name: bad
  namespace: suite-crd
spec:
  color: red
EOF
expect_err Invalid 1 create -f "$work/bad-widget.yaml" <<'EOF'
The Widget "bad" is invalid: spec.size: Required value
EOF
expect_out 2 -n suite-crd get widgets <<EOF
~NAME +SIZE +READY +AGE
~w1 +3 +$AGE
~w2 +1 +$AGE
EOF
expect_out 3 -n suite-crd get wd -o wide <<EOF
~NAME +SIZE +COLOR +READY +AGE
~w1 +3 +red +$AGE
~w2 +1 +blue +$AGE
EOF
expect_out 1 -n suite-crd get widget w2 -o 'jsonpath={.spec.color}|{.status}|{.metadata.generation}' <<'EOF'
blue||1
EOF
expect_out 2 -n suite-crd patch widget w1 --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}' <<'EOF'
widget.suite.example.com/w1 patched
EOF
expect_out 3 -n suite-crd wait --for=condition=Ready widget/w1 --timeout=20s <<'EOF'
widget.suite.example.com/w1 condition met
EOF
expect_out 1 -n suite-crd get wd w1 <<EOF
~NAME +SIZE +READY +AGE
~w1 +3 +True +$AGE
EOF
expect_out 2 -n suite-crd patch wd w1 --type=merge -p '{"spec":{"color":"green"}}' <<'EOF'
widget.suite.example.com/w1 patched
EOF
expect_out 3 -n suite-crd patch wd w1 --type=json -p '[{"op":"replace","path":"/spec/size","value":4}]' <<'EOF'
widget.suite.example.com/w1 patched
EOF
expect_err client 1 -n suite-crd patch wd w1 -p '{"spec":{"size":5}}' <<'EOF'
error: application/strategic-merge-patch+json is not supported by suite.example.com/v1, Kind=Widget: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml
EOF
expect_out 2 -n suite-crd get wd w1 -o 'jsonpath={.spec.size} {.spec.color} {.status.conditions[0].status} {.metadata.generation}' <<'EOF'
4 green True 3
EOF
expect_err NotFound 3 -n suite-crd get widget nope <<'EOF'
widgets.suite.example.com "nope" not found
EOF
expect_out 1 -n suite-crd get suite -o name <<'EOF'
widget.suite.example.com/w1
widget.suite.example.com/w2
EOF
expect_out 2 get widgets -A -o name <<'EOF'
widget.suite.example.com/w-all
widget.suite.example.com/w1
widget.suite.example.com/w2
EOF
expect_has 3 -n suite-crd describe widget w1 <<'EOF'
~Name: +w1
~Namespace: +suite-crd
~API Version: +suite\.example\.com/v1
~Kind: +Widget
Spec:
~  Color: +green
~  Size: +4
Status:
~  Conditions:
~    Status: +True
~    Type: +Ready
EOF
expect_out 1 auth can-i delete widgets.suite.example.com -n suite-crd <<'EOF'
yes
EOF

# ---------------------------------------------------------------------------
section "get all (the all category, CRDs too)"

expect_out 2 -n suite-all create service clusterip svc-all --tcp=80 <<'EOF'
service/svc-all created
EOF
mf all.yaml <<'EOF'
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ds-all
  namespace: suite-all
spec:
  selector:
    matchLabels:
      app: ds-all
  template:
    metadata:
      labels:
        app: ds-all
    spec:
      nodeSelector:
        suite: none
      containers:
      - name: agent
        image: busybox:1.36
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: sts-all
  namespace: suite-all
spec:
  replicas: 0
  serviceName: sts-all
  selector:
    matchLabels:
      app: sts-all
  template:
    metadata:
      labels:
        app: sts-all
    spec:
      containers:
      - name: db
        image: postgres:17
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cron-all
  namespace: suite-all
spec:
  schedule: "0 0 1 1 *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: task
            image: busybox:1.36
EOF
expect_out 3 apply -f "$work/all.yaml" <<'EOF'
daemonset.apps/ds-all created
statefulset.apps/sts-all created
cronjob.batch/cron-all created
EOF
expect_out 1 -n suite-all get all -o name <<'EOF'
service/svc-all
daemonset.apps/ds-all
statefulset.apps/sts-all
cronjob.batch/cron-all
widget.suite.example.com/w-all
EOF
expect_out 2 -n suite-all get all <<EOF
~NAME +TYPE +CLUSTER-IP +EXTERNAL-IP +PORT\(S\) +AGE
~service/svc-all +ClusterIP +$IP +<none> +80/TCP +$AGE

~NAME +DESIRED +CURRENT +READY +UP-TO-DATE +AVAILABLE +NODE SELECTOR +AGE
~daemonset\.apps/ds-all +0 +0 +0 +0 +0 +suite=none +$AGE

~NAME +READY +AGE
~statefulset\.apps/sts-all +0/0 +$AGE

~NAME +SCHEDULE +TIMEZONE +SUSPEND +ACTIVE +LAST SCHEDULE +AGE
~cronjob\.batch/cron-all +0 0 1 1 \* +<none> +True +0 +<none> +$AGE

~NAME +SIZE +READY +AGE
~widget\.suite\.example\.com/w-all +1 +$AGE
EOF

# ---------------------------------------------------------------------------
section "get -w: table watch, --watch-only, --output-watch-events, selectors"

k 1 -n suite-watch create configmap w0 --from-literal=k=0 >/dev/null
k 1 -n suite-watch label configmap w0 sw=1 >/dev/null
watch_start events 3 -n suite-watch get configmaps -l sw=1 --watch-only --output-watch-events -v=6
watch_start names 2 -n suite-watch get cm -l sw=1 -w -o name -v=6
watch_start field 1 -n suite-watch get cm --field-selector=metadata.name=w1 --watch-only -o name -v=6
# the watches are established once their watch=true GET has an answer
watch_until events 'watch=true' stderr || true
watch_until names 'watch=true' stderr || true
watch_until field 'watch=true' stderr || true
# mutations through the other members; each event is awaited before the next
# so that the streams are comparable line by line
k 1 -n suite-watch create configmap w1 --from-literal=k=1 >/dev/null
k 1 -n suite-watch label configmap w1 sw=1 >/dev/null
watch_until events '^ADDED +w1 ' || true
k 2 -n suite-watch patch configmap w1 --type=merge -p '{"data":{"k":"2"}}' >/dev/null
watch_until events '^MODIFIED +w1 ' || true
k 1 -n suite-watch label configmap w1 sw=0 --overwrite >/dev/null # leaves the selection: DELETED
watch_until events '^DELETED +w1 ' || true
k 2 -n suite-watch label configmap w1 sw=1 --overwrite >/dev/null # enters it again: ADDED
k 1 -n suite-watch delete configmap w1 >/dev/null
k 2 -n suite-watch create configmap w-end --from-literal=k=end >/dev/null
k 2 -n suite-watch label configmap w-end sw=1 >/dev/null
watch_until events '^ADDED +w-end ' || true
watch_until names '^configmap/w-end$' || true
watch_expect events <<EOF
~EVENT +NAME +DATA +AGE
~ADDED +w1 +1 +$AGE
~MODIFIED +w1 +1 +$AGE
~DELETED +w1 +1 +$AGE
~ADDED +w1 +1 +$AGE
~DELETED +w1 +1 +$AGE
~ADDED +w-end +1 +$AGE
EOF
watch_expect names <<'EOF'
configmap/w0
configmap/w1
configmap/w1
configmap/w1
configmap/w1
configmap/w1
configmap/w-end
EOF
# created, labeled, patched, relabeled twice, deleted: 6 events for w1
watch_expect field <<'EOF'
configmap/w1
configmap/w1
configmap/w1
configmap/w1
configmap/w1
configmap/w1
EOF

# ---------------------------------------------------------------------------
section "--chunk-size (limit/continue)"

{
  for i in 0 1 2 3 4 5 6; do
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: chunk-%s\n  namespace: suite-chunk\n  labels:\n    chunk: "1"\ndata:\n  i: "%s"\n---\n' "$i" "$i"
  done
} >"$work/chunk.yaml"
expect_out 3 apply -f "$work/chunk.yaml" <<'EOF'
configmap/chunk-0 created
configmap/chunk-1 created
configmap/chunk-2 created
configmap/chunk-3 created
configmap/chunk-4 created
configmap/chunk-5 created
configmap/chunk-6 created
EOF
expect_out 1 -n suite-chunk get cm -l chunk=1 --chunk-size=2 <<EOF
~NAME +DATA +AGE
~chunk-0 +1 +$AGE
~chunk-1 +1 +$AGE
~chunk-2 +1 +$AGE
~chunk-3 +1 +$AGE
~chunk-4 +1 +$AGE
~chunk-5 +1 +$AGE
~chunk-6 +1 +$AGE
EOF
# -v=6 logs every request: three pages of 3, the last two with a continue token
efilter='grep -oE "GET https://[^ ]*/configmaps[?][^ ]* [0-9]+ [A-Za-z ]+ in" | sed -E "s#^GET https://[^/]*##; s#continue=[^&]*#continue=TOKEN#; s#&timeout=[0-9a-z]+##; s# in\$##"' \
  expect 0 2 -n suite-chunk get cm -l chunk=1 --chunk-size=3 -o name -v=6 <<'EOF'
configmap/chunk-0
configmap/chunk-1
configmap/chunk-2
configmap/chunk-3
configmap/chunk-4
configmap/chunk-5
configmap/chunk-6
--- stderr
/api/v1/namespaces/suite-chunk/configmaps?labelSelector=chunk%3D1&limit=3 200 OK
/api/v1/namespaces/suite-chunk/configmaps?continue=TOKEN&labelSelector=chunk%3D1&limit=3 200 OK
/api/v1/namespaces/suite-chunk/configmaps?continue=TOKEN&labelSelector=chunk%3D1&limit=3 200 OK
EOF
expect_out 3 -n suite-chunk get cm --chunk-size=4 -o 'jsonpath={.items[*].metadata.name}' -l 'chunk in (1)' <<'EOF'
chunk-0 chunk-1 chunk-2 chunk-3 chunk-4 chunk-5 chunk-6
EOF

# ---------------------------------------------------------------------------
section "delete: selectors, dry run, finalizers (Terminating), --cascade"

ensure_default_sa 2 suite-del
mf del.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: d1
  namespace: suite-del
  labels:
    del: "1"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: d2
  namespace: suite-del
  labels:
    del: "1"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: d3
  namespace: suite-del
  labels:
    del: "1"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: keep
  namespace: suite-del
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: fin
  namespace: suite-del
  finalizers:
  - suite.example.com/hold
---
apiVersion: v1
kind: Pod
metadata:
  name: pfin
  namespace: suite-del
  finalizers:
  - suite.example.com/hold
spec:
  containers:
  - name: c
    image: busybox:1.36
EOF
expect_out 1 apply -f "$work/del.yaml" <<'EOF'
configmap/d1 created
configmap/d2 created
configmap/d3 created
configmap/keep created
configmap/fin created
pod/pfin created
EOF
expect_out 2 -n suite-del delete configmap d1 <<'EOF'
configmap "d1" deleted
EOF
expect_err NotFound 3 -n suite-del delete configmap d1 <<'EOF'
configmaps "d1" not found
EOF
expect_out 1 -n suite-del delete configmap d1 --ignore-not-found <<'EOF'
EOF
expect_out 2 -n suite-del delete configmaps -l del=1 <<'EOF'
configmap "d2" deleted
configmap "d3" deleted
EOF
expect_out 3 -n suite-del delete configmap keep --dry-run=server <<'EOF'
configmap "keep" deleted (server dry run)
EOF
expect_out 1 -n suite-del get configmap keep -o name <<'EOF'
configmap/keep
EOF
# an object with a finalizer is only marked: deletionTimestamp, grace 0
expect_out 2 -n suite-del delete configmap fin --wait=false <<'EOF'
configmap "fin" deleted
EOF
expect_out 3 -n suite-del get configmap fin -o 'jsonpath={.metadata.deletionTimestamp} {.metadata.deletionGracePeriodSeconds} {.metadata.finalizers}' <<EOF
~$TS 0 \["suite\.example\.com/hold"\]
EOF
expect_out 1 -n suite-del delete configmap fin --wait=false <<'EOF'
configmap "fin" deleted
EOF
expect_err Invalid 2 -n suite-del patch configmap fin --type=json -p '[{"op":"add","path":"/metadata/finalizers/-","value":"suite.example.com/late"}]' <<'EOF'
The ConfigMap "fin" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"suite.example.com/late"}
EOF
expect_out 3 -n suite-del patch configmap fin --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' <<'EOF'
configmap/fin patched
EOF
expect_err NotFound 1 -n suite-del get configmap fin <<'EOF'
configmaps "fin" not found
EOF
expect_out 2 -n suite-del delete pod pfin --wait=false <<'EOF'
pod "pfin" deleted
EOF
expect_out 3 -n suite-del get pods <<EOF
~NAME +READY +STATUS +RESTARTS +AGE
~pfin +0/1 +Terminating +0 +$AGE
EOF
(sleep 2; k 1 -n suite-del patch pod pfin --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || true) &
pids+=($!)
expect_out 1 -n suite-del wait --for=delete pod/pfin --timeout=20s <<'EOF'
pod/pfin condition met
EOF

# --cascade: the garbage collector acts on ownerReferences.
for o in bg fg or; do
  k 1 -n suite-del create configmap "owner-$o" >/dev/null
  ouid=$(k 1 -n suite-del get configmap "owner-$o" -o 'jsonpath={.metadata.uid}')
  fin=""
  [ "$o" = fg ] && fin=$'\n  finalizers:\n  - suite.example.com/hold'
  cat >"$work/dep-$o.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: dep-$o
  namespace: suite-del
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: owner-$o
    uid: $ouid
    blockOwnerDeletion: true$fin
EOF
  k 2 apply -f "$work/dep-$o.yaml" >/dev/null
done
# background (the default): the owner goes at once, the dependent after it
expect_out 3 -n suite-del delete configmap owner-bg <<'EOF'
configmap "owner-bg" deleted
EOF
# (the dependent may be gone before kubectl wait starts: then it prints nothing)
expect_out 1 -n suite-del wait --for=delete configmap/dep-bg --timeout=20s <<'EOF'
~(configmap/dep-bg condition met)?
EOF
expect_err NotFound 2 -n suite-del get configmap dep-bg <<'EOF'
configmaps "dep-bg" not found
EOF
# foreground: the owner waits (finalizer foregroundDeletion) for its blocking
# dependents, here held by a finalizer of its own
expect_out 3 -n suite-del delete configmap owner-fg --cascade=foreground --wait=false <<'EOF'
configmap "owner-fg" deleted
EOF
expect_out 1 -n suite-del get configmap owner-fg -o 'jsonpath={.metadata.finalizers} {.metadata.deletionTimestamp}' <<EOF
~\["foregroundDeletion"\] $TS
EOF
expect_out 2 -n suite-del wait configmap/dep-fg --for=jsonpath='{.metadata.deletionGracePeriodSeconds}'=0 --timeout=20s <<'EOF'
configmap/dep-fg condition met
EOF
expect_out 3 -n suite-del patch configmap dep-fg --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' <<'EOF'
configmap/dep-fg patched
EOF
expect_out 1 -n suite-del wait --for=delete configmap/owner-fg --timeout=20s <<'EOF'
~(configmap/owner-fg condition met)?
EOF
expect_err NotFound 2 -n suite-del get configmap owner-fg <<'EOF'
configmaps "owner-fg" not found
EOF
# orphan: the dependent stays, without its ownerReference
expect_out 3 -n suite-del delete configmap owner-or --cascade=orphan --timeout=20s <<'EOF'
configmap "owner-or" deleted
EOF
expect_out 1 -n suite-del get configmap dep-or -o 'jsonpath={.metadata.name}:{.metadata.ownerReferences}' <<'EOF'
dep-or:
EOF

# ---------------------------------------------------------------------------
section "HTTP status codes of the error answers (-v=6 request log)"

# kubectl -v=6 logs "<VERB> <url> <code> <status> in N milliseconds" for
# every request; $codes keeps the API requests as "VERB path code status"
# (query and host dropped, OpenAPI and discovery requests left out).
codes='sed -nE "s#^.*\] (GET|POST|PUT|PATCH|DELETE) https://[^/]*(/api[^ ?]*)[^ ]* ([0-9]+ [A-Za-z ]+) in [0-9]+ milliseconds\$#\1 \2 \3#p"'
# (after a 404, kubectl get looks the namespace up to tell the two apart)
efilter=$codes expect 1 1 -n suite get configmap nope -v=6 <<'EOF'
--- stderr
GET /api/v1/namespaces/suite/configmaps/nope 404 Not Found
GET /api/v1/namespaces/suite 200 OK
EOF
efilter=$codes expect 1 2 -n suite delete configmap nope -v=6 <<'EOF'
--- stderr
DELETE /api/v1/namespaces/suite/configmaps/nope 404 Not Found
EOF
efilter=$codes expect 1 3 create -f "$work/bad-name.yaml" -v=6 <<'EOF'
--- stderr
POST /api/v1/namespaces/suite/configmaps 422 Unprocessable Entity
EOF
efilter=$codes expect 1 1 create -f "$work/frozen.yaml" -v=6 <<'EOF'
--- stderr
POST /api/v1/namespaces/suite-apps/configmaps 409 Conflict
EOF
efilter=$codes expect 1 2 replace -f "$work/web-live.yaml" -v=6 <<'EOF'
--- stderr
PUT /apis/apps/v1/namespaces/suite-apps/deployments/web 409 Conflict
EOF
efilter=$codes expect 1 3 -n suite get configmaps --field-selector spec.foo=bar -v=6 <<'EOF'
--- stderr
GET /api/v1/namespaces/suite/configmaps 400 Bad Request
EOF
efilter=$codes expect 1 1 -n suite-apps patch deployment web --type=json -p '[{"op":"test","path":"/spec/replicas","value":7}]' -v=6 <<'EOF'
--- stderr
GET /apis/apps/v1/namespaces/suite-apps/deployments/web 200 OK
PATCH /apis/apps/v1/namespaces/suite-apps/deployments/web 422 Unprocessable Entity
EOF
efilter=$codes expect 1 2 -n suite-crd patch widget w1 -p '{"spec":{"size":5}}' -v=6 <<'EOF'
--- stderr
GET /apis/suite.example.com/v1/namespaces/suite-crd/widgets/w1 200 OK
PATCH /apis/suite.example.com/v1/namespaces/suite-crd/widgets/w1 415 Unsupported Media Type
EOF

# ---------------------------------------------------------------------------
section "deleting a CRD deletes its objects"

expect_out 2 delete customresourcedefinition widgets.suite.example.com --timeout=60s --request-timeout=0 <<'EOF'
customresourcedefinition.apiextensions.k8s.io "widgets.suite.example.com" deleted
EOF
expect_err NotFound 3 get --raw /apis/suite.example.com/v1/namespaces/suite-crd/widgets <<'EOF'
the server could not find the requested resource
EOF
expect_out 1 apply -f "$work/crd.yaml" <<'EOF'
customresourcedefinition.apiextensions.k8s.io/widgets.suite.example.com created
EOF
expect_out 2 wait --for=condition=Established customresourcedefinition/widgets.suite.example.com --timeout=20s <<'EOF'
customresourcedefinition.apiextensions.k8s.io/widgets.suite.example.com condition met
EOF
# recreated: none of the old objects comes back
expect_stderr 3 get widgets.suite.example.com -A <<'EOF'
No resources found
EOF
expect_out 1 delete -f "$work/crd.yaml" --timeout=60s --request-timeout=0 <<'EOF'
customresourcedefinition.apiextensions.k8s.io "widgets.suite.example.com" deleted
EOF

# ---------------------------------------------------------------------------
section "namespace deletion"

expect_out 2 delete namespace suite-watch --timeout=60s --request-timeout=0 <<'EOF'
namespace "suite-watch" deleted
EOF
expect_err NotFound 3 get namespace suite-watch <<'EOF'
namespaces "suite-watch" not found
EOF

# ---------------------------------------------------------------------------
section "summary"
echo "kubectl invocations checked: $nk"
if [ "$nk" -lt 60 ]; then
  cmd="(suite)"
  check_fail "at least 60 checked kubectl invocations" "$nk"
fi
if [ "${#failures[@]}" -gt 0 ]; then
  echo
  echo "=== ${#failures[@]} failing checks (of $nk invocations)"
  for f in "${failures[@]}"; do
    echo
    echo "$f"
  done
  exit 1
fi
echo "PASS: kubectl suite, $nk invocations against 3 members"
