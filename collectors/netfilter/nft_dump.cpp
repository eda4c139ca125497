#include "collectors/netfilter/nft_dump.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/flowtable.h>
#include <libnftnl/gen.h>
#include <libnftnl/object.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <memory>
#include <numeric>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "collectors/netfilter/nft_native.h"
#include "collectors/netfilter/nft_rule.h"
#include "decoders/nft_json_text.h"
#include "collectors/netfilter/nft_elements.h"
#include "collectors/netfilter/nft_objects.h"
#include "collectors/netfilter/nft_typeof.h"
#include "model/iptables.h"
#include "util/error.h"
#include "util/netlink.h"

namespace dpscope::netfilter {

namespace {

constexpr int kMaxAttempts = 20;
constexpr const char* kNftPermissionHint =
    "reading nf_tables needs CAP_NET_ADMIN in the namespace's user namespace: run as root";

uint16_t res_id(const nlmsghdr* nlh) {
  return ntohs(static_cast<const nfgenmsg*>(mnl_nlmsg_get_payload(nlh))->res_id);
}

int read_generation(netlink::Socket& sock, uint32_t& gen) {
  char req[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETGEN, AF_UNSPEC, 0, sock.next_seq());
  bool got = false;
  const int err = sock.talk(nlh, [&](const nlmsghdr* m) {
    std::unique_ptr<nftnl_gen, decltype(&nftnl_gen_free)> g(nftnl_gen_alloc(), nftnl_gen_free);
    if (nftnl_gen_nlmsg_parse(m, g.get()) < 0) return MNL_CB_ERROR;
    gen = nftnl_gen_get_u32(g.get(), NFTNL_GEN_ID);
    got = true;
    return MNL_CB_STOP;  // GETGEN is answered by one message and no DONE
  });
  if (err == 0 && !got) return EPROTO;
  return err;
}

struct TableInfo {
  uint8_t family = 0;
  model::Table table;
  std::vector<size_t> chains;  // indices into chains
};

// A chain being read. The model::Chain itself lives in its table's `chains`
// from the start (index), so nothing is copied or held twice at the end.
struct ChainInfo {
  size_t table = 0;
  size_t index = 0;
  uint8_t family = 0;
  uint32_t hooknum = 0;
  bool has_hook = false;
  bool spooled = false;  // rules in Options::spool, chain's rule_count set
  bool bound = false;    // NFT_CHAIN_BINDING: listed inside the rule that binds it, not as a chain
};

struct SetInfo {
  size_t table = 0;
  std::string table_name;
  uint8_t family = 0;
  bool anonymous = false;
  bool dynamic = false;
  bool read_elements = false;
  bool verdict_map = false;
  std::vector<uint32_t> key_types;
  uint32_t data_type = 0;
  model::NftSet set;
  SetShape shape;  // what the text of a rule that looks it up needs
};

// What one attempt read; discarded when the generation moved.
struct Attempt {
  std::vector<TableInfo> tables;
  std::vector<ChainInfo> chains;

  model::Chain& chain(const ChainInfo& c) { return tables[c.table].table.chains[c.index]; }
  std::vector<SetInfo> sets;
  std::atomic<bool> moved{false};
  std::atomic<int> error{0};
  std::atomic<uint32_t> set_rereads{0};
  std::atomic<uint64_t> rules_without_text{0};  // over an anonymous set left unread (--light)
  uint32_t gen = 0;

