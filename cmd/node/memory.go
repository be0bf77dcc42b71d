package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/viper"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/litek8s/litek8s/internal/memtune"
)

// startMemtune applies --memory-limit and --heap-headroom to this process
// (see package memtune).
func startMemtune(v *viper.Viper, log *slog.Logger) (*memtune.Tuner, error) {
	var cfg memtune.Config
	for _, f := range []struct {
		flag string
		to   *int64
	}{{"memory-limit", &cfg.Limit}, {"heap-headroom", &cfg.Headroom}} {
		s := v.GetString(f.flag)
		if s == "" {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() < 0 {
			return nil, fmt.Errorf("--%s %q: want a quantity of bytes such as 512Mi or 1G", f.flag, s)
		}
		*f.to = q.Value()
	}
	if v.GetString("memory-limit") == "0" {
		cfg.Limit = -1 // none, not even the cgroup's
	}
	t := memtune.Start(cfg)
	if l := t.Limit(); l > 0 {
		log.Info("memory limit set", "bytes", l)
	}
	return t, nil
}
