// The QPACK tests' inputs: the request lists of ../shared/data/qifs (or
// $QIFS_DIR), the hpack-test-case stories, and a built-in set that always
// runs; a deterministic generator for splits and schedules; the names the
// encoders are told never to index.

#ifndef HPACK_TEST_QPACK_LISTS_H
#define HPACK_TEST_QPACK_LISTS_H

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "qif.h"
#include "story.h"
#include "test_util.h"

namespace hpack_test {

// A deterministic generator for the splits and the cancellations.
struct Random {
    uint64_t s;
    uint32_t next(uint32_t n) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        return static_cast<uint32_t>((s >> 33) % n);
    }
};

// The names nghttp3 is told never to index: our decoder must report each
// as HPACK_REP_NEVER_INDEXED.
inline bool sensitive(const std::string& name) { return name == "authorization" || name == "cookie"; }

inline std::vector<HeaderList> builtin_lists() {
    std::vector<HeaderList> lists;
    const std::string ua =
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/120.0.0.0 Safari/537.36";
    for (int i = 0; i < 40; ++i) {
        HeaderList l = {{":method", i % 7 == 3 ? "POST" : "GET"},
                        {":scheme", "https"},
                        {":authority", i % 5 == 4 ? "static.example.com" : "www.example.com"},
                        {":path", "/assets/" + std::to_string(i) + ".js?v=" +
                                      std::to_string(i * 7)},
                        {"user-agent", ua},
                        {"accept", "*/*"},
                        {"accept-encoding", "gzip, deflate, br"},
                        {"accept-language", "en-US,en;q=0.9"},
                        {"cookie", "session=" + std::string(40, static_cast<char>('a' + i % 3))},
                        {"referer", "https://www.example.com/"}};
        if (i % 4 == 1) l.emplace_back("authorization", "Bearer token" + std::to_string(i));
        if (i % 9 == 2) l.emplace_back("x-large", std::string(300, 'z'));
        if (i % 6 == 5) l.emplace_back("x-empty", "");
        lists.push_back(std::move(l));
    }
    return lists;
}

// The request lists of a .qif file (qif::parse(): name TAB value per line,
// a blank line between lists, '#' lines are comments).
inline std::vector<HeaderList> read_qif(const std::string& path) {
    std::string text, err;
    std::vector<HeaderList> lists;
    if (!hpack_tools::story::read_file(path, &text, &err)) {
        ADD_FAILURE() << err;
        return lists;
    }
    for (const hpack_tools::qif::HeaderList& section : hpack_tools::qif::parse(text)) {
        HeaderList l;
        for (const auto& f : section) l.emplace_back(f.name, f.value);
        lists.push_back(std::move(l));
    }
    return lists;
}

// The .qif files of $QIFS_DIR, else of ../shared/data/qifs (*dir), sorted.
inline std::vector<std::string> qif_files(std::string* dir) {
    const char* env = getenv("QIFS_DIR");
    *dir = env && *env ? env : "../shared/data/qifs";
    std::error_code ec;
    std::vector<std::string> files;
    for (auto it = std::filesystem::directory_iterator(*dir, ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (it->path().extension() == ".qif") files.push_back(it->path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

// Each hpack-test-case story of dir (its raw-data or a story directory) as
// one connection's lists.
inline std::vector<std::vector<HeaderList>> story_lists(const std::string& dir) {
    namespace story = hpack_tools::story;
    std::vector<std::vector<HeaderList>> out;
    for (const std::string& f : story::story_files(dir)) {
        story::Story s;
        std::string err;
        if (!story::load(f, &s, &err)) {
            ADD_FAILURE() << err;
            continue;
        }
        std::vector<HeaderList> lists;
        for (const story::Case& c : s.cases) {
            HeaderList l;
            for (const story::Header& h : c.headers) l.emplace_back(h.name, h.value);
            lists.push_back(std::move(l));
        }
        out.push_back(std::move(lists));
    }
    return out;
}

}  // namespace hpack_test

#endif
