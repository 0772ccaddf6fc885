// Test server for the SDK's TestEngine tests: a real llama.cpp engine
// (through node-llama-cpp, CPU only) behind the HTTP APIs the SDK talks to,
// answering as the real servers do.
//
//   Ollama (as of v0.17): POST /api/chat, POST /api/show, GET /api/version,
//     POST /api/embed, GET /api/tags, GET /api/ps.
//   llama.cpp's llama-server: POST /v1/chat/completions, POST /v1/embeddings,
//     GET /v1/models, POST /tokenize, POST /detokenize, GET /props,
//     GET /slots, GET /health.
//
// Behaviour kept from the real servers (what the SDK depends on):
//   - The prompt is the model's chat template (the GGUF's Jinja template, as
//     llama-server --jinja renders it) over the messages and tools.
//   - Parallel slots (Ollama's OLLAMA_NUM_PARALLEL, llama-server's
//     --parallel), each with its own KV cache of num_ctx tokens. A request
//     takes the free slot whose cache shares the longest prefix with its
//     prompt and evaluates only the tokens after that prefix (at least the
//     last one). Ollama's prompt_eval_count counts only those evaluated
//     tokens; llama-server's usage.prompt_tokens counts the whole prompt and
//     usage.prompt_tokens_details.cached_tokens the reused prefix.
//   - A queue of waiting requests (OLLAMA_MAX_QUEUE); a request beyond it
//     is answered 503 "server busy, please try again.  maximum pending
//     requests exceeded".
//   - Ollama's options.num_ctx sets the window per request; a different
//     window reloads the context once the slots are idle (load_duration).
//     The OpenAI-compatible endpoint uses the server's default window.
//     A window above the model's trained length is lowered to it.
//   - A prompt that does not fit its window is refused with HTTP 400:
//     "request (N tokens) exceeds the available context size (W tokens),
//     try increasing it" (llama-server's exceed_context_size_error, also
//     what current Ollama passes on); --refusal ollama-0.17 answers Ollama
//     v0.17's runner wording "the input length exceeds the context length"
//     instead. Ollama's "truncate": true (its default) instead drops old
//     messages and then cuts the prompt's beginning after num_keep tokens,
//     silently, as Ollama does.
//   - options.num_predict / max_tokens bound the reply; a reply stopped by
//     the bound, or by a full window, ends with done_reason /
//     finish_reason "length".
//   - format / response_format json_schema constrain the reply with a
//     grammar generated from the JSON Schema (node-llama-cpp's converter:
//     unlike llama.cpp's, it writes every property, required or not).
//   - Tool calls are read from <tool_call>{...}</tool_call> blocks (or a
//     reply that is one {"name", "arguments"} object). tool_choice
//     "required" (llama-server) forces one with a grammar; --tool-choice
//     required does so on every request with tools (Ollama's API too),
//     standing in for a trained model's choice to call a tool.
//     Likewise --json-limit N bounds the strings (N characters) and arrays
//     (one item) the grammar allows, standing in for a trained model's
//     choice to close them.
//
// Usage:
//   node server.mjs --model FILE --modules DIR [--name NAME] [--ctx 4096]
//     [--parallel 1] [--max-queue 512] [--threads 2] [--tool-choice auto]
//     [--refusal llamacpp] [--ollama-version 0.17.4] [--json-limit 0]
//     [--api both|llamacpp]
// DIR is the node_modules directory holding node-llama-cpp. The server
// binds 127.0.0.1 on a free port, loads the model, then prints the port on
// stdout (one line) and serves until SIGTERM or SIGINT. Logs go to stderr.

import http from "node:http";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = parseArgs(process.argv.slice(2));
const modules = args.modules ?? path.join(process.cwd(), "node_modules");
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(path.join(modules, "node-llama-cpp", "dist", "index.js")).href);
const { Template } = await import(pathToFileURL(path.join(modules, "@huggingface", "jinja", "dist", "index.js")).href);

const cfg = {
	model: req(args.model, "--model FILE is required"),
	name: args.name ?? "smollm2-random",
	ctx: int(args.ctx, 4096),
	parallel: int(args.parallel, 1),
	maxQueue: int(args["max-queue"], 512),
	threads: int(args.threads, 2),
	toolChoice: args["tool-choice"] ?? "auto",
	refusal: args.refusal ?? "llamacpp",
	ollamaVersion: args["ollama-version"] ?? "0.17.4",
	api: args.api ?? "both",
	jsonLimit: Number.parseInt(args["json-limit"] ?? "0", 10) || 0,
	numKeep: 4,
};

const started = Date.now();
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });
const model = await llama.loadModel({ modelPath: cfg.model, gpuLayers: 0 });
const meta = model.fileInfo.metadata;
const arch = meta?.general?.architecture ?? "llama";
const trained = model.trainContextSize;
const templateText = meta?.tokenizer?.chat_template ?? "";
const template = templateText ? new Template(templateText) : null;
const eogText = ["<|im_end|>", "<|endoftext|>"];

