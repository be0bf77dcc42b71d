package registry

import (
	batchv1 "k8s.io/api/batch/v1"
)

// batchKinds are the served kinds of batch/v1.
func batchKinds() []*Resource {
	return []*Resource{
		{Group: "batch", Version: "v1", Resource: "jobs", Singular: "job", Kind: "Job", Namespaced: true,
			Categories: []string{"all"}, HasGeneration: true,
			New: NewOf[batchv1.Job](), NewList: NewOf[batchv1.JobList](), Prepare: prepareJob, Normalize: defaultJob,
			Status: true, Validate: validateJob},
		{Group: "batch", Version: "v1", Resource: "cronjobs", Singular: "cronjob", Kind: "CronJob", Namespaced: true,
			ShortNames: []string{"cj"}, Categories: []string{"all"}, HasGeneration: true,
			New: NewOf[batchv1.CronJob](), NewList: NewOf[batchv1.CronJobList](), Prepare: prepareCronJob,
			Normalize: defaultCronJob, Status: true, Validate: validateCronJob},
	}
}
