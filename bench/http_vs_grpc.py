#!/usr/bin/python3
"""The HTTP door's cost against gRPC, and an SSE soak (issue 11 "Numbers").

Same client language for both doors (Debian's python3-grpcio; http.client for SSE), same request
(streamed completion, greedy unless --temperature), alternating rounds so drift hits both alike:

  bench/http_vs_grpc.py compare --grpc 127.0.0.1:50051 --http http://127.0.0.1:8000 \
      --requests 20 --max-tokens 128
  bench/http_vs_grpc.py soak --http http://127.0.0.1:8000 --clients 32 --seconds 60 \
      --gateway-pid PID

compare prints, per door: completion tok/s over the wall time of its requests (sequential, one
stream at a time) and the p50/p90 of the per-token gap (inter-token latency) and of TTFT, then the
differences. soak runs --clients SSE streams back to back for --seconds, counts errors and prints
the gateway's RSS at the start and the end (VmRSS of --gateway-pid).
"""

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_stubs(out_dir):
    protos = ["smallmind/v1/inference.proto"]
    subprocess.run(["protoc", "-I", os.path.join(ROOT, "proto"), "--python_out", out_dir,
                    "--grpc_python_out", out_dir,
                    "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin"] + protos,
                   check=True)
    sys.path.insert(0, out_dir)
    import grpc  # noqa: F401
    from smallmind.v1 import inference_pb2, inference_pb2_grpc
    return inference_pb2, inference_pb2_grpc


def pct(values, p):
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(p * (len(s) - 1) + 0.5))]


class Result:
    def __init__(self):
        self.tokens = 0
        self.messages = 0
        self.ttft_ms = 0.0
        self.itl_ms = []
        self.error = None


def run_grpc(stub, pb, args, seed):
    r = Result()
    req = pb.GenerateRequest(prompt=args.prompt)
    req.sampling.temperature = args.temperature
    req.sampling.seed = seed
    req.stopping.max_new_tokens = args.max_tokens
    req.stopping.ignore_eos = True
    start = time.perf_counter()
    prev = None
    try:
        for msg in stub.Generate(req):
            n = len(msg.token_ids)
            if n == 0:
                continue
            now = time.perf_counter()
            if r.tokens == 0:
                r.ttft_ms = (now - start) * 1e3
            else:
                r.itl_ms.extend([(now - prev) * 1e3 / n] * n)
            prev = now
            r.tokens += n
            r.messages += 1
    except Exception as e:  # grpc.RpcError
        r.error = str(e)
    return r


def sse_events(resp):
    """Yields each `data:` payload of an event stream as it arrives."""
    buf = b""
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            return
        buf += chunk
        while b"\n\n" in buf:
            event, buf = buf.split(b"\n\n", 1)
            if event.startswith(b"data: "):
                yield event[6:]


def run_http(base, args, seed, conn=None):
    r = Result()
    u = urllib.parse.urlparse(base)
    own = conn is None
    conn = conn or http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    body = json.dumps({"prompt": args.prompt, "max_tokens": args.max_tokens, "stream": True,
                       "temperature": args.temperature, "seed": seed, "ignore_eos": True,
                       "stream_options": {"include_usage": True}})
    start = time.perf_counter()
    prev = None
    try:
        conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        if resp.status != 200:
            r.error = f"HTTP {resp.status}: {resp.read()[:200]!r}"
            return r
        for data in sse_events(resp):
            if data == b"[DONE]":
                break
            chunk = json.loads(data)
            if "error" in chunk:
                r.error = chunk["error"]["message"]
                break
            if chunk.get("usage"):
                r.tokens = chunk["usage"]["completion_tokens"]
                continue
            if not chunk["choices"] or not chunk["choices"][0]["text"]:
                continue
            now = time.perf_counter()
            # One event per worker message (one token each while a stream runs alone; the
            # tokens-per-message ratio printed by summarize says so).
            if r.messages == 0:
                r.ttft_ms = (now - start) * 1e3
            else:
                r.itl_ms.append((now - prev) * 1e3)
            prev = now
            r.messages += 1
        resp.read()
    except Exception as e:
        r.error = repr(e)
    finally:
        if own:
            conn.close()
    return r


