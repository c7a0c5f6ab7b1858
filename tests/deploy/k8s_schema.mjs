// Validates Kubernetes manifests against the API's OpenAPI schemas (the kubernetes-models package
// carries them, with ajv): reads YAML documents from the files named, or from stdin (e.g. the output
// of `kubectl kustomize deploy/k8s`), and prints one line per document that fails, naming the field.
// Exit status: 0 when every document validates, 1 otherwise.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

// apiVersion -> the kubernetes-models module that holds its kinds.
function modulePath(apiVersion) {
  return `kubernetes-models/${apiVersion}`;
}

async function validate(doc, where) {
  const { apiVersion, kind } = doc;
  const name = doc.metadata?.name ?? "(no name)";
  if (!apiVersion || !kind) return [`${where}: a document without apiVersion/kind`];
  let models;
  try {
    models = await import(modulePath(apiVersion));
  } catch {
    return [`${where}: ${kind} ${name}: unknown apiVersion ${apiVersion}`];
  }
  const Model = models[kind];
  if (typeof Model !== "function") return [`${where}: unknown kind ${kind} in ${apiVersion}`];
  try {
    new Model(doc).validate();
    return [];
  } catch (e) {
    return [`${where}: ${kind} ${name}: ${e.message}`];
  }
}

const inputs = process.argv.length > 2
  ? process.argv.slice(2).map((f) => [f, readFileSync(f, "utf8")])
  : [["stdin", readFileSync(0, "utf8")]];
const errors = [];
let count = 0;
for (const [where, text] of inputs) {
  for (const parsed of parseAllDocuments(text)) {
    if (parsed.errors.length) {
      errors.push(`${where}: YAML: ${parsed.errors[0].message}`);
      continue;
    }
    const doc = parsed.toJS();
    if (doc === null) continue;
    count++;
    errors.push(...(await validate(doc, where)));
  }
}
for (const e of errors) console.error("k8s_schema:", e);
if (!errors.length) console.log(`k8s_schema: ${count} documents validate`);
process.exit(errors.length ? 1 : 0);
