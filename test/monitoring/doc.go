// Package monitoring tests the dashboard and the alerts shipped with the
// chart (charts/litek8s/dashboards/litek8s.json and
// charts/litek8s/rules/litek8s.rules.yaml) against the metrics contract
// (docs/metrics.md) and against real members:
//
//   - every series a dashboard query or a rule names is in the contract
//     (or is a recording rule of the rules file); the dashboard is a
//     well-formed Grafana dashboard with a datasource and a member
//     variable; every alert has a severity, a summary, a description and
//     a runbook_url (its anchor in the README's Alerts table), and
//     promtool unit tests in which it fires and in which it does not;
//   - `promtool check rules` and `promtool test rules` pass, and every
//     dashboard query parses (checked by promtool as a recording rule);
//   - a real Prometheus scraping three member processes under load has
//     data for every series the dashboard and the rules use, every
//     dashboard query runs, and `promtool check metrics` finds nothing to
//     say about any member's /metrics.
//
// promtool and prometheus come from Debian's prometheus package (.ci/run
// installs it); the tests that need them skip when they are missing, or
// fail when CI=true.
package monitoring
