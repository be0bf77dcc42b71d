package install

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/test/fault"
)

// loadNS is the litek8s namespace the load writes ConfigMaps in.
const loadNS = "default"

// load writes new ConfigMaps through the client Service until stopped,
// recording every write's outcome in a fault.History.
type load struct {
	hist   fault.History
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// outcome classifies a write's error as its client saw it.
func outcome(err error) fault.Outcome {
	var st apierrors.APIStatus
	switch {
	case err == nil:
		return fault.OK
	case errors.As(err, &st):
		switch code := st.Status().Code; {
		case code == 409 || code == 422 || code == 400 || code == 403 || code == 404:
			return fault.Failed
		}
	}
	return fault.Unknown
}

// startLoad starts writers clients writing one ConfigMap after another.
func startLoad(ctx context.Context, cfg *rest.Config, writers int) (*load, error) {
	l := &load{}
	ctx, l.cancel = context.WithCancel(ctx)
	for w := range writers {
		c := rest.CopyConfig(cfg)
		c.Timeout = 5 * time.Second
		// A new connection per writer: the Service spreads them.
		c.Dial = (&net.Dialer{Timeout: 3 * time.Second}).DialContext
		cs, err := kubernetes.NewForConfig(c)
		if err != nil {
			return nil, err
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			client := "w" + strconv.Itoa(w)
			for n := 0; ctx.Err() == nil; n++ {
				name := fmt.Sprintf("%s-%d", client, n)
				op := fault.Op{Client: client, Member: "service", Key: loadNS + "/" + name, Start: time.Now()}
				cm, err := cs.CoreV1().ConfigMaps(loadNS).Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"load": "install"}},
					Data:       map[string]string{"n": strconv.Itoa(n)}}, metav1.CreateOptions{})
				op.End, op.Outcome = time.Now(), outcome(err)
				if ctx.Err() != nil && err != nil {
					op.Outcome = fault.Unknown // cut off by the stop
				}
				if op.Outcome == fault.OK {
					op.RV, _ = strconv.ParseUint(cm.ResourceVersion, 10, 64)
				} else {
					op.Err = err.Error()
					time.Sleep(100 * time.Millisecond)
				}
				l.hist.Add(op)
			}
		}()
	}
	return l, nil
}

// stop ends the writers and waits for them.
func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

// firstAckAfter waits until a write started at or after t0 is
// acknowledged and returns how long after t0 it was.
func (l *load) firstAckAfter(ctx context.Context, t0 time.Time, limit time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if d, ok := l.hist.FirstAckAfter(t0); ok {
			return d, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("no write acknowledged within %s", limit)
}

// state lists what one member holds of the load: key → resourceVersion.
func state(ctx context.Context, cfg *rest.Config) (fault.State, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	l, err := cs.CoreV1().ConfigMaps(loadNS).List(ctx, metav1.ListOptions{LabelSelector: "load=install"})
	if err != nil {
		return nil, err
	}
	s := fault.State{}
	for _, cm := range l.Items {
		rv, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64)
		s[loadNS+"/"+cm.Name] = rv
	}
	return s, nil
}
