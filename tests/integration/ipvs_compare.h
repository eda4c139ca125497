// Comparing a live IPVS section with the import of what ipvsadm printed about
// the same kernel state: the same services (by ipvsadm-save's frontend key),
// each with the same scheduler, flags, persistence and real servers. What
// ipvsadm-save cannot say is left out: thresholds and counters (not in its
// text), and local vs route forwarding (both print as -g).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "model/ipvs.h"

namespace dpscope::test::ipvs {

inline std::string forward_as_saved(const std::string& f) { return f == "local" ? "route" : f; }

inline void expect_same_services(const model::Ipvs& live, const model::Ipvs& saved) {
  ASSERT_TRUE(live.collected && live.loaded) << live.reason;
  std::map<std::string, const model::IpvsService*> want;
  for (const auto& s : saved.services) want[model::ipvs_service_key(s) + " " + s.family] = &s;
  ASSERT_EQ(live.services.size(), want.size());
  for (const auto& s : live.services) {
    const std::string key = model::ipvs_service_key(s) + " " + s.family;
    SCOPED_TRACE(key);
    ASSERT_TRUE(want.count(key)) << "not in ipvsadm-save";
    const model::IpvsService& w = *want.at(key);
    EXPECT_EQ(s.scheduler, w.scheduler);
    EXPECT_EQ(s.flags, w.flags);
    EXPECT_EQ(s.persistence_timeout, w.persistence_timeout);
    EXPECT_EQ(s.persistence_netmask, w.persistence_netmask);
    EXPECT_EQ(s.persistence_engine, w.persistence_engine);
    ASSERT_EQ(s.destinations.size(), w.destinations.size());
    for (size_t i = 0; i < s.destinations.size(); ++i) {
      const auto& d = s.destinations[i];
      const auto& x = w.destinations[i];
      SCOPED_TRACE(d.address + ":" + std::to_string(d.port));
      EXPECT_EQ(d.address, x.address);
      EXPECT_EQ(d.port, x.port);
      EXPECT_EQ(forward_as_saved(d.forward), x.forward);
      EXPECT_EQ(d.weight, x.weight);
      if (!x.tunnel_type.empty()) EXPECT_EQ(d.tunnel_type, x.tunnel_type);
      EXPECT_TRUE(d.active_conns.has_value()) << "live counters are read";
    }
  }
}

// The "-A" lines of ipvsadm-save text: one per virtual service.
inline size_t count_services(const std::string& save) {
  std::istringstream in(save);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind("-A ", 0) == 0;
  return n;
}

}  // namespace dpscope::test::ipvs
