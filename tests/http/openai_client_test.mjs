// The HTTP door through the official `openai` npm client: models list, chat (streamed and whole,
// with usage), completion with stop and seed, greedy completion against run.c's golden text,
// JSON output (response_format json_object and json_schema), logit_bias, a forced tool call, the
// agent round trip (content null + tool_calls, then a tool message), n choices, embeddings (float
// and base64).
// Run by tests/http/http_api_test.cc against a real gateway + worker:
//   node openai_client_test.mjs --base-url http://127.0.0.1:PORT/v1 --model ID [--golden FILE]
// Exits 0 when every check passed, 1 with the failures printed otherwise.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import OpenAI from "openai";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) =>
    a.startsWith("--") ? [...pairs, [a.slice(2), all[i + 1]]] : pairs, []));
const client = new OpenAI({ baseURL: args["base-url"], apiKey: args["api-key"] ?? "none",
                            maxRetries: 0, timeout: 120000 });
const model = args.model;
const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check("models list names the served model with its context length", async () => {
  const page = await client.models.list();
  assert.equal(page.data.length, 1);
  assert.equal(page.data[0].id, model);
  assert.equal(page.data[0].object, "model");
  assert.ok(page.data[0].context_length > 0);
});

check("chat stream: role first, content deltas, finish_reason last, usage chunk", async () => {
  const stream = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Tell me a story." }], max_tokens: 12,
    temperature: 0, stream: true, stream_options: { include_usage: true } });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.ok(chunks.length >= 3, `only ${chunks.length} chunks`);
  assert.equal(chunks[0].choices[0].delta.role, "assistant");
  assert.ok(chunks[0].id.startsWith("chatcmpl-"));
  assert.equal(chunks[0].object, "chat.completion.chunk");
  const choiceChunks = chunks.filter((c) => c.choices.length > 0);
  const last = choiceChunks[choiceChunks.length - 1];
  assert.ok(["stop", "length"].includes(last.choices[0].finish_reason));
  for (const c of choiceChunks.slice(0, -1)) assert.equal(c.choices[0].finish_reason, null);
  const usage = chunks[chunks.length - 1];
  assert.equal(usage.choices.length, 0);
  assert.ok(usage.usage.completion_tokens > 0 && usage.usage.completion_tokens <= 12);
  assert.equal(usage.usage.total_tokens, usage.usage.prompt_tokens + usage.usage.completion_tokens);
  const text = choiceChunks.map((c) => c.choices[0].delta.content ?? "").join("");
  // The same request whole gives the same text (greedy).
  const whole = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Tell me a story." }], max_tokens: 12,
    temperature: 0 });
  assert.equal(whole.choices[0].message.content, text);
});

check("chat non-stream with usage and array-of-parts content", async () => {
  const r = await client.chat.completions.create({
    model, max_completion_tokens: 8, temperature: 0,
    messages: [{ role: "system", content: "Be brief." },
               { role: "user", content: [{ type: "text", text: "Hi" }] }] });
  assert.equal(r.object, "chat.completion");
  assert.ok(r.id.startsWith("chatcmpl-"));
  assert.equal(r.model, model);
  assert.match(r.system_fingerprint, /^fp_[0-9a-f]{16}_[a-z0-9]+_(f16|q8|f32)$/);  // model, ISA, KV type
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, "assistant");
  assert.equal(typeof r.choices[0].message.content, "string");
  assert.ok(["stop", "length"].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 8);
});

check("completion with stop and seed: same seed same text, stop string cut", async () => {
  const ask = (seed) => client.completions.create({
    model, prompt: "Once upon a time", max_tokens: 40, temperature: 0.8, seed });
  const [a, b] = [await ask(7), await ask(7)];
  assert.equal(a.object, "text_completion");
  assert.ok(a.id.startsWith("cmpl-"));
  assert.equal(a.choices[0].text, b.choices[0].text);
  const text = a.choices[0].text;
  const word = text.trim().split(/\s+/)[1];
  assert.ok(word, `too little text: ${JSON.stringify(text)}`);
  const stopped = await client.completions.create({
    model, prompt: "Once upon a time", max_tokens: 40, temperature: 0.8, seed: 7, stop: [word] });
  assert.equal(stopped.choices[0].finish_reason, "stop");
  assert.equal(stopped.choices[0].text, text.slice(0, text.indexOf(word)));
});