  void check(const nlmsghdr* nlh) {
    if (res_id(nlh) != (gen & 0xffff)) moved = true;
  }
  void fail(int err) {
    // EINTR: the dump was interrupted (NLM_F_DUMP_INTR). ENOENT: a chain or
    // set listed a moment ago is gone. Both mean the ruleset moved: read again.
    if (err == EINTR || err == ENOENT) {
      moved = true;
    } else {
      int expected = 0;
      error.compare_exchange_strong(expected, err);
    }
  }
};

std::string chain_udata_comment(const void* data, uint32_t len, uint8_t comment_type) {
  std::string out;
  struct Ctx {
    uint8_t type;
    std::string* out;
  } ctx{comment_type, &out};
  nftnl_udata_parse(
      data, len,
      [](const nftnl_udata* attr, void* d) -> int {
        auto* c = static_cast<Ctx*>(d);
        if (nftnl_udata_type(attr) == c->type) {
          const char* s = static_cast<const char*>(nftnl_udata_get(attr));
          c->out->assign(s, strnlen(s, nftnl_udata_len(attr)));
        }
        return 0;
      },
      &ctx);
  return out;
}

int dump_tables(netlink::Socket& sock, Attempt& a) {
  char req[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETTABLE, NFPROTO_UNSPEC, NLM_F_DUMP, sock.next_seq());
  return sock.talk(nlh, [&](const nlmsghdr* m) {
    a.check(m);
    std::unique_ptr<nftnl_table, decltype(&nftnl_table_free)> t(nftnl_table_alloc(), nftnl_table_free);
    if (nftnl_table_nlmsg_parse(m, t.get()) < 0) return MNL_CB_ERROR;
    TableInfo info;
    info.family = static_cast<uint8_t>(nftnl_table_get_u32(t.get(), NFTNL_TABLE_FAMILY));
    info.table.family = nft_family_name(info.family);
    info.table.name = nftnl_table_get_str(t.get(), NFTNL_TABLE_NAME);
    info.table.declarations_recorded = true;
    info.table.handle = nftnl_table_get_u64(t.get(), NFTNL_TABLE_HANDLE);
    if (nftnl_table_is_set(t.get(), NFTNL_TABLE_FLAGS)) {
      const uint32_t flags = nftnl_table_get_u32(t.get(), NFTNL_TABLE_FLAGS);
      // rule.c table_flags_name, in bit order.
      if (flags & NFT_TABLE_F_DORMANT) info.table.flags.push_back("dormant");
      if (flags & NFT_TABLE_F_OWNER) info.table.flags.push_back("owner");
    }
    if (nftnl_table_is_set(t.get(), NFTNL_TABLE_USERDATA)) {
      uint32_t len = 0;
      const void* ud = nftnl_table_get_data(t.get(), NFTNL_TABLE_USERDATA, &len);
      info.table.comment = chain_udata_comment(ud, len, NFTNL_UDATA_TABLE_COMMENT);
    }
    // The table's use count (chains, sets, objects): room for its chains at
    // once, not a vector doubling through 37,000 of them (and holding both
    // copies while it moves).
    if (nftnl_table_is_set(t.get(), NFTNL_TABLE_USE)) {
      info.table.chains.reserve(std::min<uint32_t>(nftnl_table_get_u32(t.get(), NFTNL_TABLE_USE), 1u << 22));
    }
    a.tables.push_back(std::move(info));
    return MNL_CB_OK;
  });
}

int dump_chains(netlink::Socket& sock, Attempt& a, const std::map<std::pair<uint8_t, std::string>, size_t>& table_index) {
  size_t chains = 0;  // at most the tables' use counts (dump_tables reserved each table's)
  for (auto& t : a.tables) {
    t.chains.reserve(t.table.chains.capacity());
    chains += t.table.chains.capacity();
  }
  a.chains.reserve(chains);
  char req[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETCHAIN, NFPROTO_UNSPEC, NLM_F_DUMP, sock.next_seq());
  return sock.talk(nlh, [&](const nlmsghdr* m) {
    a.check(m);
    std::unique_ptr<nftnl_chain, decltype(&nftnl_chain_free)> c(nftnl_chain_alloc(), nftnl_chain_free);
    if (nftnl_chain_nlmsg_parse(m, c.get()) < 0) return MNL_CB_ERROR;
    ChainInfo info;
    info.family = static_cast<uint8_t>(nftnl_chain_get_u32(c.get(), NFTNL_CHAIN_FAMILY));
    const auto it = table_index.find({info.family, nftnl_chain_get_str(c.get(), NFTNL_CHAIN_TABLE)});
    if (it == table_index.end()) {
      a.moved = true;  // a table created after our table dump
      return MNL_CB_OK;
    }
    info.table = it->second;
    model::Chain chain;
    chain.name = nftnl_chain_get_str(c.get(), NFTNL_CHAIN_NAME);
    chain.handle = nftnl_chain_get_u64(c.get(), NFTNL_CHAIN_HANDLE);
    if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_USERDATA)) {
      uint32_t len = 0;
      const void* ud = nftnl_chain_get_data(c.get(), NFTNL_CHAIN_USERDATA, &len);
      if (std::string comment = chain_udata_comment(ud, len, NFTNL_UDATA_CHAIN_COMMENT); !comment.empty()) {
        chain.comment = std::move(comment);
      }
    }
    if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_FLAGS)) {
      info.bound = nftnl_chain_get_u32(c.get(), NFTNL_CHAIN_FLAGS) & NFT_CHAIN_BINDING;
    }
    if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_HOOKNUM)) {
      info.has_hook = true;
      info.hooknum = nftnl_chain_get_u32(c.get(), NFTNL_CHAIN_HOOKNUM);
      model::BaseChain base;
      base.hook = nft_hook_name(info.family, info.hooknum);
      if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_TYPE)) base.type = nftnl_chain_get_str(c.get(), NFTNL_CHAIN_TYPE);
      base.priority = nftnl_chain_get_s32(c.get(), NFTNL_CHAIN_PRIO);
      if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_DEV)) {
        base.devices.emplace_back(nftnl_chain_get_str(c.get(), NFTNL_CHAIN_DEV));
      } else if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_DEVICES)) {
        for (const char* const* d = nftnl_chain_get_array(c.get(), NFTNL_CHAIN_DEVICES); d && *d; ++d) {
          base.devices.emplace_back(*d);
        }
        std::sort(base.devices.begin(), base.devices.end());  // as nft lists them (netlink.c qsort_device_cmp)
      }
      if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_FLAGS)) {
        base.offload = nftnl_chain_get_u32(c.get(), NFTNL_CHAIN_FLAGS) & NFT_CHAIN_HW_OFFLOAD;
      }
      if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_POLICY)) {
        base.policy = nftnl_chain_get_u32(c.get(), NFTNL_CHAIN_POLICY) == NF_DROP ? "drop" : "accept";
      }
      chain.base = base;
      if (nftnl_chain_is_set(c.get(), NFTNL_CHAIN_PACKETS)) {
        chain.policy_counters = model::Counters{nftnl_chain_get_u64(c.get(), NFTNL_CHAIN_PACKETS),
                                                nftnl_chain_get_u64(c.get(), NFTNL_CHAIN_BYTES)};
      }
    }
    auto& chains = a.tables[info.table].table.chains;
    info.index = chains.size();
    chains.push_back(std::move(chain));
    a.tables[info.table].chains.push_back(a.chains.size());
    a.chains.push_back(info);
    return MNL_CB_OK;
  });
}

// The statements a set gives each element (`counter` in the declaration),
// printed as nft prints them there: without their state (rule.c
// set_print_declaration prints them stateless).
std::string set_statements(nftnl_set* s, uint8_t family) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlattr* nest = mnl_attr_nest_start(nlh, NFTA_SET_EXPRESSIONS);
  auto put = [](nftnl_expr* x, void* data) {
    auto* h = static_cast<nlmsghdr*>(data);
    nlattr* elem = mnl_attr_nest_start(h, NFTA_LIST_ELEM);
    nftnl_expr_build_payload(h, x);
    mnl_attr_nest_end(h, elem);
    return 0;
  };
  if (nftnl_set_is_set(s, NFTNL_SET_EXPR)) {
    put(static_cast<nftnl_expr*>(const_cast<void*>(nftnl_set_get(s, NFTNL_SET_EXPR))), nlh);
  } else {
    nftnl_set_expr_foreach(s, put, nlh);
  }
  mnl_attr_nest_end(nlh, nest);
  const nlohmann::json stmts = element_statements(nest);  // throws nftval::Unknown
  // Several: each stateless, space-separated, in the kernel's order.
  std::string out;
  for (nlohmann::json stmt : stmts.contains("stmt") ? stmts["stmt"] : nlohmann::json::array({stmts})) {
    std::string text;
    if (stmt.contains("counter")) {
      text = "counter";
    } else {
      if (stmt.contains("quota")) stmt["quota"].erase("used"), stmt["quota"].erase("used_unit");
      const nft_text::NftRuleText t = nft_text::nft_rule_text(nlohmann::json::array({stmt}), nft_family_name(family), "");
      if (!t.unknown.empty()) nftval::unknown(t.unknown);
      text = t.text;
    }
    out += (out.empty() ? "" : " ") + text;
  }
  return out;
}

