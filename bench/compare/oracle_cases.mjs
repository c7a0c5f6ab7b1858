// What the embedding and rerank oracle scripts share: their arguments (CASE... --build DIR
// --shared DIR --threads N) and the model each case makes with smallmind-modelgen into a temporary
// directory, removed after.
import {execFileSync} from "node:child_process";
import {createHash} from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// The arguments over `cases` (name -> spec); no case named: all of them.
export function ParseOracleArgs(argv, cases, repo) {
  const args = {build: path.join(repo, "build"), shared: path.join(repo, "../shared"), threads: 1,
                cases: []};
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    if (["--build", "--shared", "--threads"].includes(key)) {
      args[key.slice(2)] = key === "--threads" ? Number(argv[++i]) : argv[++i];
    } else if (cases[key]) {
      args.cases.push(key);
    } else {
      throw new Error(`unknown case or argument ${key} (cases: ${Object.keys(cases).join(", ")})`);
    }
  }
  if (args.cases.length === 0) args.cases = Object.keys(cases);
  return args;
}

// body(file) on case `name`'s model, smallmind-modelgen run with spec.modelgen ("{shared}" in a
// flag: args.shared); returns body's result with the case's name, flags and the file's sha256.
export async function WithCaseModel(name, spec, args, body) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oracle-"));
  try {
    const file = path.join(dir, `${name}.gguf`);
    const flags = spec.modelgen.map((f) => f.replace("{shared}", args.shared));
    execFileSync(path.join(args.build, "bin/smallmind-modelgen"), [...flags, "-o", file]);
    const result = await body(file);
    const sha256 = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    return {case: name, modelgen: spec.modelgen, sha256, ...result};
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
}
