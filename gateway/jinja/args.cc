#include "gateway/jinja/args.h"

#include <string>

namespace smallmind::jinja {

Result<BoundArgs> BindArgs(std::string_view function, CallArgs args,
                           std::initializer_list<std::string_view> params, size_t required) {
  const std::string fn(function);
  BoundArgs out(params.size());
  if (args.positional.size() > params.size()) {
    return shared::InvalidArgument(fn + "() takes at most " + std::to_string(params.size()) +
                                   " argument(s) (" + std::to_string(args.positional.size()) +
                                   " given)");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) out[i] = std::move(args.positional[i]);
  for (auto& [name, value] : args.keywords) {
    size_t i = 0;
    for (std::string_view p : params) {
      if (p == name) break;
      ++i;
    }
    if (i == params.size()) {
      return shared::InvalidArgument(fn + "() got an unexpected keyword argument '" + name + "'");
    }
    if (out[i]) {
      return shared::InvalidArgument(fn + "() got multiple values for argument '" + name + "'");
    }
    out[i] = std::move(value);
  }
  size_t i = 0;
  for (std::string_view p : params) {
    if (i < required && !out[i]) {
      return shared::InvalidArgument(fn + "() missing required argument '" + std::string(p) + "'");
    }
    ++i;
  }
  return out;
}

Result<int64_t> ToIndex(const Value& v) {
  if (v.is_integral()) return v.integer();
  return shared::InvalidArgument("'" + v.TypeName() +
                                 "' object cannot be interpreted as an integer");
}

}  // namespace smallmind::jinja