// ---- scheduler: slots, window and queue ---------------------------------

class Busy extends Error {}

const engine = {
	context: null,
	window: 0, // the num_ctx the context was made for
	slots: [],
	waiters: [], // {window, tokens, resolve, reject}
	reloading: false,
	loadedAt: 0,
};

async function loadContext(window) {
	const t0 = process.hrtime.bigint();
	if (engine.context) await engine.context.dispose();
	engine.context = await model.createContext({ contextSize: window, sequences: cfg.parallel, threads: cfg.threads, batchSize: Math.min(512, window) });
	engine.window = window;
	engine.slots = [];
	for (let i = 0; i < cfg.parallel; i++) {
		engine.slots.push({ id: i, seq: engine.context.getSequence(), busy: false, used: 0, cached: [] });
	}
	return Number(process.hrtime.bigint() - t0);
}

function commonPrefix(a, b) {
	let i = 0;
	while (i < a.length && i < b.length && a[i] === b[i]) i++;
	return i;
}

// pick returns the free slot whose cache shares the longest prefix with
// tokens (ties: least recently used), or undefined.
function pick(tokens) {
	let best;
	let bestLen = -1;
	for (const s of engine.slots) {
		if (s.busy) continue;
		const n = commonPrefix(s.cached, tokens);
		if (n > bestLen || (n === bestLen && s.used < best.used)) {
			best = s;
			bestLen = n;
		}
	}
	return best;
}

// acquire waits for a slot of a context made for window. It throws Busy
// when the queue is full.
function acquire(window, tokens) {
	return new Promise((resolve, reject) => {
		const w = { window, tokens, resolve, reject };
		if (engine.waiters.length === 0 && tryStart(w)) return;
		if (engine.waiters.length >= cfg.maxQueue) {
			reject(new Busy("server busy, please try again.  maximum pending requests exceeded"));
			return;
		}
		engine.waiters.push(w);
	});
}

// tryStart gives w a slot now, reloading the context first when its window
// differs and no slot is busy. It returns false when w must wait.
function tryStart(w) {
	if (engine.reloading) return false;
	if (engine.window === w.window) {
		const s = pick(w.tokens);
		if (!s) return false;
		s.busy = true;
		w.resolve({ slot: s, load: 0 });
		return true;
	}
	if (engine.slots.some((s) => s.busy)) return false;
	engine.reloading = true;
	loadContext(w.window).then(
		(load) => {
			engine.reloading = false;
			const s = pick(w.tokens);
			s.busy = true;
			w.resolve({ slot: s, load });
			pump();
		},
		(err) => {
			engine.reloading = false;
			w.reject(err);
			pump();
		},
	);
	return true;
}

function release(slot) {
	slot.busy = false;
	slot.used = Date.now();
	pump();
}

function pump() {
	while (engine.waiters.length > 0 && tryStart(engine.waiters[0])) engine.waiters.shift();
}

// ---- prompts -------------------------------------------------------------

// render applies the chat template to OpenAI-shaped messages and tools.
function render(messages, tools) {
	const msgs = messages.map((m) => {
		const out = { role: m.role, content: typeof m.content === "string" ? m.content : textOf(m.content) };
		if (m.tool_calls?.length) {
			out.tool_calls = m.tool_calls.map((tc) => ({
				type: "function",
				id: tc.id,
				function: { name: tc.function?.name, arguments: typeof tc.function?.arguments === "string" ? safeParse(tc.function.arguments) : tc.function?.arguments ?? {} },
			}));
		}
		if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
		if (m.tool_name || m.name) out.name = m.tool_name ?? m.name;
		return out;
	});
	const toolDefs = tools?.length ? tools : undefined;
	if (template) {
		const usesTools = templateText.includes("tools");
		const ms = toolDefs && !usesTools ? withToolsBlock(msgs, toolDefs) : msgs;
		return template.render({
			messages: ms,
			tools: toolDefs,
			add_generation_prompt: true,
			bos_token: model.tokens.bosString ?? "",
			eos_token: model.tokens.eosString ?? "",
		});
	}
	// No template in the file: ChatML.
	let s = "";
	for (const m of toolDefs ? withToolsBlock(msgs, toolDefs) : msgs) {
		let content = m.content ?? "";
		for (const tc of m.tool_calls ?? []) content += `\n<tool_call>\n${JSON.stringify({ name: tc.function.name, arguments: tc.function.arguments })}\n</tool_call>`;
		s += `<|im_start|>${m.role}\n${content}<|im_end|>\n`;
	}
	return s + "<|im_start|>assistant\n";
}

// withToolsBlock puts the tool definitions into the system message, in the
// Hermes format that ChatML models with tools are trained on, for templates
// that do not render tools themselves.
function withToolsBlock(msgs, tools) {
	const block =
		"# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
		tools.map((t) => JSON.stringify(t)).join("\n") +
		"\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
		'<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';
	const out = msgs.slice();
	if (out[0]?.role === "system") out[0] = { ...out[0], content: `${out[0].content}\n\n${block}` };
	else out.unshift({ role: "system", content: block });
	return out;
}

