package report

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/litek8s/litek8s/bench/internal/stats"
)

// SchemaVersion is the version of the JSON format written by api_load.
const SchemaVersion = 1

// Report is everything one api_load invocation measured.
type Report struct {
	Schema  int     `json:"schema"`
	Date    string  `json:"date"` // RFC 3339, when the run started
	Note    string  `json:"note,omitempty"`
	Machine Machine `json:"machine"`
	Config  Config  `json:"config"`
	Fill    *Fill   `json:"fill,omitempty"`
	Memory  *Memory `json:"memory,omitempty"`
	// MemberMemory is each member process's memory after the fill and at
	// the end of the run (-processes only).
	MemberMemory []MemberMemory `json:"member_memory,omitempty"`
	// Ops are the operations -ops ran after the scenarios (-processes
	// only).
	Ops *Ops `json:"ops,omitempty"`
	// Scenarios in the order they ran; skipped ones carry Skipped.
	Scenarios []Scenario `json:"scenarios"`
	Targets   []Target   `json:"targets,omitempty"`
	IdleRSS   *IdleRSS   `json:"idle_rss,omitempty"`
	// ControllerResyncs is how often the controllers' informers relisted
	// because they fell behind the change feed, all members, whole run.
	ControllerResyncs uint64   `json:"controller_resyncs"`
	Warnings          []string `json:"warnings,omitempty"`
}

// Machine describes where the figures were measured.
type Machine struct {
	Hostname  string  `json:"hostname"`
	CPUModel  string  `json:"cpu_model"`
	CPUs      int     `json:"cpus"`
	GOOS      string  `json:"goos"`
	GOARCH    string  `json:"goarch"`
	GoVersion string  `json:"go_version"`
	LoadAvg1  float64 `json:"loadavg_1m_at_start"`
}

// Config is the api_load flags that shape the figures.
type Config struct {
	Members  int    `json:"members"`
	Clients  int    `json:"clients"`
	Objects  int    `json:"objects"`
	Watchers int    `json:"watchers"`
	Runs     int    `json:"runs"`
	Duration string `json:"duration"`
	// Processes is true when the members were `node` processes
	// (-processes) rather than members in api_load's process.
	Processes bool `json:"processes,omitempty"`
	// RaftTimeouts says the members' Raft timeouts: "x4" for
	// -raft-timeout-scale 4, "node defaults" with -processes (node has no
	// flags for them).
	RaftTimeouts string `json:"raft_timeouts,omitempty"`
}

