#!/usr/bin/env python3
"""From the host, checks a compose cluster that scripts/container_check.sh brought up: gRPC health
and Generate (with the host's smallmind client), an OpenAI chat completion on the HTTP door,
/metrics with both workers up, then kills worker-0's process inside its container (SIGKILL from the
host, as a crash) and checks that requests still succeed meanwhile, that the container restarts
(compose's restart policy) and that the gateway counts the worker up again. Every wait is bounded."""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

DEADLINE_S = 180  # model load plus start of three containers on 2 busy cores


def fail(message):
    print("container_probe:", message, file=sys.stderr)
    sys.exit(1)


def wait_for(what, probe, timeout_s=DEADLINE_S):
    end = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < end:
        try:
            result = probe()
            if result:
                return result
        except Exception as e:  # noqa: BLE001: any failure means "not yet"
            last = e
        time.sleep(1)
    fail(f"{what}: not within {timeout_s} s (last error: {last})")


def run(*args):
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def generate(cli, addr):
    r = run(cli, "generate", "--addr", addr, "--max-tokens", "8", "--temperature", "0",
            "Once upon a time")
    if r.returncode != 0:
        raise RuntimeError(f"generate exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return r.stdout.strip() or None


def http_json(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def metrics(addr):
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=10) as response:
        return response.read().decode()


def workers_up(addr):
    text = metrics(addr)
    up = re.findall(r'^smallmind_worker_up\{[^}]*\} (\S+)$', text, re.M)
    return len(up) >= 2 and all(float(v) == 1 for v in up)


def container(project, service):
    r = run("podman", "ps", "--filter", f"label=io.podman.compose.project={project}",
            "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}")
    names = r.stdout.split()
    if len(names) != 1:
        fail(f"expected one running container of {service}, podman ps says {names}")
    return names[0]


def inspect(name, field):
    return run("podman", "inspect", "--format", "{{" + field + "}}", name).stdout.strip()


def main():
    p = argparse.ArgumentParser()
    for flag in ("--cli", "--project", "--grpc", "--http", "--metrics"):
        p.add_argument(flag, required=True)
    a = p.parse_args()

    wait_for("gRPC health", lambda: run(a.cli, "health", "--addr", a.grpc).returncode == 0)
    wait_for("both workers up in /metrics", lambda: workers_up(a.metrics))
    text = wait_for("a gRPC Generate", lambda: generate(a.cli, a.grpc), 30)
    print(f"container_probe: gRPC Generate -> {text!r}")

    models = http_json(f"http://{a.http}/v1/models")["data"]
    if not models:
        fail("/v1/models lists no model")
    reply = http_json(f"http://{a.http}/v1/chat/completions", {
        "model": models[0]["id"], "max_tokens": 8, "temperature": 0,
        "messages": [{"role": "user", "content": "Tell me a story"}]})
    content = reply["choices"][0]["message"]["content"]
    if not isinstance(content, str) or reply["usage"]["completion_tokens"] < 1:
        fail(f"chat completion: {reply}")
    print(f"container_probe: OpenAI chat completion -> {content!r}")
    text = metrics(a.metrics)
    for family in ("smallmind_worker_up", "smallmind_requests_total"):
        if family not in text:
            fail(f"/metrics has no {family}")
    print(f"container_probe: /metrics serves {len(text.splitlines())} lines")

    name = container(a.project, "worker-0")
    pid = int(inspect(name, ".State.Pid"))
    restarts = inspect(name, ".RestartCount")
    os.kill(pid, signal.SIGKILL)
    print(f"container_probe: killed worker-0 (pid {pid} in {name})")
    # Meanwhile worker-1 serves: the gateway routes around the dead one.
    wait_for("a Generate while worker-0 is down", lambda: generate(a.cli, a.grpc), 60)
    wait_for("worker-0's container restarted",
             lambda: inspect(name, ".State.Status") == "running" and
             inspect(name, ".State.Pid") not in ("0", str(pid)))
    wait_for("both workers up again in /metrics", lambda: workers_up(a.metrics))
    for _ in range(4):
        generate(a.cli, a.grpc)
    print(f"container_probe: worker-0 came back (restart count {restarts} -> "
          f"{inspect(name, '.RestartCount')}); both doors, /metrics and the restart pass")


if __name__ == "__main__":
    main()
