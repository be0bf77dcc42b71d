// Package clients holds acceptance tests of issue 3 that drive a 3-member
// in-process litek8s cluster with real clients: client-go informers and the
// dynamic client, a controller-runtime manager with Lease leader election,
// and the Helm v3 CLI (built by the test) on a chart in testdata/.
//
// The package has no non-test code. A test that needs a kind or
// subresource first checks discovery and fails with "needs <feature>
// (issue 3)" when it is not served.
package clients
