#!/usr/bin/python3
"""Talks to a real smallmind gateway from Python (Debian's python3-grpcio), the way a user in
another language would: stubs generated from the shipped protos, a server-streaming Generate, a
unary Tokenize, and the error a bad field gets. Starts the gateway itself and stops it."""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def generate_stubs(args, out_dir):
    protos = ["smallmind/v1/inference.proto", "smallmind/v1/worker.proto"]
    subprocess.run([args.protoc, "-I", args.proto_dir, "--python_out", out_dir,
                    "--grpc_python_out", out_dir,
                    "--plugin=protoc-gen-grpc_python=" + args.plugin] + protos, check=True)
    sys.path.insert(0, out_dir)


def start_gateway(args):
    proc = subprocess.Popen([args.gateway, "--port", "0", "--listen-host", "127.0.0.1",
                             "--workers", "1", "--model", "builtin:tiny"],
                            stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if "listening on" in line:
            return proc, line.strip().rsplit(" ", 1)[1]
    proc.kill()
    raise RuntimeError("gateway did not report its address")


def wait_ready(grpc, pb, stub):
    for _ in range(300):
        try:
            info = stub.GetModelInfo(pb.GetModelInfoRequest(), timeout=5)
            if info.workers >= 1:
                return info
        except grpc.RpcError:
            pass
        time.sleep(0.1)
    raise RuntimeError("gateway never became ready")


PASSED = []


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    PASSED.append(what)
    print("ok -", what)


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--gateway", "--proto-dir", "--protoc", "--plugin"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    try:
        import grpc
    except ImportError:
        print("SKIP: python3-grpcio is not installed for /usr/bin/python3")
        return 0
    with tempfile.TemporaryDirectory() as gen:
        generate_stubs(args, gen)
        from smallmind.v1 import inference_pb2 as pb
        from smallmind.v1 import inference_pb2_grpc as pb_grpc
        proc, address = start_gateway(args)
        channel = None
        try:
            channel = grpc.insecure_channel(address)
            stub = pb_grpc.InferenceStub(channel)
            info = wait_ready(grpc, pb, stub)
            check(info.vocab_size == 259, "GetModelInfo reports the builtin vocabulary")

            req = pb.GenerateRequest(request_id="py-1", prompt="Hello from Python")
            req.sampling.temperature = 0.8
            req.sampling.seed = 7
            req.stopping.max_new_tokens = 12
            msgs = list(stub.Generate(req, timeout=60))
            ids = [t for m in msgs for t in m.token_ids]
            check(len(msgs) >= 2, "Generate streams several messages")
            check(all(m.request_id == "py-1" for m in msgs), "request_id is echoed")
            check(len(ids) == 12, "max_new_tokens tokens are generated")
            check(msgs[-1].finish_reason == pb.LENGTH, "the last message says LENGTH")
            check(msgs[-1].usage.completion_tokens == 12, "usage counts the tokens")
            again = [t for m in stub.Generate(req, timeout=60) for t in m.token_ids]
            check(again == ids, "the same seed gives the same tokens")

            tok = stub.Tokenize(pb.TokenizeRequest(text="hi"), timeout=10)
            check(list(tok.token_ids) == [1, ord("h") + 3, ord("i") + 3],
                  "Tokenize encodes bytes after BOS")
            back = stub.Tokenize(pb.TokenizeRequest(token_ids=pb.TokenIds(ids=tok.token_ids)),
                                 timeout=10)
            check(back.text == "hi", "Tokenize decodes ids back to text")

            bad = pb.GenerateRequest(prompt="x")
            bad.sampling.top_p = 1.5
            try:
                list(stub.Generate(bad, timeout=10))
                check(False, "top_p=1.5 is rejected")
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and "top_p" in e.details(),
                      "top_p=1.5 gets INVALID_ARGUMENT naming the field")
        finally:
            if channel is not None:
                channel.close()  # else the gateway waits for the idle connection to be polled
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    print("%d passed, 0 failed" % len(PASSED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
