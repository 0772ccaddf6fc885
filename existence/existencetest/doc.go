// Package existencetest provides test doubles for the existence package,
// so that tests of agents and runners are deterministic and never sleep:
//
//   - [Clock] is a manual clock ([clock.Virtual]) whose time moves only
//     when the test calls Advance or Set, so it can drive
//     [existence.Agent.Run], [runner.Runner.Run] and
//     [runner.Runner.RunVirtual]; tickers and AfterFunc timers fire
//     only when the manual time passes them.
//   - [Recorder] collects events: pass its Observe method as the
//     [event.Observer], then read [Recorder.Events] or
//     [Recorder.Kind], or [Recorder.Memory] for the memory events
//     ([event.Memory]) of one memory kind.
//
// Both are safe for concurrent use.
package existencetest
