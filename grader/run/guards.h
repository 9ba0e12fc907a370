// The guards around every buffer of a supervised run (grader/boundary/protocol.h, "The region's layout"), shared by
// both supervisors: where a set's buffers and guards lie, the canary the guards hold, and what a call that
// wrote into them did. Before every call the supervisor writes the canary into every guard of the call's sets
// (after the worker's own stand-in calls, which write there too); after every call it looks for any changed
// byte (on the CUDA track a kernel looks first and the host scan below runs only on a set it flagged).
//
// The canary is 16 bits per even byte position of the region, from a secret drawn by the supervisor for the
// run: it differs between neighbours and between buffers, so a kernel that copies past the end of an input
// into the slack of an output, or adds two inputs' slack, writes something else than the canary it replaces.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "generator.h"
#include "protocol.h"

namespace kjguard {

// One guard of a set: bytes [begin, end) from the set's start, before buffer `buffer` (its LEAD; the first
// buffer's FENCE too) or after it (the padding of its last page, its TRAIL, and the next FENCE or the set's last).
struct Range {
    uint64_t begin = 0, end = 0;
    uint64_t data_begin = 0;  // where the buffer's first element lies
    uint32_t buffer = 0, element_bytes = 4;
    bool after = false;
};

struct Layout {
    std::vector<uint64_t> offsets;  // of each buffer, from the set's start
    std::vector<Range> guards;      // in the order they lie
    uint64_t set_bytes = 0;
};

inline uint64_t whole_pages(uint64_t bytes) { return (bytes + kjp::PAGE - 1) / kjp::PAGE * kjp::PAGE; }

// One set of buffers of these sizes (bytes; element_bytes each): FENCE | LEAD | buffer | TRAIL per buffer, then
// the last FENCE. An empty buffer still takes a page.
inline Layout lay_out(const std::vector<uint64_t>& data_bytes, const std::vector<uint32_t>& element_bytes) {
    Layout layout;
    uint64_t slot = 0;
    for (size_t j = 0; j < data_bytes.size(); ++j) {
        const uint64_t offset = slot + kjp::GUARD_FENCE + kjp::GUARD_LEAD;
        const uint64_t next_slot = offset + whole_pages(std::max<uint64_t>(data_bytes[j], 1)) + kjp::GUARD_TRAIL;
        const uint32_t width = element_bytes[j];
        layout.offsets.push_back(offset);
        layout.guards.push_back({j == 0 ? 0 : offset - kjp::GUARD_LEAD, offset, offset, (uint32_t)j, width, false});
        // The canary is 16-bit words at even positions (the device reads them as uint16_t): a 1-byte buffer of odd
        // length leaves its one byte of slack to the word's end unguarded.
        const uint64_t end = (data_bytes[j] + 1) / 2 * 2;
        layout.guards.push_back({offset + end, next_slot + kjp::GUARD_FENCE, offset, (uint32_t)j, width, true});
        slot = next_slot;
    }
    layout.set_bytes = slot + kjp::GUARD_FENCE;
    return layout;
}

// The canary at byte `position` of the region (even), for the run's secret `salt`.
KJ_HD inline uint16_t canary(uint64_t salt, uint64_t position) {
    const uint32_t unit = (uint32_t)(position >> 1) ^ ((uint32_t)(position >> 33) * 0x9E3779B9u);
    return (uint16_t)kjg::fmix32(kjg::fmix32(unit ^ (uint32_t)salt) + (uint32_t)(salt >> 32));
}

// The canary into every guard of the set at `set` (host memory), which lies at byte `set_position` of the region.
inline void fill(unsigned char* set, uint64_t set_position, const std::vector<Range>& guards, uint64_t salt) {
    for (const Range& g : guards)
        for (uint64_t p = g.begin; p < g.end; p += 2) {
            const uint16_t value = canary(salt, set_position + p);
            std::memcpy(set + p, &value, sizeof value);
        }
}

// What a call wrote into one guard: `bytes` from its first to its last changed element, the first of them at
// `first_element` (an index of the buffer: past its end, count or more; before its start, negative).
struct Overrun {
    bool found = false;
    uint32_t buffer = 0;
    bool after = false;
    uint64_t bytes = 0;
    int64_t first_element = 0;
};

inline int64_t element_at(const Range& g, uint64_t position) {
    const int64_t from_start = (int64_t)position - (int64_t)g.data_begin;  // floor division: -1 for the byte before
    return from_start >= 0 ? from_start / g.element_bytes : -((-from_start + g.element_bytes - 1) / g.element_bytes);
}

// The first guard of the set (host memory at `set`, byte `set_position` of the region) whose canary changed.
inline Overrun scan(const unsigned char* set, uint64_t set_position, const std::vector<Range>& guards, uint64_t salt) {
    for (const Range& g : guards) {
        uint64_t first = 0, last = 0;
        bool changed = false;
        for (uint64_t p = g.begin; p < g.end; p += 2) {
            const uint16_t want = canary(salt, set_position + p);
            uint16_t got;
            std::memcpy(&got, set + p, sizeof got);
            if (got == want) continue;
            const unsigned char* w = reinterpret_cast<const unsigned char*>(&want);
            const uint64_t low = set[p] != w[0] ? p : p + 1, high = set[p + 1] != w[1] ? p + 1 : p;
            if (!changed) first = low;
            last = high, changed = true;
        }
        if (changed) {
            const int64_t first_element = element_at(g, first), last_element = element_at(g, last);
            return {true, g.buffer, g.after, (uint64_t)(last_element - first_element + 1) * g.element_bytes, first_element};
        }
    }
    return {};
}

// The record of a call that wrote into a guard (grader/judge/supervisor_records.py reads it):
//   CASE CALL BUFFER after|before BYTES FIRST_ELEMENT
inline std::string record(const std::string& case_name, uint64_t call, const Overrun& o) {
    char line[192];
    std::snprintf(line, sizeof line, "%s %llu %u %s %llu %lld\n", case_name.c_str(), (unsigned long long)call,
                  o.buffer, o.after ? "after" : "before", (unsigned long long)o.bytes, (long long)o.first_element);
    return line;
}

}  // namespace kjguard
