package mcptools_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/existence-loop/sdk/existence/toolloop/mcptools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlag(t *testing.T) {
	tests := []struct {
		in   string
		want mcptools.ServerConfig
		err  bool
	}{
		{in: "fs=mcp-fs --root /srv", want: mcptools.ServerConfig{Name: "fs", Command: "mcp-fs", Args: []string{"--root", "/srv"}}},
		{in: "git=mcp-git", want: mcptools.ServerConfig{Name: "git", Command: "mcp-git", Args: []string{}}},
		{in: "wiki=http://127.0.0.1:9000/mcp", want: mcptools.ServerConfig{Name: "wiki", URL: "http://127.0.0.1:9000/mcp"}},
		{in: "wiki=https://mcp.example/mcp", want: mcptools.ServerConfig{Name: "wiki", URL: "https://mcp.example/mcp"}},
		{in: "fs", err: true},
		{in: "fs=", err: true},
		{in: "=cmd", err: true},
		{in: "my_fs=cmd", err: true},
		{in: "a-very-long-server-name-indeed=cmd", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := mcptools.ParseFlag(tc.in)
			if tc.err {
				assert.ErrorIs(t, err, mcptools.ErrConfig)
				return
			}
			require.NoError(t, err)
			tc.want.Timeout = mcptools.Duration(mcptools.DefaultTimeout)
			tc.want.MaxResultBytes = mcptools.DefaultMaxResultBytes
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLoadFile(t *testing.T) {
	tests := []struct {
		name, json string
		want       []mcptools.ServerConfig
		err        string
	}{
		{
			name: "full",
			json: `{"mcpServers": {
				"wiki": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer x"}, "max_result_bytes": 1000, "non_text": true},
				"fs": {"command": "mcp-fs", "args": ["/srv data"], "env": {"LOG": "0"}, "allow": ["read_file"], "timeout": "30s"}
			}}`,
			want: []mcptools.ServerConfig{
				{Name: "fs", Command: "mcp-fs", Args: []string{"/srv data"}, Env: map[string]string{"LOG": "0"}, Allow: []string{"read_file"},
					Timeout: mcptools.Duration(30 * time.Second), MaxResultBytes: mcptools.DefaultMaxResultBytes},
				{Name: "wiki", URL: "http://127.0.0.1:9000/mcp", Headers: map[string]string{"Authorization": "Bearer x"},
					Timeout: mcptools.Duration(mcptools.DefaultTimeout), MaxResultBytes: 1000, NonText: true},
			},
		},
		{name: "unknown field", json: `{"mcpServers": {"fs": {"command": "x", "alow": ["a"]}}}`, err: `unknown field "alow"`},
		{name: "no servers", json: `{"servers": {}}`, err: "unknown field"},
		{name: "empty", json: `{}`, err: `no "mcpServers"`},
		{name: "bad timeout", json: `{"mcpServers": {"fs": {"command": "x", "timeout": 30}}}`, err: "duration"},
		{name: "bad name", json: `{"mcpServers": {"f_s": {"command": "x"}}}`, err: "server name"},
		{name: "neither", json: `{"mcpServers": {"fs": {}}}`, err: "needs a command or a url"},
		{name: "not json", json: `mcpServers: {}`, err: "invalid character"},
		{name: "server named twice", json: `{"mcpServers": {"fs": {"command": "x", "allow": ["read_file"]}, "fs": {"command": "x"}}}`, err: `duplicate key "fs" at /mcpServers/fs`},
		{name: "allow twice", json: `{"mcpServers": {"fs": {"command": "x", "allow": ["read_file"], "allow": []}}}`, err: `duplicate key "allow"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.json), 0o600))
			got, err := mcptools.LoadFile(path)
			if tc.err != "" {
				require.ErrorIs(t, err, mcptools.ErrConfig)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := mcptools.LoadFile(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
