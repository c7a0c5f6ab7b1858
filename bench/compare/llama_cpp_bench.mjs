// pp128 / tg64 of llama.cpp's CPU backend on a GGUF, measured the way `smallmind bench --offline`
// measures smallmind, so the two can run back to back on one machine (issue 4 judges the ratio).
// llama.cpp comes prebuilt from the npm registry (node-llama-cpp picks the CPU variant for this
// processor, e.g. haswell = AVX2+FMA+F16C on Zen 3); nothing of it is built or kept in this repo.
//
//   cd $(mktemp -d) && npm i -E node-llama-cpp@3.22.1
//   node /path/to/bench/compare/llama_cpp_bench.mjs MODEL.gguf [THREADS=2] [REPETITIONS=3]
//
// pp128: one 128-token prompt in one batch, logits of the last token only. tg64: 64 single-token
// steps from an empty context. Token ids are the fixed pseudo-random ones smallmind's offline bench
// uses. Best of the repetitions, each on a fresh context.
import path from "node:path";

import {LoadNodeLlamaCpp} from "./node_llama_cpp.mjs";

const {module: {getLlama}, version} = await LoadNodeLlamaCpp();  // resolved from the cwd

const [modelPath, threadsArg, repsArg] = process.argv.slice(2);
if (!modelPath) {
  console.error("usage: node llama_cpp_bench.mjs MODEL.gguf [THREADS] [REPETITIONS]");
  process.exit(2);
}
const threads = Number(threadsArg || 2), reps = Number(repsArg || 3);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath, gpuLayers: 0, useMmap: true});
const vocab = model.tokens.nTokens ?? 32000;
const ids = [];
for (let i = 0; i < 128; i++) ids.push(1 + (i * 7919) % (vocab - 1));

const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;
let pp = 0, tg = 0;
for (let r = 0; r < reps; r++) {
  const ctx = await model.createContext({contextSize: 512, batchSize: 128, threads});
  const seq = ctx.getSequence();
  let t0 = process.hrtime.bigint();
  await seq.evaluateWithoutGeneratingNewTokens(ids);
  pp = Math.max(pp, 128 / seconds(t0));
  await seq.clearHistory();
  t0 = process.hrtime.bigint();
  for (let i = 0; i < 64; i++) await seq.evaluateWithoutGeneratingNewTokens([ids[i]]);
  tg = Math.max(tg, 64 / seconds(t0));
  await ctx.dispose();
}
console.log(`| llama.cpp (node-llama-cpp ${version}) | ${threads} | ${pp.toFixed(1)} | ${tg.toFixed(1)} |` +
            ` ${path.basename(modelPath)}, best of ${reps}`);
await model.dispose();
