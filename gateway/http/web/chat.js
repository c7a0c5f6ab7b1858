// The web chat (gateway/http/web/chat.html), served by the gateway's HTTP door at `/`. No
// framework and no build step: it lists /v1/models, streams /v1/chat/completions (the server
// renders the model's chat template), shows reasoning_content apart from content, stops a reply
// with an AbortController (the server cancels the request when the connection goes), and polls
// /stats for the server panel. With API keys on, it asks for one and sends it as Bearer.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY_ITEM = "smallmind-api-key";  // sessionStorage: the key lives as long as the tab
const state = { key: sessionStorage.getItem(KEY_ITEM) || "", history: [], controller: null };

function headers(json) {
  const h = {};
  if (json) h["Content-Type"] = "application/json";
  if (state.key) h.Authorization = "Bearer " + state.key;
  return h;
}

// fetch with the key; a 401 opens the key form and throws.
async function api(path, { body, signal } = {}) {
  const r = await fetch(path, body === undefined ? { headers: headers(false), signal }
    : { method: "POST", headers: headers(true), body: JSON.stringify(body), signal });
  if (r.status === 401) {
    $("key-form").hidden = false;
    $("key").focus();
    throw new Error("the server needs an API key");
  }
  if (!r.ok) {
    let message = r.status + " " + r.statusText;
    try { message = (await r.json()).error.message || message; } catch (_) { /* not JSON */ }
    throw new Error(message);
  }
  return r;
}

function setStatus(text) { $("status").textContent = text; }

async function loadModels() {
  const select = $("model");
  const list = await (await api("/v1/models")).json();
  select.replaceChildren(...list.data.map((m) => {
    const option = new Option(m.id, m.id);
    const facts = m.smallmind || {};
    option.dataset.facts = [facts.architecture, facts.quantization,
                            m.context_length && m.context_length + " ctx"].filter(Boolean).join(" · ");
    return option;
  }));
  showFacts();
  setStatus(list.data.length ? "" : "the server lists no model");
}

function showFacts() {
  const option = $("model").selectedOptions[0];
  $("model-facts").textContent = option ? option.dataset.facts : "";
}

// One message in the log: role, an optional reasoning section, the content, a stats line.
function addMessage(role, text) {
  const li = document.createElement("li");
  li.className = role;
  const label = document.createElement("div");
  label.className = "role";
  label.textContent = role;
  const content = document.createElement("div");
  content.className = "content";
  content.textContent = text;
  li.append(label, content);
  $("log").append(li);
  li.scrollIntoView({ block: "end" });
  return { li, content, reasoning: null, stats: null };
}

function addReasoning(view) {
  const details = document.createElement("details");
  details.className = "thinking";
  details.open = true;
  const summary = document.createElement("summary");
  summary.textContent = "Reasoning";
  view.reasoning = document.createElement("div");
  view.reasoning.className = "reasoning";
  details.append(summary, view.reasoning);
  view.li.insertBefore(details, view.content);
}

function addStats(view, text) {
  const p = document.createElement("div");
  p.className = "stats";
  p.textContent = text;
  view.li.append(p);
}

// The JSON of each `data:` event of a Server-Sent Events body, until [DONE].
async function* sseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") return;
        yield JSON.parse(data);
      }
    }
  }
}

function requestBody() {
  const messages = [];
  const system = $("system").value.trim();
  if (system) messages.push({ role: "system", content: system });
  messages.push(...state.history);
  return {
    model: $("model").value, messages, stream: true, stream_options: { include_usage: true },
    temperature: Number($("temperature").value), max_tokens: Number($("max-tokens").value),
  };
}

function describe(run) {
  const parts = [];
  if (run.first !== null) parts.push("TTFT " + Math.round(run.first - run.start) + " ms");
  const tokens = run.usage ? run.usage.completion_tokens : run.deltas;
  const seconds = (run.end - (run.first ?? run.end)) / 1000;
  if (tokens > 1 && seconds > 0) parts.push(((tokens - 1) / seconds).toFixed(1) + " tok/s");
  if (run.usage) {
    const cached = run.usage.prompt_tokens_details?.cached_tokens ?? 0;
    parts.push(run.usage.prompt_tokens + " prompt (" + cached + " cached)");
    parts.push(run.usage.completion_tokens + " generated");
  }
  parts.push(run.finish || "ended");
  return parts.join(" · ");
}

// Lets clicks and painting in between: reads of an already buffered stream resolve without
// giving the event loop a turn, so a fast stream would keep Stop from ever being clicked.
const yieldToEvents = () => new Promise((resolve) => setTimeout(resolve, 0));

