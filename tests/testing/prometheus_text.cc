#include "tests/testing/prometheus_text.h"

#include <cstdlib>
#include <string>

namespace smallmind::testing {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

// Parses `{a="x",b="y"}` at the start of `rest`, consuming it. False on malformed labels.
bool ParseLabels(std::string_view& rest, std::map<std::string, std::string>& labels) {
  rest.remove_prefix(1);  // '{'
  for (int guard = 0; guard < 1000; ++guard) {
    if (!rest.empty() && rest.front() == '}') {
      rest.remove_prefix(1);
      return true;
    }
    size_t n = 0;
    while (n < rest.size() && IsNameChar(rest[n])) ++n;
    if (n == 0 || n + 1 >= rest.size() || rest[n] != '=' || rest[n + 1] != '"') return false;
    const std::string name(rest.substr(0, n));
    rest.remove_prefix(n + 2);
    std::string value;
    while (!rest.empty() && rest.front() != '"') {
      if (rest.front() == '\\' && rest.size() > 1) {
        value += rest[1] == 'n' ? '\n' : rest[1];
        rest.remove_prefix(2);
      } else {
        value += rest.front();
        rest.remove_prefix(1);
      }
    }
    if (rest.empty()) return false;
    rest.remove_prefix(1);  // closing quote
    labels[name] = value;
    if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
  }
  return false;
}

bool ParseSample(std::string_view line, MetricSample& sample) {
  size_t n = 0;
  while (n < line.size() && IsNameChar(line[n])) ++n;
  if (n == 0) return false;
  sample.name = std::string(line.substr(0, n));
  std::string_view rest = line.substr(n);
  if (!rest.empty() && rest.front() == '{' && !ParseLabels(rest, sample.labels)) return false;
  if (rest.empty() || rest.front() != ' ') return false;
  const std::string value(rest.substr(1, rest.find(' ', 1) - 1));  // a timestamp may follow
  char* end = nullptr;
  sample.value = std::strtod(value.c_str(), &end);
  return !value.empty() && end == value.c_str() + value.size();
}

}  // namespace

std::optional<double> MetricsText::Value(std::string_view name,
                                         const std::map<std::string, std::string>& labels) const {
  std::optional<double> found;
  for (const MetricSample& s : samples) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [key, value] : labels) {
      auto it = s.labels.find(key);
      match = match && it != s.labels.end() && it->second == value;
    }
    if (!match) continue;
    if (found) return std::nullopt;  // ambiguous
    found = s.value;
  }
  return found;
}

std::vector<MetricSample> MetricsText::Samples(std::string_view name) const {
  std::vector<MetricSample> out;
  for (const MetricSample& s : samples) {
    if (s.name == name) out.push_back(s);
  }
  return out;
}

shared::Result<MetricsText> ParseMetricsText(std::string_view text) {
  MetricsText out;
  int line_number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_number;
    if (line.empty()) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      const std::string_view rest = line.substr(7);
      const size_t space = rest.find(' ');
      if (space == std::string_view::npos) {
        return shared::InvalidArgument("line " + std::to_string(line_number) + ": bad TYPE");
      }
      out.types[std::string(rest.substr(0, space))] = std::string(rest.substr(space + 1));
      continue;
    }
    if (line.front() == '#') continue;
    MetricSample sample;
    if (!ParseSample(line, sample)) {
      return shared::InvalidArgument("line " + std::to_string(line_number) +
                                     " does not parse: " + std::string(line));
    }
    out.samples.push_back(std::move(sample));
  }
  return out;
}

}  // namespace smallmind::testing
