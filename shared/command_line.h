// The one way smallmind's programs read their command line: a CLI11 app whose options are bound to
// the program's config struct (GatewayConfig, WorkerConfig, the client's command flags), parsed
// once in main(). Unknown flags, extra arguments and ill-typed values become messages that name
// them;
// --help lists every flag with its default. Stateless functions; an app is used by one thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "shared/status.h"

namespace smallmind::shared {

// Gives `app` the house help format ("--port INT  meaning (default: 50051)") and option defaults:
// every option's initial value is shown as its default, and a single-valued flag given twice keeps
// the last value; and --version, printing VersionText(app's name) (shared/build_info.h). Call
// before adding options; subcommands added later inherit the first two.
void ConfigureCommandLine(CLI::App& app);

enum class CommandLineAction { kRun, kShowHelp, kShowVersion };

// Parses argv (argv[0] is skipped) into the options bound on `app`. kShowHelp: --help was given
// (print HelpText); kShowVersion: --version was given (print VersionTextOf). Errors are
// InvalidArgument with a message naming the flag or argument, e.g. "unknown flag '--wrokers' (did
// you mean --workers?)".
Result<CommandLineAction> ParseCommandLine(CLI::App& app, int argc, const char* const* argv);

// The help of the (sub)command the parsed command line selected.
std::string HelpText(const CLI::App& app);

// What --version prints for `app` (the top-level app's name and shared::VersionText).
std::string VersionTextOf(const CLI::App& app);

// For main(): parses; on --help (or --version) prints it to stdout and returns 0, on an error
// prints
// "<program>: <message>" and a --help hint to stderr and returns 2; nullopt means run.
std::optional<int> ParseCommandLineOrExitCode(CLI::App& app, int argc, const char* const* argv);

// "smallmind generate" for the generate subcommand of smallmind.
std::string CommandPath(const CLI::App& app);

}  // namespace smallmind::shared
