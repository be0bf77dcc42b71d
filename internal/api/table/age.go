package table

import (
	"strconv"
	"time"
)

// appendAge appends, as the contents of a JSON string, the age of t at now
// the way kubectl shows ages ("19s", "3m29s", "5h", "3d4h", "<unknown>" for
// a zero t) without allocating: the same rules as apimachinery's
// duration.HumanDuration (checked against it in age_test.go). < and > are
// escaped as encoding/json does.
func appendAge(dst []byte, t, now time.Time) []byte {
	if t.IsZero() {
		return append(dst, `\u003cunknown\u003e`...)
	}
	return appendHumanDuration(dst, now.Sub(t))
}

// appendHumanDuration: below two minutes seconds; below ten minutes
// minutes and seconds; below three hours minutes; below eight hours hours
// and minutes; below two days hours; below eight days days and hours; below
// two years days; below eight years years and days; then years.
func appendHumanDuration(dst []byte, d time.Duration) []byte {
	secs := int64(d.Seconds())
	switch {
	case secs < -1:
		return append(dst, `\u003cinvalid\u003e`...)
	case secs < 0:
		return append(dst, "0s"...)
	case secs < 120:
		return unit(dst, secs, 's')
	}
	mins, hours := int64(d/time.Minute), int64(d/time.Hour)
	days := hours / 24
	switch {
	case mins < 10:
		return pair(dst, mins, 'm', int64(d/time.Second)%60, 's')
	case mins < 180:
		return unit(dst, mins, 'm')
	case hours < 8:
		return pair(dst, hours, 'h', mins%60, 'm')
	case hours < 48:
		return unit(dst, hours, 'h')
	case hours < 24*8:
		return pair(dst, days, 'd', hours%24, 'h')
	case hours < 24*365*2:
		return unit(dst, days, 'd')
	case hours < 24*365*8:
		return pair(dst, days/365, 'y', days%365, 'd')
	}
	return unit(dst, days/365, 'y')
}

func unit(dst []byte, n int64, u byte) []byte {
	return append(strconv.AppendInt(dst, n, 10), u)
}

// pair appends "<a><ua><b><ub>", leaving out the second part when b is 0.
func pair(dst []byte, a int64, ua byte, b int64, ub byte) []byte {
	dst = unit(dst, a, ua)
	if b == 0 {
		return dst
	}
	return unit(dst, b, ub)
}
