// The conformance oracle: llama.cpp's CPU backend (prebuilt, from node-llama-cpp on npm) run on a
// GGUF over given token ids, greedily continued, recording at every step the greedy token and the
// top-5 of the full-vocabulary log-softmax of the raw logits. tests/worker/conformance compares
// smallmind with what it writes (tests/data/conformance/*.json, made by make_conformance_data.mjs).
// Nothing of llama.cpp is built or kept in this repo.
//
//   cd /work/oracle && npm i -E node-llama-cpp@3.22.1      # any folder outside the repo
//   cd /work/oracle && node /path/to/bench/compare/llama_cpp_oracle.mjs \
//       --model MODEL.gguf --cases CASES.json --out OUT.json [--threads 1]
//
// CASES.json: {"case": NAME, "model": {...how to make the file...},
//              "prompts": [{"name": NAME, "ids": [token ids], "new_tokens": N}, ...]}
// The ids are evaluated exactly as given (no tokenization, no BOS added) in one fresh context per
// prompt; then N greedy steps, each feeding the previous step's token. The logits are llama.cpp's
// raw output row (llama_get_logits_ith, passed through node-llama-cpp's sampler chain, which
// under temperature 0 is only the greedy selector: no penalty, bias, top-k or temperature touches
// them); the log-softmax is computed here in double precision over every token of the vocabulary.
// The greedy token is the highest logit, the lowest id among equals (llama.cpp's greedy sampler),
// checked against the token llama.cpp itself selected.
//
// OUT.json: CASES.json's case and model, the model file's SHA-256 and size, the oracle's versions
// and settings, and per prompt its ids and steps [{token, gap, top5: [[id, logprob] x 5]}], gap
// being the top-1 minus the top-2 logprob (a near-tie when small).
import {createHash} from "node:crypto";
import fs from "node:fs";
import path from "node:path";

import {LoadNodeLlamaCpp} from "./node_llama_cpp.mjs";

const kTopK = 5;

function ParseArgs(argv) {
  const args = {threads: 1};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, ""), value = argv[i + 1];
    if (!["model", "cases", "out", "threads"].includes(key) || value === undefined) {
      throw new Error(`unknown or valueless argument ${argv[i]}`);
    }
    args[key] = key === "threads" ? Number(value) : value;
  }
  if (!args.model || !args.cases || !args.out || !(args.threads >= 1)) {
    throw new Error("usage: node llama_cpp_oracle.mjs --model M.gguf --cases C.json --out O.json " +
                    "[--threads N]");
  }
  return args;
}

function Sha256(file) {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

// Full-vocabulary log-softmax of `logits` (Map token -> logit, every token), in double precision:
// the greedy token (lowest id among equal logits), the top 5 [id, logprob] (ties by lower id) and
// the top-1 minus top-2 gap.
function Analyse(logits, nVocab) {
  if (logits.size !== nVocab) throw new Error(`got ${logits.size} logits, vocabulary ${nVocab}`);
  const entries = [...logits.entries()];
  let max = -Infinity;
  for (const [, l] of entries) max = Math.max(max, l);
  let sum = 0;
  for (const [, l] of entries) sum += Math.exp(l - max);
  const logSum = max + Math.log(sum);
  entries.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const top = entries.slice(0, kTopK).map(([id, l]) => [id, l - logSum]);
  return {token: entries[0][0], gap: top[0][1] - top[1][1], top5: top};
}

// Rows of the classifier (output.weight, else the tied token_embd.weight): every logit.
function VocabSize(fileInfo) {
  const tensors = fileInfo.fullTensorInfo ?? fileInfo.tensorInfo ?? [];
  const t = tensors.find((x) => x.name === "output.weight") ??
            tensors.find((x) => x.name === "token_embd.weight");
  if (t == null) throw new Error("no output.weight or token_embd.weight in the file");
  return Number(t.dimensions[1]);
}

const Round = (x) => Number(x.toFixed(6));

async function RunPrompt(model, prompt, threads, nVocab) {
  const ids = prompt.ids;
  if (!Array.isArray(ids) || ids.length < 1 || !(prompt.new_tokens >= 1)) {
    throw new Error(`prompt ${prompt.name}: needs ids and new_tokens >= 1`);
  }
  const total = ids.length + prompt.new_tokens;
  const context = await model.createContext({
    contextSize: total, batchSize: Math.max(total, 32), sequences: 1,
    threads: {ideal: threads, min: threads}, flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
  });
  try {
    const sequence = context.getSequence();
    const want = {generateNext: {logits: true, token: true}};
    let input = ids.map((id, i) => (i + 1 === ids.length ? [id, want] : id));
    const steps = [];
    for (let s = 0; s < prompt.new_tokens; s++) {
      const out = await sequence.controlledEvaluate(input);
      const next = out[input.length - 1]?.next;
      if (next?.logits == null) throw new Error(`prompt ${prompt.name} step ${s}: no logits`);
      const step = Analyse(next.logits, nVocab);
      if (next.token !== step.token) {
        throw new Error(`prompt ${prompt.name} step ${s}: llama.cpp's greedy sampler picked ` +
                        `${next.token}, the logits' argmax is ${step.token}`);
      }
      steps.push({token: step.token, gap: Round(step.gap),
                  top5: step.top5.map(([id, lp]) => [id, Round(lp)])});
      input = [[step.token, want]];
    }
    return {name: prompt.name, ids, steps};
  } finally {
    await context.dispose();
  }
}

async function Main() {
  const args = ParseArgs(process.argv.slice(2));
  const cases = JSON.parse(fs.readFileSync(args.cases, "utf8"));
  const {module: nlc, version} = await LoadNodeLlamaCpp();
  const llama = await nlc.getLlama({gpu: false, build: "never", logLevel: "error",
                                    maxThreads: args.threads});
  const model = await llama.loadModel({modelPath: args.model, gpuLayers: 0, useMmap: true});
  const nVocab = VocabSize(model.fileInfo);
  const prompts = [];
  for (const prompt of cases.prompts) {
    prompts.push(await RunPrompt(model, prompt, args.threads, nVocab));
  }
  await model.dispose();
  const result = {
    case: cases.case,
    model: {...cases.model, sha256: Sha256(args.model), bytes: fs.statSync(args.model).size},
    oracle: {
      node_llama_cpp: version,
      llama_cpp: `${llama.llamaCppRelease.repo}@${llama.llamaCppRelease.release}`,
      build: llama.buildType,
      backend: "CPU",
      system_info: llama.systemInfo.trim(),
      threads: args.threads,
      kv_cache: "F32",
      flash_attention: false,
      logits: "raw, full vocabulary; log-softmax in float64; greedy = argmax, lowest id on ties",
      command: ["node", "bench/compare/llama_cpp_oracle.mjs", "--model", path.basename(args.model),
                "--cases", path.basename(args.cases), "--out", path.basename(args.out),
                "--threads", String(args.threads)].join(" "),
    },
    prompts,
  };
  fs.writeFileSync(args.out, JSON.stringify(result) + "\n");
}

Main().catch((e) => {
  console.error(`llama_cpp_oracle: ${e.message}`);
  process.exit(1);
});
