// Tokenizes the vocabulary-only GGUF files that tests/worker/tokenizer/gguf/llama_cpp_oracle_test.cc
// dumps with llama.cpp (node-llama-cpp's prebuilt binary, nothing of it kept in this repo) and
// prints the ids as the test's data file: for each case, every "plain" input tokenized with special
// tokens as text and every "special" input with them parsed, never adding BOS/EOS.
//
//   node bench/compare/tokenizer_oracle.mjs DUMP_DIR > tests/worker/tokenizer/gguf/testdata/llama_cpp_ids.json
//
// Run it through bench/compare/tokenizer_oracle.sh, which makes DUMP_DIR first.
import {createRequire} from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "noop.js"));  // resolve from the cwd
const {getLlama} = await import(require.resolve("node-llama-cpp"));

const [dir] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node tokenizer_oracle.mjs DUMP_DIR");
  process.exit(2);
}
const cases = JSON.parse(fs.readFileSync(path.join(dir, "cases.json"), "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const version = JSON.parse(fs.readFileSync(
    path.join(process.cwd(), "node_modules/node-llama-cpp/package.json"), "utf8")).version;
const out = {
  made_by: "bench/compare/tokenizer_oracle.sh",
  llama_cpp: `${llama.llamaCppRelease.release} (node-llama-cpp ${version})`,
  cases: {},
};
for (const c of cases) {
  const model = await llama.loadModel({modelPath: path.join(dir, c.file), vocabOnly: true});
  const ids = (text, special) => Array.from(model.tokenize(text, special));
  out.cases[c.name] = {
    plain_inputs: c.plain,
    special_inputs: c.special,
    plain: c.plain.map((t) => ids(t, false)),
    special: c.special.map((t) => ids(t, true)),
  };
  await model.dispose();
}
// One case per line block, one id list per line: small diffs when a case changes.
const lines = ["{",
  `  "made_by": ${JSON.stringify(out.made_by)},`,
  `  "llama_cpp": ${JSON.stringify(out.llama_cpp)},`,
  `  "cases": {`];
const names = Object.keys(out.cases);
names.forEach((name, n) => {
  const c = out.cases[name];
  lines.push(`    ${JSON.stringify(name)}: {`);
  for (const key of ["plain_inputs", "special_inputs", "plain", "special"]) {
    const items = c[key].map((x) => "        " + JSON.stringify(x));
    lines.push(`      "${key}": [`, items.join(",\n"), key === "special" ? "      ]" : "      ],");
  }
  lines.push(n + 1 < names.length ? "    }," : "    }");
});
lines.push("  }", "}");
console.log(lines.join("\n"));
