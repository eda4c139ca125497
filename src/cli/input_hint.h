// Words for input the report commands cannot read: a dump of a tool dpscope
// imports given where a snapshot is expected gets the `dpscope import` line
// that turns it into one, and the JSON library's own messages are said in
// dpscope's words.
#pragma once

#include <functional>
#include <string>

namespace dpscope::cli {

// The hint for a file that is not a snapshot but the output of a tool that
// `dpscope import` reads (iptables-save, ip6tables-save, iptables -S, nft -j,
// nft list ruleset, bpftool -j prog/map/net show, bpftool -j map dump) or a
// dpscope report: what it is and the command to use. "" when it is none of
// them or cannot be read. Compressed files are looked into.
std::string import_hint(const std::string& path);

// Runs a command that reads snapshots; when a file it was given is not one
// but something `import` reads, the error is said with the import hint (exit 2).
int with_import_hints(const std::function<int()>& command);

// "FILE:LINE: invalid JSON: [json.exception.parse_error.101] parse error at line 3, column 7: syntax
// error while parsing value - invalid literal; last read: 'x'" -> "FILE:3:7: invalid JSON: syntax error
// while parsing value: invalid literal; last read: 'x'". The library's bracketed ids never reach the
// user; its line and column are used when they agree with the line the reader found.
std::string in_tool_words(const std::string& message);

}  // namespace dpscope::cli
