package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOverlap matches the [*OverlapError] of [CheckApart].
var ErrOverlap = errors.New("workspace: the workspace and the state directory overlap")

// OverlapError reports a workspace and a state directory that are the same
// directory, or of which one contains the other.
type OverlapError struct {
	// Workspace and State are the paths as given to [CheckApart].
	Workspace, State string
	// ResolvedWorkspace and ResolvedState are the absolute paths with
	// their symbolic links resolved, as compared.
	ResolvedWorkspace, ResolvedState string
	// How says how they overlap: "the same directory", "the state
	// directory is inside the workspace" or "the workspace is inside the
	// state directory".
	How string
}

// Error names both paths, how they overlap and why it matters.
func (e *OverlapError) Error() string {
	resolved := ""
	if e.ResolvedWorkspace != e.Workspace || e.ResolvedState != e.State {
		resolved = fmt.Sprintf(" (resolved: %s and %s)", e.ResolvedWorkspace, e.ResolvedState)
	}
	return fmt.Sprintf("workspace: the workspace %q and the state directory %q overlap: %s%s; "+
		"an agent can write any file of its workspace, so it could rewrite the agents' saved state: use two directories apart",
		e.Workspace, e.State, e.How, resolved)
}

// Is reports whether target is [ErrOverlap].
func (e *OverlapError) Is(target error) bool { return target == ErrOverlap }

// StateInWorkspace reports whether the state directory is the workspace or
// inside it, so that an agent's file tools reach the state's files. The
// other overlap, a workspace inside the state directory, leaves the
// state's own files out of an agent's reach; a directory store still
// refuses it (it owns its whole directory), a SQLite file need not.
func (e *OverlapError) StateInWorkspace() bool {
	return within(e.ResolvedState, e.ResolvedWorkspace)
}

// CheckApart reports whether the workspace directory dir and the state
// directory state are apart: not the same directory, and neither inside
// the other. Agents write any file of their workspace (write_file,
// delete_file), so a workspace that holds the state directory, or lies
// inside it, lets one agent rewrite another's saved state — or its own —
// and the task and request queues kept there.
//
// Both paths are made absolute and cleaned and their symbolic links are
// resolved; a directory that does not exist yet is resolved through its
// nearest existing parent, so the check can run before either is created.
// Directories that exist are also compared by identity (os.SameFile) with
// each other's parents, which catches what a comparison of names misses
// (a bind mount, a case-insensitive file system).
//
// For a SQLite store pass the directory of the database file (its WAL and
// journal files live beside it); a PostgreSQL store has no state directory
// and needs no check. Errors: an [*OverlapError] matching [ErrOverlap];
// an error resolving either path (a permission denied, a symbolic link
// loop), which names it.
func CheckApart(dir, state string) error {
	ws, err := resolvePath(dir)
	if err != nil {
		return fmt.Errorf("workspace: resolving the workspace %q: %w", dir, err)
	}
	st, err := resolvePath(state)
	if err != nil {
		return fmt.Errorf("workspace: resolving the state directory %q: %w", state, err)
	}
	how := ""
	switch wsInSt, stInWs := within(ws, st), within(st, ws); {
	case wsInSt && stInWs:
		how = "they are the same directory"
	case stInWs:
		how = "the state directory is inside the workspace"
	case wsInSt:
		how = "the workspace is inside the state directory"
	default:
		return nil
	}
	return &OverlapError{Workspace: dir, State: state, ResolvedWorkspace: ws, ResolvedState: st, How: how}
}

// resolvePath returns p absolute, cleaned, with its symbolic links
// resolved as far as it exists; the part that does not exist yet is
// appended as it is.
func resolvePath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	cur := abs
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil // nothing of it exists
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// within reports whether inner is outer or lies inside it: by name, or,
// for directories that exist, because outer is inner or one of its
// parents (os.SameFile).
func within(inner, outer string) bool {
	rel, err := filepath.Rel(outer, inner)
	if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return true
	}
	o, err := os.Stat(outer)
	if err != nil {
		return false
	}
	for cur := inner; ; {
		if c, err := os.Stat(cur); err == nil && os.SameFile(o, c) {
			return true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return false
		}
		cur = parent
	}
}
