package table

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// appendHumanDuration must render exactly what apimachinery does.
func TestAppendHumanDurationMatchesApimachinery(t *testing.T) {
	var ds []time.Duration
	for s := int64(-5); s < 3*3600; s += 7 {
		ds = append(ds, time.Duration(s)*time.Second+time.Duration(s%3)*300*time.Millisecond)
	}
	for h := int64(0); h < 24*365*10; h += 5 {
		ds = append(ds, time.Duration(h)*time.Hour+time.Duration(h%60)*time.Minute)
	}
	for _, d := range ds {
		want := strings.ReplaceAll(strings.ReplaceAll(duration.HumanDuration(d), "<", `\u003c`), ">", `\u003e`)
		if got := string(appendHumanDuration(nil, d)); got != want {
			t.Fatalf("%v: got %q, want %q", d, got, want)
		}
	}
}

func TestAppendAgeUnknown(t *testing.T) {
	if got := string(appendAge(nil, time.Time{}, time.Now())); got != `\u003cunknown\u003e` {
		t.Fatalf("got %q", got)
	}
}
