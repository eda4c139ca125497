// nft's datatypes and how a value of each prints in nft's JSON (after nft
// v1.0.6's src/datatype.c and the symbol tables of meta.c, ct.c, fib.c,
// proto.c): the values nft_native.cpp puts into a rule's statements.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dpscope::netfilter::nftval {

// Thrown when a value (or, in nft_native.cpp, an expression) is not one this
// reader knows: the rule's text is then left out, never guessed.
struct Unknown {
  std::string what;
};
[[noreturn]] inline void unknown(std::string what) { throw Unknown{std::move(what)}; }

// nft's datatype ids (src/datatype.h enum datatypes): set key types carry them.
enum Datatype : uint32_t {
  kInvalid = 0, kVerdict = 1, kNfproto = 2, kBitmask = 3, kInteger = 4, kString = 5, kIpaddr = 7, kIp6addr = 8,
  kEtheraddr = 9, kEthertype = 10, kInetProto = 12, kInetService = 13, kIcmpType = 14, kTcpFlag = 15, kMark = 19,
  kIfindex = 20, kArphrd = 21, kClassid = 23, kCtState = 26, kCtDir = 27, kCtStatus = 28, kIcmp6Type = 29, kPkttype = 31, kDscp = 36, kEcn = 37, kFibAddr = 38, kBoolean = 39,
  kIfname = 41,
};

enum class Order : uint8_t { Big, Host };


// The integer in `b` (1, 2, 4 or 8 bytes host-endian; up to 8 big-endian).
uint64_t integer(std::string_view b, Order order);

// `v` by name from `names`; a number when `number_otherwise`, else unknown.
nlohmann::json symbol(uint64_t v, const std::vector<std::pair<uint64_t, const char*>>& names,
                      bool number_otherwise = false);

// A value of datatype `type` as nft -j prints it ("10.0.0.1", 80, "tcp", ["established", "related"]).
nlohmann::json value(uint32_t type, Order order, std::string_view b);

// A verdict statement: {"accept": null}, {"jump": {"target": "c"}}.
nlohmann::json verdict(int32_t code, const std::string& chain);

}  // namespace dpscope::netfilter::nftval