function tokenize(text) {
	const tokens = model.tokenize(text, true);
	if (model.tokens.shouldPrependBosToken && model.tokens.bos != null && tokens[0] !== model.tokens.bos) tokens.unshift(model.tokens.bos);
	return tokens;
}

function textOf(content) {
	if (!Array.isArray(content)) return content == null ? "" : String(content);
	return content.map((p) => (p?.type === "text" ? p.text : "")).join("");
}

function safeParse(s) {
	try {
		return JSON.parse(s);
	} catch {
		return {};
	}
}

// ---- grammars ------------------------------------------------------------

const grammars = new Map(); // JSON of the schema → grammar

async function schemaGrammar(schema) {
	const key = JSON.stringify(schema);
	let g = grammars.get(key);
	if (!g) {
		g = await llama.createGrammar({ grammar: await schemaRules(schema) });
		if (grammars.size > 64) grammars.clear();
		grammars.set(key, g);
	}
	return g;
}

// capSchema bounds every string the grammar allows to --json-limit
// characters and every array to one item (--json-limit 0: unbounded, as
// real servers do). Random weights close a string or an array only by
// chance, so without the bound a reply runs to its token limit; a trained
// model closes them itself.
function capSchema(s) {
	const n = cfg.jsonLimit;
	if (!n || !s || typeof s !== "object") return s;
	if (Array.isArray(s)) return s.map(capSchema);
	const out = {};
	for (const [k, v] of Object.entries(s)) {
		if (k === "properties" && v && typeof v === "object") {
			out.properties = Object.fromEntries(Object.entries(v).map(([pk, pv]) => [pk, capSchema(pv)]));
		} else if (["items", "additionalProperties", "oneOf", "anyOf", "prefixItems", "$defs"].includes(k)) {
			out[k] = k === "$defs" ? Object.fromEntries(Object.entries(v).map(([dk, dv]) => [dk, capSchema(dv)])) : capSchema(v);
		} else out[k] = v;
	}
	if (Array.isArray(out.type)) {
		const { type, ...rest } = out;
		return { oneOf: type.map((t) => capSchema({ ...rest, type: t })) };
	}
	if (out.type === "string" && !out.enum && !out.const && !out.format) out.maxLength = Math.min(out.maxLength ?? n, n);
	if (out.type === "array") out.maxItems = Math.min(out.maxItems ?? 1, 1);
	return out;
}

// schemaRules is the GBNF of node-llama-cpp's converter for the capped
// schema, its root ending where the JSON value ends, as llama.cpp's
// json-schema-to-grammar does: node-llama-cpp appends four or more
// newlines that its own generator turns into a stop, and that nothing
// here stops on, so that the grammar would let a reply run to its token
// limit on newlines (and a <tool_call> block never close).
async function schemaRules(schema) {
	const g = await llama.createGrammarForJsonSchema(capSchema(schema));
	const rules = g.grammar.replace(/^(root ::=.*?) "(?:\\n){4}" \[\\n\]\*$/m, "$1");
	if (/^root ::=.*\[\\n\]\*$/m.test(rules)) throw new Error("node-llama-cpp's JSON Schema grammar ends in a way this server does not know");
	return rules;
}

async function toolGrammar(tools) {
	const oneOf = tools.map((t) => ({
		type: "object",
		properties: { name: { const: t.function.name }, arguments: normalizeParams(t.function.parameters) },
	}));
	const rules = (await schemaRules(oneOf.length === 1 ? oneOf[0] : { oneOf })).replace(/^root ::=/m, "tool-call-json ::=");
	return llama.createGrammar({ grammar: `root ::= "<tool_call>\\n" tool-call-json "\\n</tool_call>"\n${rules}` });
}

function normalizeParams(p) {
	if (!p || typeof p !== "object" || !p.properties || Object.keys(p.properties).length === 0) return { type: "object", properties: {} };
	return p;
}

// ---- generation ----------------------------------------------------------

