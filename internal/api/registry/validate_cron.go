package registry

import (
	"fmt"

	"github.com/robfig/cron/v3"
)

// parseCronSchedule checks a schedule with the standard cron parser kube
// uses (five fields of values, ranges, steps, lists, "*" and "?", or a
// descriptor such as @daily or @every 1h; an optional TZ= or CRON_TZ=
// prefix), with its messages. The parser panics on some malformed lines
// ("TZ=UTC" alone), which become errors, as kube recovers them.
func parseCronSchedule(s string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	_, err = cron.ParseStandard(s)
	return err
}
