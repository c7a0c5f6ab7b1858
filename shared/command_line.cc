#include "shared/command_line.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <vector>

#include "shared/build_info.h"

namespace smallmind::shared {
namespace {

// "--port INT (env X)   what it means (default: 50051)": the default goes after the meaning, so
// the flag column stays narrow and an option with no default reads the same as one with.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string out;
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    if (opt->get_type_size() != 0 && !opt->get_type_name().empty()) {
      out += " " + opt->get_type_name();
    }
    if (opt->get_required()) out += " (required)";
    if (!opt->get_envname().empty()) out += " (env " + opt->get_envname() + ")";
    return out;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    std::string value = opt->get_default_str();
    // Vectors print as "[1,2]"; an empty one is no default at all.
    if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
      value = value.substr(1, value.size() - 2);
    }
    if (opt->get_type_size() != 0 && !value.empty()) desc += " (default: " + value + ")";
    for (const CLI::Option* other : opt->get_needs()) desc += " [needs " + other->get_name() + "]";
    return desc;
  }
};

// Levenshtein distance, for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The closest of `names` to `word`, if it is close enough to be a typo of it.
std::string Closest(std::string_view word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& name : names) {
    const size_t d = EditDistance(word, name);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

// The deepest subcommand the command line selected, or `app` itself.
const CLI::App& SelectedCommand(const CLI::App& app) {
  const CLI::App* current = &app;
  for (int depth = 0; depth < 16; ++depth) {
    const std::vector<CLI::App*> chosen = current->get_subcommands();
    if (chosen.empty()) break;
    current = chosen.front();
  }
  return *current;
}

// Every flag spelling valid at `command` (its own options and those of its parents).
std::vector<std::string> FlagNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* opt : app->get_options()) {
      for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
      for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    }
  }
  return names;
}

std::vector<std::string> SubcommandNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// "-5" and "-" are values (a negative number, stdin), not flags.
bool LooksLikeFlag(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1])) &&
         arg[1] != '.';
}

// CLI11's "Could not convert: --max-tokens = abc" as "--max-tokens expects a non-negative
// integer, got 'abc'".
std::string DescribeConversionError(const CLI::App& where, const std::string& what) {
  constexpr std::string_view kPrefix = "Could not convert: ";
  const size_t equals = what.find(" = ");
  if (what.rfind(kPrefix, 0) != 0 || equals == std::string::npos) return what;
  const std::string flag = what.substr(kPrefix.size(), equals - kPrefix.size());
  const std::string value = what.substr(equals + 3);
  std::string expected = "a value of another type";
  for (const CLI::App* app = &where; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* opt : app->get_options()) {
      if (!opt->check_name(flag)) continue;
      const std::string type = opt->get_type_name();
      expected = type == "INT"       ? "an integer"
                 : type == "UINT"    ? "a non-negative integer"
                 : type == "FLOAT"   ? "a number"
                 : type == "BOOLEAN" ? "true or false"
                                     : type;
    }
  }
  return flag + " expects " + expected + ", got '" + value + "'";
}

std::string DescribeParseError(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App& where = SelectedCommand(app);
  const std::vector<std::string> extras = app.remaining(true);
  for (const std::string& arg : extras) {
    if (!LooksLikeFlag(arg)) continue;
    const std::string flag = arg.substr(0, arg.find('='));
    std::string message = "unknown flag '" + flag + "'";
    if (std::string near = Closest(flag, FlagNames(where)); !near.empty()) {
      message += " (did you mean " + near + "?)";
    }
    return message;
  }
  const std::vector<std::string> commands = SubcommandNames(where);
  const bool command_missing = !commands.empty() && where.get_subcommands().empty();
  if (!extras.empty() && command_missing) {
    std::string message = "unknown command '" + extras.front() + "'";
    if (std::string near = Closest(extras.front(), commands); !near.empty()) {
      message += " (did you mean " + near + "?)";
    }
    return message + "; commands: " + JoinNames(commands);
  }
  if (!extras.empty()) return "unexpected argument '" + extras.front() + "'";
  if (command_missing && where.get_require_subcommand_min() > 0) {
    return "a command is required: " + JoinNames(commands);
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    return DescribeConversionError(where, error.what());
  }
  return error.what();
}

}  // namespace

void ConfigureCommandLine(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.get_formatter()->column_width(32);
  app.option_defaults()->always_capture_default()->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag(
      "--version", [&app] { return VersionTextOf(app); },
      "print the version, commit, build type and kernel ISAs, then exit");
}

std::string VersionTextOf(const CLI::App& app) {
  const CLI::App* top = &app;
  while (top->get_parent() != nullptr) top = top->get_parent();
  return VersionText(top->get_name());
}

Result<CommandLineAction> ParseCommandLine(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return CommandLineAction::kShowHelp;
  } catch (const CLI::CallForAllHelp&) {
    return CommandLineAction::kShowHelp;
  } catch (const CLI::CallForVersion&) {
    return CommandLineAction::kShowVersion;
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(DescribeParseError(app, e));
  }
  return CommandLineAction::kRun;
}

std::string HelpText(const CLI::App& app) { return app.help(); }

std::string CommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* parent = app.get_parent(); parent != nullptr;
       parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  return path;
}

std::optional<int> ParseCommandLineOrExitCode(CLI::App& app, int argc, const char* const* argv) {
  const Result<CommandLineAction> action = ParseCommandLine(app, argc, argv);
  if (!action.ok()) {
    const std::string command = CommandPath(SelectedCommand(app));
    std::fprintf(stderr, "%s: %s\nsee '%s --help'\n", command.c_str(),
                 action.status().message().c_str(), command.c_str());
    return 2;
  }
  if (*action == CommandLineAction::kShowHelp) {
    std::fputs(HelpText(app).c_str(), stdout);
    return 0;
  }
  if (*action == CommandLineAction::kShowVersion) {
    std::printf("%s\n", VersionTextOf(app).c_str());
    return 0;
  }
  return std::nullopt;
}

}  // namespace smallmind::shared
