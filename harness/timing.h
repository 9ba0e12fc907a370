// The timing method (docs/timing.md says why each step is there). For one benchmark:
//  1. the launch-and-record overhead of an empty call is measured and reported;
//  2. warm-up: calls until three in a row agree within 2% (or a quarter of the budget is spent);
//  3. a call under BATCH_BELOW_MS is timed in batches: B calls, each on its own fresh inputs and outputs,
//     between one pair of events, B chosen so a batch lasts about BATCH_TARGET_MS;
//  4. samples until the relative standard error of the median is under TARGET_RSE, with at least
//     min_samples and at most max_samples, or until the budget is spent;
//  every timed call gets fresh inputs, poisoned outputs and a cold cache (flush_cache), outside the timed
//  interval. The harness reports raw samples; the trusted grader computes the statistics it believes.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "platform.h"

namespace kj {

constexpr double BATCH_BELOW_MS = 0.020;
constexpr double BATCH_TARGET_MS = 0.5;
constexpr int MAX_BATCH = 256;
constexpr size_t MAX_BATCH_BYTES = size_t(1) << 30;
constexpr double TARGET_RSE = 0.005;
constexpr int MAX_WARMUP = 50;

struct BenchPlan {
    int min_samples = 10, max_samples = 200;
    double budget_ms = 2000;
    int audits = 3;
    size_t bytes_per_call = 0;
};

struct BenchResult {
    std::string header;
    std::vector<std::string> lines;  // "call_index call_ms tail_ms" per sample (per call, for batches)
};

using Ptrs = std::vector<void*>;  // one buffer per pointer parameter, any element type

inline double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Standard error of the median over the median, from the interquartile range (robust to outliers).
inline double relative_error_of_median(std::vector<double> v) {
    if (v.size() < 4) return 1.0;
    std::sort(v.begin(), v.end());
    double iqr = v[3 * v.size() / 4] - v[v.size() / 4];
    double med = median_of(v);
    return med > 0 ? 1.2533 * (iqr / 1.349) / std::sqrt((double)v.size()) / med : 1.0;
}

inline void empty_entry(void**, const int*) {}

inline CallTimes overhead_of_empty_call() {
    Ptrs none;
    std::vector<int> no_ints;
    std::vector<double> call, tail;
    for (int i = 0; i < 21; ++i) {
        CallTimes t = timed_call(empty_entry, none, no_ints);
        call.push_back(t.call_ms);
        tail.push_back(t.tail_ms);
    }
    return {median_of(call), median_of(tail)};
}

inline BenchResult bench(const BenchPlan& plan, EntryFn entry, const std::vector<int>& ints,
                         const std::function<Ptrs()>& alloc, const std::function<void(uint64_t, Ptrs&)>& prepare,
                         const std::function<void(uint64_t, Ptrs&, bool)>& audit, const std::function<void(Ptrs&)>& release) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto spent_ms = [&] { return std::chrono::duration<double, std::milli>(clock::now() - start).count(); };
    const CallTimes overhead = overhead_of_empty_call();
    BenchResult result;
    uint64_t call = 0;

    Ptrs ptrs = alloc();
    auto one_call = [&](Ptrs& p, bool force_audit = false) {
        prepare(call, p);
        device_synchronize("preparing a timed call");
        flush_cache();
        CallTimes t = timed_call(entry, p, ints);
        audit(call, p, force_audit);
        result.lines.push_back(format_times(call, t));
        ++call;
        return t;
    };

    std::vector<double> warm;
    int warmup = 0;
    while (warmup < MAX_WARMUP && spent_ms() < plan.budget_ms / 4) {
        warm.push_back(one_call(ptrs).call_ms);
        ++warmup;
        if (warm.size() >= 3) {
            double a = warm[warm.size() - 1], b = warm[warm.size() - 2], c = warm[warm.size() - 3];
            double hi = std::max({a, b, c}), lo = std::min({a, b, c});
            if (hi <= lo * 1.02) break;
        }
    }
    result.lines.clear();  // warm-up calls are not samples
    const double per_call = median_of(std::vector<double>(warm.end() - std::min<size_t>(3, warm.size()), warm.end()));

    int batch = 1;
    if (per_call < BATCH_BELOW_MS) {
        batch = (int)std::ceil(BATCH_TARGET_MS / std::max(per_call, 1e-4));
        size_t fit = plan.bytes_per_call ? MAX_BATCH_BYTES / plan.bytes_per_call : MAX_BATCH;
        batch = (int)std::max<size_t>(2, std::min<size_t>({(size_t)batch, (size_t)MAX_BATCH, fit}));
    }

    std::vector<double> samples;
    auto enough = [&] {
        int n = (int)samples.size();
        if (n >= plan.max_samples) return true;
        if (n >= plan.min_samples && relative_error_of_median(samples) < TARGET_RSE) return true;
        return n >= 3 && spent_ms() > plan.budget_ms;
    };
    if (batch == 1) {
        while (!enough()) samples.push_back(one_call(ptrs).call_ms);
    } else {
        std::vector<Ptrs> sets(batch);
        sets[0] = ptrs;
        for (int b = 1; b < batch; ++b) sets[b] = alloc();
        while (!enough()) {
            for (int b = 0; b < batch; ++b) prepare(call + b, sets[b]);
            device_synchronize("preparing a timed batch");
            flush_cache();
            CallTimes t = timed([&] { for (Ptrs& p : sets) call_entry(entry, p, ints); }, "the submission's solve");
            t.call_ms /= batch;
            for (int b = 0; b < batch; ++b) audit(call + b, sets[b], false);
            result.lines.push_back(format_times(call, t));
            samples.push_back(t.call_ms);
            call += batch;
        }
        for (int b = 1; b < batch; ++b) release(sets[b]);
    }
    (void)one_call(ptrs, true);  // one more call, indistinguishable from the others, always audited
    result.lines.pop_back();
    release(ptrs);

    char header[200];
    std::snprintf(header, sizeof header, "mode %s batch %d overhead_ms %.6f tail_overhead_ms %.6f warmup %d",
                  batch == 1 ? "single" : "batch", batch, overhead.call_ms, overhead.tail_ms, warmup);
    result.header = header;
    return result;
}

}  // namespace kj
