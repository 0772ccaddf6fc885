package cli

import (
	"flag"
	"log/slog"
	"os"
)

// envToken is the value of an -http-token flag: the flag when given (even
// empty, which turns authentication off), else $EXISTENCE_TOKEN. Help
// never prints the environment's token as the flag's default.
type envToken struct {
	value string
	set   bool
}

// String returns the token in effect.
func (t envToken) String() string {
	if t.set {
		return t.value
	}
	return os.Getenv("EXISTENCE_TOKEN")
}

// tokenFlag registers -http-token on fs.
func tokenFlag(fs *flag.FlagSet, t *envToken, usage string) {
	fs.Func("http-token", usage, func(s string) error {
		t.value, t.set = s, true
		return nil
	})
}

// discardLogger returns a logger that drops everything.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
