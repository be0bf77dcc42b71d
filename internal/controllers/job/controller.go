package job

import (
	"context"
	"fmt"
	"log/slog"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/workload"
)

// Name is kube's name of the controller; its writes use it as client name.
const Name = "job-controller"

var kind = batchv1.SchemeGroupVersion.WithKind("Job")

// Config configures the controller. Start from DefaultConfig.
type Config struct {
	// LoopConfig: Workers is the number of Jobs synced at once (kube's
	// --concurrent-job-syncs); RetryBase and RetryMax bound the per-Job
	// backoff of failed syncs.
	kit.LoopConfig
}

// DefaultConfig returns kube's defaults.
func DefaultConfig() Config {
	return Config{LoopConfig: kit.DefaultLoopConfig(5)}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if err := c.LoopConfig.Validate(); err != nil {
		return fmt.Errorf("job: %w", err)
	}
	return nil
}

type controller struct {
	client kubernetes.Interface
	events record.EventRecorder
	jobs   batchlisters.JobLister
	pods   corelisters.PodLister
	exp    *workload.Expectations
	loop   *kit.Loop
	log    *slog.Logger
}

// New builds the term's Job controller on kc's informers.
func New(kc *kit.Context, cfg Config) kit.Controller {
	c := &controller{client: kc.Client(Name), events: kc.Recorder(Name),
		jobs: batchlisters.NewJobLister(kc.Informers.Jobs().GetIndexer()),
		pods: corelisters.NewPodLister(kc.Informers.Pods().GetIndexer()),
		exp:  workload.NewExpectations(), log: kc.Log.With("controller", Name)}
	c.loop = kit.NewLoop(kc, Name, cfg.LoopConfig, c.sync)
	kc.Informers.Jobs().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.Enqueue,
		UpdateFunc: func(_, obj any) { c.loop.Enqueue(obj) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.exp.Forget(key)
			}
		},
	})
	kc.Informers.Pods().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod := obj.(*corev1.Pod); pod.DeletionTimestamp != nil {
				c.podGone(pod)
			} else if key := c.owner(pod); key != "" {
				c.exp.CreationObserved(key)
				c.loop.Queue.Add(key)
			} else if metav1.GetControllerOfNoCopy(pod) == nil {
				c.enqueueMatching(pod)
			}
		},
		UpdateFunc: kit.OnUpdate(func(o, p *corev1.Pod) {
			if p.DeletionTimestamp != nil && o.DeletionTimestamp == nil {
				c.podGone(p)
			}
			for _, pod := range []*corev1.Pod{o, p} {
				if key := c.owner(pod); key != "" {
					c.loop.Queue.Add(key)
				}
			}
			if metav1.GetControllerOfNoCopy(p) == nil {
				c.enqueueMatching(p)
			}
		}),
		DeleteFunc: func(obj any) {
			if pod, ok := kit.Tombstone[*corev1.Pod](obj); ok {
				c.podGone(pod)
			}
		},
	})
	return c
}

func (c *controller) Name() string { return "job" }

func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

func (c *controller) owner(pod *corev1.Pod) string {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != kind.Kind || ref.APIVersion != kind.GroupVersion().String() {
		return ""
	}
	job, err := c.jobs.Jobs(pod.Namespace).Get(ref.Name)
	if err != nil || job.UID != ref.UID {
		return ""
	}
	return pod.Namespace + "/" + job.Name
}

func (c *controller) podGone(pod *corev1.Pod) {
	if key := c.owner(pod); key != "" {
		c.exp.DeletionObserved(key, pod.Namespace+"/"+pod.Name)
		c.loop.Queue.Add(key)
	}
}

func (c *controller) enqueueMatching(pod *corev1.Pod) {
	jobs, _ := c.jobs.Jobs(pod.Namespace).List(labels.Everything())
	workload.EnqueueSelecting(jobs, func(j *batchv1.Job) *metav1.LabelSelector { return j.Spec.Selector }, pod.Labels, c.loop.Enqueue)
}
