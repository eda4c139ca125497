// A set's elements as the kernel holds them (bytes), read back into the
// elements nft lists, in the JSON form `nft -j list ruleset` prints them
// (libnftables-json(5) "elem"): the live collector then prints them with the
// printer the `nft -j` import uses (src/decoders/nft_json_text.h), for
// a named set's listing and for an anonymous set inside its rule alike.
//
// After nft v1.0.6 (Debian 12): netlink.c netlink_delinearize_set (key and
// data layout from the set's types, lengths and userdata),
// netlink_list_setelems (the order it lists them in), segtree.c
// interval_map_decompose and concat_range_aggregate (how ranges print).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectors/netfilter/nft_values.h"

namespace dpscope::netfilter {

// One element of a set as the kernel holds it (bytes as dumped).
struct RawSetElement {
  std::string key, key_end, data;  // key_end: concatenated ranges; data: map value
  bool has_verdict = false;
  int32_t verdict = 0;
  std::string chain;
  uint32_t flags = 0;               // NFT_SET_ELEM_*
  std::string comment;
  std::string objref;               // an object map's value: the object's name
  uint64_t timeout_ms = 0;          // the element's own timeout (0: none or the set's)
  uint64_t expires_ms = 0;          // time left before it expires (runtime)
  // The element's statements (counter, limit, quota): a nest of
  // NFTA_LIST_ELEM expressions as the kernel dumps them; "" for none.
  std::string statements;
};

// What nft's typeof userdata says of one field of a key or a value
// (netlink.c set_make_key; each expression's build_udata): only what the
// field's width and print form need.
struct TypeofField {
  uint32_t expr = 0;   // nft's enum expr_types: kTypeofPayload, kTypeofNumgen, ...; 0 = not said
  bool raw = false;    // a raw payload (@nh,32,32): its values print in hex (payload.c: xinteger_type)
  uint32_t bits = 0;   // a payload integer's width (NFTNL_UDATA_SET_KEY_PAYLOAD_LEN)
  uint32_t key = 0;    // a meta or ct expression's key (NFT_META_*, NFT_CT_*)
};
inline constexpr uint32_t kTypeofPayload = 7, kTypeofMeta = 9, kTypeofCt = 12, kTypeofConcat = 13, kTypeofNumgen = 23,
                          kTypeofHash = 24, kTypeofXfrm = 27;

// A set's declaration as the kernel holds it, and its elements once read.
struct SetShape {
  std::vector<uint32_t> key_types;  // nft datatype ids of the key's fields
  uint32_t data_type = 0;           // map value datatype (NFT_DATA_VERDICT for a vmap)
  uint32_t flags = 0;               // NFT_SET_*
  uint32_t obj_type = 0;            // an object map's NFT_OBJECT_*
  uint32_t key_len = 0, data_len = 0;  // bytes
  std::vector<uint8_t> field_lens;  // a concatenated interval key's field widths (NFTA_SET_DESC_CONCAT)
  // nft's userdata: the typeof of the key and of the values (empty:
  // declared by type, or not said), and their byte orders (1 host, 2 big;
  // what an integer without a typeof is read by).
  std::vector<TypeofField> key_typeof, data_typeof;
  uint32_t key_byteorder = 0, data_byteorder = 0;
  // A map whose values are intervals (NFTNL_UDATA_SET_DATA_INTERVAL: nat's
  // `10.1.1.0/24 : 72.2.3.66-72.2.3.78`): each value is its low ends, then its high ends.
  bool data_interval = false;
  bool elements_read = false;
  std::vector<RawSetElement> elements;
};

// Reads what the shape needs of a set's userdata (NFTA_SET_USERDATA, as nft
// v1.0.6 writes it: mnl.c mnl_nft_set_add): typeof and byte order of key and values.
void read_set_userdata(SetShape& set, const void* data, uint32_t len);

// nft datatype ids of a (possibly concatenated) type: 6 bits each, the
// first field in the highest bits (datatype.c concat_subtype_id).
std::vector<uint32_t> split_key_type(uint32_t key_type);

// nft's name of a datatype id ("ipv4_addr", "inet_service"; a concatenation
// "ipv4_addr . inet_service"); "" for an id nft v1.0.6 does not have.
std::string datatype_name(uint32_t type);

// nft's name of an object type (json.c obj_type_name: "counter", "ct helper"); "" when unknown.
std::string object_kind_name(uint32_t obj_type);

// One field of a key or a value: its datatype, width and byte order.
struct KeyField {
  uint32_t type = nftval::kInvalid;
  nftval::Order order = nftval::Order::Big;
  uint32_t len = 0;  // bytes
  bool hex = false;  // an integer nft prints in hex (a raw payload's)
  // A bit field above its bytes' lowest bit (`ip version`): an anonymous
  // set holds its values shifted up, nft prints them shifted down
  // (netlink_delinearize.c binop_adjust).
  uint32_t shift = 0;
};

// The fields of a map's values from its declaration, like declared_key.
std::vector<KeyField> declared_data(const SetShape& set);

// A named set's key fields from its declaration (each datatype's width and
// byte order; an integer's from the set's key length and userdata). Throws
// nftval::Unknown for a field whose width or byte order it does not say
// (a concatenation's integer field: nft keeps that in the set's typeof).
std::vector<KeyField> declared_key(const SetShape& set);

// The set's elements, as nft lists them: in its order, ranges paired and
// printed as prefixes, wildcards or ranges. `key` types the keys (a lookup's
// operands for an anonymous set, declared_key for a named one). Throws
// nftval::Unknown for what it does not read.
nlohmann::json set_elements_json(const SetShape& set, const std::vector<KeyField>& key);

// The prefix length when lo..hi (network order, equal widths) is one prefix
// (segtree.c range_mask_len, netlink.c range_expr_is_prefix: from some bit on,
// lo has zeros where hi has ones, the bits before it equal); -1 when it is not.
int prefix_len(const std::string& lo, const std::string& hi);

}  // namespace dpscope::netfilter
