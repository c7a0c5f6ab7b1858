// Text and number filters, and the filter table (see filters.h).
#include "gateway/jinja/filters.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "gateway/jinja/access.h"
#include "gateway/jinja/args.h"
#include "gateway/jinja/format.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/json.h"
#include "gateway/jinja/methods.h"
#include "gateway/jinja/ops.h"
#include "gateway/jinja/repr.h"
#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

Value Text(std::string s, bool safe = false) { return Value::String(std::move(s), safe); }

Result<Value> Length(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("length", std::move(args), {}));
  SM_ASSIGN_OR_RETURN(int64_t n, jinja::Length(v));
  return Value::Int(n);
}

Result<Value> Default(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a,
                      BindArgs("default", std::move(args), {"default_value", "boolean"}));
  if (v.is_undefined() || (a[1] && a[1]->Truthy() && !v.Truthy())) return Or(a[0], Text(""));
  return v;
}

Result<Value> Escape(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("escape", std::move(args), {}));
  if (v.is_string() && v.safe()) return v;
  return Text(HtmlEscape(Str(v)), true);
}

Result<Value> ForceEscape(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("forceescape", std::move(args), {}));
  return Text(HtmlEscape(Str(v)), true);
}

Result<Value> Safe(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("safe", std::move(args), {}));
  return Text(Str(v), true);
}

Result<Value> String(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("string", std::move(args), {}));
  return SoftStr(v);
}

Result<Value> CaseFilter(const Value& v, CallArgs args, const char* name) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, std::move(args), {}));
  const Value s = SoftStr(v);
  CallArgs none;
  std::string_view n(name);
  if (n == "title") {  // jinja2's own: words start after -, whitespace or an opening bracket
    const std::u32string cps = unicode::Decode(s.str());
    std::string out;
    bool word_start = true;
    for (char32_t c : cps) {
      const bool sep =
          c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || unicode::IsSpace(c);
      if (sep) {
        unicode::Append(out, c);
      } else if (word_start) {
        unicode::AppendUpper(out, c);
      } else {
        unicode::AppendLower(out, c);
      }
      word_start = sep;
    }
    return Text(std::move(out), s.safe());
  }
  std::string out = n == "upper" ? unicode::Upper(s.str()) : unicode::Lower(s.str());
  if (n == "capitalize" && !out.empty()) {
    std::string first;
    size_t i = 0;
    unicode::AppendTitle(first, unicode::Next(s.str(), i));
    out = first + unicode::Lower(std::string_view(s.str()).substr(i));
  }
  return Text(std::move(out), s.safe());
}

Result<Value> Lower(Interpreter&, const Value& v, CallArgs a) {
  return CaseFilter(v, std::move(a), "lower");
}
Result<Value> Upper(Interpreter&, const Value& v, CallArgs a) {
  return CaseFilter(v, std::move(a), "upper");
}
Result<Value> Title(Interpreter&, const Value& v, CallArgs a) {
  return CaseFilter(v, std::move(a), "title");
}
Result<Value> Capitalize(Interpreter&, const Value& v, CallArgs a) {
  return CaseFilter(v, std::move(a), "capitalize");
}

Result<Value> Trim(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("trim", std::move(args), {"chars"}));
  const Value s = SoftStr(v);
  if (a[0] && !a[0]->is_none() && !a[0]->is_string()) {
    return InvalidArgument("strip arg must be None or str");
  }
  const std::string* chars = a[0] && a[0]->is_string() ? &a[0]->str() : nullptr;
  return Text(std::string(unicode::Strip(s.str(), chars, true, true)), s.safe());
}

Result<Value> Replace(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a,
                      BindArgs("replace", std::move(args), {"old", "new", "count"}, 2));
  CallArgs call;
  call.positional = {Text(Str(*a[0])), Text(Str(*a[1]))};
  if (a[2] && !a[2]->is_none()) call.positional.push_back(*a[2]);
  Value plain = Text(Str(v));
  Value method = BindMethod(plain, "replace");
  return in.Call(method, std::move(call));
}

Result<Value> Center(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("center", std::move(args), {"width"}));
  CallArgs call;
  call.positional = {Or(a[0], Value::Int(80))};
  return in.Call(BindMethod(Text(Str(v)), "center"), std::move(call));
}

Result<Value> Indent(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a,
                      BindArgs("indent", std::move(args), {"width", "first", "blank"}));
  if (!v.is_string()) {
    return InvalidArgument("unsupported operand type(s) for +=: '" + v.TypeName() + "' and 'str'");
  }
  const Value width = Or(a[0], Value::Int(4));
  std::string indention;
  if (width.is_string()) {
    indention = width.str();
  } else if (width.is_integral()) {
    SM_RETURN_IF_ERROR(in.CheckString(static_cast<size_t>(std::max<int64_t>(0, width.integer()))));
    indention.assign(static_cast<size_t>(std::max<int64_t>(0, width.integer())), ' ');
  } else {
    return InvalidArgument("can't multiply sequence by non-int of type '" + width.TypeName() + "'");
  }
  CallArgs none;
  SM_ASSIGN_OR_RETURN(Value lines_v,
                      in.Call(BindMethod(Text(v.str() + "\n"), "splitlines"), std::move(none)));
  const ValueList& lines = lines_v.list();
  std::string out;
  const bool blank = a[2] && a[2]->Truthy();
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i].str();
    if (i > 0) out += '\n';
    if (i > 0 && (blank || !line.empty())) out += indention;
    out += line;
    SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  }
  if (a[1] && a[1]->Truthy()) out = indention + out;
  return Text(std::move(out), v.safe());
}

