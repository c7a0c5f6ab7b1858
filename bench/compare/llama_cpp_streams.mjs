// Aggregate decode tok/s of llama.cpp's CPU backend with N streams decoding at once (its server's
// continuous batching: one context, N sequences, every step one token of each in one batch), to
// judge smallmind's many-stream numbers in the same run (decode_bench's tg64xN rows, which run the
// same shape: N sequences, 64 tokens each, after `DEPTH` prompt tokens).
//
//   cd /work/oracle   # where node-llama-cpp is installed (README.md "Install the oracle")
//   node /path/to/bench/compare/llama_cpp_streams.mjs MODEL.gguf [STREAMS=8] [THREADS=2] \
//        [REPETITIONS=3] [DEPTH=0]
//
// Prints one row: streams, threads, aggregate tok/s, one stream's tok/s (the same loop with one
// sequence) and their ratio. Best of the repetitions, each on a fresh context.
import path from "node:path";

import {LoadNodeLlamaCpp} from "./node_llama_cpp.mjs";

const [modelPath, streamsArg, threadsArg, repsArg, depthArg] = process.argv.slice(2);
if (!modelPath) {
  console.error("usage: node llama_cpp_streams.mjs MODEL.gguf [STREAMS] [THREADS] [REPS] [DEPTH]");
  process.exit(2);
}
const streams = Number(streamsArg || 8), threads = Number(threadsArg || 2);
const reps = Number(repsArg || 3), depth = Number(depthArg || 0);
const kGenerated = 64;
const {module, version} = await LoadNodeLlamaCpp();
const llama = await module.getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath, gpuLayers: 0, useMmap: true});
const vocab = model.tokens.nTokens ?? 32000;
// Sequence q reads the fixed pseudo-random ids shifted by q, as decode_bench's batches do.
const Id = (i, q) => 1 + ((i + q) * 7919) % (vocab - 1);
const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

// tok/s of `n` sequences decoding kGenerated tokens each, all steps batched together.
async function Run(n) {
  const ctx = await model.createContext({
    contextSize: n * (depth + kGenerated + 8), sequences: n, batchSize: Math.max(n, 128), threads,
  });
  const seqs = [];
  for (let q = 0; q < n; q++) seqs.push(ctx.getSequence());
  if (depth > 0) {
    await Promise.all(seqs.map((s, q) => s.evaluateWithoutGeneratingNewTokens(
        Array.from({length: depth}, (_, i) => Id(i, q)))));
  }
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < kGenerated; i++) {
    // One token of every sequence, queued together: node-llama-cpp decodes them in one batch.
    await Promise.all(seqs.map((s, q) => s.evaluateWithoutGeneratingNewTokens([Id(depth + i, q)])));
  }
  const tps = n * kGenerated / seconds(t0);
  await ctx.dispose();
  return tps;
}

let many = 0, one = 0;
for (let r = 0; r < reps; r++) {
  many = Math.max(many, await Run(streams));
  one = Math.max(one, await Run(1));
}
console.log(`| llama.cpp (node-llama-cpp ${version}) | ${streams} streams | ${threads} threads | ` +
            `${many.toFixed(1)} tok/s | 1 stream ${one.toFixed(1)} tok/s | ${(many / one).toFixed(2)}x |` +
            ` ${path.basename(modelPath)}, best of ${reps}`);
await model.dispose();
