// HttpFlags: the flags of the commands that talk to a gateway's HTTP door (`smallmind chat`,
// `smallmind models`): its address and the API key. Plain data, filled by CLI11.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace smallmind::cli {

struct HttpFlags {
  std::string addr = "http://localhost:8000";  // the gateway's --http-port
  std::string api_key;                         // sent as `authorization: Bearer <key>` when set
};

// Adds --addr and --api-key (env SMALLMIND_API_KEY) to a command.
inline void AddHttpFlags(CLI::App& command, HttpFlags& flags) {
  command
      .add_option("--addr", flags.addr,
                  "the gateway's HTTP door (its --http-port; the chat route is HTTP only)")
      ->type_name("http://HOST:PORT")
      ->capture_default_str();
  command.add_option("--api-key", flags.api_key, "API key for a gateway started with --api-keys")
      ->type_name("KEY")
      ->envname("SMALLMIND_API_KEY")
      ->default_str("none");
}

}  // namespace smallmind::cli
