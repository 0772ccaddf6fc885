package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
)

// Config configures [New].
type Config struct {
	// Title heads the screen, e.g. "existence-loop trio".
	Title string
	// Statuses returns every agent's status, in pane order (for a Runner:
	// each of Agents()'s Status()).
	Statuses func() []existence.Status
	// Handle runs a line typed on the input line (a host message, a
	// command) and writes what happened to w, shown under the thoughts.
	Handle func(ctx context.Context, line string, w io.Writer)
	// Refresh is how often the panes are refreshed without events; 0
	// means only on events.
	Refresh time.Duration
	// MaxThoughts bounds the thoughts kept; default 500.
	MaxThoughts int
	// Notices, when not nil, delivers lines that [Run] shows where a
	// command's output goes, such as a lost connection to a monitor.
	Notices <-chan string
}

// Model is the view's bubbletea model.
type Model struct {
	cfg      Config
	ctx      context.Context
	statuses []existence.Status
	thoughts []string
	input    []rune
	output   string
	width    int
	height   int
	escSeq   int  // counts Esc presses; an escMsg quits only for the latest
	escOpen  bool // an Esc is waiting out escGrace
}

// escGrace is how long an Esc waits before it quits: a terminal's reply to
// a query (an OSC 11 colour report, a DA1 report) that arrives split after
// its ESC byte reads as a lone Esc followed by "]…" or "[…" runes, and must
// not end the view.
const escGrace = 60 * time.Millisecond

// escMsg ends the view when the Esc it names is still the latest and was
// not the start of a terminal's reply.
type escMsg int

// EventMsg delivers an agent's event to the view (see [Run]).
type EventMsg event.Event

// NoticeMsg shows a line where a command's output goes (see
// [Config].Notices).
type NoticeMsg string

type outputMsg string

type refreshMsg struct{}

// New returns the view's model; ctx is passed to Config.Handle.
func New(ctx context.Context, cfg Config) *Model {
	if cfg.MaxThoughts <= 0 {
		cfg.MaxThoughts = 500
	}
	m := &Model{cfg: cfg, ctx: ctx, width: 100, height: 30}
	m.statuses = cfg.Statuses()
	return m
}

// Init starts the refresh ticker, if any.
func (m *Model) Init() tea.Cmd { return m.tick() }

func (m *Model) tick() tea.Cmd {
	if m.cfg.Refresh <= 0 {
		return nil
	}
	return tea.Tick(m.cfg.Refresh, func(time.Time) tea.Msg { return refreshMsg{} })
}

// Update handles keys, window sizes, events and command output.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case EventMsg:
		e := event.Event(msg)
		if e.Kind != event.Cycle && e.Kind != event.ModelCall {
			m.thoughts = append(m.thoughts, e.String())
			if n := len(m.thoughts) - m.cfg.MaxThoughts; n > 0 {
				m.thoughts = m.thoughts[n:]
			}
		}
		m.statuses = m.cfg.Statuses()
	case refreshMsg:
		m.statuses = m.cfg.Statuses()
		return m, m.tick()
	case outputMsg:
		m.output = strings.TrimSpace(string(msg))
		m.statuses = m.cfg.Statuses()
	case NoticeMsg:
		m.output = strings.TrimSpace(string(msg))
	case escMsg:
		if m.escOpen && int(msg) == m.escSeq {
			return m, tea.Quit
		}
	case tea.KeyMsg:
		if m.escOpen && msg.Type == tea.KeyRunes && len(msg.Runes) > 0 && strings.ContainsRune("[]O", msg.Runes[0]) {
			m.escOpen = false // the rest of a terminal's reply, not typing
			return m, nil
		}
		switch msg.Type {
		case tea.KeyEsc:
			m.escSeq++
			m.escOpen = true
			seq := m.escSeq
			return m, tea.Tick(escGrace, func(time.Time) tea.Msg { return escMsg(seq) })
		case tea.KeyCtrlC:
			return m, tea.Quit
		case tea.KeyEnter:
			line := strings.TrimSpace(string(m.input))
			m.input = m.input[:0]
			if line == "" || m.cfg.Handle == nil {
				return m, nil
			}
			if line == "/quit" {
				return m, tea.Quit
			}
			return m, func() tea.Msg {
				var b strings.Builder
				m.cfg.Handle(m.ctx, line, &b)
				if b.Len() == 0 {
					b.WriteString("sent: " + line)
				}
				return outputMsg(b.String())
			}
		case tea.KeyBackspace:
			if len(m.input) > 0 {
				m.input = m.input[:len(m.input)-1]
			}
		case tea.KeySpace:
			m.input = append(m.input, ' ')
		case tea.KeyRunes:
			m.input = append(m.input, msg.Runes...)
		}
	}
	return m, nil
}

// Level colours, as on the dashboard.
var levelColor = map[string]lipgloss.Color{
	"none": "#3fae6a", "prominent": "#d8c24a", "constrained": "#e8913a", "dominant": "#e0503c", "crisis": "#b23ad8",
}

var (
	titleStyle = lipgloss.NewStyle().Bold(true)
	dimStyle   = lipgloss.NewStyle().Faint(true)
	paneStyle  = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
)

