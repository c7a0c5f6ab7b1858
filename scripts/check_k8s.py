#!/usr/bin/env python3
"""Checks deploy/k8s without a cluster (ctest deploy.k8s): the manifests parse,
the kinds docs/deployment.md promises are there, selectors match their pod labels, every Service reaches a
named container port, the worker StatefulSet is governed by a headless Service that the gateway's
--worker-endpoints names, every container is Guaranteed QoS with whole CPUs (requests == limits, so
the static CPU manager pins it) and has gRPC readiness and liveness probes on its port, the worker
runs one thread per CPU, volumes and claims exist, the gateway's grace period outlasts its drain,
only gateway pods may reach the worker port (NetworkPolicy), and kustomization.yaml lists every
manifest; the gateway serves and exposes both doors and its metrics; the base needs no volume
(the built-in model) while the model-file overlay mounts a read-only claim at /models and names a
file in it; every manifest passes the Kubernetes API schemas (tests/deploy/k8s_schema.mjs), as
rendered by `kubectl kustomize` for both kustomizations when kubectl is installed, else file by
file. Needs python3-yaml and node with tests/deploy's packages; without them exits 77 (ctest:
skipped), or fails under CI=true."""
import glob
import os
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    yaml = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
K8S = os.path.join(ROOT, "deploy", "k8s", "base")
OVERLAY = os.path.join(ROOT, "deploy", "k8s", "model-file")
SCHEMA = os.path.join(ROOT, "tests", "deploy", "k8s_schema.mjs")
errors = []


def check(condition, message):
    if not condition:
        errors.append(message)
    return condition


def flag(args, name):
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


def load():
    docs = {}  # (kind, name) -> manifest
    for path in sorted(glob.glob(os.path.join(K8S, "*.yaml"))):
        if os.path.basename(path) == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(open(path)):
            if doc is None:
                continue
            key = (doc.get("kind"), doc.get("metadata", {}).get("name"))
            check(key not in docs, f"{key} is defined twice")
            docs[key] = doc
    return docs


def check_container(owner, c):
    res = c.get("resources", {})
    req, lim = res.get("requests", {}), res.get("limits", {})
    for r in ("cpu", "memory"):
        check(r in lim and str(req.get(r)) == str(lim.get(r)),
              f"{owner}/{c['name']}: {r} requests must equal limits (Guaranteed QoS)")
    check(str(lim.get("cpu", "")).isdigit(),
          f"{owner}/{c['name']}: cpu must be whole CPUs for the static CPU manager")
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    for probe in ("readinessProbe", "livenessProbe"):
        spec = c.get(probe, {})
        target = spec.get("grpc") or spec.get("httpGet")
        check(spec.get("grpc") is not None or (probe == "livenessProbe" and target),
              f"{owner}/{c['name']}: {probe} must be a grpc probe (liveness: grpc or httpGet)")
        if target:
            check(target.get("port") in ports.values() or target.get("port") in ports,
                  f"{owner}/{c['name']}: {probe} probes port {target.get('port')}, not a container port")
    return ports


def check_workload(docs, kind, name):
    w = docs.get((kind, name))
    if not check(w is not None, f"no {kind} {name}"):
        return None, {}
    spec = w["spec"]
    pod_labels = spec["template"]["metadata"].get("labels", {})
    selector = spec["selector"].get("matchLabels", {})
    check(selector and selector.items() <= pod_labels.items(),
          f"{kind} {name}: selector {selector} does not match its pod labels {pod_labels}")
    pod = spec["template"]["spec"]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    ports = {}
    for c in pod["containers"]:
        ports.update(check_container(f"{kind} {name}", c))
        for m in c.get("volumeMounts", []):
            check(m["name"] in volumes, f"{kind} {name}: mounts undefined volume {m['name']}")
    for v in volumes.values():
        claim = v.get("persistentVolumeClaim", {}).get("claimName")
        if claim:
            check(("PersistentVolumeClaim", claim) in docs, f"{kind} {name}: no claim {claim}")
    return w, ports


def check_service(docs, name, pod_labels, ports):
    s = docs.get(("Service", name))
    if not check(s is not None, f"no Service {name}"):
        return None
    selector = s["spec"].get("selector", {})
    check(selector and selector.items() <= pod_labels.items(),
          f"Service {name}: selector {selector} selects none of the pods {pod_labels}")
    for p in s["spec"]["ports"]:
        target = p.get("targetPort", p["port"])
        check(target in ports or target in ports.values(),
              f"Service {name}: targetPort {target} is not a container port {ports}")
    return s


