#!/usr/bin/env python3
"""Checks the local deployment files hang together (ctest deploy.compose): compose.yaml validates
with `docker-compose config -q`, plain and with the monitoring profile; Prometheus scrapes the port
the gateway serves metrics on; Grafana's provisioning mounts exist, its datasource uid is the one
the dashboards use, and the provider path is where the dashboards are mounted. The dashboards'
expressions are checked against the gateway's metric names by tests/gateway/grafana_dashboard_test.
Needs docker-compose (v1, Debian's) and python3-yaml (which docker-compose pulls in); without them
it exits 77 (ctest: skipped), or fails under CI=true."""
import json
import os
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    yaml = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
errors = []


def check(condition, message):
    if not condition:
        errors.append(message)


def compose(*args, files=("compose.yaml",), env=None):
    names = [a for f in files for a in ("-f", os.path.join(ROOT, f))]
    return subprocess.run(["docker-compose", *names, *args], cwd=ROOT, capture_output=True,
                          text=True, env=None if env is None else {**os.environ, **env})


def published(service, port):
    """True when the service publishes container port `port` on the host."""
    for p in service.get("ports", []):
        target = p.get("target") if isinstance(p, dict) else int(str(p).split(":")[-1].split("/")[0])
        if target == port:
            return True
    return False


def check_doors_and_volumes(services):
    """Both doors and the metrics port are served and published; the built-in model needs no
    volume; compose.model.yaml mounts the named folder into every worker."""
    command = services["gateway"]["command"]
    for flag in ("--http-port", "--metrics-port", "--port"):
        check(flag in command, f"the gateway does not serve {flag}")
        if flag in command:
            port = int(command[command.index(flag) + 1])
            check(published(services["gateway"], port), f"the gateway does not publish {flag} {port}")
    workers = [n for n in services if n.startswith("worker-")]
    check(len(workers) >= 2, f"compose.yaml has workers {workers}, expected two or more")
    for name in workers:
        check(not services[name].get("volumes"),
              f"{name} mounts {services[name].get('volumes')} for the built-in model")
    r = compose("config", files=("compose.yaml", "compose.model.yaml"),
                env={"SMALLMIND_MODELS_DIR": ROOT, "SMALLMIND_MODEL": "/models/x.gguf"})
    check(r.returncode == 0, f"compose.yaml + compose.model.yaml config: {r.stderr.strip()}")
    if r.returncode == 0:
        with_model = yaml.safe_load(r.stdout)["services"]
        for name in workers:
            volumes = with_model[name].get("volumes", [])
            targets = [v["target"] if isinstance(v, dict) else v.split(":")[1] for v in volumes]
            check("/models" in targets, f"compose.model.yaml does not mount /models in {name}")
            check("/models/x.gguf" in with_model[name]["command"],
                  f"{name} does not serve SMALLMIND_MODEL")


def main():
    for profile in ([], ["--profile", "monitoring"]):
        r = compose(*profile, "config", "-q")
        check(r.returncode == 0, f"docker-compose {' '.join(profile)} config -q: {r.stderr.strip()}")
    r = compose("--profile", "monitoring", "config")
    if r.returncode != 0:
        return
    services = yaml.safe_load(r.stdout)["services"]
    for name in ("gateway", "prometheus", "grafana"):
        check(name in services, f"compose.yaml has no {name} service")
    if errors:
        return
    for name in ("prometheus", "grafana"):
        check(services[name].get("profiles") == ["monitoring"],
              f"{name} must be in the monitoring profile only")

    check_doors_and_volumes(services)
    command = services["gateway"]["command"]
    check("--metrics-port" in command, "the gateway does not serve --metrics-port")
    port = command[command.index("--metrics-port") + 1] if "--metrics-port" in command else None

    mounts = {}  # container path -> host path
    for name in ("prometheus", "grafana"):
        for volume in services[name].get("volumes", []):
            source, target = (volume["source"], volume["target"]) if isinstance(volume, dict) \
                else volume.split(":")[:2]
            check(os.path.exists(source), f"{name} mounts {source}, which does not exist")
            mounts[target] = source

    prometheus_yml = mounts.get("/etc/prometheus/prometheus.yml")
    check(prometheus_yml is not None, "prometheus does not mount its config")
    if prometheus_yml and os.path.isfile(prometheus_yml):
        config = yaml.safe_load(open(prometheus_yml))
        targets = [t for job in config["scrape_configs"] for sc in job["static_configs"]
                   for t in sc["targets"]]
        check(f"gateway:{port}" in targets,
              f"prometheus scrapes {targets}, not the gateway's metrics port gateway:{port}")

    provisioning = mounts.get("/etc/grafana/provisioning")
    dashboards = mounts.get("/var/lib/grafana/dashboards")
    check(provisioning and dashboards, "grafana must mount provisioning and dashboards")
    if errors:
        return
    datasources = yaml.safe_load(open(os.path.join(provisioning, "datasources", "prometheus.yml")))
    uids = {d["uid"] for d in datasources["datasources"]}
    check(any(d["url"] == "http://prometheus:9090" for d in datasources["datasources"]),
          "the datasource does not point at the prometheus service")
    providers = yaml.safe_load(open(os.path.join(provisioning, "dashboards", "smallmind.yml")))
    check(any(p["options"]["path"] == "/var/lib/grafana/dashboards"
              for p in providers["providers"]), "the dashboard provider path is not the mount")
    files = [f for f in os.listdir(dashboards) if f.endswith(".json")]
    check(files, f"no dashboard JSON in {dashboards}")
    for f in files:
        dashboard = json.load(open(os.path.join(dashboards, f)))
        used = set()
        for panel in dashboard["panels"]:
            for item in [panel] + panel.get("targets", []):
                if isinstance(item.get("datasource"), dict):
                    used.add(item["datasource"]["uid"])
        check(used and used <= uids, f"{f} uses datasource uids {used}, provisioned: {uids}")


if __name__ == "__main__":
    if yaml is None or shutil.which("docker-compose") is None:
        print("check_deploy: needs docker-compose and python3-yaml (scripts/install_deps.sh)",
              file=sys.stderr)
        sys.exit(1 if os.environ.get("CI") == "true" else 77)
    main()
    for e in errors:
        print("check_deploy:", e, file=sys.stderr)
    if not errors:
        print("check_deploy: compose.yaml (plain and monitoring), Prometheus and Grafana files agree")
    sys.exit(1 if errors else 0)
