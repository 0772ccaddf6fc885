package workspace_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/existence-loop/sdk/existence/workspace"
)

// BenchmarkWrite measures one write_file-sized write (1 KiB, replacing a
// file) in workspaces already holding 0, 10,000 and 100,000 files. With
// the running usage count the time no longer grows with the number of
// files (when every write walked the tree, it took 2 ms, 36 ms and
// 426 ms). The 100,000-file case is skipped with -short.
func BenchmarkWrite(b *testing.B) {
	content := string(make([]byte, 1024))
	for _, n := range []int{0, 10_000, 100_000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			if n > 10_000 && testing.Short() {
				b.Skip("creates 100,000 files")
			}
			dir := filepath.Join(fastTempDir(b), "ws")
			fill(b, dir, n)
			ws, err := workspace.Open(dir, workspace.Limits{MaxFiles: 200_000, Quota: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			for i := 0; b.Loop(); i++ {
				if err := ws.Write(fmt.Sprintf("bench/%d.txt", i%100), content); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