def summarize(name, results, wall_s):
    ok = [r for r in results if r.error is None]
    tokens = sum(r.tokens for r in ok)
    itl = [x for r in ok for x in r.itl_ms]
    ttft = [r.ttft_ms for r in ok]
    s = {"door": name, "requests": len(results), "errors": len(results) - len(ok),
         "tokens": tokens, "tok_s": tokens / wall_s if wall_s else 0,
         "itl_p50_ms": pct(itl, 0.5), "itl_p90_ms": pct(itl, 0.9),
         "ttft_p50_ms": pct(ttft, 0.5)}
    messages = sum(r.messages for r in ok)
    print(f"{name:5s} {s['requests']} req, {s['errors']} errors, {tokens} tokens "
          f"({tokens / max(1, messages):.2f} per message), "
          f"{s['tok_s']:.1f} tok/s, ITL p50 {s['itl_p50_ms']:.3f} ms p90 "
          f"{s['itl_p90_ms']:.3f} ms, TTFT p50 {s['ttft_p50_ms']:.2f} ms")
    return s


def compare(args):
    with tempfile.TemporaryDirectory() as out:
        pb, pb_grpc = load_stubs(out)
        import grpc
        channel = grpc.insecure_channel(args.grpc)
        stub = pb_grpc.InferenceStub(channel)
        u = urllib.parse.urlparse(args.http)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)  # keep-alive
        run_grpc(stub, pb, args, 0)  # warm both
        run_http(args.http, args, 0, conn)
        res = {"grpc": [], "http": []}
        wall = {"grpc": 0.0, "http": 0.0}
        for i in range(args.requests):
            for door in (("grpc", "http") if i % 2 == 0 else ("http", "grpc")):
                t = time.perf_counter()
                r = (run_grpc(stub, pb, args, i + 1) if door == "grpc"
                     else run_http(args.http, args, i + 1, conn))
                wall[door] += time.perf_counter() - t
                res[door].append(r)
        g = summarize("grpc", res["grpc"], wall["grpc"])
        h = summarize("http", res["http"], wall["http"])
        print(f"http vs grpc: throughput {100 * (h['tok_s'] / g['tok_s'] - 1):+.2f}%, "
              f"ITL p50 {h['itl_p50_ms'] - g['itl_p50_ms']:+.3f} ms")
        channel.close()
        conn.close()


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def soak(args):
    deadline = time.monotonic() + args.seconds
    results = []
    lock = threading.Lock()

    def client(k):
        n = 0
        u = urllib.parse.urlparse(args.http)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
        while time.monotonic() < deadline:
            r = run_http(args.http, args, k * 100000 + n, conn)
            if r.error is not None:
                conn.close()
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
            with lock:
                results.append(r)
            n += 1
        conn.close()

    rss0 = rss_kb(args.gateway_pid) if args.gateway_pid else 0
    samples = []
    threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(5)
        if args.gateway_pid:
            samples.append(rss_kb(args.gateway_pid))
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    summarize("sse", results, wall)
    errors = [r.error for r in results if r.error is not None]
    if errors:
        print("first error:", errors[0])
    if args.gateway_pid:
        print(f"gateway RSS start {rss0} kB, end {rss_kb(args.gateway_pid)} kB, "
              f"max during {max(samples) if samples else 0} kB; every 5 s: "
              + " ".join(str(kb) for kb in samples))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["compare", "soak"])
    p.add_argument("--grpc", default="127.0.0.1:50051")
    p.add_argument("--http", default="http://127.0.0.1:8000")
    p.add_argument("--prompt", default="Once upon a time")
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--requests", type=int, default=20)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--gateway-pid", type=int, default=0)
    args = p.parse_args()
    compare(args) if args.mode == "compare" else soak(args)


if __name__ == "__main__":
    main()
