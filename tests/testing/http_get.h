// HttpGet: one plain HTTP/1.1 GET for tests (a gateway's /metrics endpoint), over Boost.Beast,
// bounded by a timeout. Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <string>

#include "shared/status.h"

namespace smallmind::testing {

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

// GET http://host:port/target. UNAVAILABLE (with the reason) when it cannot connect or the
// exchange does not finish within `timeout`.
shared::Result<HttpResponse> HttpGet(const std::string& host, int port, const std::string& target,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace smallmind::testing
