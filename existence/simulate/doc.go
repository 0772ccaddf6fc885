// Package simulate runs existence-loop agents for simulated days in
// seconds: the real [existence.Agent] and [runner.Runner]
// code — prompt assembly, structured output, parsing, repair, the spec §3
// field table, suffering escalation and assessment, crises and their forced
// reset, peers — with virtual clocks and simulated models, deterministic
// for a seed, and never sleeping.
//
//	res, err := simulate.Run(ctx, simulate.Config{
//		Agents:     simulate.Agents(3), // Cedar/scout, Cipher/analyst, Vault/builder
//		Duration:   30 * 24 * time.Hour,
//		Seed:       1,
//		ModelSlots: 1, // one GPU
//		Model:      simulate.Stochastic{FailureRate: 0.35, AbandonShare: 0.3},
//		Trajectory: f, // JSON Lines of Row
//	})
//	res.WriteSummary(os.Stdout, 20)
//
// # Drivers
//
// [Scheduler] (the default) drives all agents with the runner's virtual
// driver, [runner.Runner.RunVirtual]: the scheduler's
// heartbeat heap, autonomy and priority lanes, coalescing and staggered
// start decide when each cycle runs; a cycle holds its worker for its model
// call's simulated latency; [Config].ModelSlots is the number of workers.
// Executors run to completion inside their cycle's dispatch, so goals take
// no simulated time. [Heartbeats] drives each agent with
// [existence.Agent.Tick] on its own heartbeat, as a time.Ticker would, and
// holds each goal until its simulated duration has passed (15–60 s,
// spec §1); quiet heartbeats are skipped unless [Config].EveryHeartbeat.
//
// # Policies
//
// A [ModelPolicy] makes each agent's [llm.Model]: [Scripted] (a list of
// replies), [Stochastic] (seeded draws of goals, self-reported stressors,
// resolutions, goal outcomes and latencies) or [Replay] (recorded replies,
// for example derived from a hollow-agentOS memory with
// [RecordsFromHollow]). A model tells its simulated latency through
// [llm.Response].Duration (or [WithLatency] for a failed call).
// An [ExecutorPolicy] pursues goals: [Immediate], [Mix] (seeded
// DONE/FAILED/ABANDONED), [Report] (the model reports the outcome, one
// call) or [ToolLoop] (the real existence/toolloop over a temporary
// workspace). [Config].Memory gives every agent a long-term memory
// embedded by llmtest's deterministic fake embedder (or
// [Config].Embedder) on its virtual clock: the tool loop then stores its
// outcomes and recalls them before later goals, and [Result].Memory
// counts what the memories did.
//
// # Output
//
// The trajectory ([Row], JSON Lines) has, per agent, a start row, a row for
// every heartbeat that changed something (time, load, level, each active
// stressor's severity, stressors added and resolved, the goal ended and the
// goal chosen, crisis and forced reset, lateness, model latency and calls)
// and an end row. Between two rows the load only escalates, in closed form
// ([EscalateStressors]); [LevelTimes] integrates the time spent in each
// level exactly, and [LoadPlot] draws the exact saw-tooth of a run of up to
// a day, and a longer run in buckets of time ([LoadBucket], [BucketLoad]:
// each bucket's mean over its least-to-most band), so that 30 days stay
// readable. [LoadPlot],
// [TimelinePlot] and [OutcomePlot] make plots with gonum.org/v1/plot,
// saved as PNG or SVG with [Save]; [Result.WriteSummary] prints the
// summary table.
//
// # Determinism
//
// The same Config (seed included) gives the same trajectory bytes on every
// run: each agent draws from its own PCG stream derived from the seed and
// its position, the drivers run one thing at a time in virtual-time order
// (ties by position), durations are whole milliseconds, and severities and
// loads are written rounded to 6 decimals, so that platforms whose
// floating point differs in the last bit (fused multiply-add) write the
// same bytes. Goal ids, made by the agent with crypto/rand, appear in no
// output. Wall-clock figures (event durations) are not recorded.
package simulate
