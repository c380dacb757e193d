// A tool_search_code script: find a tool, call it, return what the model needs.
const [hit] = await openclaw.tools.search("open a github issue", { limit: 1 });
const r = await openclaw.tools.call(hit.id, { owner: "acme", repo: "app", title: "Login fails" });
return { tool: hit.id, sent: r.result.details };
