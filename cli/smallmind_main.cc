// smallmind: command-line client of the public API (smallmind.v1.Inference). One subcommand per
// file (cli/*_command.h); this main parses the command line once, then validates and runs the
// chosen command. Exit codes: 0 ok, 1 the command failed (an RPC error, an unreadable file),
// 2 a usage error.
#include <cstdio>
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/chat_command.h"
#include "cli/command.h"
#include "cli/generate_command.h"
#include "cli/health_command.h"
#include "cli/info_command.h"
#include "cli/models_command.h"
#include "cli/tokenize_command.h"
#include "shared/command_line.h"
#include "shared/grpc_process.h"

namespace {

int Run(int argc, char** argv) {
  using namespace smallmind::cli;
  smallmind::shared::PrepareGrpcProcess();
  CLI::App app{"smallmind: command-line client of a smallmind gateway (smallmind.v1.Inference)",
               "smallmind"};
  smallmind::shared::ConfigureCommandLine(app);
  app.require_subcommand(1);
  GenerateCommand generate(app);
  TokenizeCommand tokenize(app);
  InfoCommand info(app);
  HealthCommand health(app);
  BenchCommand bench(app);
  ChatCommand chat(app);
  ModelsCommand models(app);
  app.footer("Run 'smallmind COMMAND --help' for a command's flags.");
  if (auto exit_code = smallmind::shared::ParseCommandLineOrExitCode(app, argc, argv)) {
    return *exit_code;
  }
  for (const Command* command :
       std::vector<const Command*>{&generate, &tokenize, &info, &health, &bench, &chat, &models}) {
    if (!command->chosen()) continue;
    const std::string path = smallmind::shared::CommandPath(command->subcommand());
    if (auto valid = command->Validate(); !valid.ok()) {
      std::fprintf(stderr, "%s: %s\nsee '%s --help'\n", path.c_str(), valid.message().c_str(),
                   path.c_str());
      return 2;
    }
    const smallmind::shared::Result<int> exit_code = command->Run();
    if (exit_code.ok()) return *exit_code;
    std::fprintf(stderr, "%s: %s\n", path.c_str(), exit_code.status().message().c_str());
    return 1;
  }
  return 2;  // unreachable: the command line requires a command
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smallmind: %s\n", e.what());
    return 1;
  }
}