async function stream(view, run, signal) {
  const r = await api("/v1/chat/completions", { body: requestBody(), signal });
  let turn = performance.now();
  for await (const event of sseEvents(r.body)) {
    if (performance.now() - turn > 16) {
      await yieldToEvents();
      turn = performance.now();
    }
    if (event.error) throw new Error(event.error.message);
    if (event.usage) run.usage = event.usage;
    for (const choice of event.choices || []) {
      const delta = choice.delta || {};
      if (delta.reasoning_content || delta.content) {
        run.first ??= performance.now();
        ++run.deltas;
      }
      // Text nodes appended, not textContent rewritten: a long answer stays linear.
      if (delta.reasoning_content) {
        if (!view.reasoning) addReasoning(view);
        view.reasoning.append(delta.reasoning_content);
      }
      if (delta.content) view.content.append(delta.content);
      if (choice.finish_reason) run.finish = choice.finish_reason;
    }
    scrollSoon(view.li);
  }
}

// Scrolls to the answer once per frame at most (a scroll per token would lay the page out for
// every token).
let scrollPending = false;
function scrollSoon(li) {
  if (scrollPending) return;
  scrollPending = true;
  requestAnimationFrame(() => {
    scrollPending = false;
    li.scrollIntoView({ block: "end" });
  });
}

async function send(text) {
  const history = state.history;  // "New chat" while this runs starts another array
  history.push({ role: "user", content: text });
  addMessage("user", text);
  const view = addMessage("assistant", "");
  const run = { start: performance.now(), first: null, end: 0, deltas: 0, usage: null, finish: "" };
  state.controller = new AbortController();
  setBusy(true);
  try {
    await stream(view, run, state.controller.signal);
  } catch (e) {
    if (e.name === "AbortError") {
      run.finish = "stopped";
    } else {
      view.li.classList.add("error");
      run.finish = "error: " + e.message;
    }
  }
  run.end = performance.now();
  addStats(view, describe(run));
  // A stopped answer stays as far as it got; a failed request leaves no turn behind.
  if (view.content.textContent) {
    history.push({ role: "assistant", content: view.content.textContent });
  } else if (view.li.classList.contains("error")) {
    history.pop();
  }
  state.controller = null;
  setBusy(false);
}

function setBusy(busy) {
  $("send").disabled = busy;
  $("stop").disabled = !busy;
  setStatus(busy ? "generating…" : "");
}

// The server panel: a few numbers of /stats, every 2 s while the tab is visible.
const PANEL = [
  ["workers up", (s) => s.workers.up + " / " + s.workers.total],
  ["running", (s) => s.running], ["queued", (s) => s.queue_depth],
  ["KV pages", (s) => s.kv_pages.used + " / " + s.kv_pages.capacity],
  ["requests ok", (s) => s.requests.OK || 0], ["cancelled", (s) => s.requests.CANCELLED || 0],
  ["failed", (s) => s.requests.failed], ["tokens out", (s) => s.tokens.generated],
  ["prefix hits", (s) => s.prefix_cache.hits + " / " + s.prefix_cache.lookups],
  ["mean TTFT", (s) => s.ttft.count ? Math.round(1000 * s.ttft.sum / s.ttft.count) + " ms" : "–"],
];

async function refreshPanel() {
  if (document.hidden) return;
  try {
    const s = await (await api("/stats")).json();
    $("server").replaceChildren(...PANEL.flatMap(([name, value]) => {
      const dt = document.createElement("dt");
      dt.textContent = name;
      const dd = document.createElement("dd");
      dd.textContent = value(s);
      dd.dataset.stat = name;
      return [dt, dd];
    }));
  } catch (e) {
    $("server").textContent = "unavailable: " + e.message;
  }
}

function start() {
  $("model").addEventListener("change", showFacts);
  $("ask").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("prompt").value.trim();
    if (!text || state.controller) return;
    $("prompt").value = "";
    send(text);
  });
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("ask").requestSubmit();
    }
  });
  $("stop").addEventListener("click", () => state.controller?.abort());
  $("reset").addEventListener("click", () => {
    state.controller?.abort();
    state.history = [];
    $("log").replaceChildren();
  });
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.key = $("key").value;
    sessionStorage.setItem(KEY_ITEM, state.key);
    $("key-form").hidden = true;
    loadModels().catch((err) => setStatus(err.message));
  });
  loadModels().catch((err) => setStatus(err.message));
  refreshPanel();
  setInterval(refreshPanel, 2000);
}

start();
