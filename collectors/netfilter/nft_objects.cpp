#include "collectors/netfilter/nft_objects.h"

// <netdb.h> (glibc's netinet/in.h) before the uapi headers' linux/in.h.
#include <netdb.h>
#include <libnftnl/flowtable.h>
#include <libnftnl/object.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_synproxy.h>
#include <linux/netfilter/nf_tables.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "collectors/netfilter/nft_dump.h"

namespace dpscope::netfilter {

namespace {

std::string object_comment(nftnl_obj* obj) {
  if (!nftnl_obj_is_set(obj, NFTNL_OBJ_USERDATA)) return {};
  uint32_t len = 0;
  const void* data = nftnl_obj_get_data(obj, NFTNL_OBJ_USERDATA, &len);
  std::string out;
  nftnl_udata_parse(
      data, len,
      [](const nftnl_udata* attr, void* to) -> int {
        if (nftnl_udata_type(attr) == NFTNL_UDATA_OBJ_COMMENT) {
          const char* s = static_cast<const char*>(nftnl_udata_get(attr));
          static_cast<std::string*>(to)->assign(s, strnlen(s, nftnl_udata_len(attr)));
        }
        return 0;
      },
      &out);
  return out;
}

// statement.c get_rate: the largest unit the number divides into.
std::string byte_rate(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "kbytes", "mbytes"};
  size_t unit = 0;
  while (bytes != 0 && unit + 1 < std::size(kUnits) && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

// statement.c get_unit.
std::string time_unit(uint64_t seconds) {
  switch (seconds) {
    case 1: return "second";
    case 60: return "minute";
    case 3600: return "hour";
    case 86400: return "day";
    case 604800: return "week";
    default: return "error";
  }
}

// rule.c print_proto_name_proto: this machine's protocol name, as nft's.
std::string protocol_name(uint8_t proto) {
  const protoent* p = getprotobynumber(proto);
  return p ? p->p_name : std::to_string(proto);
}

}  // namespace

std::string nft_time_text(uint64_t ms) {
  std::string out;
  auto part = [&](uint64_t n, const char* unit) {
    if (n > 0) out += std::to_string(n) + unit;
  };
  part(ms / 86400000, "d");
  part(ms % 86400000 / 3600000, "h");
  part(ms % 3600000 / 60000, "m");
  part(ms % 60000 / 1000, "s");
  part(ms % 1000, "ms");
  return out;
}

model::NftObject decode_nft_object(nftnl_obj* obj) {
  model::NftObject o;
  o.name = nftnl_obj_get_str(obj, NFTNL_OBJ_NAME);
  o.handle = nftnl_obj_get_u64(obj, NFTNL_OBJ_HANDLE);
  o.comment = object_comment(obj);
  const uint32_t type = nftnl_obj_get_u32(obj, NFTNL_OBJ_TYPE);
  auto& lines = o.lines;
  auto family = [&](uint16_t attr) {
    const std::string f = nft_family_name(static_cast<uint8_t>(nftnl_obj_get_u16(obj, attr)));
    if (f.rfind("family-", 0) == 0) o.undecoded = "an l3proto nft has no name for (" + f + ")";
    return f;
  };
  switch (type) {
    case NFT_OBJECT_COUNTER:
      o.kind = "counter";
      lines.push_back("packets " + std::to_string(nftnl_obj_get_u64(obj, NFTNL_OBJ_CTR_PKTS)) + " bytes " +
                      std::to_string(nftnl_obj_get_u64(obj, NFTNL_OBJ_CTR_BYTES)));
      break;
    case NFT_OBJECT_QUOTA: {
      o.kind = "quota";
      const bool over = nftnl_obj_get_u32(obj, NFTNL_OBJ_QUOTA_FLAGS) & NFT_QUOTA_F_INV;
      std::string line = (over ? "over " : "") + byte_rate(nftnl_obj_get_u64(obj, NFTNL_OBJ_QUOTA_BYTES));
      if (const uint64_t used = nftnl_obj_get_u64(obj, NFTNL_OBJ_QUOTA_CONSUMED)) line += " used " + byte_rate(used);
      lines.push_back(line);
      break;
    }
    case NFT_OBJECT_LIMIT: {
      o.kind = "limit";
      const bool over = nftnl_obj_get_u32(obj, NFTNL_OBJ_LIMIT_FLAGS) & NFT_LIMIT_F_INV;
      const uint64_t rate = nftnl_obj_get_u64(obj, NFTNL_OBJ_LIMIT_RATE);
      const std::string per = time_unit(nftnl_obj_get_u64(obj, NFTNL_OBJ_LIMIT_UNIT));
      const uint32_t burst = nftnl_obj_get_u32(obj, NFTNL_OBJ_LIMIT_BURST);
      std::string line = std::string("rate ") + (over ? "over " : "");
      if (nftnl_obj_get_u32(obj, NFTNL_OBJ_LIMIT_TYPE) == NFT_LIMIT_PKT_BYTES) {
        line += byte_rate(rate) + "/" + per;
        if (burst > 0) line += " burst " + byte_rate(burst);
      } else {
        line += std::to_string(rate) + "/" + per;
        // 5 is the kernel's default burst, which nft leaves out.
        if (burst > 0 && burst != 5) line += " burst " + std::to_string(burst) + " packets";
      }
      lines.push_back(line);
      break;
    }
    case NFT_OBJECT_SECMARK:
      o.kind = "secmark";
      lines.push_back("\"" + std::string(nftnl_obj_get_str(obj, NFTNL_OBJ_SECMARK_CTX)) + "\"");
      break;
    case NFT_OBJECT_CT_HELPER:
      o.kind = "ct helper";
      lines.push_back("type \"" + std::string(nftnl_obj_get_str(obj, NFTNL_OBJ_CT_HELPER_NAME)) + "\" protocol " +
                      protocol_name(nftnl_obj_get_u8(obj, NFTNL_OBJ_CT_HELPER_L4PROTO)));
      lines.push_back("l3proto " + family(NFTNL_OBJ_CT_HELPER_L3PROTO));
      break;
    case NFT_OBJECT_CT_EXPECT:
      o.kind = "ct expectation";
      lines.push_back("protocol " + protocol_name(nftnl_obj_get_u8(obj, NFTNL_OBJ_CT_EXPECT_L4PROTO)));
      lines.push_back("dport " + std::to_string(nftnl_obj_get_u16(obj, NFTNL_OBJ_CT_EXPECT_DPORT)));
      lines.push_back("timeout " + nft_time_text(nftnl_obj_get_u32(obj, NFTNL_OBJ_CT_EXPECT_TIMEOUT)));
      lines.push_back("size " + std::to_string(nftnl_obj_get_u8(obj, NFTNL_OBJ_CT_EXPECT_SIZE)));
      lines.push_back("l3proto " + family(NFTNL_OBJ_CT_EXPECT_L3PROTO));
      break;
    case NFT_OBJECT_SYNPROXY: {
      o.kind = "synproxy";
      const uint32_t flags = nftnl_obj_get_u32(obj, NFTNL_OBJ_SYNPROXY_FLAGS);
      if (flags & NF_SYNPROXY_OPT_MSS) lines.push_back("mss " + std::to_string(nftnl_obj_get_u16(obj, NFTNL_OBJ_SYNPROXY_MSS)));
      if (flags & NF_SYNPROXY_OPT_WSCALE) {
        lines.push_back("wscale " + std::to_string(nftnl_obj_get_u8(obj, NFTNL_OBJ_SYNPROXY_WSCALE)));
      }
      // "%s %s" of the two words: "timestamp ", " sack-perm" when one is off.
      if (flags & (NF_SYNPROXY_OPT_TIMESTAMP | NF_SYNPROXY_OPT_SACK_PERM)) {
        lines.push_back(std::string(flags & NF_SYNPROXY_OPT_TIMESTAMP ? "timestamp" : "") + " " +
                        (flags & NF_SYNPROXY_OPT_SACK_PERM ? "sack-perm" : ""));
      }
      break;
    }
    case NFT_OBJECT_CT_TIMEOUT:
      o.kind = "ct timeout";
      o.undecoded = "a ct timeout object's policy (its protocol's timeout names) is not decoded";
      break;
    case NFT_OBJECT_TUNNEL:
      o.kind = "tunnel";
      o.undecoded = "a tunnel object (nft v1.0.6 does not print one)";
      break;
    default:
      o.kind = "object-" + std::to_string(type);
      o.undecoded = "an object type nft v1.0.6 does not have";
      break;
  }
  if (!o.undecoded.empty()) lines.clear();
  return o;
}

model::NftFlowtable decode_nft_flowtable(nftnl_flowtable* ft) {
  model::NftFlowtable f;
  f.name = nftnl_flowtable_get_str(ft, NFTNL_FLOWTABLE_NAME);
  f.handle = nftnl_flowtable_get_u64(ft, NFTNL_FLOWTABLE_HANDLE);
  f.hook = nft_hook_name(NFPROTO_NETDEV, nftnl_flowtable_get_u32(ft, NFTNL_FLOWTABLE_HOOKNUM));
  f.priority = nftnl_flowtable_get_s32(ft, NFTNL_FLOWTABLE_PRIO);
  if (nftnl_flowtable_is_set(ft, NFTNL_FLOWTABLE_DEVICES)) {
    for (const char* const* d = nftnl_flowtable_get_array(ft, NFTNL_FLOWTABLE_DEVICES); d && *d; ++d) {
      f.devices.emplace_back(*d);
    }
  }
  std::sort(f.devices.begin(), f.devices.end());  // nft lists them by name (netlink.c qsort_device_cmp)
  const uint32_t flags = nftnl_flowtable_is_set(ft, NFTNL_FLOWTABLE_FLAGS) ? nftnl_flowtable_get_u32(ft, NFTNL_FLOWTABLE_FLAGS) : 0;
  f.offload = flags & NFT_FLOWTABLE_HW_OFFLOAD;
  f.counter = flags & NFT_FLOWTABLE_COUNTER;
  return f;
}

}  // namespace dpscope::netfilter
