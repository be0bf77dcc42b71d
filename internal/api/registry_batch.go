package api

import (
	batchv1 "k8s.io/api/batch/v1"
)

// batchKinds are the served kinds of batch/v1.
func batchKinds() []*resource {
	return []*resource{
		{Group: "batch", Version: "v1", Resource: "jobs", Singular: "job", Kind: "Job", Namespaced: true,
			Categories: []string{"all"}, HasGeneration: true,
			New: newOf[batchv1.Job](), NewList: newOf[batchv1.JobList](), Prepare: prepareJob, Normalize: defaultJob,
			Status: true, Validate: validateJob},
		{Group: "batch", Version: "v1", Resource: "cronjobs", Singular: "cronjob", Kind: "CronJob", Namespaced: true,
			ShortNames: []string{"cj"}, Categories: []string{"all"}, HasGeneration: true,
			New: newOf[batchv1.CronJob](), NewList: newOf[batchv1.CronJobList](), Prepare: prepareCronJob,
			Normalize: defaultCronJob, Status: true, Validate: validateCronJob},
	}
}
