package simulate

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteSummary writes the run's summary table: one line per agent (at most
// maxAgents lines, 0 meaning all; a last line says how many were left out)
// with the time spent in each suffering level (hours), the peak load, the
// crises and forced resets, the goals by status (DONE, FAILED, ABANDONED,
// still active), the cycles, fallbacks and model calls, and the latest
// heartbeat, and the tokens the model calls used (thousands, "k": the
// model's counts, else estimates). A TOTAL line follows when there is more
// than one agent.
func (r *Result) WriteSummary(w io.Writer, maxAgents int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "agent\tname\t%s h\t%s h\t%s h\t%s h\t%s h\tpeak\tcrises\tresets\tdone\tfailed\tabandoned\tactive\tcycles\tfallbacks\tcalls\tmax late\ttokens\t\n", levelNames[0], levelNames[1], levelNames[2], levelNames[3], levelNames[4])
	var tot AgentResult
	tot.ID, tot.Name = "TOTAL", fmt.Sprintf("%d agents", len(r.Agents))
	for i, a := range r.Agents {
		if maxAgents <= 0 || i < maxAgents {
			line(tw, a)
		}
		for l := range tot.InLevel {
			tot.InLevel[l] += a.InLevel[l]
		}
		tot.PeakLoad = max(tot.PeakLoad, a.PeakLoad)
		tot.Crises += a.Crises
		tot.Resets += a.Resets
		tot.Done += a.Done
		tot.Failed += a.Failed
		tot.Abandoned += a.Abandoned
		tot.Active += a.Active
		tot.Cycles += a.Cycles
		tot.Fallbacks += a.Fallbacks
		tot.ModelCalls += a.ModelCalls
		tot.MaxLate = max(tot.MaxLate, a.MaxLate)
		tot.Usage.Calls += a.Usage.Calls
		tot.Usage.InputTokens += a.Usage.InputTokens
		tot.Usage.OutputTokens += a.Usage.OutputTokens
		tot.Usage.EstimatedTokens += a.Usage.EstimatedTokens
	}
	if maxAgents > 0 && len(r.Agents) > maxAgents {
		fmt.Fprintf(tw, "…\t%d more\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", len(r.Agents)-maxAgents)
	}
	if len(r.Agents) > 1 {
		line(tw, tot)
	}
	return tw.Flush()
}

func line(w io.Writer, a AgentResult) {
	fmt.Fprintf(w, "%s\t%s\t", a.ID, a.Name)
	for _, d := range a.InLevel {
		fmt.Fprintf(w, "%.1f\t", d.Hours())
	}
	fmt.Fprintf(w, "%.2f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%.1fk\t\n", a.PeakLoad, a.Crises, a.Resets, a.Done, a.Failed, a.Abandoned, a.Active, a.Cycles, a.Fallbacks, a.ModelCalls, a.MaxLate.Round(time.Millisecond), float64(a.Usage.Total())/1000)
}
