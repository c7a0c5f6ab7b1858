// Every program reads its command line the same way (shared/command_line.h): unknown flags and
// stray arguments are errors that name them, --help lists every flag, and the client takes long
// prompts from a file or stdin. Runs the real binaries.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/cli_process.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind {
namespace {

using testing::BinaryPath;
using testing::ProgramRun;
using testing::RunToExit;

ProgramRun RunProgram(const std::string& program, std::vector<std::string> args,
                      const std::string& stdin_text = "") {
  args.insert(args.begin(), BinaryPath(program));
  return RunToExit(args, stdin_text);
}

// Every flag each program documents (README, Makefile, compose.yaml and the tests use them).
const std::vector<std::string> kGatewayFlags = {"--model",
                                                "--tokenizer",
                                                "--workers",
                                                "--cpus-per-worker",
                                                "--threads-per-worker",
                                                "--worker-binary",
                                                "--worker-endpoints",
                                                "--listen-host",
                                                "--port",
                                                "--api-keys",
                                                "--api-keys-file",
                                                "--tls-cert",
                                                "--tls-key",
                                                "--tls-client-ca",
                                                "--log-level",
                                                "--drain-seconds",
                                                "--ready-timeout-ms",
                                                "--stop-grace-ms",
                                                "--runtime-dir",
                                                "--outbox"};
const std::vector<std::string> kWorkerFlags = {"--model",
                                               "--tokenizer",
                                               "--listen",
                                               "--worker-id",
                                               "--cpus",
                                               "--threads",
                                               "--isa",
                                               "--log-level",
                                               "--exit-with-parent",
                                               "--kv-block-size",
                                               "--kv-blocks",
                                               "--kv-memory-mb",
                                               "--max-step-tokens",
                                               "--max-seqs",
                                               "--max-waiting",
                                               "--max-prefill-tokens-while-decoding"};
const std::vector<std::string> kModelgenFlags = {
    "--output", "--preset", "--type",    "--embd-type",    "--seed",
    "--name",   "--dim",    "--layers",  "--heads",        "--kv-heads",
    "--ffn",    "--vocab",  "--context", "--from-llama2c", "--tokenizer"};
const std::vector<std::string> kGenerateFlags = {
    "--addr",    "--api-key",         "--tls",         "--tls-ca",        "--tls-cert",
    "--tls-key", "--tls-server-name", "--prompt-file", "--max-tokens",    "--temperature",
    "--seed",    "--top-k",           "--top-p",       "--deterministic", "--stop",
    "--ids"};
const std::vector<std::string> kBenchFlags = {
    "--addr",        "--api-key",       "--prompt-file",     "--max-tokens",  "--temperature",
    "--concurrency", "--requests",      "--duration",        "--offline",     "--model",
    "--prompt-list", "--prompt-tokens", "--cancel-fraction", "--worker",      "--json",
    "--tokenizer",   "--threads",       "--paths",           "--repetitions", "--no-recompute"};

void ExpectMentionsEvery(const std::string& help, const std::vector<std::string>& flags) {
  for (const std::string& flag : flags) {
    EXPECT_NE(help.find(flag + " "), std::string::npos) << flag << " missing from:\n" << help;
  }
}

TEST(CliFlagsTest, EveryProgramExitsNonZeroOnAnUnknownFlagAndNamesIt) {
  const std::vector<std::vector<std::string>> command_lines = {
      {"smallmind-gateway", "--bogus"},     {"smallmind-worker", "--bogus"},
      {"smallmind-modelgen", "--bogus"},    {"smallmind", "--bogus"},
      {"smallmind", "generate", "--bogus"}, {"smallmind", "bench", "--bogus=1"},
      {"smallmind", "tokenize", "--bogus"}, {"smallmind", "info", "--bogus"},
      {"smallmind", "health", "--bogus"}};
  for (const auto& line : command_lines) {
    const ProgramRun run = RunProgram(line[0], {line.begin() + 1, line.end()});
    EXPECT_EQ(run.exit_code, 2) << line[0] << " " << line[1];
    EXPECT_NE(run.err.find("unknown flag '--bogus'"), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "") << line[0];
  }
}

TEST(CliFlagsTest, AMisspelledFlagIsNamedWithTheFlagItResembles) {
  ProgramRun run = RunProgram("smallmind-gateway", {"--wrokers", "2"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown flag '--wrokers' (did you mean --workers?)"), std::string::npos)
      << run.err;
  run = RunProgram("smallmind-worker", {"--kv-memory", "64"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("'--kv-memory' (did you mean --kv-memory-mb?)"), std::string::npos)
      << run.err;
}

TEST(CliFlagsTest, AMisspelledClientFlagDoesNotSwallowTheNextArgument) {
  // The old parser took "--adr" as a flag with the value "127.0.0.1:1", then called the default
  // address. Now nothing is sent: the command line is refused before any connection.
  ProgramRun run = RunProgram("smallmind", {"tokenize", "--adr", "127.0.0.1:1", "hello"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("smallmind tokenize: unknown flag '--adr' (did you mean --addr?)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(CliFlagsTest, StrayArgumentsAndUnknownCommandsAreErrors) {
  ProgramRun run = RunProgram("smallmind-gateway", {"--workers", "1", "stray"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unexpected argument 'stray'"), std::string::npos) << run.err;
  run = RunProgram("smallmind", {"info", "stray"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unexpected argument 'stray'"), std::string::npos) << run.err;
  run = RunProgram("smallmind", {"generate", "Once", "upon"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("the prompt is one argument, got 2"), std::string::npos) << run.err;
  run = RunProgram("smallmind", {"genrate", "hi"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown command 'genrate' (did you mean generate?)"), std::string::npos)
      << run.err;
  run = RunProgram("smallmind", {});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("a command is required"), std::string::npos) << run.err;
}

TEST(CliFlagsTest, IllTypedAndOutOfRangeValuesNameTheFlag) {
  ProgramRun run = RunProgram("smallmind", {"generate", "hi", "--max-tokens", "abc"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--max-tokens"), std::string::npos) << run.err;
  run = RunProgram("smallmind-gateway", {"--port", "70000"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--port must be in [0, 65535], got 70000"), std::string::npos) << run.err;
  run = RunProgram("smallmind-worker", {"--max-seqs", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--max-seqs must be in [1, 4096], got 0"), std::string::npos) << run.err;
  run = RunProgram("smallmind", {"bench", "hi", "--concurrency", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--concurrency must be in [1, 1024], got 0"), std::string::npos)
      << run.err;
  run = RunProgram("smallmind", {"bench", "hi", "--threads", "2"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--threads"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--offline"), std::string::npos) << run.err;
}

TEST(CliFlagsTest, HelpExitsZeroAndListsEveryFlagWithItsDefault) {
  ProgramRun run = RunProgram("smallmind-gateway", {"--help"});
  EXPECT_EQ(run.exit_code, 0);
  ExpectMentionsEvery(run.out, kGatewayFlags);
  EXPECT_NE(run.out.find("(default: 50051)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("SMALLMIND_API_KEYS"), std::string::npos) << run.out;

  run = RunProgram("smallmind-worker", {"--help"});
  EXPECT_EQ(run.exit_code, 0);
  ExpectMentionsEvery(run.out, kWorkerFlags);
  for (const char* model : {"builtin:stories260K", "builtin:tiny", "GGUF", "llama2.c"}) {
    EXPECT_NE(run.out.find(model), std::string::npos) << model << " missing from:\n" << run.out;
  }

  run = RunProgram("smallmind-modelgen", {"--help"});
  EXPECT_EQ(run.exit_code, 0);
  ExpectMentionsEvery(run.out, kModelgenFlags);

  run = RunProgram("smallmind", {"--help"});
  EXPECT_EQ(run.exit_code, 0);
  for (const char* command : {"generate", "tokenize", "info", "health", "bench"}) {
    EXPECT_NE(run.out.find(std::string("  ") + command), std::string::npos) << run.out;
  }
  run = RunProgram("smallmind", {"generate", "--help"});
  EXPECT_EQ(run.exit_code, 0);
  ExpectMentionsEvery(run.out, kGenerateFlags);
  EXPECT_NE(run.out.find("(default: localhost:50051)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("SMALLMIND_API_KEY"), std::string::npos) << run.out;
  run = RunProgram("smallmind", {"bench", "--help"});
  EXPECT_EQ(run.exit_code, 0);
  ExpectMentionsEvery(run.out, kBenchFlags);
  for (const char* command : {"tokenize", "info", "health"}) {
    run = RunProgram("smallmind", {command, "--help"});
    EXPECT_EQ(run.exit_code, 0) << command;
    ExpectMentionsEvery(run.out, {"--addr", "--api-key"});
  }
}

// Writes a prompt file in `dir` (removed with it); returns its path.
std::string WritePrompt(const testing::ScopedTempDir& dir, const std::string& contents) {
  const std::string path = dir.File("prompt.txt");
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(CliFlagsTest, APromptGivenTwiceIsAnError) {
  testing::ScopedTempDir dir;
  const std::string file = WritePrompt(dir, "from the file");
  ProgramRun run =
      RunProgram("smallmind", {"generate", "from the argument", "--prompt-file", file});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("not both"), std::string::npos) << run.err;
  run = RunProgram("smallmind", {"generate", "--prompt-file", file + ".missing"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--prompt-file " + file + ".missing"), std::string::npos) << run.err;
}

TEST(CliFlagsTest, BenchNamesThePromptSourcesItGot) {
  ProgramRun run = RunProgram("smallmind", {"bench"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("give exactly one prompt source"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("got none"), std::string::npos) << run.err;
  run = RunProgram("smallmind", {"bench", "hi", "--prompt-tokens", "16"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("got the prompt 'hi', --prompt-tokens 16"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("--worker is a switch"), std::string::npos) << run.err;
  // `--worker ADDR`: the address lands in the prompt; the message says where it belongs.
  run = RunProgram("smallmind", {"bench", "--worker", "unix:/tmp/w.sock", "--prompt-tokens", "16"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("the prompt 'unix:/tmp/w.sock'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--worker is a switch: give the worker's address as --addr"),
            std::string::npos)
      << run.err;
  run = RunProgram("smallmind", {"bench", "--worker", "127.0.0.1:50061", "--prompt-list", "p.txt"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--worker is a switch"), std::string::npos) << run.err;
  run = RunProgram("smallmind", {"bench", std::string(100, 'x'), "--prompt-list", "p.txt"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("the prompt '" + std::string(40, 'x') + "...'"), std::string::npos)
      << run.err;
}

TEST(CliFlagsTest, APromptFromAFileOrStdinGivesTheSameTokensAsTheArgument) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string prompt = "Once upon a time, in a quiet town,";
  const std::vector<std::string> greedy = {
      "--addr", (*gateway)->address(), "--temperature", "0", "--max-tokens", "12", "--ids"};
  auto generate = [&](std::vector<std::string> source, const std::string& stdin_text) {
    source.insert(source.begin(), "generate");
    source.insert(source.end(), greedy.begin(), greedy.end());
    return RunProgram("smallmind", source, stdin_text);
  };
  testing::ScopedTempDir dir;
  const std::string file = WritePrompt(dir, prompt);
  const ProgramRun by_argument = generate({prompt}, "");
  ASSERT_EQ(by_argument.exit_code, 0) << by_argument.err;
  ASSERT_NE(by_argument.out.find("token ids: "), std::string::npos) << by_argument.out;
  const ProgramRun by_file = generate({"--prompt-file", file}, "");
  const ProgramRun by_stdin = generate({"-"}, prompt);
  const ProgramRun by_stdin_file = generate({"--prompt-file", "-"}, prompt);
  EXPECT_EQ(by_file.exit_code, 0) << by_file.err;
  EXPECT_EQ(by_file.out, by_argument.out);
  EXPECT_EQ(by_stdin.exit_code, 0) << by_stdin.err;
  EXPECT_EQ(by_stdin.out, by_argument.out);
  EXPECT_EQ(by_stdin_file.out, by_argument.out);
  // The stdin of a different prompt gives different ids: the comparison above can fail.
  EXPECT_NE(generate({"-"}, "A different beginning").out, by_argument.out);

  const ProgramRun ids =
      RunProgram("smallmind", {"tokenize", prompt, "--addr", (*gateway)->address()});
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  EXPECT_EQ(RunProgram("smallmind", {"tokenize", "-", "--addr", (*gateway)->address()}, prompt).out,
            ids.out);
}

// --json-schema takes a file or the schema itself; a missing file, --json-object beside it and a
// schema the server cannot enforce are errors that say so.
TEST(CliFlagsTest, JsonSchemaComesFromAFileOrTheArgumentAndBadOnesAreNamed) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string schema =
      R"({"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]})";
  testing::ScopedTempDir dir;
  const std::string file = dir.File("schema.json");
  std::ofstream(file, std::ios::binary) << schema;
  const std::vector<std::string> common = {
      "--addr", (*gateway)->address(), "--temperature", "0", "--max-tokens", "40", "--ids"};
  auto generate = [&](const std::string& schema_arg) {
    std::vector<std::string> args = {"generate", "x", "--json-schema", schema_arg};
    args.insert(args.end(), common.begin(), common.end());
    return RunProgram("smallmind", args);
  };
  const ProgramRun by_file = generate(file);
  ASSERT_EQ(by_file.exit_code, 0) << by_file.err;
  EXPECT_EQ(generate(schema).out, by_file.out);
  // builtin:tiny draws bytes at random: under the schema its text begins {"ok" (the only key).
  const size_t open = by_file.out.find('{');
  ASSERT_NE(open, std::string::npos) << by_file.out;
  EXPECT_EQ(by_file.out.find("\"ok\"", open), by_file.out.find_first_not_of(" \t\n", open + 1))
      << by_file.out;

  ProgramRun run = generate(file + ".missing");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("cannot read the schema file " + file + ".missing"), std::string::npos)
      << run.err;
  run = RunProgram("smallmind", {"generate", "x", "--json-object", "--json-schema", schema});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("excludes"), std::string::npos) << run.err;
  run = generate(R"({"type":"object","properties":{"n":{"type":"integer","multipleOf":2}}})");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("INVALID_ARGUMENT: json_schema at \"/properties/n\": keyword "
                         "`multipleOf` is not supported"),
            std::string::npos)
      << run.err;
}

// --logit-bias TOKEN_ID=BIAS (repeatable) reaches the sampler: +100 on one token makes every token
// that one; a malformed pair is a usage error, an out-of-range bias the server's 400.
TEST(CliFlagsTest, LogitBiasForcesATokenAndMalformedPairsAreUsageErrors) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const ProgramRun z = RunProgram("smallmind", {"tokenize", "z", "--addr", (*gateway)->address()});
  ASSERT_EQ(z.exit_code, 0) << z.err;
  // The ids line is BOS then 'z' (builtin:tiny adds BOS): the last one.
  const std::string line = z.out.substr(0, z.out.find('\n'));
  const std::string z_id = line.substr(line.rfind(' ') + 1);
  auto generate = [&](std::vector<std::string> bias) {
    std::vector<std::string> args = {
        "generate", "Once upon a time", "--addr", (*gateway)->address(), "--temperature",
        "0.8",      "--max-tokens",     "5"};
    for (std::string& b : bias) {
      args.push_back("--logit-bias");
      args.push_back(std::move(b));
    }
    return RunProgram("smallmind", args);
  };
  const ProgramRun forced = generate({"0=-100", z_id + "=100"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.out.substr(0, 5), "zzzzz") << forced.out;
  for (const char* bad : {"abc", "5", "5=", "=3", "5=x", "-1=2", "5=1x"}) {
    const ProgramRun run = generate({bad});
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_NE(run.err.find("expected TOKEN_ID=BIAS"), std::string::npos) << bad << ": " << run.err;
  }
  const ProgramRun out_of_range = generate({"5=250"});
  EXPECT_EQ(out_of_range.exit_code, 1);
  EXPECT_NE(out_of_range.err.find("sampling.logit_bias[5] must be in [-100, 100], got 250"),
            std::string::npos)
      << out_of_range.err;
}

TEST(CliFlagsTest, APromptLongerThanAShellArgumentReachesTheServerThroughAFile) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  // 192 KiB: more than one execve argument may hold (MAX_ARG_STRLEN, 128 KiB).
  std::string prompt;
  while (prompt.size() < 192 * 1024) prompt += "Once upon a time there was a long prompt. ";
  testing::ScopedTempDir dir;
  const std::string file = WritePrompt(dir, prompt);
  const ProgramRun run = RunProgram("smallmind", {"generate", "--prompt-file", file, "--addr",
                                                  (*gateway)->address(), "--max-tokens", "4"});
  // builtin:tiny's context is far shorter: the worker refuses the tokenized prompt, which proves
  // all of it arrived.
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("INVALID_ARGUMENT"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("context"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace smallmind