// View renders the screen: the panes, the thoughts that fit, the last
// command's output and the input line.
func (m *Model) View() string {
	w := max(m.width, 40)
	var b strings.Builder
	b.WriteString(titleStyle.Render(ansi.Truncate(m.cfg.Title+" · "+fmt.Sprint(len(m.statuses))+" agents · Enter sends · /help · Esc quits", w, "…")))
	b.WriteByte('\n')
	panes := m.panes(w)
	b.WriteString(panes)
	b.WriteByte('\n')
	used := 1 + lipgloss.Height(panes) + 3 // title, panes, header, output, input
	b.WriteString(dimStyle.Render(ansi.Truncate("── thoughts "+strings.Repeat("─", w), w, "")))
	b.WriteByte('\n')
	room := max(m.height-used, 1)
	start := max(len(m.thoughts)-room, 0)
	for i := start; i < start+room; i++ {
		if i < len(m.thoughts) {
			b.WriteString(ansi.Truncate(m.thoughts[i], w, "…"))
		}
		b.WriteByte('\n')
	}
	out := m.output
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	b.WriteString(dimStyle.Render(ansi.Truncate(out, w, "…")))
	b.WriteByte('\n')
	b.WriteString(ansi.Truncate("> "+string(m.input)+"█", w, ""))
	return b.String()
}

// panes renders one pane per agent side by side (as many as fit; the rest
// are counted).
func (m *Model) panes(w int) string {
	if len(m.statuses) == 0 {
		return dimStyle.Render("no agents")
	}
	n := min(len(m.statuses), max(w/30, 1))
	pw := w/n - 2   // border
	inner := pw - 2 // padding
	// Every pane gets as many slot lines as the fullest shows, so that
	// the panes keep one height.
	slotRows := 0
	for _, s := range m.statuses[:n] {
		slotRows = max(slotRows, min(len(s.Slots), MaxSlotsShown))
	}
	var cols []string
	for _, s := range m.statuses[:n] {
		cols = append(cols, paneStyle.Width(pw).Render(pane(s, inner, slotRows)))
	}
	out := lipgloss.JoinHorizontal(lipgloss.Top, cols...)
	if rest := len(m.statuses) - n; rest > 0 {
		out += "\n" + dimStyle.Render(fmt.Sprintf("… and %d more agents (see the dashboard: -http)", rest))
	}
	return out
}

// MaxSlotsShown is how many of an agent's slots its pane lists, the most
// important first.
const MaxSlotsShown = 3

// pane is one agent's pane content, w columns wide, with slotRows lines
// of slots.
func pane(s existence.Status, w, slotRows int) string {
	var lines []string
	lines = append(lines, titleStyle.Render(ansi.Truncate(s.Name+" ("+s.ID+")", w, "…")))
	goal := s.Goal
	if goal == "" {
		goal = "— between goals —"
	}
	wrapped := strings.Split(ansi.Wordwrap(goal, w, ""), "\n")
	if len(wrapped) > 3 {
		wrapped = wrapped[:3]
		wrapped[2] = ansi.Truncate(wrapped[2]+" …", w, "…")
	}
	for len(wrapped) < 3 {
		wrapped = append(wrapped, "")
	}
	lines = append(lines, wrapped...)
	lines = append(lines, bar(s.Load, s.Level, w))
	for i := range 3 {
		if i < len(s.Stressors) {
			x := s.Stressors[i]
			lines = append(lines, ansi.Truncate(fmt.Sprintf("%.2f %s", x.Severity, x.Type), w, "…"))
		} else {
			lines = append(lines, "")
		}
	}
	for i := range slotRows {
		if i < len(s.Slots) {
			lines = append(lines, slotLine(s.Slots[i], w))
		} else {
			lines = append(lines, "")
		}
	}
	if s.ConsecutiveFallbacks > 0 {
		lines = append(lines, ansi.Truncate(fmt.Sprintf("⚠ %d fallback(s): %s", s.ConsecutiveFallbacks, s.LastFallbackCause), w, "…"))
	} else {
		lines = append(lines, dimStyle.Render(fmt.Sprintf("cycles %d", s.Cycles)))
	}
	return strings.Join(lines, "\n")
}

// slotLine is one slot of a pane, as GLaDOS's TUI lists them: "• Title:
// status - summary", a stale one faint and marked, a failed one in the
// crisis colour. Control characters never reach the terminal: slots are
// cleaned when posted, and ansi.Strip removes any left in a state edited
// by hand.
func slotLine(s existence.SlotStatus, w int) string {
	text := ansi.Strip(s.Title + ": " + string(s.Status))
	if s.Summary != "" {
		text += " - " + strings.Join(strings.Fields(ansi.Strip(s.Summary)), " ")
	}
	if s.Stale {
		text += " (stale)"
	}
	line := ansi.Truncate("• "+text, w, "…")
	switch {
	case s.Stale:
		return dimStyle.Render(line)
	case s.Status == "failed":
		return lipgloss.NewStyle().Foreground(levelColor["dominant"]).Render(line)
	}
	return line
}

// bar renders the suffering load as a bar coloured by level, with the load
// and level after it.
func bar(load float64, level string, w int) string {
	label := fmt.Sprintf(" %.2f %s", load, level)
	n := max(w-len(label)-2, 4)
	full := min(int(load*float64(n)+0.5), n)
	fill := lipgloss.NewStyle().Foreground(levelColor[level]).Render(strings.Repeat("█", full))
	return "[" + fill + strings.Repeat("░", n-full) + "]" + label
}

// Run runs the view full-screen on in and out until the person quits or ctx
// ends, feeding it the events received on events and the lines received on
// cfg.Notices. It returns the program's error.
func Run(ctx context.Context, cfg Config, in io.Reader, out io.Writer, events <-chan event.Event) error {
	p := tea.NewProgram(New(ctx, cfg), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	go func() {
		notices := cfg.Notices
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-events:
				if !ok {
					events = nil // closed: no more events
					continue
				}
				p.Send(EventMsg(e))
			case n, ok := <-notices: // nil: never
				if !ok {
					notices = nil
					continue
				}
				p.Send(NoticeMsg(n))
			}
		}
	}()
	_, err := p.Run()
	if ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
		return nil // stopped from outside: not an error
	}
	return err
}
