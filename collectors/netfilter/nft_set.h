// nftables set datatypes: names and element rendering the way `nft` prints
// them ("172.30.0.41 . tcp . 80"), from the set's KEY_TYPE (6 bits per
// concatenated datatype, first field in the highest bits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dpscope::netfilter {

// nft datatype ids of a (possibly concatenated) key type, in field order.
std::vector<uint32_t> split_key_type(uint32_t key_type);

// nft's name of a datatype id ("ipv4_addr", "inet_service", ...; "type-N" when unknown).
std::string datatype_name(uint32_t type);

// Renders key bytes as nft prints them; each concatenated field is padded to
// 4 bytes. Falls back to "0x<hex>" for a field whose datatype we do not know.
std::string render_set_key(const uint8_t* data, size_t len, const std::vector<uint32_t>& types);

// A verdict as nft prints it: "accept", "drop", "goto CHAIN", "jump CHAIN", ...
std::string render_verdict(int32_t code, const std::string& chain);

}  // namespace dpscope::netfilter
