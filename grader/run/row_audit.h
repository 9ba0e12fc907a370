// Row audits in the trusted supervisors (docs/security.md, "Audits"): what both keep of an audited call of a
// benchmark whose outputs are row-independent (problem.yaml's audit_rows; grader/problems/audit_rows.py).
//
// Once the benchmark's calls are over, for each call its draw kept, the supervisor draws the rows to check with
// getrandom() (the rows are cut into DRAWN runs of consecutive rows, one row drawn uniformly in each), scans
// every element of every output for the poison (never written) and for NaN and Inf, and writes only the drawn
// rows. The grader (grader/judge/row_audit.py) runs the float64 reference on those rows alone. Nothing about
// the draw exists before the calls are over, and the worker never sees it. Records, for the audited call STEM:
//   STEM.rows.bin  the drawn rows, ascending, as little-endian uint64
//   STEM.scan      per output, a line "INDEX UNWRITTEN FIRST_UNWRITTEN BAD FIRST_BAD" (flat indices into the
//                  whole output; a first index is -1 where the count is 0; BAD: NaN or Inf the program wrote)
//   STEM.INDEX.bin the drawn rows of output INDEX, as [OUTER, DRAWN, INNER]
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

// Run k of `drawn` is rows [k*rows/drawn, (k+1)*rows/drawn); one row of each, under a key drawn now.
inline std::vector<uint64_t> draw_rows(uint64_t rows, uint64_t drawn) {
    const uint64_t k0 = random64(), k1 = random64();
    std::vector<uint64_t> picked(drawn);
    for (uint64_t k = 0; k < drawn; ++k) {
        const uint64_t low = (uint64_t)((unsigned __int128)k * rows / drawn);
        const uint64_t high = (uint64_t)((unsigned __int128)(k + 1) * rows / drawn);
        picked[k] = low + kjg::siphash24(k0, k1, k) % (high - low);
    }
    return picked;
}

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

// The drawn rows of an output in host memory, as [outer, drawn, inner].
inline std::vector<char> gather_rows(const Buffer& b, uint64_t rows, const std::vector<uint64_t>& drawn, const char* base) {
    const size_t row_bytes = b.inner * bytes(b);
    std::vector<char> gathered(b.outer * drawn.size() * row_bytes);
    char* to = gathered.data();
    for (uint64_t o = 0; o < b.outer; ++o)
        for (uint64_t r : drawn) {
            std::memcpy(to, base + (o * rows + r) * row_bytes, row_bytes);
            to += row_bytes;
        }
    return gathered;
}

// STEM.rows.bin and STEM.scan (`scans`: the outputs' scans, in buffer order).
inline void write_row_records(const Case& c, const std::string& stem, const std::vector<uint64_t>& drawn,
                              const std::vector<Unfinished>& scans) {
    write_file(stem + ".rows.bin", drawn.data(), drawn.size() * sizeof(uint64_t), false);
    std::string text;
    size_t next = 0;
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        if (c.buffers[j].is_input) continue;
        const Unfinished& u = scans.at(next++);
        auto first = [](unsigned long long count, unsigned long long at) { return count ? std::to_string(at) : "-1"; };
        text += std::to_string(j) + " " + std::to_string(u.unwritten) + " " + first(u.unwritten, u.first_unwritten) +
                " " + std::to_string(u.bad) + " " + first(u.bad, u.first_bad) + "\n";
    }
    write_file(stem + ".scan", text.data(), text.size(), false);
}

}  // namespace kjs
