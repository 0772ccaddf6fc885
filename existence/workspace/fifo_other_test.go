//go:build !unix

package workspace_test

import "testing"

func mkfifo(t *testing.T, _ string) { t.Skip("named pipes in the file system are Unix-only") }
