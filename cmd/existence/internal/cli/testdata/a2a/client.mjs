// An A2A client built with the JavaScript SDK (@a2a-js/sdk): it reads an
// agent's card, sends it a task as a streaming message, follows the
// stream to the end and prints what it saw as one JSON object:
//
//	{"states": [...], "final": "TASK_STATE_COMPLETED", "artifacts": [{"name", "text"}], "tenant": "..."}
//
// Usage: node client.mjs CARD_URL TOKEN TEXT [BINDING]
// with A2A_SDK_DIR the directory of the installed @a2a-js/sdk package and
// BINDING JSONRPC (default) or HTTP+JSON.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [cardURL, token, text, binding = "JSONRPC"] = process.argv.slice(2);
const sdk = await import(pathToFileURL(join(process.env.A2A_SDK_DIR, "dist/client/index.js")).href);
const { ClientFactory, JsonRpcTransportFactory, RestTransportFactory, DefaultAgentCardResolver } = sdk;

// Every request carries the run's bearer token, and none waits for ever.
const authFetch = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("Authorization", "Bearer " + token);
  return fetch(url, { ...init, headers, redirect: "error" });
};

const factory = new ClientFactory({
  transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch }), new RestTransportFactory({ fetchImpl: authFetch })],
  preferredTransports: [binding],
  cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
});
const client = await factory.createFromUrl(cardURL, "");

const out = { states: [], artifacts: [], final: "" };
const signal = AbortSignal.timeout(120_000);
let taskId = "";
for await (const ev of client.sendMessageStream(
  { message: { messageId: "js-" + Date.now(), role: 1, parts: [{ content: { $case: "text", value: text } }] } },
  { signal },
)) {
  const p = ev.payload;
  if (!p) continue;
  if (p.$case === "task") {
    taskId = p.value.id;
    out.states.push(stateName(p.value.status.state));
  } else if (p.$case === "statusUpdate") {
    out.states.push(stateName(p.value.status.state));
  } else if (p.$case === "artifactUpdate") {
    const part = p.value.artifact.parts[0];
    out.artifacts.push({ name: p.value.artifact.name, text: part?.content?.$case === "text" ? part.content.value : "" });
  }
}
const task = await client.getTask({ id: taskId }, { signal });
out.final = stateName(task.status.state);
out.task = taskId;
out.stored_artifacts = (task.artifacts ?? []).map((a) => a.name);
console.log(JSON.stringify(out));

function stateName(s) {
  return typeof s === "string" ? s : (sdk.TaskState?.[s] ?? ["TASK_STATE_UNSPECIFIED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"][s] ?? String(s));
}
