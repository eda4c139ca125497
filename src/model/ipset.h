// The "ipsets" section: the kernel's IP sets (ipset(8)) of the snapshot's
// network namespace, each with its type, header and members as `ipset save`
// prints them (docs/snapshot-schema.md, "ipsets"). Facts only: which
// dataplane a set belongs to is analysis (analysis/fingerprints.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dpscope::model {

struct IpsetMember {
  std::string entry;    // "10.96.0.1", "10.96.0.1,tcp:443", "10.0.0.0/24" as ipset save prints it
  std::string options;  // the rest of its `add` line: "timeout 0", "packets 0 bytes 0 comment \"x\"", ""
  bool operator==(const IpsetMember&) const = default;
};

struct Ipset {
  std::string name;
  std::string type;     // "hash:ip", "hash:ip,port", "hash:net", "list:set", "bitmap:port", ...
  // The header as `ipset save` prints it after the type: "family inet hashsize 1024 maxelem 65536 timeout 0
  // bucketsize 12 initval 0x8c48e8f6". The fields below are read from it.
  std::string header;
  std::string family;   // "inet" | "inet6" | "" (list:set and bitmap types have none)
  std::optional<uint32_t> hashsize;
  std::optional<uint32_t> maxelem;
  std::optional<uint32_t> timeout;  // default timeout of members (set created with one)
  bool counters = false;
  bool comment = false;
  bool skbinfo = false;
  bool forceadd = false;
  uint64_t member_count = 0;
  std::vector<IpsetMember> members;  // in the order ipset save lists them
  bool operator==(const Ipset&) const = default;
};

struct Ipsets {
  bool collected = false;  // false: section absent (not read, or an import without --ipset-save)
  std::vector<Ipset> sets;
  bool operator==(const Ipsets&) const = default;
};

// Sets by name; members keep their order (the kernel's, as listed).
void canonicalize(Ipsets& s);
const Ipset* find_ipset(const Ipsets& s, const std::string& name);

// Parses `ipset save` text (create/add lines) into sets; `origin` names the
// input in errors. Throws InputError(origin, line, what) on anything else.
Ipsets parse_ipset_save(const std::string& text, const std::string& origin);

// Reads the typed header fields (family, hashsize, ...) from Ipset::header.
void read_ipset_header(Ipset& set);

nlohmann::json ipsets_to_json(const Ipsets& s);
Ipsets ipsets_from_json(const nlohmann::json& j, const std::string& pointer);

}  // namespace dpscope::model