// A named set's declaration as nft lists it (rule.c set_print_declaration;
// netlink.c netlink_delinearize_set reads the same attributes).
model::NftSetDeclaration set_declaration(nftnl_set* s, uint8_t family) {
  model::NftSetDeclaration d;
  const uint32_t flags = nftnl_set_get_u32(s, NFTNL_SET_FLAGS);
  if (flags & NFT_SET_CONSTANT) d.flags.push_back("constant");
  if (flags & NFT_SET_EVAL) d.flags.push_back("dynamic");
  if (flags & NFT_SET_INTERVAL) d.flags.push_back("interval");
  if (flags & NFT_SET_TIMEOUT) d.flags.push_back("timeout");
  if (nftnl_set_is_set(s, NFTNL_SET_POLICY) && nftnl_set_get_u32(s, NFTNL_SET_POLICY) == NFT_SET_POL_MEMORY) {
    d.policy = "memory";
  }
  if (nftnl_set_is_set(s, NFTNL_SET_DESC_SIZE)) d.size = nftnl_set_get_u32(s, NFTNL_SET_DESC_SIZE);
  if (nftnl_set_is_set(s, NFTNL_SET_TIMEOUT)) d.timeout = nft_time_text(nftnl_set_get_u64(s, NFTNL_SET_TIMEOUT));
  if (nftnl_set_is_set(s, NFTNL_SET_GC_INTERVAL)) d.gc_interval = nft_time_text(nftnl_set_get_u32(s, NFTNL_SET_GC_INTERVAL));
  try {
    if (nftnl_set_is_set(s, NFTNL_SET_EXPR) || nftnl_set_is_set(s, NFTNL_SET_EXPRESSIONS)) d.statements = set_statements(s, family);
  } catch (const nftval::Unknown& u) {
    d.undecoded = "its statements: " + u.what;
  }
  if (!nftnl_set_is_set(s, NFTNL_SET_USERDATA)) return d;
  uint32_t len = 0;
  const void* ud = nftnl_set_get_data(s, NFTNL_SET_USERDATA, &len);
  struct Attrs {
    const nftnl_udata* at[NFTNL_UDATA_SET_MAX + 1] = {};
  } attrs;
  nftnl_udata_parse(
      ud, len,
      [](const nftnl_udata* attr, void* to) -> int {
        const uint8_t type = nftnl_udata_type(attr);
        if (type <= NFTNL_UDATA_SET_MAX) static_cast<Attrs*>(to)->at[type] = attr;
        return 0;
      },
      &attrs);
  auto u32 = [&](int type) {
    const nftnl_udata* a = attrs.at[type];
    uint32_t v = 0;
    if (a && nftnl_udata_len(a) == sizeof v) std::memcpy(&v, nftnl_udata_get(a), sizeof v);
    return v;
  };
  d.auto_merge = u32(NFTNL_UDATA_SET_MERGE_ELEMENTS) != 0;
  d.data_interval = u32(NFTNL_UDATA_SET_DATA_INTERVAL) != 0;
  // nft prints `typeof` only when it has both a map's key's and its values'
  // (netlink_delinearize_set discards the key's otherwise).
  const nftnl_udata* key = attrs.at[NFTNL_UDATA_SET_KEY_TYPEOF];
  const nftnl_udata* data = attrs.at[NFTNL_UDATA_SET_DATA_TYPEOF];
  const bool datamap = (flags & NFT_SET_MAP) && !(flags & NFT_SET_OBJECT);
  try {
    if (key && (!datamap || data)) d.key_typeof = typeof_text(nftnl_udata_get(key), nftnl_udata_len(key));
    if (data && datamap && !d.key_typeof.empty()) {
      d.data_typeof = typeof_text(nftnl_udata_get(data), nftnl_udata_len(data));
      // A value's typeof nft cannot use discards the key's too ("type" for both).
      if (d.data_typeof.empty()) d.key_typeof.clear();
    }
  } catch (const nftval::Unknown& u) {
    d.key_typeof.clear();
    d.data_typeof.clear();
    if (d.undecoded.empty()) d.undecoded = "its typeof: " + u.what;
  }
  return d;
}