check("streamed completion equals the whole one", async () => {
  const req = { model, prompt: "The cat", max_tokens: 16, temperature: 0 };
  const whole = await client.completions.create(req);
  let text = "";
  let finish = null;
  for await (const c of await client.completions.create({ ...req, stream: true })) {
    text += c.choices[0]?.text ?? "";
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(text, whole.choices[0].text);
  assert.equal(finish, whole.choices[0].finish_reason);
});

if (args.golden) {
  check("greedy completion is run.c's golden text", async () => {
    const cases = readFileSync(args.golden, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const golden = cases.find((c) => c.prompt === "Once upon a time");
    assert.ok(golden, "no 'Once upon a time' case");
    const r = await client.completions.create({
      model, prompt: golden.prompt, max_tokens: 200, temperature: 0 });
    const expected = golden.text.slice(golden.prompt.length);
    assert.equal(r.choices[0].text.slice(0, expected.length), expected);
  });
}

check("response_format json_object: the reply is an object or the beginning of one", async () => {
  const r = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Describe a cat as JSON." }], max_tokens: 24,
    temperature: 0, response_format: { type: "json_object" } });
  const text = r.choices[0].message.content;
  assert.match(text, /^\s?\{/, `not an object: ${JSON.stringify(text)}`);
  if (r.choices[0].finish_reason === "stop") assert.equal(typeof JSON.parse(text), "object");
  else assert.equal(r.choices[0].finish_reason, "length");
});

check("response_format json_schema: the reply follows the schema's keys in order", async () => {
  const schema = { type: "object", additionalProperties: false, required: ["name", "legs"],
                   properties: { name: { type: "string" }, legs: { type: "integer" } } };
  const r = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "A cat as JSON." }], max_tokens: 60, seed: 3,
    response_format: { type: "json_schema", json_schema: { name: "cat", strict: true, schema } } });
  const text = r.choices[0].message.content;
  assert.match(text, /^\s?\{\s?(\n\s*)?"n/, `not the schema's first key: ${JSON.stringify(text)}`);
  if (r.choices[0].finish_reason === "stop") {
    const value = JSON.parse(text);
    assert.deepEqual(Object.keys(value), ["name", "legs"]);
    assert.equal(typeof value.name, "string");
    assert.ok(Number.isInteger(value.legs), text);
  } else {
    assert.equal(r.choices[0].finish_reason, "length");
  }
  await assert.rejects(
    client.chat.completions.create({
      model, messages: [{ role: "user", content: "x" }],
      response_format: { type: "json_schema", json_schema: { name: "s", schema: {
        type: "object", properties: { s: { type: "string", pattern: "^a" } } } } } }),
    (e) => e.status === 400 && e.error?.param === "response_format" && /pattern/.test(e.message));
});

check("logit_bias: +100 on a token makes every token that one; 101 is a 400", async () => {
  const base = args["base-url"].replace(/\/v1\/?$/, "");
  const headers = { "Content-Type": "application/json" };
  if (args["api-key"]) headers.Authorization = `Bearer ${args["api-key"]}`;
  const tok = await (await fetch(`${base}/tokenize`, { method: "POST", headers,
    body: JSON.stringify({ content: "Once", with_pieces: true }) })).json();
  const { id, piece } = tok.tokens.at(-1);
  const word = piece.replace(/\u2581/g, "");
  assert.ok(word.length > 0, JSON.stringify(tok));
  const r = await client.completions.create({
    model, prompt: "The cat", max_tokens: 3, temperature: 0, logit_bias: { [id]: 100 } });
  assert.equal(r.choices[0].text.split(word).length - 1, 3, JSON.stringify(r.choices[0].text));
  await assert.rejects(
    client.completions.create({ model, prompt: "x", logit_bias: { [id]: 101 } }),
    (e) => e.status === 400 && e.error?.param === "logit_bias" && /\[-100, 100\]/.test(e.message));
});

// The function name and the arguments of `req`'s call streamed, accumulated as client code does.
async function streamedCall(req) {
  let args = "";
  let name = null;
  for await (const c of await client.chat.completions.create({ ...req, stream: true })) {
    for (const t of c.choices[0]?.delta?.tool_calls ?? []) {
      name = t.function?.name ?? name;
      args += t.function?.arguments ?? "";
    }
  }
  return { name, args };
}

