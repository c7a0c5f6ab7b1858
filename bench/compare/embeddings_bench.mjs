// Embeddings throughput beside llama.cpp on the same BERT file (issue 45's number: 64 inputs of
// 32 tokens on bench-110M-bert): ROUNDS times, one POST /v1/embeddings of all 64 inputs to a
// running smallmind gateway, then the same 64 texts through node-llama-cpp's embedding context
// (llama.cpp's CPU backend, one getEmbeddingFor per text as its API takes them), alternating so
// both see the same phases of a busy machine. Prints each round and the best of each, in inputs/s.
// With --rerank (a reranker file: bench-110M-bert-rerank) the inputs are 64 documents scored
// against one query instead: one POST /v1/rerank beside node-llama-cpp's ranking context (one
// rank() per document), each pair [CLS] query [SEP] document of TOKENS tokens.
// Run by bench/compare/embeddings_bench.sh, which starts the gateway:
//
//   cd ORACLE_DIR && node embeddings_bench.mjs URL MODEL.gguf ROUNDS THREADS [INPUTS [TOKENS]]
//       [--rerank]
import {LoadNodeLlamaCpp} from "./node_llama_cpp.mjs";

const rerank = process.argv.includes("--rerank");
const [url, file, roundsArg, threadsArg, inputsArg, tokensArg] =
    process.argv.slice(2).filter((a) => a !== "--rerank");
if (!url || !file) {
  console.error("usage: node embeddings_bench.mjs URL MODEL.gguf ROUNDS THREADS [INPUTS [TOKENS]]");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 3), threads = Number(threadsArg ?? 2);
const nInputs = Number(inputsArg ?? 64), nTokens = Number(tokensArg ?? 32);

// Texts of nTokens - 2 whole-word pieces each ([CLS] and [SEP] make nTokens): words every
// smallmind-modelgen --bert vocabulary holds, and bge's too, rotated so no two inputs are equal.
const kWords = ["the", "hello", "world", "search", "query", "embed", "a", "b", "c", "d"];
const kQueryWords = 6;  // a rerank's query; its document then has nTokens - 2 - 6 words
const words = (i, n) =>
  Array.from({length: n}, (_, k) => kWords[(i + k * 7) % kWords.length]).join(" ");
const query = words(3, kQueryWords);
const texts = Array.from({length: nInputs},
                         (_, i) => words(i, nTokens - 2 - (rerank ? kQueryWords : 0)));

async function SmallmindRerankRound() {
  const start = performance.now();
  const reply = await fetch(`${url}/v1/rerank`, {
    method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({query, documents: texts})});
  const body = await reply.json();
  const ms = performance.now() - start;
  if (!reply.ok) throw new Error(`smallmind: ${reply.status} ${JSON.stringify(body)}`);
  if (body.results.length !== nInputs || body.usage.prompt_tokens !== nInputs * nTokens) {
    throw new Error(`smallmind scored ${body.results.length} pairs of ` +
                    `${body.usage.prompt_tokens} tokens, not ${nInputs} of ${nTokens}`);
  }
  return {ms, dim: 1};
}

async function SmallmindRound() {
  const start = performance.now();
  const reply = await fetch(`${url}/v1/embeddings`, {
    method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({input: texts})});
  const body = await reply.json();
  const ms = performance.now() - start;
  if (!reply.ok) throw new Error(`smallmind: ${reply.status} ${JSON.stringify(body)}`);
  if (body.data.length !== nInputs || body.usage.prompt_tokens !== nInputs * nTokens) {
    throw new Error(`smallmind embedded ${body.data.length} inputs of ${body.usage.prompt_tokens} ` +
                    `tokens, not ${nInputs} of ${nTokens}`);
  }
  return {ms, dim: body.data[0].embedding.length};
}

async function LlamaCppRound(context) {
  const start = performance.now();
  for (const text of texts) {
    await (rerank ? context.rank(query, text) : context.getEmbeddingFor(text));
  }
  return {ms: performance.now() - start};
}

const {module: nlc, version} = await LoadNodeLlamaCpp();
const llama = await nlc.getLlama({gpu: false, build: "never", logLevel: "error",
                                  maxThreads: threads});
const model = await llama.loadModel({modelPath: file, gpuLayers: 0, useMmap: true});
const context = rerank ? await model.createRankingContext({threads})
                       : await model.createEmbeddingContext({threads});
const evaluated = rerank ? context.calculateInputLength(query, texts[0])
                         : context.calculateInputLength(texts[0]);
if (evaluated !== nTokens) {
  throw new Error(`llama.cpp evaluates ${evaluated} tokens per input, not ${nTokens}`);
}
const best = {smallmind: Infinity, llamacpp: Infinity};
console.log(`${nInputs} ${rerank ? "pairs" : "inputs"} x ${nTokens} tokens, ${threads} ` +
            `threads, node-llama-cpp ${version}`);
for (let r = 1; r <= rounds; r++) {
  const s = await (rerank ? SmallmindRerankRound() : SmallmindRound());
  const l = await LlamaCppRound(context);
  best.smallmind = Math.min(best.smallmind, s.ms);
  best.llamacpp = Math.min(best.llamacpp, l.ms);
  console.log(`round ${r}: smallmind ${s.ms.toFixed(1)} ms (dim ${s.dim}), llama.cpp ` +
              `${l.ms.toFixed(1)} ms`);
}
const rate = (ms) => (nInputs * 1000 / ms).toFixed(1);
console.log(`best: smallmind ${rate(best.smallmind)} inputs/s, llama.cpp ${rate(best.llamacpp)} ` +
            `inputs/s, ratio ${(best.llamacpp / best.smallmind).toFixed(2)}x`);
await context.dispose();
await model.dispose();
