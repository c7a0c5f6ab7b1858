// node-llama-cpp for the oracle scripts: it resolves from the working directory (where it was
// installed, bench/compare/README.md "Install the oracle"), not from the repo.
import {createRequire} from "node:module";
import fs from "node:fs";
import path from "node:path";

// The module and its version (from its package.json).
export async function LoadNodeLlamaCpp() {
  const require = createRequire(path.join(process.cwd(), "noop.js"));
  const entry = require.resolve("node-llama-cpp");
  const pkg = JSON.parse(fs.readFileSync(
      path.join(entry.slice(0, entry.lastIndexOf("node_modules") + 12), "node-llama-cpp",
                "package.json"), "utf8"));
  return {module: await import(entry), version: pkg.version};
}
