// The Anthropic Messages door through the official `@anthropic-ai/sdk` npm client: a whole
// message, a stream's event sequence, count_tokens, a forced tool call and its tool_result round
// trip, Anthropic-shaped errors and x-api-key auth.
// Run by tests/http/http_api_test.cc against a real gateway + worker with an API key:
//   node anthropic_client_test.mjs --base-url http://127.0.0.1:PORT --model ID --api-key KEY
// Exits 0 when every check passed, 1 with the failures printed otherwise.
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) =>
    a.startsWith("--") ? [...pairs, [a.slice(2), all[i + 1]]] : pairs, []));
const client = new Anthropic({ baseURL: args["base-url"], apiKey: args["api-key"],
                               maxRetries: 0, timeout: 120000 });
const model = args.model;
const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const user = (text) => [{ role: "user", content: text }];

check("a whole message: text block, stop_reason max_tokens, usage", async () => {
  const m = await client.messages.create({ model, max_tokens: 8, temperature: 0,
                                           messages: user("Tell me a story.") });
  assert.equal(m.type, "message");
  assert.equal(m.role, "assistant");
  assert.equal(m.content[0].type, "text");
  assert.ok(m.content[0].text.length > 0);
  assert.equal(m.stop_reason, "max_tokens");
  assert.equal(m.usage.output_tokens, 8);
  assert.ok(m.usage.input_tokens > 0);
});

check("a stream: message_start ... message_stop, the same text as the whole message", async () => {
  const req = { model, max_tokens: 10, temperature: 0, messages: user("Once upon a time") };
  const whole = await client.messages.create(req);
  const types = [];
  let text = "";
  const stream = await client.messages.create({ ...req, stream: true });
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
      text += event.delta.text;
    }
  }
  assert.equal(types[0], "message_start");
  assert.equal(types[types.length - 1], "message_stop");
  assert.ok(types.includes("content_block_start") && types.includes("content_block_stop"));
  assert.ok(types.includes("message_delta"));
  assert.equal(text, whole.content[0].text);
});

check("count_tokens counts the rendered prompt", async () => {
  const short = await client.messages.countTokens({ model, messages: user("Hi") });
  const long = await client.messages.countTokens({ model, messages: user("Hi there, how are you today?") });
  assert.ok(short.input_tokens > 0);
  assert.ok(long.input_tokens > short.input_tokens);
});

check("a forced tool call comes back as tool_use, and its tool_result is taken", async () => {
  const tools = [{ name: "get_weather", description: "Weather of a city",
                   input_schema: { type: "object", properties: { city: { type: "string" } },
                                   required: ["city"] } }];
  const m = await client.messages.create({
    model, max_tokens: 40, temperature: 0, tools,
    tool_choice: { type: "tool", name: "get_weather" }, messages: user("Weather in Paris?") });
  assert.equal(m.stop_reason, "tool_use");
  const call = m.content.find((b) => b.type === "tool_use");
  assert.ok(call, JSON.stringify(m.content));
  assert.equal(call.name, "get_weather");
  assert.equal(typeof call.input.city, "string");
  const next = await client.messages.create({
    model, max_tokens: 6, temperature: 0, tools, messages: [
      ...user("Weather in Paris?"), { role: "assistant", content: m.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny" }] }] });
  assert.equal(next.type, "message");
});

check("a missing max_tokens is a 400 invalid_request_error", async () => {
  await assert.rejects(client.messages.create({ model, messages: user("x") }),
                       (e) => e.status === 400 && e.error?.error?.type === "invalid_request_error");
});

check("a wrong x-api-key is a 401 authentication_error", async () => {
  const wrong = new Anthropic({ baseURL: args["base-url"], apiKey: "nope", maxRetries: 0 });
  await assert.rejects(wrong.messages.create({ model, max_tokens: 2, messages: user("x") }),
                       (e) => e.status === 401 && e.error?.error?.type === "authentication_error");
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
