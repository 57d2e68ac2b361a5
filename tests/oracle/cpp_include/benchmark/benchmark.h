// A stand-in for Google Benchmark's <benchmark/benchmark.h>, written for the oracle: it
// declares only what fixtures/cpp/GL405/benchmark_loops.cpp (and its fixed golden) use, with
// the same signatures, so that both compile here as they would against the library. The
// bodies do no benchmarking: nothing in the oracle calls them.
#pragma once

#include <cstdint>

namespace benchmark {

using IterationCount = int64_t;

class State {
 public:
  // `for (auto _ : state)` runs the timed loop; this one runs it zero times.
  struct Iterator {
    bool operator!=(const Iterator&) const { return false; }
    Iterator& operator++() { return *this; }
    int operator*() const { return 0; }
  };
  Iterator begin() { return {}; }
  Iterator end() { return {}; }

  int64_t range(std::size_t index = 0) const { return index == 0 ? 1 : 0; }
  IterationCount iterations() const { return 0; }
  void SetItemsProcessed(int64_t items) { items_processed_ = items; }

 private:
  int64_t items_processed_ = 0;
};

template <class T>
inline void DoNotOptimize(T const& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

namespace internal {
class Benchmark {
 public:
  Benchmark* Arg(int64_t) { return this; }
};

inline Benchmark* RegisterBenchmarkInternal(const char*, void (*)(State&)) {
  static Benchmark registered;
  return &registered;
}
}  // namespace internal

inline void Initialize(int*, char**) {}
inline std::size_t RunSpecifiedBenchmarks() { return 0; }

}  // namespace benchmark

#define GRADLINT_BENCHMARK_CONCAT2(a, b) a##b
#define GRADLINT_BENCHMARK_CONCAT(a, b) GRADLINT_BENCHMARK_CONCAT2(a, b)
#define BENCHMARK(function)                                                                  \
  static ::benchmark::internal::Benchmark* GRADLINT_BENCHMARK_CONCAT(benchmark_registered_, \
                                                                     __LINE__)              \
      [[maybe_unused]] = ::benchmark::internal::RegisterBenchmarkInternal(#function, function)