Result<Value> Truncate(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(
      BoundArgs a, BindArgs("truncate", std::move(args), {"length", "killwords", "end", "leeway"}));
  if (!v.is_string()) return InvalidArgument("object of type '" + v.TypeName() + "' has no len()");
  SM_ASSIGN_OR_RETURN(int64_t length, ToIndex(Or(a[0], Value::Int(255))));
  const std::string end = Str(Or(a[2], Text("...")));
  int64_t leeway = 5;  // jinja2's truncate.leeway policy
  if (a[3] && !a[3]->is_none()) {
    SM_ASSIGN_OR_RETURN(leeway, ToIndex(*a[3]));
  }
  const int64_t end_len = static_cast<int64_t>(unicode::Length(end));
  if (length < end_len) {
    return InvalidArgument("expected length >= " + std::to_string(end_len) + ", got " +
                           std::to_string(length));
  }
  if (leeway < 0) return InvalidArgument("expected leeway >= 0, got " + std::to_string(leeway));
  const std::u32string s = unicode::Decode(v.str());
  if (static_cast<int64_t>(s.size()) <= length + leeway) return v;
  std::u32string head = s.substr(0, static_cast<size_t>(length - end_len));
  if (!(a[1] && a[1]->Truthy())) {
    const size_t space = head.rfind(U' ');
    if (space != std::u32string::npos) head.resize(space);
  }
  return Text(unicode::Encode(head) + end);
}

Result<Value> WordCount(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("wordcount", std::move(args), {}));
  const std::u32string s = unicode::Decode(Str(v));
  int64_t words = 0;
  bool in_word = false;
  for (char32_t c : s) {
    const bool w = c == '_' || unicode::IsAlpha(c) || unicode::IsDecimal(c) ||
                   unicode::IsDigit(c) || unicode::IsNumeric(c);
    words += w && !in_word;
    in_word = w;
  }
  return Value::Int(words);
}

// Python's float(str): whitespace, sign, digits with single underscores, inf/nan.

// Python's int(str, base).

Result<Value> Format(Interpreter& in, const Value& v, CallArgs args) {
  if (!args.positional.empty() && !args.keywords.empty()) {
    return InvalidArgument("can't handle positional and keyword arguments at the same time");
  }
  Value values;
  if (!args.keywords.empty()) {
    Dict d;
    for (auto& [k, kv] : args.keywords) d.Set(Text(k), std::move(kv));
    values = Value::FromDict(std::move(d));
  } else {
    values = Value::Tuple(std::move(args.positional));
  }
  return PercentFormat(in, SoftStr(v), values);
}

Result<Value> ToJsonFilter(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("tojson", std::move(args),
                                            {"ensure_ascii", "indent", "separators", "sort_keys"}));
  JsonDumpOptions o;
  o.ensure_ascii = a[0] && a[0]->Truthy();
  if (a[1] && !a[1]->is_none()) {
    if (a[1]->is_string()) {
      o.indent = a[1]->str();
    } else {
      SM_ASSIGN_OR_RETURN(int64_t n, ToIndex(*a[1]));
      o.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(n, 0, 1024)), ' ');
    }
  }
  if (a[2] && !a[2]->is_none()) {
    SM_ASSIGN_OR_RETURN(ValueList seps, Iterate(*a[2]));
    if (seps.size() != 2 || !seps[0].is_string() || !seps[1].is_string()) {
      return InvalidArgument("tojson separators must be a pair of strings");
    }
    o.item_separator = seps[0].str();
    o.key_separator = seps[1].str();
  }
  o.sort_keys = a[3] && a[3]->Truthy();
  SM_ASSIGN_OR_RETURN(std::string json, ToJson(v, o, in.limits().max_output_bytes));
  SM_RETURN_IF_ERROR(in.ChargeBytes(json.size()));
  return Text(std::move(json));
}

Result<Value> Attr(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("attr", std::move(args), {"name"}, 1));
  if (!a[0]->is_string()) return InvalidArgument("attribute name must be a string");
  return GetAttrOnly(v, a[0]->str());
}

}  // namespace

Value SoftStr(const Value& v) {
  if (v.is_string()) return v;
  return Value::String(Str(v));
}

FilterFn FindTextFilter(std::string_view name) {
  static const struct {
    std::string_view name;
    FilterFn fn;
  } kFilters[] = {
      {"attr", Attr},
      {"capitalize", Capitalize},
      {"center", Center},
      {"count", Length},
      {"d", Default},
      {"default", Default},
      {"e", Escape},
      {"escape", Escape},
      {"forceescape", ForceEscape},
      {"format", Format},
      {"indent", Indent},
      {"length", Length},
      {"lower", Lower},
      {"replace", Replace},
      {"safe", Safe},
      {"string", String},
      {"title", Title},
      {"tojson", ToJsonFilter},
      {"trim", Trim},
      {"truncate", Truncate},
      {"upper", Upper},
      {"wordcount", WordCount},
  };
  for (const auto& f : kFilters) {
    if (f.name == name) return f.fn;
  }
  return nullptr;
}

FilterFn FindFilter(std::string_view name) {
  if (FilterFn f = FindTextFilter(name)) return f;
  if (FilterFn f = FindNumberFilter(name)) return f;
  return FindSequenceFilter(name);
}

}  // namespace smallmind::jinja
