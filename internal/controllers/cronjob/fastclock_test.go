package cronjob_test

import (
	"time"

	"k8s.io/utils/clock"
)

// fastClock is a real clock that runs speed times faster from start: a
// minute of schedule passes in a second when speed is 60. Its timers and
// tickers are real ones over the shortened durations, so the controller's
// delaying queue wakes at the fast time.
type fastClock struct {
	start time.Time
	speed time.Duration
}

var _ clock.WithTicker = fastClock{}

func (c fastClock) Now() time.Time                  { return c.start.Add(time.Since(c.start) * c.speed) }
func (c fastClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c fastClock) real(d time.Duration) time.Duration {
	return max(d/c.speed, time.Nanosecond)
}
func (c fastClock) After(d time.Duration) <-chan time.Time { return time.After(c.real(d)) }
func (c fastClock) Sleep(d time.Duration)                  { time.Sleep(c.real(d)) }
func (c fastClock) Tick(d time.Duration) <-chan time.Time  { return time.Tick(c.real(d)) }
func (c fastClock) NewTimer(d time.Duration) clock.Timer {
	return fastTimer{t: time.NewTimer(c.real(d)), c: c}
}
func (c fastClock) NewTicker(d time.Duration) clock.Ticker {
	return fastTicker{time.NewTicker(c.real(d))}
}

type fastTimer struct {
	t *time.Timer
	c fastClock
}

func (t fastTimer) C() <-chan time.Time        { return t.t.C }
func (t fastTimer) Stop() bool                 { return t.t.Stop() }
func (t fastTimer) Reset(d time.Duration) bool { return t.t.Reset(t.c.real(d)) }

type fastTicker struct{ t *time.Ticker }

func (t fastTicker) C() <-chan time.Time { return t.t.C }
func (t fastTicker) Stop()               { t.t.Stop() }
