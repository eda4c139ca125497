// A Comparison lines up analysed snapshots as rows: a stable id, a label, one
// value per side and a note. It decides nothing about formatting; the
// renderers (reports/render.h) print it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/scale.h"

namespace dpscope::reports {

// One value of one row on one side.
struct Cell {
  enum class Kind {
    Number,        // `number`; `display` may give a friendlier text ("present (5)", "330.7 MiB")
    Text,          // `text`
    Unavailable,   // the section was listed in Snapshot::unavailable (or its facts are not visible in
                   // this source): `text` holds the reason, said once per section by the renderers
    NotCollected,  // the input did not contain this section (e.g. an iptables-save import has no eBPF);
                   // `text` may say why ("not imported: ...")
  };
  Kind kind = Kind::NotCollected;
  uint64_t number = 0;
  std::string text;
  std::string display;
  bool incomplete = false;  // a number from a section with unavailable parts
  std::string incomplete_reason;

  static Cell num(uint64_t n, std::string display = {});
  static Cell str(std::string s);
  static Cell unavailable(std::string reason);
  static Cell not_collected(std::string reason = {});
  // What a text renderer shows (no escaping applied).
  std::string shown() const;
};

struct Row {
  std::string id;        // stable, documented in docs/report-schema.md
  std::string section;   // "node", "netfilter", "netfilter.tables", "netfilter.families", "nftables", "ebpf"
  std::string label;     // human label
  std::vector<Cell> values;  // one per side
  std::string note;
  bool headline = false; // one of the seed measurement's rows
};

struct Side {
  std::string label;
  std::string node;                    // node name from the snapshot
  std::string source;                  // the file it came from
  std::string mode;                    // analysis::Mode::id
  std::string mode_label;
  std::vector<std::string> evidence;
  std::vector<std::string> unavailable;  // "section: reason"
  std::vector<std::string> fullest_maps; // "cilium_lb4_serv (hash, cilium): 16 / 65536 entries (0.02%)"
  // What fdinfo memlock means on this side's kernel, and where it is charged.
  std::string memlock_band;              // analysis::MemlockBand::id
  std::vector<std::string> memory_notes;
};

// One side's scale model (reports/scale_report.h): rules fitted from its own
// composition, and its eBPF service map.
struct ScaleSide {
  std::string label;
  std::string source;
  analysis::ScaleModel model;
  // Endpoints per service port: KUBE-SEP / KUBE-SVC chains when fitted, else
  // Cilium backends per frontend; 0 = unknown.
  double endpoints_per_service = 0;
  uint64_t lb_frontends = 0;   // decoded Cilium service map, when not fitted
  uint64_t lb_backends = 0;
};

// A reason some cells of one section carry, said once: "netfilter: unavailable (EPERM ...)".
struct SectionGap {
  std::string section;   // Row::section
  size_t side = 0;
  std::string text;
};

struct Comparison {
  std::vector<Side> sides;
  std::vector<Row> rows;
  std::vector<std::string> findings;     // plain sentences
  std::vector<ScaleSide> scale;          // one per side when filled (the HTML scale chart); else empty
  std::optional<size_t> equal_rows_hidden;  // compare --diff-only: rows equal on every side left out (render.h)
  const Row* find(const std::string& id) const;
  // The distinct reasons of the unavailable / not collected cells, per section
  // and side, in row order.
  std::vector<SectionGap> section_gaps() const;
};

struct SideInput {
  std::string label;    // "" = node name, else file name
  std::string source;   // file path as given
  const model::Snapshot* snapshot = nullptr;
};

Comparison compare(const std::vector<SideInput>& inputs);

// A side reduced to what compare() reads of it: a cluster of 50 nodes keeps
// 50 of these (a few hundred KB each), not 50 snapshots (tens of MB each).
struct AnalyzedInput {
  std::string label;
  std::string source;
  analysis::NodeAnalysis analysis;
  std::vector<std::string> unavailable;  // "section: reason"
};
AnalyzedInput analyze_input(const SideInput& in);
Comparison compare(std::vector<AnalyzedInput> inputs);

// "1.5 MiB", "512 B"
std::string human_bytes(uint64_t bytes);

}  // namespace dpscope::reports
