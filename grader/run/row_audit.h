// Row audits in the trusted supervisors (docs/security.md, "Audits"): what both keep of an audited call of a
// benchmark whose outputs are row-independent (problem.yaml's audit_rows; grader/problems/audit_rows.py).
//
// Once the benchmark's calls are over, for each call its draw kept, the supervisor draws a seed with getrandom()
// that picks the rows to check (generator.h drawn_row: the rows are cut into DRAWN runs of consecutive rows,
// one row picked in each), scans every element of every output for the poison (never written) and for NaN and
// Inf, and writes only the drawn rows. The grader (grader/judge/row_audit.py) picks the same rows from the seed
// and runs the float64 reference on them alone. The seed exists only after the calls are over, and the worker
// never sees it. Records, for the audited call STEM:
//   STEM.scan       "seed SEED", then per output a line "INDEX UNWRITTEN FIRST_UNWRITTEN BAD FIRST_BAD" (flat
//                   indices into the whole output; a first index is -1 where its count is 0; BAD: NaN or Inf the
//                   program wrote)
//   STEM.INDEX.bin  the drawn rows of output INDEX, as [OUTER, DRAWN, INNER]
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "supervision.h"

namespace kjs {

// The counts of one output's scan (generator.h element_state), with the first flat index of each kind.
struct Unfinished {
    unsigned long long unwritten = 0, first_unwritten = ~0ull, bad = 0, first_bad = ~0ull;
};

// The scan of an output in host memory.
inline Unfinished scan_output(const Buffer& b, const void* base) {
    Unfinished u;
    for (size_t i = 0; i < b.count; ++i) {
        const int state = kjg::element_state(b.dtype, base, i);
        if (state == 1 && u.unwritten++ == 0) u.first_unwritten = i;
        if (state == 2 && u.bad++ == 0) u.first_bad = i;
    }
    return u;
}

// The rows of an output in host memory drawn under `seed`, as [outer, drawn, inner].
inline std::vector<char> gather_rows(const Case& c, const Buffer& b, uint64_t seed, const char* base) {
    const size_t row_bytes = b.inner * bytes(b);
    std::vector<char> gathered(b.outer * c.rows_drawn * row_bytes);
    char* to = gathered.data();
    for (uint64_t o = 0; o < b.outer; ++o)
        for (uint64_t k = 0; k < c.rows_drawn; ++k, to += row_bytes)
            std::memcpy(to, base + (o * c.rows + kjg::drawn_row(k, c.rows, c.rows_drawn, seed)) * row_bytes, row_bytes);
    return gathered;
}

// STEM.scan (`scans`: the outputs' scans, in buffer order).
inline void write_scan(const Case& c, const std::string& stem, uint64_t seed, const std::vector<Unfinished>& scans) {
    std::string text = "seed " + std::to_string(seed) + "\n";
    size_t next = 0;
    auto first = [](unsigned long long count, unsigned long long at) { return count ? std::to_string(at) : "-1"; };
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        if (c.buffers[j].is_input) continue;
        const Unfinished& u = scans.at(next++);
        text += std::to_string(j) + " " + std::to_string(u.unwritten) + " " + first(u.unwritten, u.first_unwritten) +
                " " + std::to_string(u.bad) + " " + first(u.bad, u.first_bad) + "\n";
    }
    write_file(stem + ".scan", text.data(), text.size(), false);
}

}  // namespace kjs
