#include "gateway/chat/chat_template.h"

#include <locale.h>
#include <time.h>

#include <vector>

#include "gateway/jinja/jinja.h"

namespace smallmind::gateway {
namespace {

using jinja::CallArgs;
using jinja::Value;
using shared::InvalidArgument;
using shared::Result;

// Longest strftime result accepted; Python's would be as long as asked, but a prompt has no use
// for more.
constexpr size_t kMaxTimeText = 4096;

// raise_exception(message): ends the render with the template's own message.
class RaiseException : public jinja::Callable {
 public:
  Result<Value> Call(jinja::Interpreter& in, CallArgs args) const override {
    SM_ASSIGN_OR_RETURN(jinja::BoundArgs a,
                        jinja::BindArgs("raise_exception", std::move(args), {"message"}, 1));
    return in.Raise(jinja::Str(*a[0]));
  }
  std::string Repr() const override { return "<function raise_exception>"; }
};

// strftime_now(format): the render's `now`, formatted.
class StrftimeNow : public jinja::Callable {
 public:
  explicit StrftimeNow(std::chrono::system_clock::time_point now) : now_(now) {}
  Result<Value> Call(jinja::Interpreter&, CallArgs args) const override {
    SM_ASSIGN_OR_RETURN(jinja::BoundArgs a,
                        jinja::BindArgs("strftime_now", std::move(args), {"format"}, 1));
    if (!a[0]->is_string()) {
      return InvalidArgument("strftime() argument 1 must be str, not " + a[0]->TypeName());
    }
    SM_ASSIGN_OR_RETURN(std::string text, FormatUtcTime(now_, a[0]->str()));
    return Value::String(std::move(text));
  }
  std::string Repr() const override { return "<function strftime_now>"; }

 private:
  std::chrono::system_clock::time_point now_;
};

constexpr std::string_view kCoreVariables[] = {
    "messages", "tools", "documents", "add_generation_prompt", "bos_token", "eos_token"};

shared::Status CheckUtf8(const std::string& what, const std::string& s) {
  if (jinja::unicode::FindInvalidUtf8(s) == std::string::npos) return shared::Status::Ok();
  return InvalidArgument(what + " is not valid UTF-8");
}

// Strings built in code (not parsed) may hold any bytes; the template must only see text.
shared::Status CheckJsonUtf8(const std::string& what, const nlohmann::ordered_json& j) {
  if (j.is_string()) return CheckUtf8(what, j.get_ref<const std::string&>());
  if (j.is_array()) {
    for (const auto& item : j) SM_RETURN_IF_ERROR(CheckJsonUtf8(what, item));
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      SM_RETURN_IF_ERROR(CheckUtf8(what, key));
      SM_RETURN_IF_ERROR(CheckJsonUtf8(what, value));
    }
  }
  return shared::Status::Ok();
}

}  // namespace

Result<std::string> FormatUtcTime(std::chrono::system_clock::time_point t,
                                  const std::string& format) {
  if (format.find('\0') != std::string::npos) return InvalidArgument("embedded null character");
  const time_t secs = std::chrono::system_clock::to_time_t(t);
  struct tm utc {};
  if (gmtime_r(&secs, &utc) == nullptr) return InvalidArgument("time out of range");
  locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(0));
  if (c_locale == static_cast<locale_t>(0)) return shared::Internal("cannot create the C locale");
  // strftime returns 0 both for "too small" and for an empty result; grow, then give up.
  std::string out;
  for (size_t size = 64 + format.size() * 4; size <= kMaxTimeText * 4; size *= 4) {
    std::vector<char> buf(size);
    const size_t n = strftime_l(buf.data(), buf.size(), format.c_str(), &utc, c_locale);
    if (n > 0 || format.empty()) {
      out.assign(buf.data(), n);
      break;
    }
  }
  freelocale(c_locale);
  if (out.size() > kMaxTimeText) return InvalidArgument("strftime_now result is too long");
  return out;
}

Result<ChatTemplate> ChatTemplate::Parse(std::string source, jinja::RenderLimits limits) {
  Result<jinja::Template> parsed = jinja::Template::Parse(source);
  if (!parsed.ok()) {
    return InvalidArgument("chat template " + parsed.status().message());
  }
  const ContentFormat format = DetectContentFormat(parsed->body());
  ChatTemplate tmpl(std::make_shared<const std::string>(std::move(source)),
                    std::move(parsed).value(), limits, format);
  tmpl.tool_arguments_ = DetectToolArguments(tmpl);
  return tmpl;
}

Result<std::string> ChatTemplate::Render(const ChatRenderInput& input) const {
  if (!input.extra.is_null() && !input.extra.is_object()) {
    return InvalidArgument("chat_template_kwargs must be an object");
  }
  for (const auto& [key, value] : input.extra.items()) {
    for (std::string_view core : kCoreVariables) {
      if (key == core) {
        return InvalidArgument("chat_template_kwargs may not set '" + key +
                               "' (it is set from the request itself)");
      }
    }
  }
  SM_RETURN_IF_ERROR(CheckUtf8("bos_token", input.bos_token));
  SM_RETURN_IF_ERROR(CheckUtf8("eos_token", input.eos_token));
  SM_RETURN_IF_ERROR(CheckJsonUtf8("messages", input.messages));
  SM_RETURN_IF_ERROR(CheckJsonUtf8("tools", input.tools));
  SM_RETURN_IF_ERROR(CheckJsonUtf8("documents", input.documents));
  SM_RETURN_IF_ERROR(CheckJsonUtf8("chat_template_kwargs", input.extra));
  const ContentFormat format =
      input.content_format == ContentFormat::kAuto ? content_format_ : input.content_format;
  SM_ASSIGN_OR_RETURN(nlohmann::ordered_json messages, PrepareMessages(input.messages, format));
  messages = PrepareToolArguments(messages, input.tool_arguments == ToolArguments::kAuto
                                                ? tool_arguments_
                                                : input.tool_arguments);

  jinja::Variables vars;
  SM_ASSIGN_OR_RETURN(Value messages_value, jinja::FromJson(messages));
  SM_ASSIGN_OR_RETURN(Value tools, jinja::FromJson(input.tools));
  SM_ASSIGN_OR_RETURN(Value documents, jinja::FromJson(input.documents));
  vars.emplace_back("messages", std::move(messages_value));
  vars.emplace_back("tools", std::move(tools));
  vars.emplace_back("documents", std::move(documents));
  vars.emplace_back("add_generation_prompt", Value::Bool(input.add_generation_prompt));
  vars.emplace_back("bos_token", Value::String(input.bos_token));
  vars.emplace_back("eos_token", Value::String(input.eos_token));
  if (input.extra.is_object()) {
    for (const auto& [key, value] : input.extra.items()) {
      SM_ASSIGN_OR_RETURN(Value v, jinja::FromJson(value));
      vars.emplace_back(key, std::move(v));
    }
  }
  jinja::Frame globals;
  globals.Set("raise_exception", Value::FromCallable(std::make_shared<RaiseException>()));
  globals.Set("strftime_now", Value::FromCallable(std::make_shared<StrftimeNow>(input.now)));
  return template_.Render(vars, &globals, limits_, "chat template ");
}

}  // namespace smallmind::gateway
