// The embeddings oracle: llama.cpp's CPU backend (node-llama-cpp's createEmbeddingContext /
// getEmbeddingFor) on BERT models made by smallmind-modelgen --bert, writing what the embeddings
// conformance test compares smallmind with (tests/data/conformance/<case>-embed.json). Nothing of
// llama.cpp is built or kept in this repo.
//
//   cd /work/oracle && node /path/to/repo/bench/compare/llama_cpp_embed_oracle.mjs [CASE...]
//       [--build DIR] [--shared DIR] [--threads N]
//
// Each case: smallmind-modelgen flags (the test makes the model again from them) and texts. A
// text is embedded as llama.cpp does it for the file: its WordPiece ids with [CLS] before and
// [SEP] after (node-llama-cpp prepends the BOS and appends the EOS/SEP the vocabulary has; the
// script checks the evaluated length is the ids' + 2), pooled as bert.pooling_type says. The
// vector is llama.cpp's raw pooled output (llama_get_embeddings_seq), not normalised.
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

import {LoadNodeLlamaCpp} from "./node_llama_cpp.mjs";
import {ParseOracleArgs, WithCaseModel} from "./oracle_cases.mjs";

const kHere = path.dirname(fileURLToPath(import.meta.url));
const kRepo = path.resolve(kHere, "../..");
const kOut = path.join(kRepo, "tests/data/conformance");

const kTexts = [
  "Hello world",
  "Hello, world! The query embedding search.",
  "the the the the the the the the the the the the the the the the the the the the the the",
  "a",
];

const kCases = {
  "bert-tiny-f32": {modelgen: ["--bert", "bert-tiny", "--type", "f32"]},
  "bert-tiny-cls-f32": {modelgen: ["--bert", "bert-tiny", "--type", "f32", "--pooling", "cls"]},
  "bert-tiny-q8_0": {modelgen: ["--bert", "bert-tiny", "--type", "q8_0"]},
  "bert-bge-tiny-f32": {
    modelgen: ["--bert", "bert-tiny", "--type", "f32", "--bert-vocab",
               "{shared}/tokenizer-vectors/ggml-vocab-bert-bge.gguf"]},
};

async function RunCase(nlc, llama, name, spec, args) {
  return WithCaseModel(name, spec, args, async (file) => {
    const model = await llama.loadModel({modelPath: file, gpuLayers: 0, useMmap: true});
    const context = await model.createEmbeddingContext({threads: args.threads});
    const inputs = [];
    for (const text of kTexts) {
      const ids = [...model.tokenize(text, false)];
      const evaluated = context.calculateInputLength(text);
      if (evaluated !== ids.length + 2) {
        throw new Error(`${name}: '${text}' evaluates ${evaluated} tokens, not [CLS] + ` +
                        `${ids.length} + [SEP]`);
      }
      const embedding = await context.getEmbeddingFor(text);
      inputs.push({text, ids, embedding: [...embedding.vector]});
    }
    await context.dispose();
    await model.dispose();
    return {inputs};
  });
}

const args = ParseOracleArgs(process.argv.slice(2), kCases, kRepo);
const {module: nlc, version} = await LoadNodeLlamaCpp();
const llama = await nlc.getLlama({gpu: false, build: "never", logLevel: "error",
                                  maxThreads: args.threads});
fs.mkdirSync(kOut, {recursive: true});
for (const name of args.cases) {
  const result = await RunCase(nlc, llama, name, kCases[name], args);
  result.oracle = {node_llama_cpp: version, threads: args.threads};
  const out = path.join(kOut, `${name}-embed.json`);
  fs.writeFileSync(out, JSON.stringify(result) + "\n");
  console.log(`${out}: ${result.inputs.length} inputs, dim ${result.inputs[0].embedding.length}`);
}
