// Command node runs one litek8s member. With no flags it starts a
// single-member cluster with its data in ./data and the API on
// https://127.0.0.1:6443, and prints where the admin kubeconfig is.
//
// Configuration comes from flags, LITEK8S_* environment variables (for
// example LITEK8S_DATA_DIR) and an optional config file (--config), in that
// order of precedence. The config file's keys are the flag names: any
// other key is refused, naming the flag it most likely meant. Usage errors
// (an unknown flag, a positional argument) exit 2, every other error 1.
package main
