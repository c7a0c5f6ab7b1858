// A SIGTERM drain through the official `openai` npm client: streams open when the drain runs out
// end with a finish_reason "abort" chunk for each unfinished choice and an error event the client
// throws as an APIError (not "Premature close"), and a whole request still in flight gets a 503.
// Run by tests/http/openai_drain_test.cc against a gateway started with --drain-seconds 0:
//   node openai_drain_check.mjs --base-url http://127.0.0.1:PORT/v1 --model ID --gateway-pid PID
// Exits 0 when every check passed, 1 with the failures printed otherwise.
import assert from "node:assert/strict";
import OpenAI from "openai";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) =>
    a.startsWith("--") ? [...pairs, [a.slice(2), all[i + 1]]] : pairs, []));
const client = new OpenAI({ baseURL: args["base-url"], apiKey: "none", maxRetries: 0,
                            timeout: 120000 });
const long = { model: args.model, max_tokens: 8000, ignore_eos: true, temperature: 0 };

let failed = 0;
try {
  // A whole request, sent first so that it is in flight when the drain ends.
  const whole = client.chat.completions.create({ ...long, messages: [{ role: "user",
                                                                       content: "and me" }] })
    .then(() => null, (e) => e);
  const stream = await client.completions.create({ ...long, prompt: "drain me", n: 2,
                                                   stream: true });
  const finishes = new Map();
  let texts = 0;
  let thrown = null;
  try {
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        if (c.text) texts++;
        if (c.finish_reason) finishes.set(c.index, c.finish_reason);
      }
      if (texts === 1) process.kill(Number(args["gateway-pid"]), "SIGTERM");
    }
  } catch (e) {
    thrown = e;
  }
  assert.ok(texts > 0, "no text before the drain");
  assert.ok(thrown, "the stream ended without an error event");
  assert.ok(thrown instanceof OpenAI.APIError, `not an APIError: ${thrown}`);
  assert.match(thrown.message, /shutting down/, thrown.message);
  assert.deepEqual([...finishes.entries()].sort(), [[0, "abort"], [1, "abort"]]);
  const error = await whole;
  assert.ok(error instanceof OpenAI.APIError, `the whole request: ${error}`);
  assert.equal(error.status, 503, error.message);
  assert.match(error.message, /shutting down/);
  console.log("ok   drain ends streams with abort chunks and an error event; whole requests 503");
} catch (e) {
  failed++;
  console.log(`FAIL drain\n     ${e.stack ?? e}`);
}
process.exit(failed ? 1 : 0);
