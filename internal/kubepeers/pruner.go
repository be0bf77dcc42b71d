package kubepeers

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Members is the part of the Raft configuration the Pruner needs.
type Members interface {
	// MemberIDs lists the members of the configuration.
	MemberIDs() ([]string, error)
	// RemoveMember removes one.
	RemoveMember(ctx context.Context, id string) error
}

// Pruner removes members whose StatefulSet ordinal no longer exists.
type Pruner struct {
	Client kubernetes.Interface
	// Namespace and StatefulSet name the members' StatefulSet; its Pods
	// (and the members' IDs) are <StatefulSet>-<ordinal>.
	Namespace, StatefulSet string
	// Self is this member's ID: never removed (a leader that is scaled
	// away hands leadership over on SIGTERM; the next leader removes it).
	Self     string
	Members  Members
	Interval time.Duration
	Logger   *slog.Logger
}

// Validate reports the first missing setting.
func (p *Pruner) Validate() error {
	if p.Client == nil || p.Namespace == "" || p.StatefulSet == "" || p.Self == "" || p.Members == nil ||
		p.Interval <= 0 || p.Logger == nil {
		return errors.New("kubepeers: the Pruner needs Client, Namespace, StatefulSet, Self, Members, Interval and Logger")
	}
	return nil
}

// Run prunes every Interval until ctx ends (run it while leading).
func (p *Pruner) Run(ctx context.Context) {
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	for {
		if err := p.Prune(ctx); err != nil && ctx.Err() == nil {
			p.Logger.Warn("removing scaled-down members", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Prune removes, once, every member whose ordinal is at or above the
// StatefulSet's replicas.
func (p *Pruner) Prune(ctx context.Context) error {
	ss, err := p.Client.AppsV1().StatefulSets(p.Namespace).Get(ctx, p.StatefulSet, metav1.GetOptions{})
	if err != nil {
		return err
	}
	replicas := 1
	if ss.Spec.Replicas != nil {
		replicas = int(*ss.Spec.Replicas)
	}
	ids, err := p.Members.MemberIDs()
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		n, ok := Ordinal(p.StatefulSet, id)
		if !ok || n < replicas || id == p.Self {
			continue
		}
		p.Logger.Info("removing a member the StatefulSet was scaled down past", "member", id, "replicas", replicas)
		if err := p.Members.RemoveMember(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Ordinal is n when id is <statefulSet>-<n>.
func Ordinal(statefulSet, id string) (int, bool) {
	s, ok := strings.CutPrefix(id, statefulSet+"-")
	if !ok || s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// StatefulSetOf is the StatefulSet name of Pod pod (<name>-<ordinal>).
func StatefulSetOf(pod string) (string, bool) {
	i := strings.LastIndexByte(pod, '-')
	if i <= 0 {
		return "", false
	}
	_, ok := Ordinal(pod[:i], pod)
	return pod[:i], ok
}
