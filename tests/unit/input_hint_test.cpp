// cli/input_hint.h: the JSON library's messages said in dpscope's words.
#include "cli/input_hint.h"

#include <gtest/gtest.h>

namespace dpscope::cli {
namespace {

TEST(InToolWords, ParseErrorGetsLineAndColumnWithoutTheLibraryId) {
  EXPECT_EQ(in_tool_words("a.json:3: invalid JSON: [json.exception.parse_error.101] parse error at line 3, column 11: "
                          "syntax error while parsing value - invalid literal; last read: '\"node\": x'"),
            "a.json:3:11: invalid JSON: syntax error while parsing value: invalid literal; last read: '\"node\": x'");
  // No line of our own: the library's.
  EXPECT_EQ(in_tool_words("a.json: invalid JSON: [json.exception.parse_error.101] parse error at line 1, column 2: "
                          "syntax error while parsing object key - unexpected '}'; expected string literal"),
            "a.json:1:2: invalid JSON: syntax error while parsing object key: unexpected '}'; expected string literal");
  // The reader found another line (it skipped parts of the file): ours, without the library's column.
  EXPECT_EQ(in_tool_words("a.json:724: invalid JSON: [json.exception.parse_error.101] parse error at line 333, "
                          "column 4: syntax error while parsing object key - unexpected end of input"),
            "a.json:724: invalid JSON: syntax error while parsing object key: unexpected end of input");
}

TEST(InToolWords, TypeAndKeyErrors) {
  EXPECT_EQ(in_tool_words("a.json: [json.exception.type_error.302] type must be string, but is number"),
            "a.json: a field has the wrong type: expected string, found number");
  EXPECT_EQ(in_tool_words("a.json: [json.exception.out_of_range.403] key 'node' not found"),
            "a.json: missing field \"node\"");
  EXPECT_EQ(in_tool_words("a.json: [json.exception.other_error.501] something"), "a.json: something");
  EXPECT_EQ(in_tool_words("a.txt:4: missing COMMIT"), "a.txt:4: missing COMMIT");
}

TEST(ImportHint, NothingForAFileThatIsNotThere) { EXPECT_EQ(import_hint("/nonexistent/dps.json"), ""); }

}  // namespace
}  // namespace dpscope::cli
