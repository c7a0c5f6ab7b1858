// ListenerWatch: the gateway's check that its own gRPC port still accepts connections (issue 40).
// gRPC 1.51's listener can stop accepting for good after accept4 fails with EMFILE, while the
// process and its HTTP door look fine. Every interval a probe connects to the port on loopback
// and waits (bounded) for the server to answer at all: the HTTP/2 preface gets the server's
// SETTINGS, a TLS ClientHello its ServerHello or an alert; a connection nobody accepts gets
// nothing. After `not_serving_after` of failed probes the gateway reports NOT_SERVING (gRPC health,
// HTTP /health); after `exit_after` it exits non-zero for its supervisor to restart it. One thread
// of its own; the callbacks run there. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace smallmind::gateway {

struct ListenerWatchOptions {
  std::chrono::milliseconds interval{5000};       // between probes; 0 = no watch
  std::chrono::milliseconds probe_timeout{2000};  // one probe's connect + answer
  // Of failed probes, then NOT_SERVING (the gateway makes it two intervals).
  std::chrono::milliseconds not_serving_after{10000};
  std::chrono::milliseconds exit_after{30000};  // of failed probes, then exit
};

// What the probes say so far. Pure: tested as a table.
enum class ListenerState { kServing, kNotServing, kWedged };
// `failing_for`: since the first of the failed probes in a row (nullopt: the last one answered).
ListenerState JudgeListener(std::optional<std::chrono::milliseconds> failing_for,
                            const ListenerWatchOptions& options);

// One probe of 127.0.0.1:`port` (TLS: with a ClientHello): true when the server answered within
// `timeout`. A probe that cannot even make its socket (this process is out of descriptors) is a
// failure too: that is the state that wedges the listener.
bool ProbeListener(int port, bool tls, std::chrono::milliseconds timeout);

class ListenerWatch {
 public:
  using Probe = std::function<bool()>;
  // `on_serving(false)` when the state turns kNotServing, `on_serving(true)` when a probe answers
  // again; `on_wedged` once, when it turns kWedged.
  ListenerWatch(ListenerWatchOptions options, Probe probe, std::function<void(bool)> on_serving,
                std::function<void()> on_wedged);
  // Stop().
  ~ListenerWatch();
  ListenerWatch(const ListenerWatch&) = delete;
  ListenerWatch& operator=(const ListenerWatch&) = delete;

  void Stop();

 private:
  void Run();

  const ListenerWatchOptions options_;
  const Probe probe_;
  const std::function<void(bool)> on_serving_;
  const std::function<void()> on_wedged_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace smallmind::gateway
