// The ChatML fallback template (chat_template.h). Turns are ChatML's. An assistant message's
// tool_calls are written as <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call> after its
// content, as Qwen2.5 and Hermes write them (arguments that are a string are printed as they are:
// OpenAI clients send JSON text). A run of `tool` messages (the results) is one user turn of
// <tool_response>\n...\n</tool_response> parts, as Qwen2.5 has it. A null or missing content is
// empty. `tools` are not listed: a model without a template was trained on no tool format, and the
// list would take a small model's context (stories260K has 512 tokens).
#include "gateway/chat/chat_template.h"

namespace smallmind::gateway {
namespace {

constexpr std::string_view kChatMl = R"JINJA({%- for message in messages %}
    {%- if message.role == 'tool' %}
        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' + (message.content or '') + '\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- elif message.tool_calls %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for call in message.tool_calls %}
            {%- set fn = call.function if call.function is defined else call %}
            {{- '\n<tool_call>\n{"name": "' + fn.name + '", "arguments": ' }}
            {%- if fn.arguments is string %}
                {{- fn.arguments }}
            {%- else %}
                {{- fn.arguments | tojson }}
            {%- endif %}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\n' + (message.content or '') + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %})JINJA";

}  // namespace

std::string_view ChatMlTemplate() { return kChatMl; }

}  // namespace smallmind::gateway
