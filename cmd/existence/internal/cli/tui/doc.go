// Package tui is the full-screen terminal view of existence-loop agents,
// built with github.com/charmbracelet/bubbletea and lipgloss, like the
// original system's live monitor: one pane per agent (name, goal,
// suffering bar coloured by level, top stressors), the thoughts stream,
// and an input line for host messages ("@cedar …") and request answers
// ("/approve 3").
//
// The view knows nothing of where the agents run: [Config].Statuses gives
// their statuses, [Config].Handle runs a typed line, and [Run] feeds it
// the events received on a channel. The existence command's run -tui
// wires it to the agents of its process; tui -url wires it to a monitor
// over HTTP (GET /api/agents, the /api/events stream, POST /api/messages
// and the /api/requests endpoints).
package tui
