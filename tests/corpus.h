// The hpack-test-case corpus for the tests: found beside the project (or at
// $HPACK_TEST_CASE_DIR); a test that needs it and does not find it is
// skipped with a message saying where it looked, never passed silently.

#ifndef HPACK_TEST_CORPUS_H
#define HPACK_TEST_CORPUS_H

#include <gtest/gtest.h>

#include <string>

#include "story.h"

#define REQUIRE_CORPUS(dir)                                                 \
    std::string dir;                                                        \
    {                                                                       \
        std::string tried_;                                                 \
        dir = hpack_tools::story::corpus_dir(&tried_);                      \
        if (dir.empty()) {                                                  \
            GTEST_SKIP() << "corpus not found at " << tried_                \
                         << " (set HPACK_TEST_CASE_DIR to an "              \
                            "hpack-test-case checkout)";                    \
        }                                                                   \
    }

#endif