int dump_sets(netlink::Socket& sock, Attempt& a, const std::map<std::pair<uint8_t, std::string>, size_t>& table_index,
              bool all_elements) {
  char req[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETSET, NFPROTO_UNSPEC, NLM_F_DUMP, sock.next_seq());
  return sock.talk(nlh, [&](const nlmsghdr* m) {
    a.check(m);
    std::unique_ptr<nftnl_set, decltype(&nftnl_set_free)> s(nftnl_set_alloc(), nftnl_set_free);
    if (nftnl_set_nlmsg_parse(m, s.get()) < 0) return MNL_CB_ERROR;
    SetInfo info;
    info.family = static_cast<uint8_t>(nftnl_set_get_u32(s.get(), NFTNL_SET_FAMILY));
    info.table_name = nftnl_set_get_str(s.get(), NFTNL_SET_TABLE);
    const auto it = table_index.find({info.family, info.table_name});
    if (it == table_index.end()) {
      a.moved = true;
      return MNL_CB_OK;
    }
    info.table = it->second;
    const uint32_t flags = nftnl_set_get_u32(s.get(), NFTNL_SET_FLAGS);
    info.anonymous = flags & NFT_SET_ANONYMOUS;
    // A dynamic set ("flags dynamic": kube-proxy's per-endpoint affinity-*
    // sets, meters) is filled by the packet path, like conntrack: its
    // elements are runtime state, not configuration. Each set's element dump
    // costs the kernel two walks of the table's set list (the name lookup in
    // nft_set_dump_ctx_init and nf_tables_dump_set's own): on a node with
    // thousands of them that is most of the snapshot. --light leaves them out.
    info.dynamic = flags & NFT_SET_EVAL;
    info.read_elements = all_elements || (!info.anonymous && !info.dynamic);
    info.set.name = nftnl_set_get_str(s.get(), NFTNL_SET_NAME);
    if (!info.read_elements && info.dynamic && !info.anonymous) {
      info.set.elements_unread = std::string("dynamic set: its elements are runtime state added by the packet path ") +
                                 kLightLeftOut;
    }
    info.set.is_map = flags & NFT_SET_MAP;
    info.key_types = split_key_type(nftnl_set_get_u32(s.get(), NFTNL_SET_KEY_TYPE));
    // A datatype nft does not have keeps its number: nft itself refuses to list such a set.
    auto type_name = [](uint32_t t) {
      const std::string name = datatype_name(t);
      return name.empty() ? "type-" + std::to_string(t) : name;
    };
    for (uint32_t t : info.key_types) info.set.key_type.push_back(type_name(t));
    if (info.set.is_map && nftnl_set_is_set(s.get(), NFTNL_SET_DATA_TYPE)) {
      info.data_type = nftnl_set_get_u32(s.get(), NFTNL_SET_DATA_TYPE);
      info.verdict_map = info.data_type == NFT_DATA_VERDICT;
      info.set.data_type = info.verdict_map ? "verdict" : type_name(info.data_type);
    }
    if (nftnl_set_is_set(s.get(), NFTNL_SET_OBJ_TYPE)) {
      info.shape.obj_type = nftnl_set_get_u32(s.get(), NFTNL_SET_OBJ_TYPE);
      info.set.is_map = true;  // nft lists an object map as a map of its objects' kind
      const std::string kind = object_kind_name(info.shape.obj_type);
      info.set.data_type = kind.empty() ? "object-" + std::to_string(info.shape.obj_type) : kind;
    }
    info.set.handle = nftnl_set_get_u64(s.get(), NFTNL_SET_HANDLE);
    if (nftnl_set_is_set(s.get(), NFTNL_SET_USERDATA)) {
      uint32_t len = 0;
      const void* ud = nftnl_set_get_data(s.get(), NFTNL_SET_USERDATA, &len);
      info.set.comment = chain_udata_comment(ud, len, NFTNL_UDATA_SET_COMMENT);
      read_set_userdata(info.shape, ud, len);
    }
    if (!info.anonymous) info.set.declaration = set_declaration(s.get(), info.family);
    info.shape.key_types = info.key_types;
    info.shape.data_type = info.data_type;
    info.shape.flags = flags;
    info.shape.key_len = nftnl_set_get_u32(s.get(), NFTNL_SET_KEY_LEN);
    if (nftnl_set_is_set(s.get(), NFTNL_SET_DATA_LEN)) info.shape.data_len = nftnl_set_get_u32(s.get(), NFTNL_SET_DATA_LEN);
    if (nftnl_set_is_set(s.get(), NFTNL_SET_DESC_CONCAT)) {
      uint32_t len = 0;
      const auto* f = static_cast<const uint8_t*>(nftnl_set_get_data(s.get(), NFTNL_SET_DESC_CONCAT, &len));
      if (f) info.shape.field_lens.assign(f, f + len);
    }
    a.sets.push_back(std::move(info));
    return MNL_CB_OK;
  });
}

// The tables' stateful objects (counter, quota, limit, ct helper, ...) and
// flowtables: a dump each, listed in the kernel's order.
int dump_objects(netlink::Socket& sock, Attempt& a, const std::map<std::pair<uint8_t, std::string>, size_t>& table_index) {
  char req[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETOBJ, NFPROTO_UNSPEC, NLM_F_DUMP, sock.next_seq());
  return sock.talk(nlh, [&](const nlmsghdr* m) {
    a.check(m);
    std::unique_ptr<nftnl_obj, decltype(&nftnl_obj_free)> o(nftnl_obj_alloc(), nftnl_obj_free);
    if (nftnl_obj_nlmsg_parse(m, o.get()) < 0) return MNL_CB_ERROR;
    const auto family = static_cast<uint8_t>(nftnl_obj_get_u32(o.get(), NFTNL_OBJ_FAMILY));
    const auto it = table_index.find({family, nftnl_obj_get_str(o.get(), NFTNL_OBJ_TABLE)});
    if (it == table_index.end()) {
      a.moved = true;
      return MNL_CB_OK;
    }
    a.tables[it->second].table.objects.push_back(decode_nft_object(o.get()));
    return MNL_CB_OK;
  });
}

int dump_flowtables(netlink::Socket& sock, Attempt& a,
                    const std::map<std::pair<uint8_t, std::string>, size_t>& table_index) {
  char req[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETFLOWTABLE, NFPROTO_UNSPEC, NLM_F_DUMP, sock.next_seq());
  return sock.talk(nlh, [&](const nlmsghdr* m) {
    a.check(m);
    std::unique_ptr<nftnl_flowtable, decltype(&nftnl_flowtable_free)> f(nftnl_flowtable_alloc(), nftnl_flowtable_free);
    if (nftnl_flowtable_nlmsg_parse(m, f.get()) < 0) return MNL_CB_ERROR;
    const auto family = static_cast<uint8_t>(nftnl_flowtable_get_u32(f.get(), NFTNL_FLOWTABLE_FAMILY));
    const auto it = table_index.find({family, nftnl_flowtable_get_str(f.get(), NFTNL_FLOWTABLE_TABLE)});
    if (it == table_index.end()) {
      a.moved = true;
      return MNL_CB_OK;
    }
    a.tables[it->second].table.flowtables.push_back(decode_nft_flowtable(f.get()));
    return MNL_CB_OK;
  });
}

