package admission

import (
	"context"
	"sync"

	"k8s.io/apiserver/pkg/warning"
)

// WithWarnings returns ctx with kube's warning recorder set: a plugin's
// warning.AddWarning(ctx, …) reaches add. Validating plugins may warn
// concurrently; add is called under a lock.
func WithWarnings(ctx context.Context, add func(text string)) context.Context {
	return warning.WithWarningRecorder(ctx, &recorder{add: add})
}

type recorder struct {
	mu  sync.Mutex // serialises add
	add func(string)
}

func (r *recorder) AddWarning(_, text string) {
	if text == "" {
		return
	}
	r.mu.Lock()
	r.add(text)
	r.mu.Unlock()
}
