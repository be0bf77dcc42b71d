package clients

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Leader election timings: short, so that a takeover by expiry takes a
// few seconds, and loose enough for a -race run on a small machine.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 250 * time.Millisecond
	leaseName     = "copy-label-lock"
	ctrlNS        = "operators"

	labelSource = "clients.litek8s.io/source"
	labelCopy   = "clients.litek8s.io/copy"
	annotatedBy = "clients.litek8s.io/reconciled-by"
)

// copyLabel is a trivial reconciler: it copies a ConfigMap's source label
// to the copy label and notes which manager did it.
type copyLabel struct {
	client client.Client
	name   string
}

func (r *copyLabel) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.client.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	src, ok := cm.Labels[labelSource]
	if !ok || (cm.Labels[labelCopy] == src && cm.Annotations[annotatedBy] == r.name) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	cm.Labels[labelCopy] = src
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[annotatedBy] = r.name
	return ctrl.Result{}, r.client.Patch(ctx, &cm, patch)
}

// runningManager is a controller-runtime manager started in the background.
type runningManager struct {
	name   string
	mgr    ctrl.Manager
	cancel context.CancelFunc
	done   chan error // Start's result
}

// startManager starts a manager on member i with Lease leader election
// and the copyLabel controller for ConfigMaps in ctrlNS.
func startManager(t *testing.T, c *membertest.Cluster, i int, name string, releaseOnCancel bool) *runningManager {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(c.RESTConfig(i), ctrl.Options{
		Scheme:                        scheme,
		Logger:                        logr.Discard(),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionResourceLock:    "leases",
		LeaderElectionNamespace:       ctrlNS,
		LeaderElectionID:              leaseName,
		LeaderElectionReleaseOnCancel: releaseOnCancel,
		LeaseDuration:                 ptr.To(leaseDuration),
		RenewDeadline:                 ptr.To(renewDeadline),
		RetryPeriod:                   ptr.To(retryPeriod),
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{ctrlNS: {}}},
		// Two managers in one process register the same controller name.
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		GracefulShutdownTimeout: ptr.To(5 * time.Second),
	})
	if err != nil {
		t.Fatalf("manager %s: %v", name, err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("copy-label").For(&corev1.ConfigMap{}).
		Complete(&copyLabel{client: mgr.GetClient(), name: name}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &runningManager{name: name, mgr: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { m.stop(t) })
	return m
}

// stop cancels the manager's context and waits for Start to return.
func (m *runningManager) stop(t *testing.T) {
	t.Helper()
	if m.cancel == nil {
		return
	}
	m.cancel()
	m.cancel = nil
	select {
	case err := <-m.done:
		if err != nil {
			t.Errorf("manager %s: %v", m.name, err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("manager %s did not stop", m.name)
	}
}

func (m *runningManager) elected() bool {
	select {
	case <-m.mgr.Elected():
		return true
	default:
		return false
	}
}

// reconciledBy waits until the ConfigMap's copy label equals want and
// names the manager that reconciled it.
func reconciledBy(t *testing.T, c *membertest.Cluster, i int, name, want string) string {
	t.Helper()
	var by string
	membertest.Eventually(t, 30*time.Second, func() error {
		cm, err := c.Clientset(i).CoreV1().ConfigMaps(ctrlNS).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Labels[labelCopy] != want {
			return fmt.Errorf("%s: copy label %q, want %q (annotations %v)", name, cm.Labels[labelCopy], want, cm.Annotations)
		}
		by = cm.Annotations[annotatedBy]
		return nil
	})
	return by
}

func labelled(name, src string) *corev1.ConfigMap {
	cm := testConfigMap(name, nil)
	cm.Labels = map[string]string{labelSource: src}
	return cm
}

func getLease(ctx context.Context, c *membertest.Cluster, i int) (*coordinationv1.Lease, error) {
	return c.Clientset(i).CoordinationV1().Leases(ctrlNS).Get(ctx, leaseName, metav1.GetOptions{})
}

func holder(l *coordinationv1.Lease) string { return ptr.Deref(l.Spec.HolderIdentity, "") }

// Two controller-runtime managers on different members elect a leader
// through a coordination.k8s.io Lease; only the leader reconciles. When the
// leader's context is cancelled the other takes over — by lease expiry, or
// at once when the leader releases the lease — and reconciles new and
// changed objects.
func TestControllerRuntimeLeaderElection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release bool
	}{{"expiry", false}, {"release-on-cancel", true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := membertest.StartCluster(t, 3)
			ctx := t.Context()
			createNamespace(t, c.Clientset(2), ctrlNS)

			a := startManager(t, c, 0, "manager-a", tc.release)
			var idA string
			membertest.Eventually(t, 30*time.Second, func() error {
				l, err := getLease(ctx, c, 2)
				if err != nil {
					return err
				}
				if idA = holder(l); idA == "" || !a.elected() {
					return fmt.Errorf("lease held by %q, manager-a elected: %v", idA, a.elected())
				}
				return nil
			})
			b := startManager(t, c, 1, "manager-b", tc.release)

			if _, err := c.Clientset(2).CoreV1().ConfigMaps(ctrlNS).Create(ctx, labelled("before", "one"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if by := reconciledBy(t, c, 2, "before", "one"); by != "manager-a" {
				t.Errorf("before: reconciled by %q, want the leader manager-a", by)
			}
			// manager-b has synced its cache and keeps trying, without winning.
			if b.elected() {
				t.Fatalf("manager-b elected while manager-a holds the lease")
			}
			l, err := getLease(ctx, c, 1)
			if err != nil {
				t.Fatal(err)
			}
			if holder(l) != idA || ptr.Deref(l.Spec.LeaseDurationSeconds, 0) != int32(leaseDuration/time.Second) {
				t.Errorf("lease: holder %q duration %v, want %q %v", holder(l), ptr.Deref(l.Spec.LeaseDurationSeconds, 0), idA, leaseDuration)
			}
			transitions := ptr.Deref(l.Spec.LeaseTransitions, 0)

			stopped := time.Now()
			a.stop(t)
			if !tc.release {
				l, err := getLease(ctx, c, 2)
				if err != nil {
					t.Fatal(err)
				}
				if h := holder(l); h != idA && time.Since(stopped) < leaseDuration/2 {
					t.Errorf("lease holder %q right after manager-a stopped without releasing, want %q", h, idA)
				}
			}
			membertest.Eventually(t, 30*time.Second, func() error {
				if !b.elected() {
					return errors.New("manager-b not elected")
				}
				return nil
			})
			takeover := time.Since(stopped)
			t.Logf("manager-b took over %v after manager-a stopped", takeover.Round(time.Millisecond))
			if !tc.release && takeover < leaseDuration-2*retryPeriod {
				t.Errorf("takeover after %v, before the lease (%v) could expire", takeover, leaseDuration)
			}
			if tc.release && takeover >= leaseDuration {
				t.Errorf("takeover after %v although manager-a released the lease (duration %v)", takeover, leaseDuration)
			}
			membertest.Eventually(t, 10*time.Second, func() error {
				l, err := getLease(ctx, c, 0)
				if err != nil {
					return err
				}
				if h := holder(l); h == "" || h == idA || ptr.Deref(l.Spec.LeaseTransitions, 0) != transitions+1 {
					return fmt.Errorf("lease held by %q after %d transitions, want manager-b after %d", h, ptr.Deref(l.Spec.LeaseTransitions, 0), transitions+1)
				}
				return nil
			})

			if _, err := c.Clientset(0).CoreV1().ConfigMaps(ctrlNS).Create(ctx, labelled("after", "two"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if by := reconciledBy(t, c, 2, "after", "two"); by != "manager-b" {
				t.Errorf("after: reconciled by %q, want the new leader manager-b", by)
			}
			retryWrite(t, "update before", func(ctx context.Context) error {
				cm, err := c.Clientset(2).CoreV1().ConfigMaps(ctrlNS).Get(ctx, "before", metav1.GetOptions{})
				if err != nil {
					return err
				}
				cm.Labels[labelSource] = "three"
				_, err = c.Clientset(2).CoreV1().ConfigMaps(ctrlNS).Update(ctx, cm, metav1.UpdateOptions{})
				return err // a Conflict with the reconciler is retried
			})
			if by := reconciledBy(t, c, 0, "before", "three"); by != "manager-b" {
				t.Errorf("before after the takeover: reconciled by %q, want manager-b", by)
			}
			b.stop(t)
			c.SameObjects(ctx, "/api/v1/configmaps", "/apis/coordination.k8s.io/v1/leases")
		})
	}
}
