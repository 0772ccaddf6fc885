package workspace

import (
	"context"
	"fmt"
	"strings"

	"github.com/existence-loop/sdk/existence/toolloop"
	"github.com/existence-loop/sdk/identity"
)

// Tool names, as the model sees them.
const (
	ToolRead   = "read_file"
	ToolWrite  = "write_file"
	ToolAppend = "append_file"
	ToolList   = "list_files"
	ToolDelete = "delete_file"
)

// PathArgs are the arguments of read_file and delete_file.
type PathArgs struct {
	// Path is the file's path relative to the workspace root, with "/" as
	// the separator; see [Open] for the rules.
	Path string `json:"path" jsonschema_description:"Path of the file, relative to the workspace root, with \"/\" as the separator (for example \"notes/report.md\"). Absolute paths and \"..\" are refused."`
}

// WriteArgs are the arguments of write_file and append_file.
type WriteArgs struct {
	// Path is the file's path relative to the workspace root, with "/" as
	// the separator; see [Open] for the rules.
	Path string `json:"path" jsonschema_description:"Path of the file, relative to the workspace root, with \"/\" as the separator (for example \"notes/report.md\"). Absolute paths and \"..\" are refused."`
	// Content is the text to write (write_file) or to append
	// (append_file).
	Content string `json:"content" jsonschema_description:"The text to write."`
}

// ListArgs are the arguments of list_files.
type ListArgs struct {
	// Path is the directory to list, relative to the workspace root; ""
	// or "." lists the root.
	Path string `json:"path,omitempty" jsonschema_description:"Directory to list, relative to the workspace root; \".\" or empty for the root."`
}

// Tools returns the workspace's tools for a [toolloop.Executor], built with
// [toolloop.NewTool]:
//
//   - read_file {path}: the file's text, reporting a discovery
//     ([toolloop.ReportDiscovery]) with Source the cleaned path and Text
//     the path and the file's first non-blank line, flattened and cut to
//     [DiscoveryLineChars] characters, for example
//     `design/index.md: "# Index of designs"` (or
//     `notes/plan.md: (empty file)` for a file with no text);
//   - write_file {path, content}: replace or create the file (atomic),
//     reporting the path as an artifact ([toolloop.ReportArtifact]);
//   - append_file {path, content}: append to the file, creating it,
//     reporting the path as an artifact;
//   - list_files {path?}: one line per entry, directories ending in "/";
//   - delete_file {path}: remove a file or an empty directory.
//
// write_file, append_file and delete_file are marked as tools that write
// ([toolloop.Writing]): a goal whose calls of them all failed is not DONE
// under toolloop.RequireEvidence. Each tool's error is the workspace's
// (see [Open] for the path rules), shown to the model as "Error: ...".
func (w *Workspace) Tools() []toolloop.Tool {
	return []toolloop.Tool{
		toolloop.NewTool(ToolRead,
			"Read a text file from your workspace. Returns its content.",
			func(ctx context.Context, a PathArgs) (string, error) {
				name, err := fileName(a.Path)
				if err != nil {
					return "", err
				}
				s, err := w.Read(name)
				if err != nil {
					return "", err
				}
				toolloop.ReportDiscovery(ctx, identity.Discovery{Text: describe(s), Source: name})
				if s == "" {
					return "(empty file)", nil
				}
				return s, nil
			}),
		toolloop.Writing(toolloop.NewTool(ToolWrite,
			"Create or replace a text file in your workspace. Parent directories are created as needed.",
			func(ctx context.Context, a WriteArgs) (string, error) {
				name, err := fileName(a.Path)
				if err != nil {
					return "", err
				}
				n, err := w.put(name, a.Content, false)
				if err != nil {
					return "", err
				}
				toolloop.ReportArtifact(ctx, name)
				return fmt.Sprintf("wrote %d bytes to %s", n, name), nil
			})),
		toolloop.Writing(toolloop.NewTool(ToolAppend,
			"Append text to the end of a file in your workspace, creating it if needed.",
			func(ctx context.Context, a WriteArgs) (string, error) {
				name, err := fileName(a.Path)
				if err != nil {
					return "", err
				}
				n, err := w.put(name, a.Content, true)
				if err != nil {
					return "", err
				}
				toolloop.ReportArtifact(ctx, name)
				return fmt.Sprintf("appended %d bytes to %s (now %d bytes)", len(a.Content), name, n), nil
			})),
		toolloop.NewTool(ToolList,
			`List a directory of your workspace. Directories end in "/".`,
			func(ctx context.Context, a ListArgs) (string, error) {
				p := a.Path
				if p == "" {
					p = "."
				}
				entries, more, err := w.list(p)
				if err != nil {
					return "", err
				}
				return formatList(entries, more), nil
			}),
		toolloop.Writing(toolloop.NewTool(ToolDelete,
			"Delete a file, or an empty directory, from your workspace.",
			func(ctx context.Context, a PathArgs) (string, error) {
				name, err := fileName(a.Path)
				if err != nil {
					return "", err
				}
				if err := w.Delete(name); err != nil {
					return "", err
				}
				return "deleted " + name, nil
			})),
	}
}

// formatList renders a listing for the model: one entry per line, paths
// from the workspace root, directories ending in "/", file sizes in bytes.
func formatList(entries []Entry, more int) string {
	if len(entries) == 0 {
		return "(empty directory)"
	}
	var b strings.Builder
	for _, e := range entries {
		switch {
		case e.Dir:
			fmt.Fprintf(&b, "%s/\n", e.Path)
		case e.Symlink:
			fmt.Fprintf(&b, "%s (symlink)\n", e.Path)
		default:
			fmt.Fprintf(&b, "%s (%d bytes)\n", e.Path, e.Size)
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "... and %d more entries not shown\n", more)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
