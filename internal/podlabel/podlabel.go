package podlabel

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// DefaultKey is the label the chart's leader Service selects on.
const DefaultKey = "litek8s.io/leader"

// Config says which Pod to label, and how.
type Config struct {
	// Namespace and Name are the member's own Pod (from the downward API:
	// POD_NAMESPACE, POD_NAME).
	Namespace, Name string
	// Key is the label; its value is "true" while the member leads and
	// "false" otherwise.
	Key string
	// Client reaches the Kubernetes API the Pod lives in.
	Client kubernetes.Interface
	// Retry is how long to wait before retrying a failed patch.
	Retry  time.Duration
	Logger *slog.Logger
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.Namespace == "" || c.Name == "" || c.Key == "":
		return errors.New("podlabel: Namespace, Name and Key are required")
	case c.Client == nil || c.Logger == nil:
		return errors.New("podlabel: Client and Logger are required")
	case c.Retry <= 0:
		return errors.New("podlabel: Retry must be positive")
	}
	return nil
}

// RunAsLeader calls fn while the member leads (raftstore.Store.RunAsLeader).
type RunAsLeader func(ctx context.Context, fn func(ctx context.Context))

// Run labels the Pod "false", then "true" for as long as each term of
// leadership lasts, until ctx ends.
func Run(ctx context.Context, cfg Config, lead RunAsLeader) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	l := &labeler{cfg: cfg}
	l.set(ctx, false)
	lead(ctx, func(term context.Context) {
		l.set(term, true)
		<-term.Done()
		// The term ended (or the member stops): say so at once, with a
		// context of its own.
		off, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l.set(off, false)
		cancel()
	})
	return nil
}

type labeler struct{ cfg Config }

// set patches the label until it succeeds or ctx ends.
func (l *labeler) set(ctx context.Context, leader bool) {
	value := "false"
	if leader {
		value = "true"
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{l.cfg.Key: value}}})
	for {
		_, err := l.cfg.Client.CoreV1().Pods(l.cfg.Namespace).Patch(ctx, l.cfg.Name, types.StrategicMergePatchType,
			patch, metav1.PatchOptions{FieldManager: "litek8s-member"})
		if err == nil {
			l.cfg.Logger.Info("pod labelled", "pod", l.cfg.Namespace+"/"+l.cfg.Name, l.cfg.Key, value)
			return
		}
		l.cfg.Logger.Warn("labelling the pod", "pod", l.cfg.Namespace+"/"+l.cfg.Name, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(l.cfg.Retry):
		}
	}
}