// `unlisted`: set when an iptables-nft table's rule is one iptables-nft
// cannot list (nft_rule.h decode_nft_rule); the table is then read again as native.
int dump_rules(netlink::Socket& sock, Attempt& a, ChainInfo& info, bool iptables, const Options& options,
               const TableSets* sets, std::atomic<bool>* unlisted, const ChainBindings* bindings) {
  model::Chain& chain = a.chain(info);
  const std::string& table = a.tables[info.table].table.name;
  char req[MNL_SOCKET_BUFFER_SIZE];
  nlmsghdr* nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETRULE, info.family, NLM_F_DUMP, sock.next_seq());
  mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, table.c_str());
  mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, chain.name.c_str());
  const RuleDecodeOptions opts{info.family, iptables, sets, bindings};
  auto& rules = chain.rules;
  rules.clear();
  info.spooled = false;
  if (options.receive_only) {
    uint64_t count = 0;
    const int err = sock.talk(nlh, [&](const nlmsghdr* m) {
      a.check(m);
      ++count;
      return MNL_CB_OK;
    });
    chain.rule_count = count;
    chain.rules_recorded = false;
    return err;
  }
  // With a spool, a long chain (KUBE-SERVICES, one rule per Service) is
  // rendered a slice at a time as it is read: its records are not all held
  // at once beside their text.
  static constexpr size_t kSlice = 512;
  const bool stream = options.spool && options.spool->failure() == 0;
  model::RuleLines lines;
  uint32_t read = 0;
  const int err = sock.talk(nlh, [&](const nlmsghdr* m) {
    a.check(m);
    bool listable = true;
    model::Rule rule = decode_nft_rule(m, opts, &listable);
    if (!listable && unlisted) *unlisted = true;
    if (options.light && rule.text.empty() && text_unknown_reason(rule) == kAnonymousElementsUnread) ++a.rules_without_text;
    rule.position = ++read;
    rules.push_back(std::move(rule));
    if (stream && rules.size() == kSlice) {
      for (const auto& r : rules) lines.add(r);
      rules.clear();
    }
    return MNL_CB_OK;
  });
  if (err == 0 && stream && lines.size() > 0) {
    for (const auto& r : rules) lines.add(r);
    rules.clear();
    rules.shrink_to_fit();
    options.spool->store_text(iptables ? model::Backend::IptablesNft : model::Backend::Nftables,
                              nft_family_name(info.family), table, chain.name, lines.text());
    chain.rule_count = read;
    info.spooled = true;
  } else if (err == 0 && options.spool && !rules.empty()) {
    // Out of memory as soon as read: the bulk of a big node's snapshot.
    const size_t count = rules.size();
    if (options.spool->store(iptables ? model::Backend::IptablesNft : model::Backend::Nftables,
                             nft_family_name(info.family), table, chain.name, rules)) {
      chain.rule_count = count;
      info.spooled = true;
    }
  }
  return err;
}

std::string element_comment(nftnl_set_elem* e) {
  if (!nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_USERDATA)) return {};
  uint32_t len = 0;
  const void* ud = nftnl_set_elem_get(e, NFTNL_SET_ELEM_USERDATA, &len);
  return chain_udata_comment(ud, len, NFTNL_UDATA_SET_ELEM_COMMENT);
}

// One element as dumped.
RawSetElement raw_element(nftnl_set_elem* e) {
  RawSetElement raw;
  raw.flags = nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS) ? nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS) : 0;
  auto bytes = [&](uint16_t attr) {
    uint32_t len = 0;
    if (!nftnl_set_elem_is_set(e, attr)) return std::string();
    const auto* p = static_cast<const char*>(nftnl_set_elem_get(e, attr, &len));
    return p ? std::string(p, len) : std::string();
  };
  raw.key = bytes(NFTNL_SET_ELEM_KEY);
  raw.key_end = bytes(NFTNL_SET_ELEM_KEY_END);
  raw.data = bytes(NFTNL_SET_ELEM_DATA);
  if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_VERDICT)) {
    raw.has_verdict = true;
    raw.verdict = static_cast<int32_t>(nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_VERDICT));
    if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_CHAIN)) raw.chain = nftnl_set_elem_get_str(e, NFTNL_SET_ELEM_CHAIN);
  }
  raw.comment = element_comment(e);  // nft's other element userdata (interval flags) prints nothing
  if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_OBJREF)) raw.objref = nftnl_set_elem_get_str(e, NFTNL_SET_ELEM_OBJREF);
  if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT)) raw.timeout_ms = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
  if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION)) raw.expires_ms = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_EXPIRATION);
  if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPR) || nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPRESSIONS)) {
    // libnftnl parsed the statements into objects: built back into the
    // kernel's attributes, they are read by the rule decoder's own readers.
    std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
    nlattr* nest = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_EXPRESSIONS);
    auto put = [](nftnl_expr* x, void* data) {
      auto* h = static_cast<nlmsghdr*>(data);
      nlattr* elem = mnl_attr_nest_start(h, NFTA_LIST_ELEM);
      nftnl_expr_build_payload(h, x);
      mnl_attr_nest_end(h, elem);
      return 0;
    };
    if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPR)) {
      put(static_cast<nftnl_expr*>(const_cast<void*>(nftnl_set_elem_get(e, NFTNL_SET_ELEM_EXPR, nullptr))), nlh);
    } else {
      nftnl_set_elem_expr_foreach(e, put, nlh);
    }
    mnl_attr_nest_end(nlh, nest);
    raw.statements.assign(reinterpret_cast<const char*>(nest), nest->nla_len);
  }
  return raw;
}