// generate runs one request on a slot. Options: window, numPredict
// (-1 = until the window is full), temperature, topK, topP, minP, seed,
// repeatPenalty, grammar, onText(delta). It returns the counts and
// durations (nanoseconds).
async function generate(slot, tokens, o) {
	const seq = slot.seq;
	let keep = Math.min(commonPrefix(slot.cached, tokens), seq.nextTokenIndex);
	if (keep >= tokens.length) keep = tokens.length - 1; // the last token is always evaluated, for its logits
	if (seq.nextTokenIndex > keep) await seq.eraseContextTokenRanges([{ start: keep, end: seq.nextTokenIndex }]);
	slot.cached = tokens.slice(0, keep);
	const evalTokens = tokens.slice(keep);
	const grammarEvaluationState = o.grammar ? new (await grammarStateClass())({ model, grammar: o.grammar }) : undefined;
	const t0 = process.hrtime.bigint();
	let tPrompt = 0n;
	const out = [];
	let reason = "stop";
	let emitted = "";
	const it = seq.evaluate(evalTokens, {
		temperature: o.temperature,
		topK: o.topK,
		topP: o.topP,
		minP: o.minP,
		seed: o.seed,
		repeatPenalty: o.repeatPenalty > 0 && o.repeatPenalty !== 1 ? { penalty: o.repeatPenalty, lastTokens: 64 } : undefined,
		grammarEvaluationState,
	});
	try {
		for await (const tok of it) {
			if (tPrompt === 0n) tPrompt = process.hrtime.bigint() - t0;
			out.push(tok);
			const text = model.detokenize(out, false);
			const stop = eogText.find((e) => text.endsWith(e));
			if (stop) {
				out.pop();
				break;
			}
			if (o.onText && !text.endsWith("\uFFFD")) {
				const delta = text.slice(emitted.length);
				if (delta) {
					emitted = text;
					o.onText(delta);
				}
			}
			if (o.numPredict >= 0 && out.length >= o.numPredict) {
				reason = "length";
				break;
			}
			if (tokens.length + out.length + 1 >= o.window) {
				reason = "length"; // the window is full: llama.cpp stops rather than shift
				break;
			}
		}
	} finally {
		slot.cached = seq.contextTokens.slice(); // the prompt and the reply, for the next request's prefix
	}
	const tEnd = process.hrtime.bigint() - t0;
	if (tPrompt === 0n) tPrompt = tEnd;
	const text = model.detokenize(out, false);
	if (o.onText && text.length > emitted.length) o.onText(text.slice(emitted.length));
	return {
		text,
		reason,
		promptTokens: tokens.length,
		promptEval: evalTokens.length,
		cached: keep,
		evalCount: out.length,
		promptNs: Number(tPrompt),
		evalNs: Number(tEnd - tPrompt),
	};
}

let grammarStateCtor;
async function grammarStateClass() {
	if (!grammarStateCtor) grammarStateCtor = (await import(pathToFileURL(path.join(modules, "node-llama-cpp", "dist", "index.js")).href)).LlamaGrammarEvaluationState;
	return grammarStateCtor;
}

// parseToolCalls takes <tool_call> blocks (or a reply that is a single
// {"name", "arguments"} object) out of text.
function parseToolCalls(text, tools) {
	if (!tools?.length) return { content: text, calls: [] };
	const names = new Set(tools.map((t) => t.function?.name));
	const calls = [];
	let content = text.replace(/<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g, (whole, body) => {
		const v = safeParseOr(body);
		if (v && typeof v.name === "string" && names.has(v.name)) {
			calls.push({ name: v.name, arguments: v.arguments && typeof v.arguments === "object" ? v.arguments : {} });
			return "";
		}
		return whole;
	});
	if (calls.length === 0) {
		const v = safeParseOr(text.trim());
		if (v && typeof v.name === "string" && names.has(v.name) && v.arguments && typeof v.arguments === "object") {
			calls.push({ name: v.name, arguments: v.arguments });
			content = "";
		}
	}
	return { content: calls.length ? content.trim() : content, calls };
}

function safeParseOr(s) {
	try {
		return JSON.parse(s);
	} catch {
		return undefined;
	}
}

function callID() {
	const abc = "abcdefghijklmnopqrstuvwxyz0123456789";
	const b = randomBytes(8);
	let s = "call_";
	for (const x of b) s += abc[x % abc.length];
	return s;
}

// ---- refusal and truncation ---------------------------------------------

function refusalMessage(n, window) {
	if (cfg.refusal === "ollama-0.17") return "the input length exceeds the context length";
	return llamacppRefusal(n, window);
}

function llamacppRefusal(n, window) {
	return `request (${n} tokens) exceeds the available context size (${window} tokens), try increasing it`;
}

function overWindow(n, window) {
	// llama-server refuses n >= n_ctx (no room for one generated token);
	// Ollama v0.17's runner refuses n > num_ctx.
	return cfg.refusal === "ollama-0.17" ? n > window : n >= window;
}

class Refused extends Error {
	constructor(n, window) {
		super(refusalMessage(n, window));
		this.n = n;
		this.window = window;
	}
}

// ollamaPrompt renders messages for Ollama's /api/chat: with truncate,
// the oldest non-system messages are dropped until the prompt fits (the
// last message is always kept), and a prompt still too long is cut after
// its first num_keep tokens; without, a prompt over the window is refused.
function ollamaPrompt(messages, tools, window, truncate) {
	let tokens = tokenize(render(messages, tools));
	if (!overWindow(tokens.length, window)) return { tokens, cut: false };
	if (!truncate) throw new Refused(tokens.length, window);
	let msgs = messages.slice();
	while (overWindow(tokens.length, window)) {
		const i = msgs.findIndex((m, j) => m.role !== "system" && j < msgs.length - 1);
		if (i < 0) break;
		msgs.splice(i, 1);
		tokens = tokenize(render(msgs, tools));
	}
	if (tokens.length > window) {
		const discard = tokens.length - window;
		tokens = tokens.slice(0, cfg.numKeep).concat(tokens.slice(cfg.numKeep + discard));
		process.stderr.write(`truncating input prompt limit=${window} keep=${cfg.numKeep} new=${tokens.length}\n`);
	}
	return { tokens, cut: true };
}

