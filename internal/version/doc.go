// Package version holds what the build stamped into the binaries: the
// release version, the commit and the build date. hack/image.sh sets them
// with -ldflags "-X github.com/litek8s/litek8s/internal/version.Version=…"
// (and Commit, Date); a plain `go build` reports "dev" and what Go's build
// info knows of the commit.
//
// Concurrency: the values are set at link time and only read.
package version