check("tool_choice naming a function: bounded arguments as tool_calls, streamed pieces add up", async () => {
  const tools = [{ type: "function", function: { name: "pick_animal", description: "Name an animal",
    parameters: { type: "object", properties: { animal: { enum: ["cat", "dog", "bird"] },
                                                 count: { type: "integer", minimum: 1,
                                                          maximum: 9 },
                                                 weight: { type: "number", exclusiveMinimum: 0,
                                                           maximum: 12.5 } },
                  required: ["animal", "count", "weight"], additionalProperties: false } } }];
  const req = { model, messages: [{ role: "user", content: "Once upon a time" }], tools,
                tool_choice: { type: "function", function: { name: "pick_animal" } },
                max_tokens: 60, temperature: 0 };
  const r = await client.chat.completions.create(req);
  const message = r.choices[0].message;
  assert.equal(message.content, null);
  assert.equal(message.tool_calls.length, 1);
  const call = message.tool_calls[0];
  assert.equal(call.type, "function");
  assert.equal(call.function.name, "pick_animal");
  assert.ok(call.id.startsWith("call_"), call.id);
  if (r.choices[0].finish_reason === "stop") {
    const args = JSON.parse(call.function.arguments);
    assert.ok(["cat", "dog", "bird"].includes(args.animal), call.function.arguments);
    assert.ok(Number.isInteger(args.count) && args.count >= 1 && args.count <= 9,
              call.function.arguments);
    assert.ok(typeof args.weight === "number" && args.weight > 0 && args.weight <= 12.5,
              call.function.arguments);
  } else {
    assert.match(call.function.arguments, /^\s*\{\s*"animal"/);
  }
  const { name, args } = await streamedCall(req);
  assert.equal(name, "pick_animal");
  assert.equal(args, call.function.arguments);
});

check("tool_choice required among two tools: a call of one, whole and streamed alike", async () => {
  const tools = [
    { type: "function", function: { name: "pick_animal", parameters: { type: "object",
      properties: { animal: { enum: ["cat", "dog"] } }, required: ["animal"] } } },
    { type: "function", function: { name: "pick_number", parameters: { type: "object",
      properties: { n: { type: "number", minimum: 0, maximum: 1 } }, required: ["n"] } } }];
  const req = { model, messages: [{ role: "user", content: "Once upon a time" }], tools,
                tool_choice: "required", max_tokens: 60, temperature: 0 };
  const r = await client.chat.completions.create(req);
  const message = r.choices[0].message;
  assert.equal(message.content, null);
  const call = message.tool_calls[0];
  assert.ok(["pick_animal", "pick_number"].includes(call.function.name), JSON.stringify(message));
  if (r.choices[0].finish_reason === "stop") {
    const args = JSON.parse(call.function.arguments);
    if (call.function.name === "pick_animal") {
      assert.ok(["cat", "dog"].includes(args.animal), call.function.arguments);
    } else {
      assert.ok(args.n >= 0 && args.n <= 1, call.function.arguments);
    }
  }
  const { name, args } = await streamedCall(req);
  assert.equal(name, call.function.name);
  assert.equal(args, call.function.arguments);
});

check("the agent round trip: content null with tool_calls, then a tool message", async () => {
  const messages = [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function",
      function: { name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) } }] },
    { role: "tool", tool_call_id: "call_1", content: "21 degrees" }];
  const tools = [{ type: "function", function: { name: "get_weather", parameters: {
    type: "object", properties: { city: { type: "string" } } } } }];
  const r = await client.chat.completions.create({ model, messages, tools, max_tokens: 4,
                                                   temperature: 0 });
  assert.equal(r.choices[0].message.role, "assistant");
  // The prompt shows the call and its result (the ChatML fallback: stories260K has no template).
  const base = args["base-url"].replace(/\/v1\/?$/, "");
  const headers = { "Content-Type": "application/json" };
  if (args["api-key"]) headers.Authorization = `Bearer ${args["api-key"]}`;
  const prompt = (await (await fetch(`${base}/apply-template`, { method: "POST", headers,
    body: JSON.stringify({ messages, tools }) })).json()).prompt;
  assert.ok(prompt.includes('<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}' +
                            "\n</tool_call>"), prompt);
  assert.ok(prompt.includes("<tool_response>\n21 degrees\n</tool_response>"), prompt);
});