// ---- HTTP ----------------------------------------------------------------

function send(res, status, body, headers = {}) {
	const data = JSON.stringify(body);
	res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(data), ...headers });
	res.end(data);
}

function ollamaError(res, status, msg) {
	send(res, status, { error: msg });
}

function openaiError(res, status, msg, type, extra = {}) {
	send(res, status, { error: { code: status, message: msg, type, ...extra } });
}

async function readJSON(req) {
	const chunks = [];
	for await (const c of req) chunks.push(c);
	const raw = Buffer.concat(chunks).toString("utf8");
	if (raw.trim() === "") return {};
	return JSON.parse(raw);
}

function sameModel(name) {
	if (!name) return true;
	const norm = (s) => (s.includes(":") ? s : `${s}:latest`);
	return norm(name) === norm(cfg.name);
}

function sampling(opts, defaults) {
	const num = (v, d) => (typeof v === "number" && Number.isFinite(v) ? v : d);
	return {
		temperature: num(opts.temperature, defaults.temperature),
		topK: num(opts.top_k, defaults.topK),
		topP: num(opts.top_p, defaults.topP),
		minP: num(opts.min_p, defaults.minP),
		seed: typeof opts.seed === "number" && opts.seed >= 0 ? opts.seed : undefined,
		repeatPenalty: num(opts.repeat_penalty, defaults.repeatPenalty),
	};
}

const ollamaDefaults = { temperature: 0.8, topK: 40, topP: 0.9, minP: 0, repeatPenalty: 1.1 };
const llamacppDefaults = { temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.0 };

// Ollama /api/chat.
async function apiChat(req, res) {
	const t0 = process.hrtime.bigint();
	const body = await readJSON(req);
	if (!body.model) return ollamaError(res, 400, "model is required");
	if (!sameModel(body.model)) return ollamaError(res, 404, `model "${body.model}" not found, try pulling it first`);
	const opts = body.options ?? {};
	let window = typeof opts.num_ctx === "number" && opts.num_ctx > 0 ? Math.floor(opts.num_ctx) : cfg.ctx;
	if (window > trained) window = trained;
	const truncate = body.truncate !== false;
	const tools = (body.tools ?? []).filter((t) => t?.function?.name);
	const messages = (body.messages ?? []).map((m) => ({
		role: m.role,
		content: m.content ?? "",
		tool_calls: m.tool_calls?.map((tc) => ({ id: tc.id, function: { name: tc.function?.name, arguments: tc.function?.arguments ?? {} } })),
		tool_name: m.tool_name,
		tool_call_id: m.tool_call_id,
	}));
	let prompt;
	try {
		prompt = ollamaPrompt(messages, tools, window, truncate);
	} catch (err) {
		if (err instanceof Refused) return ollamaError(res, 400, err.message);
		throw err;
	}
	let grammar;
	const forced = tools.length > 0 && cfg.toolChoice === "required";
	try {
		if (forced) grammar = await toolGrammar(tools);
		else if (body.format === "json") grammar = await llama.getGrammarFor("json");
		else if (body.format && typeof body.format === "object") grammar = await schemaGrammar(body.format);
	} catch (err) {
		return ollamaError(res, 400, `invalid JSON schema in format: ${err.message}`);
	}
	let lease;
	try {
		lease = await acquire(window, prompt.tokens);
	} catch (err) {
		if (err instanceof Busy) return ollamaError(res, 503, err.message);
		throw err;
	}
	const stream = body.stream !== false;
	const created = () => new Date().toISOString();
	let headersSent = false;
	const line = (obj) => {
		if (!headersSent) {
			res.writeHead(200, { "Content-Type": "application/x-ndjson" });
			headersSent = true;
		}
		res.write(JSON.stringify(obj) + "\n");
	};
	let r;
	try {
		const numPredict = typeof opts.num_predict === "number" ? Math.floor(opts.num_predict) : -1;
		r = await generate(lease.slot, prompt.tokens, {
			window,
			numPredict,
			...sampling(opts, ollamaDefaults),
			grammar,
			onText: stream && !tools.length ? (d) => line({ model: body.model, created_at: created(), message: { role: "assistant", content: d }, done: false }) : undefined,
		});
	} catch (err) {
		release(lease.slot);
		if (headersSent) {
			res.end(JSON.stringify({ error: String(err.message ?? err) }) + "\n");
			return;
		}
		return ollamaError(res, 500, String(err.message ?? err));
	}
	release(lease.slot);
	const { content, calls } = parseToolCalls(r.text, tools);
	const message = { role: "assistant", content: tools.length ? content : r.text };
	if (calls.length) message.tool_calls = calls.map((c, i) => ({ id: callID(), function: { index: i, name: c.name, arguments: c.arguments } }));
	const total = Number(process.hrtime.bigint() - t0);
	const final = {
		model: body.model,
		created_at: created(),
		message,
		done: true,
		done_reason: r.reason,
		total_duration: total,
		load_duration: lease.load,
		prompt_eval_count: r.promptEval,
		prompt_eval_duration: r.promptNs,
		eval_count: r.evalCount,
		eval_duration: r.evalNs,
	};
	log("ollama", r, lease, window);
	if (!stream) return send(res, 200, final);
	if (tools.length) {
		// With tools, Ollama's parser holds content back until it knows it is
		// not a tool call; here the whole message comes in one object.
		line({ model: body.model, created_at: created(), message, done: false });
		final.message = { role: "assistant", content: "" };
	} else {
		final.message = { role: "assistant", content: "" };
	}
	line(final);
	res.end();
}

