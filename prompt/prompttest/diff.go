package prompttest

import (
	"strconv"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maxDiffCells bounds the work of the line diff (lines of want × lines of
// got); beyond it Diff reports only the first differing line.
const maxDiffCells = 4_000_000

// Diff returns a readable line diff from want to got: hunks headed
// "@@ want line W, got line G @@", with unchanged lines prefixed "  ",
// removed lines "- " and added lines "+ ", and up to 3 lines of context
// around each change. It returns "" when want == got. A difference in the
// final newline only is said in words. For very large inputs (more than 4
// million line pairs) it shows the first differing line only.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out strings.Builder
	if strings.TrimSuffix(want, "\n") == strings.TrimSuffix(got, "\n") {
		if strings.HasSuffix(want, "\n") {
			return "want ends with a newline, got does not\n"
		}
		return "got ends with a newline, want does not\n"
	}
	if len(a)*len(b) > maxDiffCells {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		out.WriteString("first difference at line " + strconv.Itoa(i+1) + " (inputs too large for a full diff)\n")
		if i < len(a) {
			out.WriteString("- " + a[i] + "\n")
		}
		if i < len(b) {
			out.WriteString("+ " + b[i] + "\n")
		}
		return out.String()
	}
	ops := diffLines(a, b)
	// Group the ops into hunks with context.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-diffContext)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			// A run of unchanged lines: does another change follow
			// within 2×context lines?
			j := end
			for j < len(ops) && ops[j].kind == ' ' {
				j++
			}
			if j == len(ops) || j-end > 2*diffContext {
				end = min(len(ops), end+diffContext)
				break
			}
			end = j
		}
		out.WriteString("@@ want line " + strconv.Itoa(ops[start].ai+1) + ", got line " + strconv.Itoa(ops[start].bi+1) + " @@\n")
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteByte(' ')
			out.WriteString(op.line)
			out.WriteByte('\n')
		}
		i = end
	}
	return out.String()
}

type diffOp struct {
	kind   byte // ' ', '-', '+'
	line   string
	ai, bi int // line indexes in want and got at this op
}

// diffLines computes a shortest edit script from a to b by longest common
// subsequence (dynamic programming; inputs are bounded by maxDiffCells).
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	// lcs[i][j] = length of the LCS of a[i:] and b[j:], in one slice.
	w := m + 1
	lcs := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	ops := make([]diffOp, 0, n+m)
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