check("n choices: each its own sequence, choice i is n = 1 with seed + i, usage adds up", async () => {
  const req = { model, prompt: "Once upon a time", max_tokens: 30, temperature: 1.5, seed: 40,
                deterministic: true };
  const r = await client.completions.create({ ...req, n: 3 });
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2]);
  const alone = await Promise.all([0, 1, 2].map((i) =>
    client.completions.create({ ...req, seed: 40 + i })));
  for (let i = 0; i < 3; i++) assert.equal(r.choices[i].text, alone[i].choices[0].text, `choice ${i}`);
  assert.ok(new Set(r.choices.map((c) => c.text)).size > 1, JSON.stringify(r.choices));
  assert.equal(r.usage.prompt_tokens, alone[0].usage.prompt_tokens);
  assert.equal(r.usage.completion_tokens,
               alone.reduce((sum, a) => sum + a.usage.completion_tokens, 0));
  // Streamed: chunks name their choice; each finishes; one usage chunk for all.
  const texts = ["", "", ""];
  const finish = [null, null, null];
  let usage = null;
  for await (const c of await client.completions.create({ ...req, n: 3, stream: true,
                                                          stream_options: { include_usage: true } })) {
    for (const choice of c.choices) {
      texts[choice.index] += choice.text ?? "";
      finish[choice.index] = choice.finish_reason ?? finish[choice.index];
    }
    usage = c.usage ?? usage;
  }
  assert.deepEqual(texts, r.choices.map((c) => c.text));
  assert.deepEqual(finish, r.choices.map((c) => c.finish_reason));
  assert.equal(usage.completion_tokens, r.usage.completion_tokens);
  // The choices after the first start once it has its first token: they find the prompt's full
  // KV blocks in the worker's prefix cache (a prompt this test sends nowhere else).
  const shared = await client.completions.create({ model, n: 3, max_tokens: 4, seed: 1,
    prompt: "A little dog ran in the park with a red ball and a happy girl. ".repeat(4) });
  assert.ok(shared.usage.prompt_tokens_details.cached_tokens >= 16, JSON.stringify(shared.usage));
  const chat = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Hi" }], max_tokens: 6, n: 2, seed: 1 });
  assert.deepEqual(chat.choices.map((c) => c.index), [0, 1]);
  await assert.rejects(client.completions.create({ ...req, n: 9 }),
                       (e) => e.status === 400 && e.error?.param === "n" && /at most 8/.test(e.message));
});

check("a bad field is a 400 APIError naming it", async () => {
  await assert.rejects(
    client.completions.create({ model, prompt: "x", top_p: 5 }),
    (e) => e.status === 400 && e.error?.param === "top_p" && /top_p/.test(e.message));
});

check("embeddings: float, and base64 the client decodes itself, give the same unit vectors", async () => {
  // A generation model embeds with last-token pooling asked (smallmind's `pooling`).
  const input = ["Once upon a time", "The cat sat."];
  const f = await client.embeddings.create({ model, input, encoding_format: "float",
                                             pooling: "last" });
  const b = await client.embeddings.create({ model, input, pooling: "last" });  // base64 on the wire
  assert.equal(f.object, "list");
  assert.equal(f.data.length, 2);
  assert.ok(f.usage.prompt_tokens > 0);
  assert.equal(f.usage.total_tokens, f.usage.prompt_tokens);
  for (let i = 0; i < 2; i++) {
    assert.equal(f.data[i].index, i);
    const v = f.data[i].embedding, w = b.data[i].embedding;
    assert.ok(Array.isArray(v) && v.length > 0);
    assert.equal(w.length, v.length);
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-5, `norm ${norm}`);
    for (let k = 0; k < v.length; k++) assert.ok(Math.abs(v[k] - w[k]) < 1e-6);
  }
  await assert.rejects(client.embeddings.create({ model, input: "" , pooling: "last" }),
                       (e) => e.status === 400 && e.error?.param === "input");
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n     ${e.stack ?? e}`);
  }
}
console.log(failed ? `${failed} of ${checks.length} checks failed` : `all ${checks.length} passed`);
process.exit(failed ? 1 : 0);
