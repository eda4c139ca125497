// Importer of `bpftool -j` output (prog show, map show, net show) into the
// eBPF section of a snapshot: the same records the live collector builds
// from the kernel (collectors/bpf), so an import of bpftool's view of a node
// and a live snapshot of that node agree. Bad input throws InputError
// (FILE:LINE: what); nothing is added to the snapshot unless the whole file
// was read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "decoders/map_entries.h"
#include "model/snapshot.h"

namespace dpscope::importer {

// `bpftool -j [-f] prog show`: one object per program. loaded_at (Unix
// seconds in bpftool's JSON) becomes RFC 3339 UTC.
std::vector<model::BpfProgram> parse_bpftool_progs(std::string_view text, const std::string& origin);
// `bpftool -j [-f] map show`. Entry counts are not in that output: entries
// stays unset with entries_note saying so.
std::vector<model::BpfMap> parse_bpftool_maps(std::string_view text, const std::string& origin);
// `bpftool -j net show` (of one netns): xdp and tc (legacy clsact filters,
// and tcx / netkit links from bpftool >= 7.3) attachments.
std::vector<model::BpfAttachment> parse_bpftool_net(std::string_view text, const std::string& origin);

// `bpftool -j map dump pinned PATH` (or `... id N`): every entry's raw bytes
// from its "key" / "value" hex arrays (bpftool prints them next to
// "formatted" when the map has BTF). A per-CPU map's "values" are refused:
// no service map is per-CPU. An entry with only "formatted" is refused too
// (FILE:LINE: what), since the bytes are what the decoders read.
bpf::MapEntries parse_bpftool_map_dump(std::string_view text, const std::string& origin);

// Collects the bpftool inputs of one `dpscope import`, then fills the
// snapshot's eBPF section; parts not given are recorded as unavailable.
// Service maps listed by --bpftool-map are decoded from their dumps by the
// live collector's decoders (src/decoders/service_maps.h); without a dump their
// entries are "not imported", never 0.
class BpftoolImport {
 public:
  void add_progs(const std::string& path);
  void add_maps(const std::string& path);
  void add_net(const std::string& path);
  // "MAP=FILE": MAP is the pin path or the map's name (full or the kernel's
  // 15 characters), FILE a `bpftool -j map dump` of it.
  void add_map_dump(const std::string& arg);
  bool any() const { return progs_given_ || maps_given_ || net_given_ || !dumps_.empty(); }
  // Moves what was read into snapshot.ebpf (collected = true) when any input was given.
  void finish(model::Snapshot& snapshot);

 private:
  bool progs_given_ = false, maps_given_ = false, net_given_ = false;
  std::vector<std::string> inputs_;
  model::Ebpf ebpf_;
  struct Dump {
    std::string map;     // as given: pin path or name
    std::string origin;
    bpf::MapEntries entries;
  };
  std::vector<Dump> dumps_;
};

}  // namespace dpscope::importer