std::string hex_bytes(std::string_view b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (unsigned char c : b) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// A set's elements as `nft list set` prints them: read back into
// nft's JSON form, then printed by the import's printer, so that a live
// and an imported snapshot of one state hold the same text. What either
// does not know leaves every element as the kernel's bytes, the set marked.
void record_elements(SetInfo& info) {
  auto& set = info.set;
  set.elements.clear();
  set.elements_undecoded.clear();
  // No elements (a dynamic set not filled yet): nft lists none, whatever
  // types its key has (a typeof field of no datatype among them).
  if (info.shape.elements.empty()) {
    set.element_count = 0;
    set.elements_recorded = true;
    return;
  }
  std::string why;
  try {
    const std::vector<KeyField> key = declared_key(info.shape);
    // The print form of an integer, which nft -j's type name leaves open.
    auto print_name = [](const KeyField& f, const std::string& name) {
      if (f.type != nftval::kInteger) return name;
      return std::string(f.hex ? nft_text::kIntegerHex : nft_text::kIntegerDecimal);
    };
    std::vector<std::string> key_names;
    for (size_t i = 0; i < key.size() && i < set.key_type.size(); ++i) key_names.push_back(print_name(key[i], set.key_type[i]));
    std::string data_name = set.data_type;
    if (info.shape.data_type == nftval::kInteger) data_name = print_name(declared_data(info.shape).at(0), data_name);
    const nlohmann::json elements = set_elements_json(info.shape, key);
    set.elements.reserve(elements.size());
    for (const auto& e : elements) {
      nft_text::NftElementText t = nft_text::nft_set_element_text(e, key_names, data_name);
      if (!t.unknown.empty()) {
        why = t.unknown;
        break;
      }
      set.elements.push_back({std::move(t.key), std::move(t.value), std::move(t.comment), std::move(t.timeout),
                              std::move(t.statements)});
    }
  } catch (const nftval::Unknown& u) {
    why = u.what;
  }
  if (!why.empty()) {
    set.elements_undecoded = why;
    set.elements.clear();
    for (const RawSetElement& e : info.shape.elements) {
      if (e.flags & NFT_SET_ELEM_INTERVAL_END) continue;
      model::SetElement el;
      el.key = (e.flags & NFT_SET_ELEM_CATCHALL) ? "*" : hex_bytes(e.key);
      if (!e.key_end.empty()) el.key += "-" + hex_bytes(e.key_end);
      if (e.has_verdict) {
        el.value = "verdict " + std::to_string(e.verdict) + (e.chain.empty() ? "" : " " + e.chain);
      } else if (!e.objref.empty()) {
        el.value = e.objref;
      } else if (!e.data.empty()) {
        el.value = hex_bytes(e.data);
      }
      el.comment = e.comment;
      set.elements.push_back(std::move(el));
    }
  }
  set.element_count = set.elements.size();
  set.elements_recorded = true;
  // A named set's bytes are not needed once printed (rules name it, "@s");
  // an anonymous one's print inside its rule, read next.
  if (!info.anonymous) {
    info.shape.elements.clear();
    info.shape.elements.shrink_to_fit();
  }
}

// Whether a dump gave some element twice: its keys (with the interval-end
// flag, which a range's end and the next range's start differ by) are unique
// in the kernel.
bool element_given_twice(const std::vector<RawSetElement>& elements) {
  std::unordered_set<std::string> seen;
  seen.reserve(elements.size());
  std::string id;
  for (const RawSetElement& e : elements) {
    id.assign(reinterpret_cast<const char*>(&e.flags), sizeof e.flags);
    id += e.key;
    id += '\0';
    id += e.key_end;
    if (!seen.insert(id).second) return true;
  }
  return false;
}

// A set's elements come in parts, each a fresh walk of the set that skips
// what earlier parts gave (nft_set_hash.c nft_rhash_walk). A hash table
// resized between two parts (the rhashtable's deferred worker, right after a
// large load or as elements expire) is walked in another order: some
// elements come twice and as many not at all, with no NLM_F_DUMP_INTR (the
// ruleset's generation does not move). Seen on kube-proxy's 3000x8 map
// service-ips read right after nft -f: 5,935 elements, 5,259 keys. The count
// stays right, so a key given twice is what tells; the set is read again,
// and the whole ruleset when that does not settle.
int dump_elements(netlink::Socket& sock, Attempt& a, SetInfo& info) {
  static constexpr int kReads = 4;
  for (int read = 1;; ++read) {
    std::unique_ptr<nftnl_set, decltype(&nftnl_set_free)> s(nftnl_set_alloc(), nftnl_set_free);
    nftnl_set_set_str(s.get(), NFTNL_SET_TABLE, info.table_name.c_str());
    nftnl_set_set_str(s.get(), NFTNL_SET_NAME, info.set.name.c_str());
    nftnl_set_set_u32(s.get(), NFTNL_SET_FAMILY, info.family);
    char req[MNL_SOCKET_BUFFER_SIZE];
    nlmsghdr* nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETSETELEM, info.family, NLM_F_DUMP, sock.next_seq());
    nftnl_set_elems_nlmsg_build_payload(nlh, s.get());
    const int err = sock.talk(nlh, [&](const nlmsghdr* m) {
      a.check(m);
      return nftnl_set_elems_nlmsg_parse(m, s.get()) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
    });
    if (err != 0) return err;
    info.shape.elements.clear();
    std::unique_ptr<nftnl_set_elems_iter, decltype(&nftnl_set_elems_iter_destroy)> it(
        nftnl_set_elems_iter_create(s.get()), nftnl_set_elems_iter_destroy);
    for (nftnl_set_elem* e = nftnl_set_elems_iter_next(it.get()); e != nullptr; e = nftnl_set_elems_iter_next(it.get())) {
      info.shape.elements.push_back(raw_element(e));
    }
    if (!element_given_twice(info.shape.elements)) break;
    ++a.set_rereads;
    if (read == kReads) {
      a.moved = true;
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1 << read));  // the resize is a worker's: let it finish
  }
  info.shape.elements_read = true;
  record_elements(info);
  return 0;
}

unsigned worker_count(const Options& options) {
  if (options.threads > 0) return options.threads;
  // The kernel side of a dump is the bulk of the time: one socket per core,
  // plus one so a core never waits while another thread decodes.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp(cores + 1, 2u, 16u);
}

