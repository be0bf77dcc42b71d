// Package chart tests the Helm chart in charts/litek8s (issue 7,
// acceptance 3 and 4) with the real Helm CLI (built by the test, see
// helm_test.go), real kubectl and real member processes built from
// ./cmd/node and ./cmd/ctl:
//
//   - the chart lints (--strict) and renders with default and non-default
//     values into objects that decode strictly into the k8s.io/api types,
//     and values.schema.json refuses what it should;
//   - the rendered manifests pass `kubectl apply --dry-run=server` against
//     a litek8s member, and a real `helm install`/`upgrade`/`uninstall`
//     against it keeps the generated tokens;
//   - the StatefulSet's container (command, args, env, the ConfigMap and
//     Secret) run as three local processes, one per ordinal, with the
//     peers' DNS names mapped to loopback addresses: one cluster forms,
//     `ctl status` shows three ready members, the helm test's `ctl health`
//     passes, and after a SIGKILL the other two keep serving.
//
// The package has no non-test code. Tests that need kubectl skip without
// it on PATH; Helm is built with `go install` through the module proxy and
// cached, and the tests skip when it cannot be built.
package chart
