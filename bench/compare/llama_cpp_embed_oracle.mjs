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
import {execFileSync} from "node:child_process";
import {createHash} from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";

import {LoadNodeLlamaCpp} from "./node_llama_cpp.mjs";

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

function ParseArgs(argv) {
  const args = {build: path.join(kRepo, "build"), shared: path.join(kRepo, "../shared"),
                threads: 1, cases: []};
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    if (["--build", "--shared", "--threads"].includes(key)) {
      args[key.slice(2)] = key === "--threads" ? Number(argv[++i]) : argv[++i];
    } else if (kCases[key]) {
      args.cases.push(key);
    } else {
      throw new Error(`unknown case or argument ${key} (cases: ${Object.keys(kCases).join(", ")})`);
    }
  }
  if (args.cases.length === 0) args.cases = Object.keys(kCases);
  return args;
}

async function RunCase(nlc, llama, name, spec, args) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "embed-oracle-"));
  try {
    const file = path.join(dir, `${name}.gguf`);
    const flags = spec.modelgen.map((f) => f.replace("{shared}", args.shared));
    execFileSync(path.join(args.build, "bin/smallmind-modelgen"), [...flags, "-o", file]);
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
    const sha256 = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    return {case: name, modelgen: spec.modelgen, sha256, inputs};
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
}

const args = ParseArgs(process.argv.slice(2));
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
