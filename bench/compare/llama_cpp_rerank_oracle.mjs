// The rerank oracle: llama.cpp's CPU backend (node-llama-cpp's createRankingContext / rank) on
// cross-encoder rerankers made by smallmind-modelgen --bert bert-tiny-rerank, writing what the
// rerank conformance test compares smallmind with (tests/data/conformance/<case>-rerank.json).
// Nothing of llama.cpp is built or kept in this repo.
//
//   cd /work/oracle && node /path/to/repo/bench/compare/llama_cpp_rerank_oracle.mjs [CASE...]
//       [--build DIR] [--threads N]
//
// Each case: smallmind-modelgen flags (the test makes the model again from them), a query and
// documents. node-llama-cpp joins a pair as [BOS] query [EOS] [SEP] document [EOS] with the
// specials the vocabulary has; a bert vocabulary without an EOS (llama.cpp's default, and these
// files) gives [CLS] query [SEP] document, which is also what llama-server's format_prompt_rerank
// gives for it (add_bos and add_sep true, add_eos false). The script builds those ids itself and
// checks node-llama-cpp evaluates as many. rank() returns sigmoid(score) for a bert model, score
// being the classification head's first value (llama_get_embeddings_seq); the file keeps both
// the sigmoid and the logit ln(p / (1 - p)) recovered from it in float64.
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

import {LoadNodeLlamaCpp} from "./node_llama_cpp.mjs";
import {ParseOracleArgs, WithCaseModel} from "./oracle_cases.mjs";

const kHere = path.dirname(fileURLToPath(import.meta.url));
const kRepo = path.resolve(kHere, "../..");
const kOut = path.join(kRepo, "tests/data/conformance");

const kQuery = "what is the search query?";
const kDocuments = [
  "The query is what you search for.",
  "hello world",
  "the the the the the the the the the the the the the the the the the the the the",
  "a",
  "Embedding models turn text into vectors; a reranker scores a query and a document together.",
];

const kCases = {
  "bert-tiny-rerank-f32": {modelgen: ["--bert", "bert-tiny-rerank", "--type", "f32"]},
  "bert-tiny-rerank-q8_0": {modelgen: ["--bert", "bert-tiny-rerank", "--type", "q8_0"]},
};

// The pair's ids as node-llama-cpp's _getEvaluationInput joins them (no rerank template).
function PairIds(model, query, doc) {
  const t = model.tokens;
  const q = [...model.tokenize(query, false)];
  const d = [...model.tokenize(doc, false)];
  const special = (id) => (id == null ? [] : [id]);
  return [...special(t.bos), ...q, ...special(t.eos), ...special(t.sep), ...d, ...special(t.eos)];
}

async function RunCase(llama, name, spec, args) {
  return WithCaseModel(name, spec, args, async (file) => {
    const model = await llama.loadModel({modelPath: file, gpuLayers: 0, useMmap: true});
    const context = await model.createRankingContext({threads: args.threads});
    const pairs = [];
    for (const document of kDocuments) {
      const ids = PairIds(model, kQuery, document);
      const evaluated = context.calculateInputLength(kQuery, document);
      if (evaluated !== ids.length) {
        throw new Error(`${name}: the pair with '${document}' evaluates ${evaluated} tokens, ` +
                        `not the ${ids.length} of [CLS] query [SEP] document`);
      }
      const score = await context.rank(kQuery, document);
      pairs.push({document, ids, score, logit: Math.log(score / (1 - score))});
    }
    await context.dispose();
    await model.dispose();
    return {query: kQuery, pairs};
  });
}

const args = ParseOracleArgs(process.argv.slice(2), kCases, kRepo);
const {module: nlc, version} = await LoadNodeLlamaCpp();
const llama = await nlc.getLlama({gpu: false, build: "never", logLevel: "error",
                                  maxThreads: args.threads});
fs.mkdirSync(kOut, {recursive: true});
for (const name of args.cases) {
  const result = await RunCase(llama, name, kCases[name], args);
  result.oracle = {node_llama_cpp: version, threads: args.threads};
  const out = path.join(kOut, `${name}-rerank.json`);
  fs.writeFileSync(out, JSON.stringify(result) + "\n");
  console.log(`${out}: ${result.pairs.length} pairs, logits ` +
              result.pairs.map((p) => p.logit.toFixed(4)).join(" "));
}
