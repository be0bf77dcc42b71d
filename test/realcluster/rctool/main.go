package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rctool pki|ports|provisioner [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "pki":
		err = runPKI(os.Args[2:])
	case "ports":
		err = runPorts(os.Args[2:])
	case "provisioner":
		err = runProvisioner(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		slog.Error("rctool "+os.Args[1], "err", err)
		os.Exit(1)
	}
}
