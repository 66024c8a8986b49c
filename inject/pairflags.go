package inject

import "strings"

// mainFlags are job-signal's flags.
func (p *plan) mainFlags() []string {
	var flags []string
	waitFor := p.sidecars
	if p.s.hasWaitFor {
		waitFor = p.s.waitFor
	}
	if len(waitFor) > 0 {
		flags = append(flags, "--wait-for", strings.Join(waitFor, ","))
	}
	if v, ok := p.s.main1["ready-timeout"]; ok {
		flags = append(flags, "--ready-timeout", v)
	}
	return append(flags, p.restart...)
}

// sidecarValues are a sidecar's settings by annotation key: its own
// annotations, then the Pod-wide ones, then what its probes, its known
// sidecar's row (read against line, its full command line) and its
// image's STOPSIGNAL say.
func (p *plan) sidecarValues(name string, line []string, stopSignal string) (map[string]string, []string) {
	c := container(p.spec, name)
	values := map[string]string{}
	for _, o := range Options {
		if o.Main {
			continue
		}
		if v, ok := p.s.sidecar[name][o.Key]; ok {
			values[o.Key] = v
		} else if v, ok := p.s.podWide[o.Key]; ok {
			values[o.Key] = v
		}
	}
	k := p.known[name]
	if !hasReadiness(values) {
		if d := p.probes[name]; d != nil {
			values[d.key] = d.value
		} else if k != nil {
			if url := fromTable(k.Ready, line, c.Env); url != "" {
				values["ready-http"] = url
			}
		}
	}
	if _, ok := values["quit-url"]; !ok && k != nil {
		if url := fromTable(k.Quit, line, c.Env); url != "" {
			values["quit-url"] = url
		}
	}
	var warnings []string
	if _, ok := values["stop-signal"]; !ok {
		sig, _, warning := stopSignalOf(name, stopSignal, k)
		if sig != "" {
			values["stop-signal"] = sig
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	return values, warnings
}

// sidecarFlags writes a sidecar's values as sidecar-watch's flags, in the
// order of Options.
func sidecarFlags(name string, values map[string]string) []string {
	flags := []string{"--name", name}
	for _, o := range Options {
		if v, ok := values[o.Key]; ok && !o.Main {
			flags = append(flags, o.Flag, v)
		}
	}
	return flags
}
