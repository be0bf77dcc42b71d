package api

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cronFields are the bounds of the five fields of a standard cron
// schedule, and the names a month or day of the week may be given by.
var cronFields = []struct {
	name     string
	min, max int
	names    []string
}{
	{"minute", 0, 59, nil},
	{"hour", 0, 23, nil},
	{"day of month", 1, 31, nil},
	{"month", 1, 12, []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{"day of week", 0, 6, []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// parseCronSchedule checks a schedule as the standard cron parser kube
// uses does (five fields of values, ranges, steps, lists, "*" and "?", or
// a descriptor such as @daily or @every 1h), with its messages.
func parseCronSchedule(s string) error {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		zone, rest, _ := strings.Cut(s, " ")
		if _, err := time.LoadLocation(zone[strings.Index(zone, "=")+1:]); err != nil {
			return fmt.Errorf("provided bad location %s: %v", zone[strings.Index(zone, "=")+1:], err)
		}
		s = strings.TrimSpace(rest)
	}
	if strings.HasPrefix(s, "@") {
		switch {
		case s == "@yearly", s == "@annually", s == "@monthly", s == "@weekly", s == "@daily", s == "@midnight", s == "@hourly":
			return nil
		case strings.HasPrefix(s, "@every "):
			if _, err := time.ParseDuration(s[len("@every "):]); err != nil {
				return fmt.Errorf("failed to parse duration %s: %s", s, err)
			}
			return nil
		}
		return fmt.Errorf("unrecognized descriptor: %s", s)
	}
	fields := strings.Fields(s)
	if len(fields) != len(cronFields) {
		return fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	for i, f := range fields {
		for _, item := range strings.Split(f, ",") {
			if err := parseCronItem(item, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseCronItem checks one comma-separated item of field i:
// "*", "?", "a", "a-b", each optionally "/step".
func parseCronItem(item string, i int) error {
	f := cronFields[i]
	rangeAndStep := strings.Split(item, "/")
	if len(rangeAndStep) > 2 {
		return fmt.Errorf("too many slashes: %s", item)
	}
	if rangeAndStep[0] != "*" && rangeAndStep[0] != "?" {
		bounds := strings.Split(rangeAndStep[0], "-")
		if len(bounds) > 2 {
			return fmt.Errorf("too many hyphens: %s", item)
		}
		lo, err := cronValue(bounds[0], f.names)
		if err != nil {
			return err
		}
		hi := lo
		if len(bounds) == 2 {
			if hi, err = cronValue(bounds[1], f.names); err != nil {
				return err
			}
		}
		switch {
		case lo < f.min:
			return fmt.Errorf("beginning of range (%d) below minimum (%d): %s", lo, f.min, item)
		case hi > f.max:
			return fmt.Errorf("end of range (%d) above maximum (%d): %s", hi, f.max, item)
		case lo > hi:
			return fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", lo, hi, item)
		}
	}
	if len(rangeAndStep) == 2 {
		step, err := cronValue(rangeAndStep[1], nil)
		if err != nil {
			return err
		}
		if step == 0 {
			return fmt.Errorf("step of range should be a positive number: %s", item)
		}
	}
	return nil
}

// cronValue parses a number, or a month or weekday name.
func cronValue(s string, names []string) (int, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			if len(names) == 12 {
				return i + 1, nil
			}
			return i, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %w", s, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, s)
	}
	return n, nil
}
