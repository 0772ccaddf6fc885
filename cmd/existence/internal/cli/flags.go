package cli

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/existence-loop/sdk/hostaccess"
)

// envToken is the value of an -http-token flag: the flag when given (even
// empty, which turns authentication off), else $EXISTENCE_TOKEN; "auto"
// (either way) is a new random token (hostaccess.GenerateToken), which
// resolve makes once. Help never prints the environment's token as the
// flag's default.
type envToken struct {
	value string
	set   bool
	auto  bool // generated for "auto"
}

// autoToken is the -http-token value that asks for a generated token.
const autoToken = "auto"

// String returns the token in effect.
func (t envToken) String() string {
	if t.set {
		return t.value
	}
	return os.Getenv("EXISTENCE_TOKEN")
}

// modelFlag is a -model flag's value. Left out, the command uses the
// provider's default (defaultOllamaModel with ollama); given, it must name
// a model: an empty -model (often a shell variable that was not set) is a
// usage error rather than a silent default.
type modelFlag struct{ p *string }

func (m modelFlag) String() string {
	if m.p == nil {
		return ""
	}
	return *m.p
}

func (m modelFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("must name a model; leave -model out for the default (%s with ollama)", defaultOllamaModel)
	}
	*m.p = s
	return nil
}

// hiddenFlags are the old flag names kept as aliases for one release
// (see aliasFlag), by "flag-set name/flag name": usage leaves them out.
var hiddenFlags = map[string]bool{}

// aliasFlag registers old on fs as a hidden alias of the flag name, which
// must be registered already: it sets the same value, and usage does not
// list it. A flag renamed so that one thing has one name in every command
// keeps its old name this way for one release (noted in CHANGELOG.md).
func aliasFlag(fs *flag.FlagSet, old, name string) {
	fs.Var(fs.Lookup(name).Value, old, "deprecated: use -"+name)
	hiddenFlags[fs.Name()+"/"+old] = true
}

// visibleFlags returns a copy of fs without its hidden aliases, for usage.
func visibleFlags(fs *flag.FlagSet) *flag.FlagSet {
	vis := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if !hiddenFlags[fs.Name()+"/"+f.Name] {
			vis.Var(f.Value, f.Name, f.Usage)
			vis.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	return vis
}

// resolve fixes the token in effect, generating one for "auto".
func (t *envToken) resolve() {
	t.value, t.set = t.String(), true
	if t.value == autoToken {
		t.value, t.auto = hostaccess.GenerateToken(), true
	}
}

// tokenFlag registers -http-token on fs.
func tokenFlag(fs *flag.FlagSet, t *envToken, usage string) {
	fs.Func("http-token", usage+`; "auto" generates one, written to a file only you can read`, func(s string) error {
		t.value, t.set = s, true
		return nil
	})
}

// noTokenFlag is the name of the opt-out from a token on a public address.
const noTokenFlag = "http-no-token-behind-proxy"

// exposureFlags registers -http-no-token-behind-proxy on fs.
func exposureFlags(fs *flag.FlagSet, optOut *bool) {
	fs.BoolVar(optOut, noTokenFlag, false, "serve -http on a non-loopback address without -http-token, for a reverse proxy that authenticates (logged as a warning)")
}

// checkExposure refuses a monitor on a non-loopback address without a
// token, unless the operator opted out: anyone who can reach it could read
// the agents and send them tasks.
func checkExposure(addr, token string, optOut bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil || hostaccess.Loopback(addr) {
		return nil // a bad address is the listen's to report
	}
	if token != "" {
		if err := hostaccess.CheckToken(token); err != nil {
			return fmt.Errorf("-http %s is not a loopback address and -http-token (or $EXISTENCE_TOKEN) is too weak: %w; -http-token auto is better than any token typed by hand: 43 random characters, written to a file only you can read and never printed", addr, err)
		}
		return nil
	}
	if optOut {
		return nil
	}
	return fmt.Errorf("-http %s is not a loopback address: set -http-token (or $EXISTENCE_TOKEN), serve on 127.0.0.1, or, behind a reverse proxy that authenticates, pass -%s", addr, noTokenFlag)
}

// discardLogger returns a logger that drops everything.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
