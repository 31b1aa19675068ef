// Host driver for tests/twin_math_rng.rs: runs the C++ twins of src/math and src/rng (the
// kernels/common headers, compiled as host C++) over binary input files and writes binary
// output files, all arrays of native-endian 32-bit words.
//
//   driver math <op> <a.bin> <b.bin> <out.bin>  f32 a[i], b[i] -> tg_selftest_math(op, a, b)
//   driver stream <words.bin> <out.bin>          6 u32 stream words per lane -> 4 u32 state
//   driver draws <rounds> <params.bin> <out.bin> 9 u32 params per lane -> 5·rounds u32 draws
//   driver streams                               prints "NAME VALUE" per TG_STREAM_IDS entry
//
// Exit status 0 on success; 2 with a message on stderr on bad usage or I/O failure.
#include <stdio.h>
#include <stdlib.h>

#include <string_view>
#include <vector>

#include "common/selftest.cuh"

namespace {

[[noreturn]] void fail(const char* what, const char* detail) {
    fprintf(stderr, "twin driver: %s %s\n", what, detail);
    exit(2);
}

std::vector<tg_u32> read_words(const char* path) {
    FILE* f = fopen(path, "rb");
    if (f == nullptr) {
        fail("cannot open", path);
    }
    std::vector<tg_u32> words;
    tg_u32 buffer[4096];
    size_t n;
    while ((n = fread(buffer, sizeof(tg_u32), 4096, f)) > 0) {
        words.insert(words.end(), buffer, buffer + n);
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) {
        fail("cannot read", path);
    }
    return words;
}

void write_words(const char* path, const std::vector<tg_u32>& words) {
    FILE* f = fopen(path, "wb");
    if (f == nullptr) {
        fail("cannot create", path);
    }
    size_t written = fwrite(words.data(), sizeof(tg_u32), words.size(), f);
    if (fclose(f) != 0 || written != words.size()) {
        fail("cannot write", path);
    }
}

tg_u32 parse_u32(const char* text) {
    char* end = nullptr;
    unsigned long value = strtoul(text, &end, 10);
    if (end == text || *end != '\0' || value > 0xffffffffUL) {
        fail("not a u32:", text);
    }
    return (tg_u32)value;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 6 && std::string_view(argv[1]) == "math") {
        tg_u32 op = parse_u32(argv[2]);
        std::vector<tg_u32> a = read_words(argv[3]);
        std::vector<tg_u32> b = read_words(argv[4]);
        if (a.size() != b.size()) {
            fail("inputs differ in length:", argv[4]);
        }
        std::vector<tg_u32> out(a.size());
        for (size_t i = 0; i < a.size(); ++i) {
            float r = tg_selftest_math(op, tg_f32_from_bits(a[i]), tg_f32_from_bits(b[i]));
            out[i] = tg_f32_to_bits(r);
        }
        write_words(argv[5], out);
    } else if (argc == 4 && std::string_view(argv[1]) == "stream") {
        std::vector<tg_u32> words = read_words(argv[2]);
        size_t lanes = words.size() / TG_SELFTEST_WORDS;
        std::vector<tg_u32> out(4 * lanes);
        for (size_t i = 0; i < lanes; ++i) {
            tg_rng rng = tg_selftest_stream(&words[TG_SELFTEST_WORDS * i]);
            for (size_t j = 0; j < 4; ++j) {
                out[4 * i + j] = rng.s[j];
            }
        }
        write_words(argv[3], out);
    } else if (argc == 5 && std::string_view(argv[1]) == "draws") {
        tg_u32 rounds = parse_u32(argv[2]);
        std::vector<tg_u32> params = read_words(argv[3]);
        size_t lanes = params.size() / TG_SELFTEST_DRAW_PARAMS;
        size_t per_lane = (size_t)TG_SELFTEST_DRAWS_PER_ROUND * rounds;
        std::vector<tg_u32> out(per_lane * lanes);
        for (size_t i = 0; i < lanes; ++i) {
            tg_selftest_draws(&params[TG_SELFTEST_DRAW_PARAMS * i], rounds, &out[per_lane * i]);
        }
        write_words(argv[4], out);
    } else if (argc == 2 && std::string_view(argv[1]) == "streams") {
#define TG_PRINT_STREAM(name, value) printf("%s %u\n", #name, (unsigned)TG_STREAM_##name);
        TG_STREAM_IDS(TG_PRINT_STREAM)
#undef TG_PRINT_STREAM
    } else {
        fail("usage: driver math <op> <a> <b> <out> | stream <words> <out> |", "draws <rounds> <params> <out> | streams");
    }
    return 0;
}
