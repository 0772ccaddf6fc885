package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionCommand is `existence version`.
var versionCommand = &command{
	name:    "version",
	summary: "print the module version and the VCS revision the command was built from",
	about: `The module version is the one go install resolved (for example v0.3.0), or
a pseudo-version or "(devel)" for a build from a checkout; the revision and
its time come from the VCS stamp the go command records at build time
(absent under go run and go test).`,
	setup: func(fs *flag.FlagSet) action {
		asJSON := fs.Bool("json", false, "print one JSON object: module, version, revision, time, modified, go, platform")
		return func(_ context.Context, e *env, _ []string) error {
			v := readVersion(debug.ReadBuildInfo)
			if *asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			_, err := fmt.Fprint(e.stdout, v)
			return err
		}
	},
}

// buildVersion is what `existence version` reports.
type buildVersion struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readVersion reads the build information through read
// (debug.ReadBuildInfo; tests pass their own).
func readVersion(read func() (*debug.BuildInfo, bool)) buildVersion {
	v := buildVersion{Module: "github.com/existence-loop/sdk", Version: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := read()
	if !ok {
		return v
	}
	if bi.Main.Path != "" {
		v.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String returns the version as the command prints it, one fact a line.
func (v buildVersion) String() string {
	s := fmt.Sprintf("existence %s %s\n", v.Module, v.Version)
	switch {
	case v.Revision == "":
		s += "revision unknown (no VCS stamp: built by go run or go test, or with -buildvcs=false)\n"
	default:
		s += "revision " + v.Revision
		if v.Modified {
			s += " (modified)"
		}
		if v.Time != "" {
			s += ", " + v.Time
		}
		s += "\n"
	}
	return s + fmt.Sprintf("%s %s\n", v.Go, v.Platform)
}
