package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/kubepeers"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/podlabel"
)

// pod is the member's own Pod when it runs in Kubernetes: its namespace
// and name from the downward API (POD_NAMESPACE, POD_NAME) and a client of
// that Kubernetes (in-cluster credentials).
type pod struct {
	namespace, name string
	client          kubernetes.Interface
}

// ownPod returns the member's Pod; what asks for it (a flag) is named in
// errors.
func ownPod(what string) (*pod, error) {
	ns, name := os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME")
	if ns == "" || name == "" {
		return nil, fmt.Errorf("%s needs POD_NAMESPACE and POD_NAME (the downward API)", what)
	}
	rc, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &pod{namespace: ns, name: name, client: cs}, nil
}

// peerDialer is --kubernetes-peers: peers' names in the domain of this
// member's advertised name (<pod>.<headless Service domain>) are dialed at
// their Pods' IPs.
func (p *pod) peerDialer(advertise string, log *slog.Logger) (*kubepeers.Dialer, error) {
	host, _, err := net.SplitHostPort(advertise)
	if err != nil {
		return nil, fmt.Errorf("--kubernetes-peers needs --api-advertise <pod>.<domain>:<port>: %w", err)
	}
	first, domain, ok := strings.Cut(host, ".")
	if !ok || first != p.name {
		return nil, fmt.Errorf("--kubernetes-peers needs --api-advertise <pod>.<domain>:<port> with this Pod's name %s, not %s", p.name, host)
	}
	return &kubepeers.Dialer{Client: p.client, Namespace: p.namespace, Domain: domain,
		Net: &net.Dialer{Timeout: 10 * time.Second}, Logger: log}, nil
}

// startPruner is --remove-scaled-down-members: while this member leads,
// members whose StatefulSet ordinal no longer exists leave Raft.
func (p *pod) startPruner(ctx context.Context, self string, m *member.Member, log *slog.Logger) (stop func(), err error) {
	ss, ok := kubepeers.StatefulSetOf(p.name)
	if !ok {
		return nil, fmt.Errorf("--remove-scaled-down-members: Pod %s is not <statefulset>-<ordinal>", p.name)
	}
	pr := &kubepeers.Pruner{Client: p.client, Namespace: p.namespace, StatefulSet: ss, Self: self,
		Members: raftMembers{m}, Interval: 5 * time.Second, Logger: log}
	if err := pr.Validate(); err != nil {
		return nil, err
	}
	return runUntilStopped(ctx, func(ctx context.Context) { m.Store().RunAsLeader(ctx, pr.Run) }), nil
}

// raftMembers is the Pruner's view of the Raft configuration.
type raftMembers struct{ m *member.Member }

func (r raftMembers) MemberIDs() ([]string, error) {
	ms, err := r.m.Store().Membership()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ms))
	for i, x := range ms {
		ids[i] = x.ID
	}
	return ids, nil
}

func (r raftMembers) RemoveMember(ctx context.Context, id string) error {
	return r.m.Store().RemoveMemberBecause(ctx, id, "the StatefulSet was scaled down past its ordinal")
}

// startPodLabel runs podlabel for --leader-label KEY: the member labels
// its own Pod KEY=true while it leads. The returned function stops it and
// waits (the label is set back to false). A member outside Kubernetes
// leaves the flag empty.
func (p *pod) startPodLabel(ctx context.Context, key string, m *member.Member, log *slog.Logger) (stop func(), err error) {
	cfg := podlabel.Config{Namespace: p.namespace, Name: p.name, Key: key, Client: p.client, Retry: 2 * time.Second, Logger: log}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return runUntilStopped(ctx, func(ctx context.Context) { podlabel.Run(ctx, cfg, m.Store().RunAsLeader) }), nil
}

// runUntilStopped runs fn in a goroutine; stop cancels its context and
// waits for it.
func runUntilStopped(ctx context.Context, fn func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	return func() { cancel(); <-done }
}
