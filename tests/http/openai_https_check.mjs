// The HTTP door over HTTPS with an API key, through the official `openai` npm client. Run by
// tests/http/https_door_test.cc with NODE_EXTRA_CA_CERTS naming the test CA:
//   node openai_https_check.mjs --base-url https://127.0.0.1:PORT/v1 --api-key KEY --model ID
// Exits 0 when every check passed, 1 with the failures printed otherwise.
import assert from "node:assert/strict";
import OpenAI from "openai";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) =>
    a.startsWith("--") ? [...pairs, [a.slice(2), all[i + 1]]] : pairs, []));
const options = { baseURL: args["base-url"], maxRetries: 0, timeout: 60000 };
const client = new OpenAI({ ...options, apiKey: args["api-key"] });
const stranger = new OpenAI({ ...options, apiKey: "not-" + args["api-key"] });
const model = args.model;
const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check("models list over HTTPS with the key", async () => {
  const page = await client.models.list();
  assert.equal(page.data.length, 1);
  assert.equal(page.data[0].id, model);
});

check("streamed completion over HTTPS ends with a finish_reason", async () => {
  const stream = await client.completions.create({
    model, prompt: "Once upon a time", max_tokens: 6, temperature: 0, stream: true });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.ok(chunks.length >= 1);
  assert.ok(["stop", "length"].includes(chunks[chunks.length - 1].choices[0].finish_reason));
});

check("a wrong key is a 401 AuthenticationError", async () => {
  await assert.rejects(stranger.models.list(), (e) => {
    assert.ok(e instanceof OpenAI.AuthenticationError, `got ${e?.constructor?.name}: ${e}`);
    assert.equal(e.status, 401);
    return true;
  });
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    console.log(`ok: ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAILED: ${name}: ${e?.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