def main():
    docs = load()
    worker, worker_ports = check_workload(docs, "StatefulSet", "smallmind-worker")
    gateway, gateway_ports = check_workload(docs, "Deployment", "smallmind-gateway")
    if errors:
        return
    labels = lambda w: w["spec"]["template"]["metadata"]["labels"]
    headless = check_service(docs, "smallmind-worker", labels(worker), worker_ports)
    check_service(docs, "smallmind-gateway", labels(gateway), gateway_ports)
    if errors:
        return
    check(headless["spec"].get("clusterIP") == "None", "the worker Service must be headless")
    check(worker["spec"]["serviceName"] == "smallmind-worker",
          "the StatefulSet must be governed by the headless worker Service")

    wc = worker["spec"]["template"]["spec"]["containers"][0]
    check(flag(wc["args"], "--threads") == str(wc["resources"]["limits"]["cpu"]),
          "the worker's --threads must equal its CPU limit (one pinned thread per CPU)")
    check(not any(m["mountPath"] == "/models" for m in wc.get("volumeMounts", [])),
          "the base workers serve the built-in model: no /models volume (that is model-file/)")
    check((flag(wc["args"], "--model") or "").startswith("builtin:"),
          "the base workers must serve a builtin: model, which needs no volume")
    listen = flag(wc["args"], "--listen") or ""
    check(listen.endswith(":" + str(headless["spec"]["ports"][0]["port"])),
          f"the worker listens on {listen}, not the headless Service's port")

    gc = gateway["spec"]["template"]["spec"]["containers"][0]
    endpoints = flag(gc["args"], "--worker-endpoints") or ""
    check(endpoints == f"smallmind-worker:{headless['spec']['ports'][0]['port']}",
          f"the gateway attaches to '{endpoints}', not the headless worker Service")
    for name, port in (("--http-port", "http"), ("--metrics-port", "metrics")):
        value = flag(gc["args"], name)
        check(value is not None and int(value) == gateway_ports.get(port),
              f"the gateway serves {name} {value}, not its container port '{port}'")
        service_ports = [p["targetPort"] for p in docs[("Service", "smallmind-gateway")]["spec"]["ports"]]
        check(port in service_ports, f"the gateway Service does not expose '{port}'")
    check(flag(gc["args"], "--listen-host") == "0.0.0.0",
          "the gateway must listen on 0.0.0.0 inside its pod")
    drain = float(flag(gc["args"], "--drain-seconds") or 30)
    grace = gateway["spec"]["template"]["spec"].get("terminationGracePeriodSeconds", 30)
    check(grace > drain, f"terminationGracePeriodSeconds {grace} must outlast --drain-seconds {drain}")

    policy = docs.get(("NetworkPolicy", "smallmind-worker"))
    if check(policy is not None, "no NetworkPolicy guarding the worker port"):
        selects = lambda sel, w: sel.items() <= labels(w).items()
        check(selects(policy["spec"]["podSelector"]["matchLabels"], worker),
              "the NetworkPolicy does not select the worker pods")
        sources = [f["podSelector"]["matchLabels"] for rule in policy["spec"]["ingress"]
                   for f in rule.get("from", []) if "podSelector" in f]
        check(sources and all(selects(s, gateway) for s in sources),
              f"the NetworkPolicy lets in {sources}, which are not only the gateway pods")

    kustomization = yaml.safe_load(open(os.path.join(K8S, "kustomization.yaml")))
    files = {os.path.basename(p) for p in glob.glob(os.path.join(K8S, "*.yaml"))}
    check(set(kustomization["resources"]) == files - {"kustomization.yaml"},
          f"kustomization.yaml lists {kustomization['resources']}, the folder has {sorted(files)}")


def check_overlay():
    """model-file/: the PVC, and a worker patch mounting it read-only at /models and naming a file."""
    kustomization = yaml.safe_load(open(os.path.join(OVERLAY, "kustomization.yaml")))
    check("../base" in kustomization["resources"], "model-file/ must build on ../base")
    docs = {}
    for path in sorted(glob.glob(os.path.join(OVERLAY, "*.yaml"))):
        for doc in yaml.safe_load_all(open(path)):
            if doc and doc.get("kind") != "Kustomization":
                docs[(doc["kind"], doc["metadata"]["name"])] = doc
    claim = docs.get(("PersistentVolumeClaim", "smallmind-models"))
    check(claim is not None, "model-file/ has no claim smallmind-models")
    patch = docs.get(("StatefulSet", "smallmind-worker"))
    if not check(patch is not None, "model-file/ does not patch the worker StatefulSet"):
        return
    pod = patch["spec"]["template"]["spec"]
    c = pod["containers"][0]
    check(any(m["mountPath"] == "/models" and m.get("readOnly") for m in c.get("volumeMounts", [])),
          "model-file/: the worker must mount /models read-only")
    check((flag(c["args"], "--model") or "").startswith("/models/"),
          "model-file/: --model must name a file under /models")
    claims = [v.get("persistentVolumeClaim", {}).get("claimName") for v in pod.get("volumes", [])]
    check("smallmind-models" in claims, "model-file/: no volume from the claim smallmind-models")


def check_schemas():
    """The Kubernetes API schemas, on what kubectl would apply (kustomize output) when kubectl is
    here, else on the manifest files themselves (the overlay's patch is partial: only its claim)."""
    node = shutil.which("node")
    if not check(node and os.path.isdir(os.path.join(ROOT, "tests", "deploy", "node_modules")),
                 "the schema check needs node and tests/deploy's packages (scripts/install_deps.sh)"):
        return
    inputs = []
    if shutil.which("kubectl"):
        for folder in (os.path.dirname(K8S), OVERLAY):
            r = subprocess.run(["kubectl", "kustomize", folder], capture_output=True, text=True)
            check(r.returncode == 0, f"kubectl kustomize {folder}: {r.stderr.strip()}")
            inputs.append(r.stdout)
    else:
        files = [p for p in sorted(glob.glob(os.path.join(K8S, "*.yaml")))
                 if not p.endswith("kustomization.yaml")] + [os.path.join(OVERLAY, "models.yaml")]
        inputs.append("\n---\n".join(open(p).read() for p in files))
    for text in inputs:
        r = subprocess.run([node, SCHEMA], input=text, capture_output=True, text=True)
        check(r.returncode == 0, r.stderr.strip() or r.stdout.strip())


if __name__ == "__main__":
    if yaml is None:
        print("check_k8s: needs python3-yaml (scripts/install_deps.sh)", file=sys.stderr)
        sys.exit(1 if os.environ.get("CI") == "true" else 77)
    main()
    check_overlay()
    check_schemas()
    for e in errors:
        print("check_k8s:", e, file=sys.stderr)
    if not errors:
        print("check_k8s: deploy/k8s manifests agree with each other")
    sys.exit(1 if errors else 0)
