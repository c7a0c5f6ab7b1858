// Google Benchmark of parsing one JSON object of n distinct keys (issue 40): nlohmann's
// ordered_json::parse, whose insert searches the object from the front (n^2/2 compares), against
// shared::ReadJson, which finds repeated keys through a hash table. The default caps refuse more
// than 4096 keys per object, so ReadJson runs here with that cap lifted to show it is linear.
//
//   build/bin/json_reader_bench --benchmark_filter='/100000'
#include <benchmark/benchmark.h>

#include <string>

#include <nlohmann/json.hpp>

#include "shared/json_reader.h"

namespace smallmind::shared {
namespace {

// About 10 bytes a key: 100k keys make a 1 MB body, the attack.
std::string ManyKeys(int64_t n) {
  std::string s = "{";
  for (int64_t i = 0; i < n; ++i) s += (i ? ",\"" : "\"") + std::to_string(1000000 + i) + "\":1";
  return s + "}";
}

void BM_OrderedJsonParse(benchmark::State& state) {
  const std::string text = ManyKeys(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(nlohmann::ordered_json::parse(text));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_OrderedJsonParse)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_ReadJson(benchmark::State& state) {
  const std::string text = ManyKeys(state.range(0));
  JsonLimits limits;
  limits.max_object_keys = 1 << 20;
  for (auto _ : state) benchmark::DoNotOptimize(ReadJson(text, limits, "the body"));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ReadJson)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// The default caps: the 1 MB body is refused after reading 4097 keys.
void BM_ReadJsonRefuses(benchmark::State& state) {
  const std::string text = ManyKeys(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(ReadJson(text, {}, "the body"));
}
BENCHMARK(BM_ReadJsonRefuses)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace smallmind::shared

BENCHMARK_MAIN();