// Ollama /api/embed.
async function apiEmbed(req, res) {
	const t0 = process.hrtime.bigint();
	const body = await readJSON(req);
	if (!sameModel(body.model)) return ollamaError(res, 404, `model "${body.model}" not found, try pulling it first`);
	const input = Array.isArray(body.input) ? body.input : body.input == null ? [] : [body.input];
	let out;
	try {
		out = await embed(input.map(String), body.truncate !== false);
	} catch (err) {
		if (err instanceof Refused) return ollamaError(res, 400, err.message);
		if (err instanceof Busy) return ollamaError(res, 503, err.message);
		throw err;
	}
	send(res, 200, {
		model: body.model,
		embeddings: out.vectors,
		total_duration: Number(process.hrtime.bigint() - t0),
		load_duration: out.load,
		prompt_eval_count: out.tokens,
	});
}

let embedContext;
let embedBusy = Promise.resolve();
async function embed(texts, truncate) {
	let load = 0;
	if (!embedContext) {
		const t0 = process.hrtime.bigint();
		embedContext = await model.createEmbeddingContext({ contextSize: Math.min(cfg.ctx, trained), threads: cfg.threads });
		load = Number(process.hrtime.bigint() - t0);
	}
	const run = embedBusy.then(async () => {
		const vectors = [];
		let tokens = 0;
		const limit = Math.min(cfg.ctx, trained);
		for (const t of texts) {
			let toks = model.tokenize(t, false);
			if (toks.length > limit) {
				if (!truncate) throw new Refused(toks.length, limit);
				toks = toks.slice(0, limit);
			}
			tokens += toks.length;
			const e = await embedContext.getEmbeddingFor(toks.length ? toks : model.tokenize(" ", false));
			vectors.push(normalize(Array.from(e.vector)));
		}
		return { vectors, tokens, load };
	});
	embedBusy = run.catch(() => {});
	return run;
}

function normalize(v) {
	let s = 0;
	for (const x of v) s += x * x;
	const n = Math.sqrt(s) || 1;
	return v.map((x) => x / n);
}

// Ollama /api/show.
async function apiShow(req, res) {
	const body = await readJSON(req);
	const name = body.model ?? body.name;
	if (!sameModel(name)) return ollamaError(res, 404, `model '${name}' not found`);
	const info = { "general.architecture": arch, "general.parameter_count": model.fileInfo?.metadata?.general?.parameter_count ?? 0 };
	info[`${arch}.context_length`] = trained;
	info[`${arch}.embedding_length`] = model.embeddingVectorSize;
	info[`${arch}.block_count`] = meta?.[arch]?.block_count ?? 0;
	send(res, 200, {
		modelfile: `FROM ${path.basename(cfg.model)}\n`,
		parameters: "",
		template: templateText,
		details: { parent_model: "", format: "gguf", family: arch, families: [arch], parameter_size: "", quantization_level: "" },
		model_info: info,
		capabilities: ["completion", "tools"],
		modified_at: new Date(started).toISOString(),
	});
}

