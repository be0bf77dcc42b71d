package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/podlabel"
)

// startPodLabel runs podlabel for --leader-label KEY: the member labels
// its own Pod (POD_NAMESPACE/POD_NAME from the downward API, in-cluster
// credentials) KEY=true while it leads. The returned function stops it and
// waits (the label is set back to false). A member outside Kubernetes
// leaves the flag empty.
func startPodLabel(ctx context.Context, key string, m *member.Member, log *slog.Logger) (stop func(), err error) {
	ns, name := os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	if ns == "" || name == "" {
		return nil, errors.New("--leader-label needs POD_NAMESPACE and POD_NAME (the downward API)")
	}
	rc, err := rest.InClusterConfig()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	cfg := podlabel.Config{Namespace: ns, Name: name, Key: key, Client: cs, Retry: 2 * time.Second, Logger: log}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		podlabel.Run(ctx, cfg, m.Store().RunAsLeader)
	}()
	return func() { cancel(); <-done }, nil
}
