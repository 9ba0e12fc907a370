// The inputs of a test's call, checked by the trusted supervisors where they lie (docs/security.md, "The
// boundary"): every element of every input must hold, after the call, the bits it was generated with
// (generator.h element_bits). Only the count of changed elements and the first of them reach the trusted
// folder, not the inputs themselves: for a test at a benchmark's size that was most of what a run wrote and
// the grader read back. Record, for the test's draw STEM:
//   STEM.inputs  per input, a line "INDEX CHANGED FIRST_CHANGED" (FIRST_CHANGED -1 where none changed)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "supervision.h"

namespace kjs {

struct Changes {
    unsigned long long count = 0, first = ~0ull;  // elements that no longer hold their generated bits
};

// The changes of input `b` in host memory at `base`, generated under `seed`.
inline Changes changed_elements(const Buffer& b, uint64_t seed, const void* base) {
    Changes found;
    for (size_t i = 0; i < b.count; ++i)
        if (kjg::stored_bits(b.dtype, base, i) != kjg::element_bits(b.dtype, i, seed, b.low_bits, b.scale_bits) &&
            found.count++ == 0)
            found.first = i;
    return found;
}

// STEM.inputs (`changes`: the inputs', in buffer order).
inline void write_input_changes(const Case& c, const std::string& stem, const std::vector<Changes>& changes) {
    std::string text;
    size_t next = 0;
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        if (!c.buffers[j].is_input) continue;
        const Changes& found = changes.at(next++);
        text += std::to_string(j) + " " + std::to_string(found.count) + " " +
                (found.count ? std::to_string(found.first) : "-1") + "\n";
    }
    write_file(stem + ".inputs", text.data(), text.size(), false);
}

}  // namespace kjs
