package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// scenario is one line of the table.
type scenario struct {
	name string
	// optional scenarios run only when named with -scenario or asked for
	// by their flag (create_1member: -compare-single).
	optional bool
	// skip says why the scenario cannot run with these options, or "".
	skip func(b *bench) string
	// prepare runs once, untimed, before the warm-up and the runs.
	prepare func(ctx context.Context, b *bench) (*prepared, error)
}

// prepared is a scenario ready to run.
type prepared struct {
	// run runs the scenario once for d; id ("w" for the warm-up, "r1", …)
	// keeps the names it creates unique across runs. It returns every
	// op's latency and the time the run took.
	run func(ctx context.Context, id string, d time.Duration) ([]time.Duration, time.Duration, error)
	// warmup asks for an untimed run of -warmup before the first run.
	warmup bool
	// close releases what prepare set up; nil when there is nothing.
	close func() error
}

// loop is a prepared closed-loop scenario: ops(id) returns one op per
// client for the run id.
func loop(ops func(id string) ([]op, error)) *prepared {
	return &prepared{warmup: true, run: func(ctx context.Context, id string, d time.Duration) ([]time.Duration, time.Duration, error) {
		o, err := ops(id)
		if err != nil {
			return nil, 0, err
		}
		return closedLoop(ctx, o, d)
	}}
}

// scenarios are every scenario in the order they run: issue 4's list,
// then the static baselines, then the optional ones.
var scenarios = []scenario{
	{name: "get", prepare: prepareGet},
	{name: "create", prepare: prepareCreate},
	{name: "patch", prepare: preparePatch},
	{name: "update", prepare: prepareUpdate},
	{name: "list_all", prepare: prepareListAll},
	{name: "list_selector", prepare: prepareListSelector},
	{name: "list_table", prepare: prepareListTable},
	{name: "list_paged", prepare: prepareListPaged},
	{name: "watch_latency", prepare: prepareWatchLatency},
	{name: "watch_fanout", prepare: prepareWatchFanout},
	{name: "follower_list", skip: needsFollower, prepare: prepareFollowerList},
	{name: "schedule", skip: needsNodes, prepare: prepareSchedule},
	{name: "static", prepare: prepareStatic},
	{name: "static_selector", prepare: prepareStaticSelector},
	{name: "create_1member", optional: true, skip: needsSeveralMembers, prepare: prepareCreateSingle},
}

func needsFollower(b *bench) string {
	if b.opts.members < 2 {
		return "needs a follower (-members 3)"
	}
	return ""
}

func needsNodes(b *bench) string {
	if b.opts.simNodes < 1 {
		return "needs simulated nodes (-simulated-nodes)"
	}
	return ""
}

func needsSeveralMembers(b *bench) string {
	if b.opts.members < 2 {
		return "the cluster has 1 member already: create is the 1-member figure"
	}
	return ""
}

// selectScenarios resolves -scenario: "all", or names separated by commas.
func selectScenarios(spec string, compareSingle bool) ([]scenario, error) {
	if spec == "" || spec == "all" {
		var out []scenario
		for _, s := range scenarios {
			if !s.optional || (s.name == "create_1member" && compareSingle) {
				out = append(out, s)
			}
		}
		return out, nil
	}
	want := strings.Split(spec, ",")
	if compareSingle && !slices.Contains(want, "create_1member") {
		want = append(want, "create_1member")
	}
	var out []scenario
	for _, name := range want {
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(scenarioNames(), ", "))
		}
		if !slices.ContainsFunc(out, func(s scenario) bool { return s.name == scenarios[i].name }) {
			out = append(out, scenarios[i])
		}
	}
	// keep the canonical order whatever the order of the flag
	slices.SortStableFunc(out, func(a, b scenario) int { return scenarioIndex(a.name) - scenarioIndex(b.name) })
	return out, nil
}

func scenarioIndex(name string) int {
	return slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == name })
}

func scenarioNames() []string {
	var names []string
	for _, s := range scenarios {
		names = append(names, s.name)
	}
	return names
}
