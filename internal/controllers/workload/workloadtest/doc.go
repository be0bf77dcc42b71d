// Package workloadtest helps the workload controllers' cluster tests: a
// stand-in kubelet that runs the pods of a namespace (litek8s has no
// kubelet in these tests) and a recorder of watch events.
//
// Concurrency: a Kubelet's goroutines stop on t.Cleanup, which waits for
// them; Pods may be read from any goroutine.
package workloadtest
