#!/usr/bin/python3
"""Differential test: smallmind's chat template renderer against Python's jinja2, byte for byte.

Every template (tests/gateway/chat/templates, ../shared/chat-templates) is rendered for every
conversation in conversations.json, and so is the built-in ChatML fallback (chat_template_render
--print-chatml), with and without the generation prompt and with the template's
extra variables, by the C++ renderer (chat_template_render, one process, JSON Lines) and by jinja2
set up exactly as transformers' apply_chat_template sets it up (see ../shared/chat-templates/README.md).
The language snippets in snippets.txt are rendered the same way. A case passes when both
sides produce the same text, or both fail (with the very same message when the template called
raise_exception). Exit 77 (skip) when jinja2 is not installed; 1 on any mismatch. Under CI
(CI=true, as tests/testing/shared_data.h treats it) a missing jinja2 or template folder is a failure.
"""
import argparse
import datetime
import difflib
import json
import os
import subprocess
import sys


def in_ci():
    return os.environ.get("CI", "") not in ("", "0", "false", "FALSE", "False")


try:
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    import jinja2.sandbox
except ImportError:
    print("python3-jinja2 is not installed (scripts/install_deps.sh installs it): " +
          ("CI is set, so this is a failure" if in_ci() else "skipped"))
    sys.exit(1 if in_ci() else 77)

PINNED_DATE = datetime.datetime(2026, 1, 15)


class RaisedByTemplate(jinja2.exceptions.TemplateError):
    pass


def raise_exception(message):
    raise RaisedByTemplate(message)


class GenerationExtension(jinja2.ext.Extension):
    """transformers' AssistantTracker when not tracking: {% generation %} renders its body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_env():
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[GenerationExtension, jinja2.ext.loopcontrols])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: PINNED_DATE.strftime(fmt)
    return env


def flatten(messages):
    """What the renderer does for templates that take string content: text parts joined by \\n."""
    out = []
    for m in messages:
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            m = dict(m)
            m["content"] = "\n".join(p["text"] for p in m["content"])
        out.append(m)
    return out


def object_arguments(messages):
    """What the renderer does for templates that want tool call arguments as objects."""
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("tool_calls"), list):
            continue
        for call in m["tool_calls"]:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                try:
                    parsed = json.loads(fn["arguments"])
                except ValueError:
                    continue
                if isinstance(parsed, dict):
                    fn["arguments"] = parsed
    return messages


def render_reference(env, cache, case, content_format, tool_arguments):
    source = case["template"]
    try:
        if source not in cache:
            cache[source] = env.from_string(source)
        tmpl = cache[source]
        messages = json.loads(json.dumps(case["messages"]))  # a fresh copy, as a request would be
        if content_format == "string":
            messages = flatten(messages)
        if tool_arguments == "object":
            messages = object_arguments(messages)
        text = tmpl.render(messages=messages, tools=case.get("tools"),
                           documents=case.get("documents"),
                           add_generation_prompt=case["add_generation_prompt"],
                           bos_token=case["bos_token"], eos_token=case["eos_token"],
                           **case.get("kwargs", {}))
        return {"ok": True, "output": text}
    except RaisedByTemplate as e:
        return {"ok": False, "error": str(e), "raised": True}
    except Exception as e:  # jinja2 and Python errors: only "it failed" is compared
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


def load_snippets(path):
    snippets, name, lines = [], None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("=== "):
                if name is not None:
                    snippets.append((name, "".join(lines)))
                name, lines = line[4:].strip(), []
            else:
                lines.append(line)
    if name is not None:
        snippets.append((name, "".join(lines)))
    return snippets


def build_cases(args):
    with open(args.cases, encoding="utf-8") as f:
        spec = json.load(f)
    conversations = spec["conversations"]
    templates = []
    for folder in args.templates:
        if not os.path.isdir(folder):
            if in_ci():
                print(f"{folder} is absent: CI is set, so this is a failure, not a skip")
                sys.exit(1)
            print(f"note: {folder} is absent; its templates are not tested")
            continue
        manifest = {}
        if os.path.exists(os.path.join(folder, "manifest.json")):
            with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
                manifest = json.load(f)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".jinja"):
                with open(os.path.join(folder, name), encoding="utf-8", newline="") as f:
                    templates.append((name, f.read(), manifest.get(name, {})))
    chatml = subprocess.run([args.render, "--print-chatml"], capture_output=True, timeout=60)
    if chatml.returncode != 0 or not chatml.stdout:
        print("chat_template_render --print-chatml failed")
        sys.exit(1)
    templates.append(("builtin-chatml", chatml.stdout.decode("utf-8"),
                      {"bos_token": "", "eos_token": "<|im_end|>"}))
    cases = []
    for name, source, meta in templates:
        for conv in conversations:
            for agp in (True, False):
                for variant, kwargs in enumerate(spec["kwargs_variants"]):
                    kw = dict(kwargs)
                    kw.update(meta.get("kwargs", {}))
                    cases.append({
                        "id": f"{name}|{conv['name']}|agp={agp}|kw={variant}",
                        "template": source, "messages": conv["messages"],
                        "tools": conv.get("tools"), "documents": conv.get("documents"),
                        "bos_token": meta.get("bos_token", "<s>"),
                        "eos_token": meta.get("eos_token", "</s>"),
                        "add_generation_prompt": agp, "kwargs": kw, "date": "2026-01-15"})
    for name, source in load_snippets(args.snippets):
        cases.append({"id": f"snippet|{name}", "template": source, "messages": [],
                      "bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": False,
                      "kwargs": spec["snippet_variables"], "date": "2026-01-15"})
    return cases


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--render", required=True)
    p.add_argument("--templates", action="append", required=True)
    p.add_argument("--cases", required=True)
    p.add_argument("--snippets", required=True)
    p.add_argument("--max-report", type=int, default=15)
    args = p.parse_args()

    cases = build_cases(args)
    stdin = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
    proc = subprocess.run([args.render], input=stdin.encode("utf-8"), capture_output=True,
                          timeout=240)
    if proc.returncode != 0:
        print("chat_template_render failed:", proc.stderr.decode("utf-8", "replace"))
        return 1
    ours = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    if len(ours) != len(cases):
        print(f"expected {len(cases)} results, got {len(ours)}")
        return 1

    env, cache = make_env(), {}
    failures, rendered, refused = [], 0, 0
    for case, got in zip(cases, ours):
        want = render_reference(env, cache, case, got.get("content_format", "string"),
                                got.get("tool_arguments", "as_given"))
        if want["ok"]:
            rendered += 1
            if not got["ok"] or got["output"] != want["output"]:
                failures.append((case, want, got))
        else:
            refused += 1
            if got["ok"] or (want.get("raised") and got["error"] != want["error"]):
                failures.append((case, want, got))

    for case, want, got in failures[: args.max_report]:
        print(f"MISMATCH {case['id']}")
        if want["ok"] and got["ok"]:
            diff = difflib.unified_diff(want["output"].splitlines(True),
                                        got["output"].splitlines(True), "jinja2", "smallmind", n=1)
            sys.stdout.writelines(list(diff)[:40])
            print()
        else:
            print(f"  jinja2:    {json.dumps(want, ensure_ascii=False)[:400]}")
            print(f"  smallmind: {json.dumps(got, ensure_ascii=False)[:400]}")
    templates = len({c["template"] for c in cases})
    print(f"{len(cases)} cases over {templates} templates/snippets: {rendered} rendered, "
          f"{refused} refused by jinja2, {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
