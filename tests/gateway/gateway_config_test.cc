#include "gateway/gateway_config.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "shared/command_line.h"

namespace smallmind::gateway {
namespace {

// The gateway's command line as main() reads it; help is an error here (tests never ask for it).
shared::Result<GatewayConfig> Parse(std::vector<const char*> args) {
  GatewayConfig config;
  CLI::App app{"test", "smallmind-gateway"};
  shared::ConfigureCommandLine(app);
  AddGatewayFlags(app, config);
  args.insert(args.begin(), "smallmind-gateway");
  SM_ASSIGN_OR_RETURN(const shared::CommandLineAction action,
                      shared::ParseCommandLine(app, static_cast<int>(args.size()), args.data()));
  if (action != shared::CommandLineAction::kRun) return shared::Internal("help was asked for");
  return config;
}

// Sets or clears one environment variable for a test's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(GatewayConfigTest, DefaultsMatchTheDesign) {
  ScopedEnv no_keys("SMALLMIND_API_KEYS", nullptr);
  auto config = Parse({});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->ModelFlags(), (std::vector<std::string>{"builtin:stories260K"}));
  EXPECT_TRUE(config->keep_alive.forever());
  EXPECT_EQ(config->memory_budget_mb, 0);
  EXPECT_EQ(config->workers, 2);
  EXPECT_EQ(config->port, 50051);
  EXPECT_EQ(config->listen_host, "0.0.0.0");
  EXPECT_TRUE(config->worker_endpoints.empty());
  EXPECT_TRUE(config->api_keys.empty());
  EXPECT_TRUE(config->Validate().ok());
}