// Reads the rules of every chain and the elements of the sets, spread over
// worker threads, each with its own socket. The workers are started from the
// calling thread, so they live in its network namespace.
void dump_contents(Attempt& a, const Options& options, std::vector<bool>& iptables_table) {
  // Chains are taken in the order the snapshot will list them (canonicalize's
  // table and chain order), not the kernel's: the spool then holds them nearly
  // in the order the writer reads them back, a window at a time.
  std::vector<size_t> table_rank(a.tables.size()), by_table(a.tables.size());
  std::iota(by_table.begin(), by_table.end(), size_t{0});
  std::sort(by_table.begin(), by_table.end(),
            [&](size_t x, size_t y) { return model::table_order_less(a.tables[x].table, a.tables[y].table); });
  for (size_t r = 0; r < by_table.size(); ++r) table_rank[by_table[r]] = r;
  std::vector<size_t> chain_order(a.chains.size());
  std::iota(chain_order.begin(), chain_order.end(), size_t{0});
  std::sort(chain_order.begin(), chain_order.end(), [&](size_t x, size_t y) {
    const ChainInfo &cx = a.chains[x], &cy = a.chains[y];
    if (cx.table != cy.table) return table_rank[cx.table] < table_rank[cy.table];
    return model::chain_order_less(a.chain(cx), a.chain(cy));
  });
  // Sets first: a native rule's text needs the elements of the anonymous
  // sets it looks up (nft prints them inside the rule). Each set's element
  // dump makes the kernel find the set by name in a list of all the table's
  // sets, twice: a kube-proxy table of 3,000 Services holds 10,600 sets, and
  // that walk is the kernel's share of the time (--light skips the anonymous
  // and dynamic ones). The workers spread it over the cores.
  std::vector<TableSets> table_sets(a.tables.size());
  auto run = [&](size_t jobs, auto&& job) {
    std::atomic<size_t> next{0};
    auto work = [&] {
      netlink::Socket sock(NETLINK_NETFILTER);
      if (const int err = sock.open()) {
        a.fail(err);
        return;
      }
      for (size_t i = next++; i < jobs; i = next++) {
        if (a.moved || a.error) return;
        if (const int err = job(sock, i)) a.fail(err);
      }
    };
    const unsigned workers = static_cast<unsigned>(std::min<size_t>(worker_count(options), std::max<size_t>(jobs, 1)));
    std::vector<std::thread> threads;
    for (unsigned i = 1; i < workers; ++i) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
  };
  run(a.sets.size(), [&](netlink::Socket& sock, size_t i) {
    SetInfo& s = a.sets[i];
    return s.read_elements ? dump_elements(sock, a, s) : 0;
  });
  for (const SetInfo& s : a.sets) table_sets[s.table][s.set.name] = &s.shape;
  // A native table's bound chains before the rules that bind them: nft
  // prints their rules inside that rule. (A binding inside a binding, which
  // nft 1.0.6 cannot write, is left without text: kBindingNotRead.)
  // iptables-nft-save lists a bound chain as a chain of its own.
  std::vector<ChainBindings> table_bindings(a.tables.size());
  std::map<size_t, ChainBinding> bound;  // by chain index
  std::vector<size_t> binding, unbound;
  for (size_t c : chain_order) {
    const ChainInfo& info = a.chains[c];
    (info.bound && !iptables_table[info.table] ? binding : unbound).push_back(c);
    if (info.bound) table_bindings[info.table][a.chain(info).name] = &bound[c];
  }
  std::vector<std::atomic<bool>> unlisted(a.tables.size());
  Options in_memory = options;
  in_memory.spool = nullptr;  // their text is read back here
  run(binding.size(), [&](netlink::Socket& sock, size_t i) {
    ChainInfo& c = a.chains[binding[i]];
    return dump_rules(sock, a, c, iptables_table[c.table], in_memory, &table_sets[c.table], &unlisted[c.table],
                      &table_bindings[c.table]);
  });
  for (size_t c : binding) {
    ChainBinding& b = bound[c];
    b.read = true;
    for (const model::Rule& r : a.chain(a.chains[c]).rules) {
      if (!r.text.empty()) {
        b.rules.push_back(r.text);
      } else if (b.unknown.empty()) {
        const std::string_view why = text_unknown_reason(r);
        b.unknown = why.empty() ? "a rule without text" : std::string(why);
      }
    }
  }
  run(unbound.size(), [&](netlink::Socket& sock, size_t i) {
    ChainInfo& c = a.chains[unbound[i]];
    return dump_rules(sock, a, c, iptables_table[c.table], options, &table_sets[c.table], &unlisted[c.table],
                      &table_bindings[c.table]);
  });
  // A table named like iptables' holding a rule iptables-nft cannot list:
  // iptables-nft-save prints "# Table `nat' is incompatible, use 'nft' tool."
  // and nothing else of it, so nft is its tool. Its chains are read again as
  // native nftables (rare: a hand-written `ip filter` table).
  std::vector<size_t> again;
  for (size_t c : chain_order) {
    if (unlisted[a.chains[c].table]) again.push_back(c);
  }
  if (again.empty() || a.moved || a.error) return;
  for (size_t t = 0; t < a.tables.size(); ++t) {
    if (!unlisted[t]) continue;
    iptables_table[t] = false;
    a.tables[t].table.backend = model::Backend::Nftables;
  }
  run(again.size(), [&](netlink::Socket& sock, size_t i) {
    ChainInfo& c = a.chains[again[i]];
    return dump_rules(sock, a, c, false, options, &table_sets[c.table], nullptr, &table_bindings[c.table]);
  });
}

}  // namespace

std::string nft_family_name(uint8_t family) {
  switch (family) {
    case NFPROTO_INET: return "inet";
    case NFPROTO_IPV4: return "ip";
    case NFPROTO_ARP: return "arp";
    case NFPROTO_NETDEV: return "netdev";
    case NFPROTO_BRIDGE: return "bridge";
    case NFPROTO_IPV6: return "ip6";
    default: return "family-" + std::to_string(family);
  }
}

std::string nft_hook_name(uint8_t family, uint32_t hooknum) {
  if (family == NFPROTO_NETDEV) return hooknum == 0 ? "ingress" : hooknum == 1 ? "egress" : std::to_string(hooknum);
  if (family == NFPROTO_ARP) {
    static constexpr const char* kArp[] = {"input", "output", "forward"};
    return hooknum < 3 ? kArp[hooknum] : std::to_string(hooknum);
  }
  static constexpr const char* kInet[] = {"prerouting", "input", "forward", "output", "postrouting", "ingress"};
  return hooknum < 6 ? kInet[hooknum] : std::to_string(hooknum);
}

