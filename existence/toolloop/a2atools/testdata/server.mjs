// An A2A agent built with the JavaScript SDK (@a2a-js/sdk, its express
// server): "The Almanac" answers every task with a task that completes
// with one artifact, "almanac: {the task's text} falls on a Thursday".
// It serves JSON-RPC at /rpc and its card at
// /.well-known/agent-card.json behind a bearer token, listens on
// 127.0.0.1 on a free port and prints "listening on PORT" once ready.
//
// Usage: node server.mjs TOKEN, with A2A_SDK_DIR the directory of the
// installed @a2a-js/sdk package and EXPRESS_DIR that of express.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [token] = process.argv.slice(2);
const imp = (dir, file) => import(pathToFileURL(join(dir, file)).href);
const server = await imp(process.env.A2A_SDK_DIR, "dist/server/index.js");
const expressSDK = await imp(process.env.A2A_SDK_DIR, "dist/server/express/index.js");
const express = (await imp(process.env.EXPRESS_DIR, "index.js")).default;

let card; // set once the port is known

const executor = {
  async execute(ctx, bus) {
    const text = ctx.userMessage.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join(" ");
    const base = { id: ctx.taskId, contextId: ctx.contextId };
    bus.publish({ kind: "task", data: { ...base, status: { state: 1, message: undefined, timestamp: undefined }, artifacts: [], history: [ctx.userMessage], metadata: undefined } });
    bus.publish({ kind: "artifactUpdate", data: { taskId: ctx.taskId, contextId: ctx.contextId, artifact: { artifactId: "a1", name: "answer", description: "", parts: [{ content: { $case: "text", value: "almanac: " + text + " falls on a Thursday" }, metadata: undefined, filename: "", mediaType: "text/plain" }], metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined } });
    bus.publish({ kind: "statusUpdate", data: { taskId: ctx.taskId, contextId: ctx.contextId, status: { state: 3, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined } });
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.finished();
  },
};

const app = express();
app.use((req, res, next) => {
  if (req.get("Authorization") !== "Bearer " + token) {
    res.status(401).json({ error: "missing or wrong bearer token" });
    return;
  }
  next();
});
const listener = app.listen(0, "127.0.0.1", () => {
  const port = listener.address().port;
  card = {
    name: "The Almanac",
    description: "Tells on which day of the week a date falls.",
    version: "1.0.0",
    supportedInterfaces: [{ url: `http://127.0.0.1:${port}/rpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "weekday", name: "weekday", description: "the day of the week of a date", tags: ["calendar"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    securitySchemes: {},
    securityRequirements: [],
    signatures: [],
  };
  const handler = new server.DefaultRequestHandler(card, new server.InMemoryTaskStore(), executor);
  app.use("/.well-known/agent-card.json", expressSDK.agentCardHandler({ agentCardProvider: handler }));
  app.use("/rpc", expressSDK.jsonRpcHandler({ requestHandler: handler, userBuilder: expressSDK.UserBuilder.noAuthentication }));
  console.log("listening on " + port);
});
