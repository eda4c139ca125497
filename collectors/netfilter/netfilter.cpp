#include "collectors/netfilter/netfilter.h"

#include <sched.h>
#include <sys/socket.h>

#include <cerrno>

#include "collectors/netfilter/legacy.h"
#include "collectors/netfilter/nft_dump.h"
#include "util/error.h"
#include "util/netns.h"

namespace dpscope::netfilter {

namespace {

// What the namespace thread brings back; filled only by that thread until join().
struct Outcome {
  std::optional<model::Unavailable> setns_failed;
  std::optional<NftDump> nft;
  std::optional<model::Unavailable> nft_failed;
  std::vector<model::Table> legacy;
  std::optional<model::Unavailable> legacy_failed;
};

std::string count_of(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What --light left out, one sentence each, with its size on this node.
std::vector<std::string> light_left_out(const NftDump& d) {
  std::vector<std::string> out;
  if (d.anonymous_sets_unread > 0) {
    out.push_back("the elements of " + count_of(d.anonymous_sets_unread, "anonymous set or map", "anonymous sets and maps") +
                  ": " + count_of(d.rules_without_text, "rule over them has", "rules over them have") +
                  " no text (kube-proxy's numgen endpoint picks: which endpoint chains they reach is not known)");
  }
  if (d.dynamic_sets_unread > 0) {
    out.push_back("the elements of " + count_of(d.dynamic_sets_unread, "dynamic set", "dynamic sets") +
                  " (runtime state the packet path adds, such as kube-proxy's affinity-*): no element count");
  }
  return out;
}

model::Unavailable unavailable_from(const std::string& section, const SystemError& e) {
  return {section, e.what(), e.err(), e.hint()};
}

void collect_here(const Options& options, Outcome& out) {
  try {
    out.nft = dump_nftables(options);
  } catch (const SystemError& e) {
    out.nft_failed = unavailable_from("netfilter.nftables", e);
  }
  try {
    for (int af : {AF_INET, AF_INET6}) {
      for (const std::string& name : legacy_table_names(af)) out.legacy.push_back(read_legacy_table(af, name, options.spool));
    }
  } catch (const SystemError& e) {
    out.legacy.clear();
    out.legacy_failed = unavailable_from("netfilter.iptables-legacy", e);
  }
}

}  // namespace

void collect(model::Snapshot& snapshot, const Options& options) {
  UniqueFd ns;
  if (!options.netns.empty()) ns = open_netns(options.netns);
  Outcome out;
  const int err = run_in_namespace(ns, CLONE_NEWNET, [&] {
    try {
      collect_here(options, out);
    } catch (const std::exception& e) {
      out.nft_failed = model::Unavailable{"netfilter", std::string("internal error: ") + e.what(), 0, ""};
    }
  });
  if (err != 0) out.setns_failed = model::Unavailable{"netfilter", netns_enter_failure(options.netns, err), err, kNetnsEnterHint};

  auto& nf = snapshot.netfilter;
  if (out.setns_failed) {
    snapshot.unavailable.push_back(*out.setns_failed);
    return;
  }
  if (out.nft && !out.nft->loaded) {
    // Nothing to read, and not asked (that would load the module): an empty,
    // complete nf_tables part. Legacy tables are read as usual.
  } else if (out.nft) {
    nf.collection.nft_generation = out.nft->generation;
    nf.collection.nft_retries = out.nft->retries;
    nf.collection.nft_set_rereads = out.nft->set_rereads;
    nf.collection.nft_light = options.light;
    if (options.light) nf.collection.nft_left_out = light_left_out(*out.nft);
    for (auto& t : out.nft->tables) nf.tables.push_back(std::move(t));
    if (!out.nft->consistent) {
      snapshot.unavailable.push_back(
          {"netfilter.consistency",
           "the nf_tables generation moved during every attempt; tables are a best-effort read of generation " +
               std::to_string(out.nft->generation),
           EAGAIN, "retry when the ruleset is quieter"});
    }
  }
  for (auto& t : out.legacy) nf.tables.push_back(std::move(t));
  if (out.nft_failed) snapshot.unavailable.push_back(*out.nft_failed);
  if (out.legacy_failed) snapshot.unavailable.push_back(*out.legacy_failed);
  nf.collected = out.nft.has_value() || !out.legacy_failed;
  if (!out.nft && out.legacy_failed) {
    // Nothing at all: the section as a whole is unavailable, with the first reason.
    model::Unavailable whole = *out.nft_failed;
    whole.section = "netfilter";
    snapshot.unavailable.push_back(whole);
    nf.collected = false;
  }
}

}  // namespace dpscope::netfilter
