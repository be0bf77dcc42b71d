package cronjob

import (
	"context"
	"fmt"
	"log/slog"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is kube's name of the controller; its writes use it as client name
// and its events as source.
const Name = "cronjob-controller"

var kind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of CronJobs synced at once
	// (kube's --concurrent-cron-job-syncs); RetryBase and RetryMax bound
	// the per-CronJob backoff of failed syncs.
	kit.LoopConfig
	// Clock tells the time the schedules are compared with and measures
	// the queue's delays (nil: the real clock). Tests pass a clock that
	// runs faster, as kube's controller takes one for its tests.
	Clock clock.WithTicker
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(5)}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("cronjob: %w", err)
	}
	return nil
}

type controller struct {
	client   kubernetes.Interface
	events   record.EventRecorder
	cronJobs batchlisters.CronJobLister
	jobs     batchlisters.JobLister
	clock    clock.WithTicker
	loop     *kit.Loop
	log      *slog.Logger
}

// New builds the term's CronJob controller on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := &controller{client: kc.Client(Name), events: kc.Recorder(Name),
		cronJobs: batchlisters.NewCronJobLister(kc.Informers.CronJobs().GetIndexer()),
		jobs:     batchlisters.NewJobLister(kc.Informers.Jobs().GetIndexer()),
		clock:    clk, log: kc.Log.With("controller", Name)}
	c.loop = kit.NewLoopAfter(kc, Name, cfg.LoopConfig, clk, c.sync)
	kc.Informers.CronJobs().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.Enqueue,
		UpdateFunc: c.cronJobUpdated,
		DeleteFunc: c.loop.Enqueue,
	})
	kc.Informers.Jobs().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.jobChanged,
		UpdateFunc: kit.OnUpdate(func(o, j *batchv1.Job) {
			c.jobChanged(o)
			c.jobChanged(j)
		}),
		DeleteFunc: c.jobChanged,
	})
	return c
}

func (c *controller) Name() string { return "cronjob" }

// Run works until ctx ends, then shuts the queue down and waits for the
// workers.
func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

// cronJobUpdated queues a CronJob at once, or, when its schedule or time
// zone changed, at its next time under the new schedule (kube's
// updateCronJob).
func (c *controller) cronJobUpdated(old, cur any) {
	o, cj := old.(*batchv1.CronJob), cur.(*batchv1.CronJob)
	if o.Spec.Schedule == cj.Spec.Schedule && equalPtr(o.Spec.TimeZone, cj.Spec.TimeZone) {
		c.loop.Enqueue(cj)
		return
	}
	sched, err := parseSchedule(scheduleLine(cj))
	if err != nil {
		c.events.Eventf(cj, corev1.EventTypeWarning, "UnParseableCronJobSchedule", "unparseable schedule for cronjob: %s", cj.Spec.Schedule)
		return
	}
	if key, err := cache.MetaNamespaceKeyFunc(cj); err == nil {
		c.loop.Queue.AddAfter(key, nextDelay(cj, c.clock.Now(), sched))
	}
}

// jobChanged queues the CronJob controlling job, if any.
func (c *controller) jobChanged(obj any) {
	job, ok := kit.Tombstone[*batchv1.Job](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(job)
	if ref == nil || ref.Kind != kind.Kind || ref.APIVersion != kind.GroupVersion().String() {
		return
	}
	cj, err := c.cronJobs.CronJobs(job.Namespace).Get(ref.Name)
	if err != nil || cj.UID != ref.UID {
		return
	}
	c.loop.Enqueue(cj)
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
