#!/usr/bin/env python3
"""Renders cases.jsonl beside this script: the chat templates stored here, each on the five
conversations of ../shared/chat-templates (A-E), rendered the way Hugging Face transformers'
apply_chat_template renders them (jinja2's ImmutableSandboxedEnvironment, trim_blocks,
lstrip_blocks, loopcontrols, its tojson, raise_exception, strftime_now pinned to 2026-01-15), the
render contract of ../shared/chat-templates/README.md. The lines have that folder's cases.jsonl
format, so the same test code reads both.

    python3 tests/data/chat-templates/render_cases.py   # needs python3-jinja2 (Debian 12)
"""
import json
import os
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.sandbox

HERE = os.path.dirname(os.path.abspath(__file__))

# template file -> (bos_token, eos_token): the family's tokenizer strings ("" where the tokenizer
# config has no BOS, as ../shared does for Qwen2.5).
TEMPLATES = {
    "Qwen-Qwen3-0.6B.jinja": ("", "<|im_end|>"),
}

CONVERSATION_C = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello! How can I help?"},
    {"role": "user", "content": "Tell me a joke."},
]
CASES = [
    ("A", [{"role": "user", "content": "Hello!"}], True),
    ("B", [{"role": "system", "content": "You are a helpful assistant."},
           {"role": "user", "content": "What is 2+2?"}], True),
    ("C", CONVERSATION_C, True),
    ("D", [{"role": "user", "content": "Write \"quotes\", a tab\tand unicode: caf\u00e9 "
                                       "\u4f60\u597d \U0001f642"}], True),
    ("E", CONVERSATION_C, False),
]


class TemplateRaised(Exception):
    pass


def raise_exception(message):
    raise TemplateRaised(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def environment():
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime(2026, 1, 15).strftime(fmt)
    return env


def main():
    env = environment()
    lines = []
    for name, (bos, eos) in TEMPLATES.items():
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            template = env.from_string(f.read())
        for case, messages, add_generation_prompt in CASES:
            line = {"template": name, "case": case, "bos_token": bos, "eos_token": eos,
                    "add_generation_prompt": add_generation_prompt, "messages": messages}
            try:
                line["expected"] = template.render(
                    messages=messages, bos_token=bos, eos_token=eos,
                    add_generation_prompt=add_generation_prompt, tools=None, documents=None)
            except TemplateRaised as e:
                line["skipped"] = str(e)
            lines.append(json.dumps(line, ensure_ascii=False))
    with open(os.path.join(HERE, "cases.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