// llama-server /v1/chat/completions.
async function v1Chat(req, res) {
	const t0 = Date.now();
	const body = await readJSON(req);
	const window = Math.min(cfg.ctx, trained);
	const tools = (body.tools ?? []).filter((t) => t?.function?.name);
	const messages = (body.messages ?? []).map((m) => ({
		role: m.role,
		content: textOf(m.content),
		tool_calls: m.tool_calls?.map((tc) => ({ id: tc.id, function: { name: tc.function?.name, arguments: safeParse(tc.function?.arguments ?? "{}") } })),
		tool_call_id: m.tool_call_id,
		name: m.name,
	}));
	const tokens = tokenize(render(messages, tools));
	if (tokens.length >= window) {
		return openaiError(res, 400, llamacppRefusal(tokens.length, window), "exceed_context_size_error", { n_prompt_tokens: tokens.length, n_ctx: window });
	}
	let grammar;
	const choice = body.tool_choice;
	const forced = tools.length > 0 && (choice === "required" || (cfg.toolChoice === "required" && choice !== "none"));
	try {
		const rf = body.response_format;
		if (forced) grammar = await toolGrammar(tools);
		else if (rf?.type === "json_schema" && rf.json_schema?.schema) grammar = await schemaGrammar(rf.json_schema.schema);
		else if (rf?.type === "json_schema" && rf.schema) grammar = await schemaGrammar(rf.schema);
		else if (rf?.type === "json_object") grammar = rf.schema ? await schemaGrammar(rf.schema) : await llama.getGrammarFor("json");
	} catch (err) {
		return openaiError(res, 400, `failed to parse grammar: ${err.message}`, "invalid_request_error");
	}
	let lease;
	try {
		lease = await acquire(window, tokens);
	} catch (err) {
		if (err instanceof Busy) return openaiError(res, 503, err.message, "unavailable_error");
		throw err;
	}
	const id = "chatcmpl-" + randomBytes(12).toString("hex");
	const created = Math.floor(Date.now() / 1000);
	const stream = body.stream === true;
	const chunk = (delta, finish) => ({ choices: [{ finish_reason: finish, index: 0, delta }], created, id, model: body.model ?? cfg.name, system_fingerprint: "b-node-llama-cpp-3.21.1", object: "chat.completion.chunk" });
	if (stream) res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
	const sse = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
	let r;
	const max = [body.max_completion_tokens, body.max_tokens, body.n_predict].find((v) => typeof v === "number");
	try {
		if (stream) sse(chunk({ role: "assistant", content: null }, null));
		r = await generate(lease.slot, tokens, {
			window,
			numPredict: typeof max === "number" ? Math.floor(max) : -1,
			...sampling(body, llamacppDefaults),
			grammar,
			onText: stream && !tools.length ? (d) => sse(chunk({ content: d }, null)) : undefined,
		});
	} catch (err) {
		release(lease.slot);
		if (stream) {
			sse({ error: { code: 500, message: String(err.message ?? err), type: "server_error" } });
			return res.end();
		}
		return openaiError(res, 500, String(err.message ?? err), "server_error");
	}
	release(lease.slot);
	log("openai", r, lease, window);
	const { content, calls } = parseToolCalls(r.text, tools);
	const finish = calls.length ? "tool_calls" : r.reason;
	const toolCalls = calls.map((c) => ({ type: "function", id: callID(), function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
	const usage = { completion_tokens: r.evalCount, prompt_tokens: r.promptTokens, total_tokens: r.promptTokens + r.evalCount, prompt_tokens_details: { cached_tokens: r.cached } };
	const timings = {
		cache_n: r.cached,
		prompt_n: r.promptEval,
		prompt_ms: r.promptNs / 1e6,
		prompt_per_second: r.promptEval / (r.promptNs / 1e9 || 1),
		predicted_n: r.evalCount,
		predicted_ms: r.evalNs / 1e6,
		predicted_per_second: r.evalCount / (r.evalNs / 1e9 || 1),
	};
	if (stream) {
		if (tools.length) {
			const d = calls.length ? { tool_calls: toolCalls.map((tc, i) => ({ index: i, ...tc })) } : { content };
			sse(chunk(d, null));
		}
		const last = chunk({}, finish);
		last.timings = timings;
		if (body.stream_options?.include_usage) {
			sse(last);
			sse({ choices: [], created, id, model: body.model ?? cfg.name, system_fingerprint: "b-node-llama-cpp-3.21.1", object: "chat.completion.chunk", usage, timings });
		} else {
			sse(last);
		}
		res.write("data: [DONE]\n\n");
		return res.end();
	}
	const message = { role: "assistant", content: calls.length ? content || null : r.text };
	if (calls.length) message.tool_calls = toolCalls;
	send(res, 200, {
		choices: [{ finish_reason: finish, index: 0, message }],
		created,
		model: body.model ?? cfg.name,
		system_fingerprint: "b-node-llama-cpp-3.21.1",
		object: "chat.completion",
		usage,
		id,
		timings,
	});
	void t0;
}

async function v1Embeddings(req, res) {
	const body = await readJSON(req);
	const input = Array.isArray(body.input) ? body.input : body.input == null ? [] : [body.input];
	let out;
	try {
		out = await embed(input.map(String), false);
	} catch (err) {
		if (err instanceof Refused) {
			return openaiError(res, 400, `input (${err.n} tokens) is larger than the max context size (${err.window} tokens). skipping`, "exceed_context_size_error", { n_prompt_tokens: err.n, n_ctx: err.window });
		}
		throw err;
	}
	send(res, 200, {
		model: body.model ?? cfg.name,
		object: "list",
		usage: { prompt_tokens: out.tokens, total_tokens: out.tokens },
		data: out.vectors.map((v, i) => ({ embedding: v, index: i, object: "embedding" })),
	});
}

function log(api, r, lease, window) {
	const pps = r.promptEval / (r.promptNs / 1e9 || 1);
	const gps = r.evalCount / (r.evalNs / 1e9 || 1);
	process.stderr.write(
		`${api} slot=${lease.slot.id} window=${window} prompt=${r.promptTokens} cached=${r.cached} evaluated=${r.promptEval} (${pps.toFixed(0)} tok/s) generated=${r.evalCount} (${gps.toFixed(1)} tok/s) reason=${r.reason}\n`,
	);
}

const routes = {
	"POST /api/chat": apiChat,
	"POST /api/embed": apiEmbed,
	"POST /api/show": apiShow,
	"GET /api/version": (req, res) => send(res, 200, { version: cfg.ollamaVersion }),
	"GET /api/tags": (req, res) => send(res, 200, { models: [{ name: withTag(cfg.name), model: withTag(cfg.name), modified_at: new Date(started).toISOString(), size: 0, digest: "", details: { format: "gguf", family: arch } }] }),
	"GET /api/ps": (req, res) => send(res, 200, { models: engine.context ? [{ name: withTag(cfg.name), model: withTag(cfg.name), size: 0, digest: "", context_length: engine.window }] : [] }),
	"GET /": (req, res) => {
		res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
		res.end("Ollama is running");
	},
	"POST /v1/chat/completions": v1Chat,
	"POST /v1/embeddings": v1Embeddings,
	"GET /v1/models": (req, res) => send(res, 200, { object: "list", data: [{ id: cfg.name, object: "model", created: Math.floor(started / 1000), owned_by: "llamacpp", meta: { n_ctx_train: trained, n_embd: model.embeddingVectorSize } }] }),
	"POST /tokenize": async (req, res) => {
		const body = await readJSON(req);
		const tokens = body.add_special ? tokenize(String(body.content ?? "")) : model.tokenize(String(body.content ?? ""), body.parse_special !== false);
		send(res, 200, { tokens });
	},
	"POST /detokenize": async (req, res) => {
		const body = await readJSON(req);
		send(res, 200, { content: model.detokenize(body.tokens ?? [], false) });
	},
	"GET /props": (req, res) =>
		send(res, 200, {
			default_generation_settings: { n_ctx: Math.min(cfg.ctx, trained), params: { n_predict: -1, temperature: llamacppDefaults.temperature, top_k: 40, top_p: 0.95, min_p: 0.05 } },
			total_slots: cfg.parallel,
			model_path: path.basename(cfg.model),
			chat_template: templateText,
			build_info: "node-llama-cpp 3.21.1",
		}),
	"GET /slots": (req, res) =>
		send(
			res,
			200,
			Array.from({ length: cfg.parallel }, (_, i) => {
				const s = engine.slots[i];
				return { id: i, n_ctx: engine.window || cfg.ctx, is_processing: !!s?.busy, n_cached: s?.cached.length ?? 0 };
			}),
		),
	"GET /health": (req, res) => send(res, 200, { status: "ok" }),
};

function withTag(n) {
	return n.includes(":") ? n : `${n}:latest`;
}

// --api llamacpp serves llama-server's routes only (an Ollama route is
// 404, as on a real llama-server, which clients probe with GET
// /api/version); the default serves both.
const ollamaOnly = (k) => k.includes(" /api/") || k === "GET /";
if (cfg.api === "llamacpp") for (const k of Object.keys(routes)) if (ollamaOnly(k)) delete routes[k];

const server = http.createServer(async (req, res) => {
	const url = new URL(req.url, "http://x");
	const h = routes[`${req.method} ${url.pathname}`];
	try {
		if (!h) {
			res.writeHead(404, { "Content-Type": "text/plain" });
			return res.end("404 page not found");
		}
		await h(req, res);
	} catch (err) {
		process.stderr.write(`error: ${err.stack ?? err}\n`);
		if (!res.headersSent) {
			if (err instanceof SyntaxError) return send(res, 400, { error: err.message });
			send(res, 500, { error: String(err.message ?? err) });
		} else res.end();
	}
});
server.keepAliveTimeout = 5000;

await loadContext(Math.min(cfg.ctx, trained));
server.listen(0, "127.0.0.1", () => {
	process.stdout.write(`${server.address().port}\n`);
	process.stderr.write(`ready in ${Date.now() - started} ms: ${cfg.name} (${arch}, trained ${trained} tokens), window ${cfg.ctx}, ${cfg.parallel} slot(s), queue ${cfg.maxQueue}\n`);
});

for (const sig of ["SIGTERM", "SIGINT"]) {
	process.on(sig, () => {
		server.close();
		process.exit(0);
	});
}

function parseArgs(argv) {
	const out = {};
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (!a.startsWith("--")) continue;
		const eq = a.indexOf("=");
		if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
		else out[a.slice(2)] = argv[++i];
	}
	return out;
}

function req(v, msg) {
	if (v == null) {
		process.stderr.write(msg + "\n");
		process.exit(2);
	}
	return v;
}

function int(v, d) {
	const n = Number.parseInt(v ?? "", 10);
	return Number.isFinite(n) && n > 0 ? n : d;
}
