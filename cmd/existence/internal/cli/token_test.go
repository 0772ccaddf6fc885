package cli

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/hostaccess"
	"github.com/existence-loop/sdk/store/taskqueue"
)

// TestAutoToken: -http-token auto generates a token that passes the
// check, writes it to a file only the user can read, and prints the
// dashboard's address without it but with the file's path.
func TestAutoToken(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("EXISTENCE_TOKEN", "")
	o, err := parseRunFlags([]string{"-http", "0.0.0.0:0", "-http-token", "auto", "-dry-run"}, io.Discard)
	require.NoError(t, err, "a generated token may serve a public address")
	tok := o.httpToken.String()
	require.NoError(t, hostaccess.CheckToken(tok))
	assert.Equal(t, tok, o.httpToken.String(), "generated once")

	r := testRunner(t, nil)
	var stderr bytes.Buffer
	o.http = "127.0.0.1:0"
	stop, err := serveMonitor(o, r, taskqueue.NewMemory(taskqueue.Options{}), requests.NewMemory(requests.Options{}), nil, nil, nil, slog.New(slog.DiscardHandler), &stderr)
	require.NoError(t, err)
	defer stop()
	m := regexp.MustCompile(`dashboard at http://127\.0\.0\.1:(\d+)/ .*generated token in (\S+) `).FindStringSubmatch(stderr.String())
	require.NotNil(t, m, stderr.String())
	assert.NotContains(t, stderr.String(), tok)
	assert.Equal(t, filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "existence", "monitor-"+m[1]+".token"), m[2])
	data, err := os.ReadFile(m[2])
	require.NoError(t, err)
	assert.Equal(t, tok+"\n", string(data))
	info, err := os.Stat(m[2])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}
