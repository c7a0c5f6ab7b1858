#include "shared/command_line.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "shared/build_info.h"

namespace smallmind::shared {
namespace {

// A small program with one subcommand, like the smallmind client.
struct Program {
  CLI::App app{"a test program", "prog"};
  int level = 3;
  std::vector<std::string> words;
  int count = 5;

  Program() {
    ConfigureCommandLine(app);
    app.require_subcommand(1);
    CLI::App* run = app.add_subcommand("run", "runs");
    run->add_option("--level", level, "how much");
    run->add_option("--count", count, "how many")->default_str("five");
    run->add_option("words", words, "what to say");
  }

  Result<CommandLineAction> Parse(std::vector<const char*> args) {
    args.insert(args.begin(), "prog");
    return ParseCommandLine(app, static_cast<int>(args.size()), args.data());
  }
};

TEST(CommandLineTest, ParsesASubcommandsFlagsAndPositionals) {
  Program p;
  auto action = p.Parse({"run", "--level=7", "hello", "-5", "-"});
  ASSERT_TRUE(action.ok()) << action.status().ToString();
  EXPECT_EQ(*action, CommandLineAction::kRun);
  EXPECT_EQ(p.level, 7);
  EXPECT_EQ(p.words, (std::vector<std::string>{"hello", "-5", "-"}));
}

TEST(CommandLineTest, UnknownFlagsAndCommandsAreNamedWithTheClosestValidOne) {
  EXPECT_EQ(Program().Parse({"run", "--levle", "2"}).status().message(),
            "unknown flag '--levle' (did you mean --level?)");
  EXPECT_EQ(Program().Parse({"run", "--xyzzy"}).status().message(), "unknown flag '--xyzzy'");
  EXPECT_EQ(Program().Parse({"rnu"}).status().message(),
            "unknown command 'rnu' (did you mean run?); commands: run");
  EXPECT_EQ(Program().Parse({}).status().message(), "a command is required: run");
}

TEST(CommandLineTest, VersionNamesTheProgramCommitBuildTypeAndKernelIsas) {
  Program p;
  auto action = p.Parse({"--version"});
  ASSERT_TRUE(action.ok()) << action.status().ToString();
  EXPECT_EQ(*action, CommandLineAction::kShowVersion);
  const std::string text = VersionTextOf(p.app);
  const BuildInfo& b = GetBuildInfo();
  EXPECT_EQ(text, "prog " + std::string(b.version) + " (commit " + std::string(b.commit) + ", " +
                      std::string(b.build_type) + ", kernels: " + std::string(b.kernel_isas) + ")");
  EXPECT_FALSE(b.version.empty());
  EXPECT_FALSE(b.commit.empty());
  EXPECT_TRUE(b.kernel_isas.starts_with("ref")) << b.kernel_isas;
}

TEST(CommandLineTest, HelpIsTheChosenCommandsWithDefaultsAfterTheMeaning) {
  Program p;
  auto action = p.Parse({"run", "--help"});
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, CommandLineAction::kShowHelp);
  const std::string help = HelpText(p.app);
  EXPECT_NE(help.find("prog run"), std::string::npos) << help;
  EXPECT_NE(help.find("how much (default: 3)"), std::string::npos) << help;
  EXPECT_NE(help.find("how many (default: five)"), std::string::npos) << help;
  EXPECT_EQ(help.find("default: []"), std::string::npos) << help;
}

TEST(CommandLineTest, CommandPathNamesTheSubcommandUnderItsProgram) {
  Program p;
  ASSERT_TRUE(p.Parse({"run"}).ok());
  EXPECT_EQ(CommandPath(*p.app.get_subcommand("run")), "prog run");
  EXPECT_EQ(CommandPath(p.app), "prog");
}

}  // namespace
}  // namespace smallmind::shared