TEST(GatewayConfigTest, ParsesSpacedAndEqualsFormsAndLists) {
  auto config = Parse({"--model",
                       "m.gguf",
                       "--workers=3",
                       "--port",
                       "0",
                       "--cpus-per-worker=4",
                       "--worker-endpoints",
                       "unix:/a.sock,,host:7000",
                       "--api-keys=k1,k2",
                       "--worker-binary",
                       "/opt/w",
                       "--drain-seconds",
                       "1.5",
                       "--api-keys-file",
                       "/etc/smallmind/keys",
                       "--tls-cert",
                       "c.pem",
                       "--tls-key",
                       "k.pem",
                       "--tls-client-ca",
                       "ca.pem"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->models, (std::vector<std::string>{"m.gguf"}));
  EXPECT_EQ(config->workers, 3);
  EXPECT_EQ(config->port, 0);
  EXPECT_EQ(config->supervisor.cpus_per_worker, 4);
  EXPECT_EQ(config->worker_endpoints, (std::vector<std::string>{"unix:/a.sock", "host:7000"}));
  EXPECT_EQ(config->api_keys, (std::vector<std::string>{"k1", "k2"}));
  EXPECT_EQ(config->supervisor.worker_binary, "/opt/w");
  EXPECT_EQ(config->drain_timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(config->api_keys_file, "/etc/smallmind/keys");
  EXPECT_EQ(config->tls.cert_file, "c.pem");
  EXPECT_EQ(config->tls.key_file, "k.pem");
  EXPECT_EQ(config->tls.client_ca_file, "ca.pem");
  EXPECT_TRUE(config->Validate().ok());
}

TEST(GatewayConfigTest, ARepeatedFlagKeepsItsLastValue) {
  auto config = Parse({"--port", "7000", "--port=7001"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->port, 7001);
}

TEST(GatewayConfigTest, BadFlagsAreErrorsThatNameTheFlag) {
  EXPECT_EQ(Parse({"--wrokers", "2"}).status().message(),
            "unknown flag '--wrokers' (did you mean --workers?)");
  EXPECT_EQ(Parse({"--bogus=1"}).status().message(), "unknown flag '--bogus'");
  EXPECT_EQ(Parse({"--workers", "2", "extra"}).status().message(), "unexpected argument 'extra'");
  for (std::vector<const char*> args :
       {std::vector<const char*>{"--workers"}, std::vector<const char*>{"--workers", "two"},
        std::vector<const char*>{"--workers=2.5"}}) {
    const shared::Status status = Parse(args).status();
    EXPECT_EQ(status.code(), shared::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("--workers"), std::string::npos) << status.message();
  }
}

TEST(GatewayConfigTest, ApiKeysComeFromTheEnvironmentUnlessTheFlagIsGiven) {
  ScopedEnv keys("SMALLMIND_API_KEYS", "env1,,env2");
  auto config = Parse({});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->api_keys, (std::vector<std::string>{"env1", "env2"}));
  config = Parse({"--api-keys", "flag"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->api_keys, (std::vector<std::string>{"flag"}));
}

TEST(GatewayConfigTest, ValidateRejectsOutOfRangeValuesNamingTheFlag) {
  auto message = [](const char* flag, const char* value) {
    auto config = Parse({flag, value});
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    return config.ok() ? config->Validate().message() : std::string();
  };
  EXPECT_EQ(message("--workers", "0"), "--workers must be in [1, 1024], got 0");
  EXPECT_EQ(message("--port", "70000"), "--port must be in [0, 65535], got 70000");
  EXPECT_EQ(message("--outbox", "0"), "--outbox must be in [1, 1024], got 0");
  EXPECT_EQ(message("--drain-seconds", "-1"), "--drain-seconds must be in [0, 86400]");
  EXPECT_EQ(message("--drain-seconds", "nan"), "--drain-seconds must be in [0, 86400]");
  EXPECT_EQ(message("--drain-seconds", "0"), "");
  EXPECT_EQ(message("--cpus-per-worker", "-1"), "--cpus-per-worker must be in [0, 4096], got -1");
  EXPECT_NE(message("--log-level", "loud").find("--log-level must be one of"), std::string::npos);
}

TEST(GatewayConfigTest, ParsesSeveralModelsKeepAliveAndBudget) {
  ScopedEnv no_keys("SMALLMIND_API_KEYS", nullptr);
  auto config = Parse({"--model", "a=builtin:tiny,workers=1", "--model", "b=builtin:stories260K",
                       "--keep-alive", "30s", "--memory-budget", "512"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->ModelFlags(),
            (std::vector<std::string>{"a=builtin:tiny,workers=1", "b=builtin:stories260K"}));
  EXPECT_EQ(config->keep_alive.duration, std::chrono::milliseconds(30000));
  EXPECT_EQ(config->memory_budget_mb, 512);
  EXPECT_TRUE(config->Validate().ok());
  config->models.push_back("a=other.gguf");
  EXPECT_NE(config->Validate().message().find("`a` is given twice"), std::string::npos);
  EXPECT_FALSE(Parse({"--keep-alive", "soon"}).ok());
}

TEST(GatewayConfigTest, AttachedWorkersServeOneModel) {
  GatewayConfig config;
  config.worker_endpoints = {"unix:/w.sock"};
  config.models = {"a=builtin:tiny", "b=builtin:tiny"};
  EXPECT_NE(config.Validate().message().find("--worker-endpoints serves the one model"),
            std::string::npos);
}

TEST(GatewayConfigTest, ValidateRejectsInconsistentValues) {
  GatewayConfig config;
  config.workers = 1;
  config.models = {""};
  EXPECT_FALSE(config.Validate().ok());
  config.worker_endpoints = {"unix:/w.sock"};  // attached workers bring their own model
  EXPECT_TRUE(config.Validate().ok());
  config.api_keys = {"has space"};
  EXPECT_FALSE(config.Validate().ok());
  config.api_keys.clear();
  config.tls.cert_file = "c.pem";
  EXPECT_EQ(config.Validate().message(),
            "--tls-cert and --tls-key go together: give both or neither");
  config.tls = {"", "", "ca.pem"};
  EXPECT_EQ(config.Validate().message(), "--tls-client-ca needs --tls-cert and --tls-key");
}

TEST(GatewayConfigTest, WorkerFlagsAreSplitAtSpacesAndMayNotSetWhatTheGatewaySets) {
  auto config = Parse({"--worker-flags", "--kv-dtype f32  --kv-memory-mb=64"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->supervisor.worker_flags,
            (std::vector<std::string>{"--kv-dtype", "f32", "--kv-memory-mb=64"}));
  EXPECT_TRUE(config->Validate().ok());
  config = Parse({"--worker-flags=--max-seqs 8"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->supervisor.worker_flags, (std::vector<std::string>{"--max-seqs", "8"}));
  for (const char* flags : {"--listen unix:/x", "--threads=4", "--kv-segment none", "--model m"}) {
    config = Parse({"--worker-flags", flags});
    ASSERT_TRUE(config.ok()) << flags;
    const std::string m = config->Validate().message();
    EXPECT_NE(m.find("--worker-flags must not set"), std::string::npos) << flags << ": " << m;
  }
  config = Parse({"--worker-flags", "--threads 4"});
  EXPECT_NE(config->Validate().message().find("--threads-per-worker"), std::string::npos);
  config = Parse({"--worker-flags", "--threads-cap 4"});  // a prefix of an own flag is not it
  EXPECT_TRUE(config->Validate().ok());
}

TEST(GatewayConfigTest, HelpShowsEveryFlagWithItsDefault) {
  GatewayConfig config;
  CLI::App app{"test", "smallmind-gateway"};
  shared::ConfigureCommandLine(app);
  AddGatewayFlags(app, config);
  const std::string help = shared::HelpText(app);
  for (const char* line :
       {"--port INT", "(default: 50051)", "--workers INT", "(default: 2)",
        "--drain-seconds SECONDS", "(default: 30)", "--model [NAME=]SPEC",
        "(default: builtin:stories260K)", "--api-keys LIST (env SMALLMIND_API_KEYS)",
        "--keep-alive DURATION", "(default: forever)", "--memory-budget MB", "--models-dir DIR"}) {
    EXPECT_NE(help.find(line), std::string::npos) << line << " missing from:\n" << help;
  }
}

TEST(GatewayConfigTest, SplitCommaListDropsEmptyPieces) {
  EXPECT_EQ(SplitCommaList(",a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitCommaList("").empty());
}

}  // namespace
}  // namespace smallmind::gateway
