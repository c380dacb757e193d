// A client of the official MCP TypeScript SDK, as Claude Desktop and most MCP clients are: it connects to the
// server described by the JSON spec in argv[2], sends every call of the spec the moment initialize has been
// answered (all at once, as a chat started at once or a scripted agent does), and prints one JSON object:
// {initializeMs, results: [{name, sentAfterInitializeMs, tookMs, isError, text, error}]}.
//
// spec: {"command": "...", "args": [...], "env": {...}} for stdio, or {"url": "...", "token": "..."} for
// streamable HTTP; "calls": [{"name": "...", "arguments": {...}}]; "listTools": true to list tools first;
// "lists": ["resources", "resourceTemplates", "prompts"] sends those listings at once too, each result's text
// being the number of entries listed.
// "elicit": {"action": "accept" | "decline" | "cancel" | "never", "delayMs": n, "content": {...}} declares the
// elicitation capability (form mode) and answers every elicitation/create that way after delayMs ("never" leaves
// it unanswered); without "elicit" the client declares no elicitation, as many clients do. What the server asked
// is printed as "elicitations": [{message, requestedSchema, mode}].
// "then": [calls] are sent, all at once again, after every call of "calls" has been answered (their results
// follow the first ones).
// "resetTimeoutOnProgress": true makes each call ask for progress notifications and restart its request timeout
// (the SDK's 60 s unless "timeoutMs" says otherwise) on each one, as the SDK lets a client do; each call's result
// then counts them in "progress".
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const spec = JSON.parse(process.argv[2]);
const transport = spec.url
  ? new StreamableHTTPClientTransport(new URL(spec.url), {
      requestInit: spec.token ? { headers: { Authorization: `Bearer ${spec.token}` } } : undefined,
    })
  : new StdioClientTransport({
      command: spec.command,
      args: spec.args ?? [],
      env: { ...process.env, ...(spec.env ?? {}) },
      stderr: "inherit",
    });
const client = new Client(
  { name: "ts-sdk-test-client", version: "1.0.0" },
  spec.elicit ? { capabilities: { elicitation: { form: {} } } } : undefined,
);
const elicitations = [];
if (spec.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const { message, requestedSchema, mode } = request.params;
    elicitations.push({ message, requestedSchema, mode: mode ?? "form" });
    if (spec.elicit.action === "never") {
      return new Promise(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, spec.elicit.delayMs ?? 0));
    return spec.elicit.action === "accept"
      ? { action: "accept", content: spec.elicit.content ?? {} }
      : { action: spec.elicit.action };
  });
}

const began = performance.now();
await client.connect(transport);
const initialized = performance.now();
const out = { initializeMs: Math.round(initialized - began), results: [] };

const requests = [];
if (spec.listTools) {
  requests.push(
    client.listTools().then(
      (r) => ({ name: "tools/list", text: JSON.stringify(r.tools.map((t) => t.name)) }),
      (e) => ({ name: "tools/list", error: String(e?.message ?? e) }),
    ),
  );
}
for (const what of spec.lists ?? []) {
  const sent = performance.now();
  const list = {
    resources: () => client.listResources().then((r) => r.resources.length),
    resourceTemplates: () => client.listResourceTemplates().then((r) => r.resourceTemplates.length),
    prompts: () => client.listPrompts().then((r) => r.prompts.length),
  }[what];
  requests.push(
    list().then(
      (n) => ({ name: what, sentAfterInitializeMs: Math.round(sent - initialized), tookMs: Math.round(performance.now() - sent), text: String(n) }),
      (e) => ({ name: what, error: String(e?.message ?? e) }),
    ),
  );
}
const callAll = (calls) => calls.map((call) => {
  const sent = performance.now();
  let progress = 0;
  const options = spec.resetTimeoutOnProgress
    ? { onprogress: () => progress++, resetTimeoutOnProgress: true, timeout: spec.timeoutMs }
    : { timeout: spec.timeoutMs };
  return client.callTool({ name: call.name, arguments: call.arguments ?? {} }, undefined, options).then(
    (r) => ({
      progress,
      name: call.name,
      sentAfterInitializeMs: Math.round(sent - initialized),
      tookMs: Math.round(performance.now() - sent),
      isError: Boolean(r.isError),
      text: (r.content ?? []).map((c) => (c.type === "text" ? c.text : JSON.stringify(c))).join("\n"),
    }),
    (e) => ({ name: call.name, sentAfterInitializeMs: Math.round(sent - initialized), error: String(e?.message ?? e) }),
  );
});
requests.push(...callAll(spec.calls ?? []));
out.results = await Promise.all(requests);
out.results.push(...(await Promise.all(callAll(spec.then ?? []))));
out.elicitations = elicitations;
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
