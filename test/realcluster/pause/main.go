// Command pause is the sandbox ("pause") container of the realcluster
// harness: it blocks until SIGINT or SIGTERM and reaps any child it
// inherits, like the upstream pause image, but is a static Go binary so it
// can be built into a FROM scratch image without a registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
