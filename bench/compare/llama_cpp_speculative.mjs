// Speculative decoding in llama.cpp on a target / draft pair, beside `bench/speculation_ab.sh`
// (smallmind's served path) on the same files: single-stream decode tok/s of the target alone and
// with the draft model proposing, alternating round by round, and the drafts llama.cpp verified.
// llama.cpp comes prebuilt from the npm registry; its speculation here is node-llama-cpp's
// DraftSequenceTokenPredictor (a draft sequence of the draft model proposes, the target verifies
// the drafts in one batch), the closest to llama-server's --model-draft that the npm build offers.
// Random-weight models give the draft no confidence, so its confidence cut-off (minConfidence,
// default 0.6) is off: it drafts up to MAX_DRAFT tokens every time, as smallmind's
// --spec-max-draft does. The draft context runs DRAFT_THREADS threads (default 1): node-llama-cpp
// runs it beside the target's, and on 2 cores two contexts of 2 threads each fight over them.
//
//   cd $(mktemp -d) && npm i -E node-llama-cpp@3.22.1
//   node /path/to/bench/compare/llama_cpp_speculative.mjs TARGET.gguf DRAFT.gguf \
//     [THREADS=2] [ROUNDS=3] [REQUESTS=4] [PROMPT_TOKENS=16] [MAX_TOKENS=128] [MAX_DRAFT=8]
//
// Each request: PROMPT_TOKENS fixed pseudo-random ids (request i starts from its own offset), then
// MAX_TOKENS greedy tokens; tok/s is completion tokens over the wall time of the requests, prompts
// included, as `smallmind bench` counts it. Prints one line per round and the medians.
import {LoadNodeLlamaCpp} from "./node_llama_cpp.mjs";

const {module: {getLlama, DraftSequenceTokenPredictor}, version} = await LoadNodeLlamaCpp();

const args = process.argv.slice(2);
if (args.length < 2) {
  console.error("usage: node llama_cpp_speculative.mjs TARGET.gguf DRAFT.gguf [THREADS] [ROUNDS] " +
                "[REQUESTS] [PROMPT_TOKENS] [MAX_TOKENS] [MAX_DRAFT]");
  process.exit(2);
}
const [targetPath, draftPath] = args;
const draftThreads = Number(process.env.DRAFT_THREADS || 1);
const [threads, rounds, requests, promptTokens, maxTokens, maxDraft] =
    [2, 3, 4, 16, 128, 8].map((fallback, i) => Number(args[2 + i] || fallback));

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const target = await llama.loadModel({modelPath: targetPath, gpuLayers: 0, useMmap: true});
const draft = await llama.loadModel({modelPath: draftPath, gpuLayers: 0, useMmap: true});
const vocab = target.tokens.nTokens ?? 32000;
const contextSize = promptTokens + maxTokens + maxDraft + 16;

function Prompt(request) {
  const ids = [];
  for (let i = 0; i < promptTokens; i++) ids.push(1 + ((request * 131 + i) * 7919) % (vocab - 1));
  return ids;
}

// One round of `requests` sequential requests; returns tok/s and the drafts verified.
async function Round(speculate) {
  const ctx = await target.createContext({contextSize, batchSize: 128, threads});
  const draftCtx = speculate ?
      await draft.createContext({contextSize, batchSize: 128, threads: draftThreads}) : null;
  const predictor = speculate ? new DraftSequenceTokenPredictor(
      draftCtx.getSequence(), {maxTokens: maxDraft, minConfidence: 0}) : undefined;
  const seq = ctx.getSequence({tokenPredictor: predictor});
  let tokens = 0;
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < requests; r++) {
    if (r > 0) await seq.clearHistory();
    let n = 0;
    for await (const token of seq.evaluate(Prompt(r), {temperature: 0})) {
      void token;
      if (++n >= maxTokens) break;
    }
    tokens += n;
  }
  const {validated, refuted} = seq.tokenPredictions;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await ctx.dispose();
  if (draftCtx) await draftCtx.dispose();
  return {tps: tokens / seconds, validated, refuted};
}

const off = [], on = [];
for (let round = 1; round <= rounds; round++) {
  const a = await Round(false);
  off.push(a.tps);
  console.log(`round ${round} off: ${a.tps.toFixed(2)} tok/s`);
  const b = await Round(true);
  on.push(b.tps);
  console.log(`round ${round} on: ${b.tps.toFixed(2)} tok/s (${b.validated} of ` +
              `${b.validated + b.refuted} drafts validated)`);
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const a = median(off), b = median(on);
console.log(`llama.cpp (node-llama-cpp ${version}) median tok/s: off ${a.toFixed(1)}, on ` +
            `${b.toFixed(1)}, on/off ${(b / a).toFixed(2)}`);
await draft.dispose();
await target.dispose();