std::string nf_tables_absent() {
  std::ifstream netlink("/proc/thread-self/net/netlink");
  if (!netlink) return "";  // cannot tell: ask, as the tools do
  std::string line;
  std::getline(netlink, line);  // header
  bool nfnetlink = false;
  while (std::getline(netlink, line)) {
    std::istringstream fields(line);
    std::string sk;
    int protocol = -1;
    uint32_t port = 1;
    fields >> sk >> protocol >> port;
    nfnetlink = nfnetlink || (protocol == NETLINK_NETFILTER && port == 0);
  }
  if (!nfnetlink) return "this kernel has no nfnetlink loaded (no kernel NETLINK_NETFILTER socket in /proc/net/netlink)";
  std::error_code ec;
  if (std::filesystem::exists("/sys/module/nfnetlink/refcnt", ec) && !std::filesystem::exists("/sys/module/nf_tables", ec)) {
    return "this kernel has no nf_tables loaded (the nfnetlink module is, nf_tables is not)";
  }
  return "";
}

NftDump dump_nftables(const Options& options) {
  NftDump out;
  if (!nf_tables_absent().empty()) {
    out.loaded = false;
    return out;
  }
  netlink::Socket sock(NETLINK_NETFILTER);
  if (const int err = sock.open()) {
    // EPROTONOSUPPORT: no nfnetlink in this kernel (module not loaded), not a privilege.
    throw SystemError("opening a NETLINK_NETFILTER socket", err,
                      err == EPROTONOSUPPORT ? "this kernel has no nfnetlink (nfnetlink / nf_tables modules not loaded)"
                                             : kNftPermissionHint);
  }
  uint32_t set_rereads = 0;  // over every attempt
  for (int attempt = 0;; ++attempt) {
    Attempt a;
    if (options.spool) options.spool->reset();  // an earlier attempt's rules are of another generation
    if (const int err = read_generation(sock, a.gen)) {
      throw SystemError("NFT_MSG_GETGEN", err, err == EPERM ? kNftPermissionHint : "");
    }
    int err = dump_tables(sock, a);
    std::map<std::pair<uint8_t, std::string>, size_t> table_index;
    for (size_t i = 0; i < a.tables.size(); ++i) table_index[{a.tables[i].family, a.tables[i].table.name}] = i;
    if (err == 0) err = dump_chains(sock, a, table_index);
    if (err == 0) err = dump_sets(sock, a, table_index, !options.light);
    if (err == 0) err = dump_objects(sock, a, table_index);
    if (err == 0) err = dump_flowtables(sock, a, table_index);
    std::vector<bool> iptables_table(a.tables.size());
    if (err == 0) {
      for (size_t i = 0; i < a.tables.size(); ++i) {
        std::vector<std::string> base_names;
        for (size_t c : a.tables[i].chains) {
          if (a.chains[c].has_hook) base_names.push_back(a.chain(a.chains[c]).name);
        }
        a.tables[i].table.backend = model::classify_nft_table(a.tables[i].table.family, a.tables[i].table.name,
                                                                base_names);
        iptables_table[i] = a.tables[i].table.backend == model::Backend::IptablesNft;
      }
      dump_contents(a, options, iptables_table);
      // The workers' rules went to the spool; give their arenas' free pages
      // back before the chains are assembled (peak RSS is the figure that counts).
      if (options.spool) malloc_trim(0);
    } else {
      a.fail(err);
    }
    uint32_t gen_after = 0;
    if (const int gerr = read_generation(sock, gen_after)) a.fail(gerr);
    if (const int e = a.error.load()) {
      throw SystemError("dumping nf_tables", e, e == EPERM ? kNftPermissionHint : "");
    }
    const bool consistent = !a.moved && gen_after == a.gen;
    set_rereads += a.set_rereads;
    if (consistent || attempt + 1 >= kMaxAttempts) {
      out.generation = a.gen;
      out.retries = static_cast<uint32_t>(attempt);
      out.set_rereads = set_rereads;
      out.consistent = consistent;
      out.rules_without_text = a.rules_without_text;
      for (const SetInfo& s : a.sets) {
        if (s.read_elements) continue;
        ++(s.anonymous ? out.anonymous_sets_unread : out.dynamic_sets_unread);
      }
      for (size_t i = 0; i < a.tables.size(); ++i) {
        model::Table& t = a.tables[i].table;
        const bool ipt = iptables_table[i];
        for (size_t ci : a.tables[i].chains) {
          model::Chain& c = a.chain(a.chains[ci]);
          if (ipt && c.base) {
            const std::string policy = c.base->policy == "drop" ? "DROP" : "ACCEPT";
            auto base = model::iptables_base_chain(t.name, c.name, policy);
            if (base) c.base = *base;
          }
          if (c.rules_recorded && !a.chains[ci].spooled) c.rule_count = c.rules.size();
        }
        if (!ipt && std::any_of(a.tables[i].chains.begin(), a.tables[i].chains.end(),
                                [&](size_t ci) { return a.chains[ci].bound; })) {
          // A bound chain is listed inside its rule (nft_native.h ChainBinding), as nft does.
          std::vector<model::Chain> listed;
          for (size_t ci : a.tables[i].chains) {
            if (!a.chains[ci].bound) listed.push_back(std::move(a.chain(a.chains[ci])));
          }
          t.chains = std::move(listed);
        }
        if (ipt) {
          // iptables-nft shows every built-in chain of a table, creating the
          // missing ones as empty ACCEPT chains when it lists (nft.c
          // nft_xt_fake_builtin_chains); an absent base chain and an empty
          // ACCEPT one filter the same. Mirror that so both views agree.
          for (const std::string& name : model::iptables_builtin_chains(t.name)) {
            if (model::find_chain(t, name) != nullptr) continue;
            model::Chain fake;
            fake.name = name;
            fake.base = model::iptables_base_chain(t.name, name, "ACCEPT");
            t.chains.push_back(std::move(fake));
          }
        }
        for (SetInfo& s : a.sets) {
          // An anonymous set is printed inside its rule's text, as nft lists it.
          if (s.table == i && !s.anonymous) t.sets.push_back(std::move(s.set));
        }
        out.tables.push_back(std::move(t));
      }
      return out;
    }
    // The ruleset moved under us: back off a little (jittered) and read it all again.
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (attempt + 1) + (a.gen % 97) * 10));
  }
}

}  // namespace dpscope::netfilter
