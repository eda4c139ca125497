// Escaping of strings that came from a node (comments, chain, map and node
// names) for the format they land in. Anything from a node is untrusted: a
// comment may hold "<script>", "|", backticks, newlines or ANSI escapes, and
// must render inert in every format.
#pragma once

#include <string>
#include <string_view>

namespace dpscope::reports {

// Terminal: control characters (ESC, CR, LF, TAB, DEL, C1) become visible
// escapes ("\x1b", "\n"), so a string can neither move the cursor, change
// colours nor break a row; bidi controls (U+202A-202E, U+2066-2069, U+200E,
// U+200F, U+061C) and U+2028/2029 become "\u202e", so text cannot be
// reordered or hidden.
std::string escape_text(std::string_view s);
// GitHub Markdown table cell: the text escape, then HTML-significant
// characters as entities and Markdown punctuation backslash-escaped.
std::string escape_markdown(std::string_view s);
// HTML text and attribute values.
std::string escape_html(std::string_view s);
// One CSV field (RFC 4180), always quoted, control characters escaped, and a
// cell starting with = + - @ TAB or CR prefixed with ' so a spreadsheet
// shows it instead of evaluating it (a lone "-" and negative numbers stay).
std::string escape_csv(std::string_view s);

}  // namespace dpscope::reports
