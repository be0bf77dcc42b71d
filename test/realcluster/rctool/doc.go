// Command rctool is the Go half of the realcluster harness (up.sh and
// down.sh are the other half). Subcommands:
//
//	rctool pki -dir DIR -node-name N -node-ip IP -service-ip IP -server URL
//	rctool ports N
//	rctool provisioner -kubeconfig K -dir D -node N
//
// pki writes a CA, component certificates and kubeconfigs (idempotent: an
// existing CA is kept); ports prints N free TCP ports; provisioner runs the
// dynamic volume provisioner of the default StorageClass until SIGTERM.
//
// It has no goroutines of its own; provisioner polls on its caller's
// goroutine until the context (SIGINT/SIGTERM) ends.
package main