// Fill is the creation of the -objects ConfigMaps the list scenarios read.
type Fill struct {
	Objects   int     `json:"objects"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// ObjectBytes is one ConfigMap's JSON as a GET returns it (api_load
	// pads them to 700); in a list each item is 36 bytes shorter (no kind,
	// no apiVersion).
	ObjectBytes   int   `json:"object_bytes"`
	StoredBytes   int64 `json:"stored_json_bytes"` // Objects × ObjectBytes: what each member holds
	ListItemBytes int64 `json:"list_item_bytes"`   // the items of one list_all response
	ListBytes     int   `json:"list_all_bytes"`    // one list_all response
	SelectorBytes int   `json:"list_selector_bytes"`
}

// Memory is the Go heap of the process that runs every in-process member
// and the load clients: members share one process, so there is no
// per-member RSS (target 8 divides the live heap by the member count).
type Memory struct {
	Members           int    `json:"members"`
	HeapLiveAfterFill uint64 `json:"heap_live_bytes_after_fill"` // after a forced GC
	HeapLiveAtEnd     uint64 `json:"heap_live_bytes_at_end"`     // after a forced GC
	GoMappedAtEnd     uint64 `json:"go_mapped_bytes_at_end"`     // runtime memory not released to the OS
}

// IdleRSS is target 9: one member process with an empty data dir.
type IdleRSS struct {
	WaitSeconds float64 `json:"wait_seconds"`
	ProcMemory
	// StartupKept is the same member started with
	// --release-startup-memory 0 (it keeps what start-up used).
	StartupKept *ProcMemory `json:"startup_kept,omitempty"`
}

// ProcMemory is a process's figures from /proc/PID/status, in bytes.
type ProcMemory struct {
	VmRSS   uint64 `json:"vmrss_bytes"`
	VmHWM   uint64 `json:"vmhwm_bytes"`
	RssAnon uint64 `json:"rssanon_bytes,omitempty"`
	RssFile uint64 `json:"rssfile_bytes,omitempty"`
}

// MemberMemory is one member process's memory at one point of the run,
// in bytes: the kernel's figures, read first, then the Go runtime's after
// a forced GC (HeapLive is HeapAlloc then: the live heap).
type MemberMemory struct {
	Member string `json:"member"`
	When   string `json:"when"` // "after fill" or "end"
	ProcMemory
	HeapLive   uint64 `json:"heap_live_bytes"`
	HeapInuse  uint64 `json:"heap_inuse_bytes"`
	StackInuse uint64 `json:"stack_inuse_bytes"`
	GoSys      uint64 `json:"go_sys_bytes"` // all the Go runtime obtained from the OS
	NextGC     uint64 `json:"next_gc_bytes"`
}

// Ops are the figures of the operations -ops runs on the member processes
// after the scenarios, each timed from the exec of a `node` process (or
// of `ctl`). Items are the objects a resourceVersion=0 list of the list
// namespace returned on the member: what its own store holds.
type Ops struct {
	Restart  *RestartOp  `json:"restart,omitempty"`
	Kill     *RestartOp  `json:"kill,omitempty"`
	Join     *JoinOp     `json:"join,omitempty"`
	Snapshot *SnapshotOp `json:"snapshot,omitempty"`
}

// RestartOp is a follower stopped with SIGTERM (Ops.Restart) or killed
// with SIGKILL (Ops.Kill) and started again on its data dir, addresses
// and flags.
type RestartOp struct {
	Member string `json:"member"`
	// StopMs is from the signal until the process was reaped.
	StopMs float64 `json:"stop_ms"`
	// ServingMs is until node printed the line that it serves, ReadyMs
	// until its /readyz answered 200, DataMs until it answered a local
	// GET with the object's resourceVersion and a local list with every
	// object.
	ServingMs float64 `json:"serving_ms"`
	ReadyMs   float64 `json:"ready_ms"`
	DataMs    float64 `json:"data_ms"`
	Items     int     `json:"items"`
	// VmRSS is the member's, once DataMs was measured.
	VmRSS uint64 `json:"vmrss_bytes"`
}

// JoinOp is a new member with an empty data dir joining the cluster; it
// is removed again afterwards.
type JoinOp struct {
	Member    string  `json:"member"`
	ServingMs float64 `json:"serving_ms"`
	// VoterMs is until the leader's Raft configuration had it as a voter.
	VoterMs float64 `json:"voter_ms"`
	DataMs  float64 `json:"data_ms"`
	Items   int     `json:"items"`
	// SnapshotsInstalled is how many Raft snapshots it installed (0: it
	// replayed the leader's log), taking SnapshotInstallMs in all
	// (litek8s_raft_restore_duration_seconds); SnapshotBytes is the size
	// of the snapshot in its data dir.
	SnapshotsInstalled int     `json:"snapshots_installed"`
	SnapshotInstallMs  float64 `json:"snapshot_install_ms"`
	SnapshotBytes      int64   `json:"snapshot_bytes"`
	VmRSS              uint64  `json:"vmrss_bytes"`
	// RemoveMs is from the removal request until the configuration had the
	// cluster's members only again.
	RemoveMs float64 `json:"remove_ms"`
}

// SnapshotOp is `ctl snapshot save` from a follower, `ctl snapshot
// restore` into an empty data dir, and a member started on it.
type SnapshotOp struct {
	Member    string  `json:"member"` // saved from
	SaveMs    float64 `json:"save_ms"`
	FileBytes int64   `json:"file_bytes"`
	Index     uint64  `json:"index"`
	Objects   int     `json:"objects"` // in the backup, every resource
	RestoreMs float64 `json:"restore_ms"`
	ServingMs float64 `json:"serving_ms"`
	ReadyMs   float64 `json:"ready_ms"`
	DataMs    float64 `json:"data_ms"`
	Items     int     `json:"items"`
	VmRSS     uint64  `json:"vmrss_bytes"`
}

// Scenario is one scenario's figures: each is the median over its runs.
type Scenario struct {
	Name      string  `json:"name"`
	Members   int     `json:"members,omitempty"`
	Skipped   string  `json:"skipped,omitempty"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	Runs      []Run   `json:"runs,omitempty"`
}

// Run is one run of a scenario.
type Run struct {
	Ops       int     `json:"ops"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// RunOf converts a run's summary.
func RunOf(s stats.Summary) Run {
	return Run{Ops: s.Ops, Seconds: s.Elapsed.Seconds(), OpsPerSec: s.OpsPerSec,
		P50Ms: millis(s.P50), P90Ms: millis(s.P90), P99Ms: millis(s.P99), MaxMs: millis(s.Max)}
}

// NewScenario builds a scenario's figures: the median of each figure over
// runs, taken figure by figure (the p99 is the median of the runs' p99s).
func NewScenario(name string, members int, runs []Run) Scenario {
	s := Scenario{Name: name, Members: members, Runs: runs}
	col := func(f func(Run) float64) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		return stats.Median(xs)
	}
	s.OpsPerSec = col(func(r Run) float64 { return r.OpsPerSec })
	s.P50Ms = col(func(r Run) float64 { return r.P50Ms })
	s.P90Ms = col(func(r Run) float64 { return r.P90Ms })
	s.P99Ms = col(func(r Run) float64 { return r.P99Ms })
	return s
}

// Find returns the scenario called name that was measured (not skipped).
func (r *Report) Find(name string) (*Scenario, bool) {
	for i := range r.Scenarios {
		if s := &r.Scenarios[i]; s.Name == name && s.Skipped == "" {
			return s, true
		}
	}
	return nil, false
}

// Load reads a report written by api_load -json.
func Load(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	if r.Schema < 1 || r.Schema > SchemaVersion {
		return nil, fmt.Errorf("report: %s: schema %d, this program reads 1..%d", path, r.Schema, SchemaVersion)
	}
	return &r, nil
}

// Save writes r as indented JSON.
func (r *Report) Save(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
