#include "model/intent.h"

#include <arpa/inet.h>

#include <algorithm>
#include <optional>
#include <nlohmann/json.hpp>

#include "model/json.h"
#include "model/json_input.h"
#include "util/error.h"

namespace dpscope::model {

using nlohmann::json;

namespace {

// One object being read, with its JSON pointer for messages.
class ItemReader {
 public:
  ItemReader(const std::string& origin, std::string pointer) : origin_(origin), pointer_(std::move(pointer)) {}

  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw InputError(origin_, 0, pointer_ + at + ": " + what);
  }
  const std::string& pointer() const { return pointer_; }

  // The member `key` of `j` (at pointer `at`) when present and not null.
  const json* member(const json& j, const std::string& at, const char* key) const {
    if (!j.is_object()) fail(at, "expected an object");
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  const json& object(const json& j, const std::string& at, const char* key) const {
    const json* v = member(j, at, key);
    if (!v) fail(at + "/" + key, "missing");
    if (!v->is_object()) fail(at + "/" + key, "expected an object, got " + std::string(v->type_name()));
    return *v;
  }
  std::string string(const json& j, const std::string& at, const char* key, bool required = false) const {
    const json* v = member(j, at, key);
    if (!v) {
      if (required) fail(at + "/" + key, "missing");
      return "";
    }
    if (!v->is_string()) fail(at + "/" + key, "expected a string, got " + std::string(v->type_name()));
    return v->get<std::string>();
  }
  std::optional<bool> boolean(const json& j, const std::string& at, const char* key) const {
    const json* v = member(j, at, key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail(at + "/" + key, "expected true or false, got " + std::string(v->type_name()));
    return v->get<bool>();
  }
  // A port number 1..65535 (0 allowed when `zero_ok`: nodePort unset).
  std::optional<uint16_t> port(const json& j, const std::string& at, const char* key, bool zero_ok = false) const {
    const json* v = member(j, at, key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) fail(at + "/" + key, "expected a port number, got " + std::string(v->type_name()));
    // An unsigned above INT64_MAX read as int64_t would turn negative: compare as written.
    const bool too_big = v->is_number_unsigned() && v->get<uint64_t>() > 65535;
    const int64_t p = too_big ? 65536 : v->get<int64_t>();
    if (p < (zero_ok ? 0 : 1) || p > 65535) fail(at + "/" + key, "port " + v->dump() + " out of range 1-65535");
    return static_cast<uint16_t>(p);
  }
  std::vector<std::string> strings(const json& j, const std::string& at, const char* key) const {
    std::vector<std::string> out;
    const json* v = member(j, at, key);
    if (!v) return out;
    if (!v->is_array()) fail(at + "/" + key, "expected an array, got " + std::string(v->type_name()));
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) fail(at + "/" + key + "/" + std::to_string(i), "expected a string");
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }
  const json* array(const json& j, const std::string& at, const char* key) const {
    const json* v = member(j, at, key);
    if (v && !v->is_array()) fail(at + "/" + key, "expected an array, got " + std::string(v->type_name()));
    return v;
  }
  std::string ip(const std::string& text, const std::string& at) const {
    unsigned char buf[16];
    if (inet_pton(AF_INET, text.c_str(), buf) == 1) return text;
    if (inet_pton(AF_INET6, text.c_str(), buf) == 1) {
      char out[INET6_ADDRSTRLEN];
      inet_ntop(AF_INET6, buf, out, sizeof out);  // canonical form, as nft / ip6tables print it
      return out;
    }
    fail(at, "'" + text + "' is not an IP address");
  }
  std::string protocol(const json& j, const std::string& at) const {
    std::string p = string(j, at, "protocol");
    if (p.empty()) return "tcp";  // the API default
    if (p == "TCP") return "tcp";
    if (p == "UDP") return "udp";
    if (p == "SCTP") return "sctp";
    fail(at + "/protocol", "unknown protocol '" + p + "' (TCP, UDP, SCTP)");
  }

 private:
  const std::string& origin_;
  std::string pointer_;
};

IntentService read_service(const json& item, const ItemReader& r) {
  IntentService s;
  s.origin = r.pointer();
  const json& meta = r.object(item, "", "metadata");
  s.name = r.string(meta, "/metadata", "name", true);
  s.ns = r.string(meta, "/metadata", "namespace");
  if (s.ns.empty()) s.ns = "default";
  const json& spec = r.object(item, "", "spec");
  s.type = r.string(spec, "/spec", "type");
  if (s.type.empty()) s.type = "ClusterIP";
  if (s.type != "ClusterIP" && s.type != "NodePort" && s.type != "LoadBalancer" && s.type != "ExternalName") {
    r.fail("/spec/type", "unknown Service type '" + s.type + "'");
  }
  s.external_name = r.string(spec, "/spec", "externalName");
  std::vector<std::string> ips = r.strings(spec, "/spec", "clusterIPs");
  if (ips.empty()) {
    std::string one = r.string(spec, "/spec", "clusterIP");
    if (!one.empty()) ips.push_back(one);
  }
  for (size_t i = 0; i < ips.size(); ++i) {
    if (ips[i] == "None") {
      s.headless = true;
      continue;
    }
    s.cluster_ips.push_back(r.ip(ips[i], "/spec/clusterIPs/" + std::to_string(i)));
  }
  if (s.headless) s.cluster_ips.clear();
  if (const json* ports = r.array(spec, "/spec", "ports")) {
    for (size_t i = 0; i < ports->size(); ++i) {
      const std::string at = "/spec/ports/" + std::to_string(i);
      const json& p = (*ports)[i];
      if (!p.is_object()) r.fail(at, "expected an object");
      IntentServicePort sp;
      sp.name = r.string(p, at, "name");
      sp.protocol = r.protocol(p, at);
      auto port = r.port(p, at, "port");
      if (!port) r.fail(at + "/port", "missing");
      sp.port = *port;
      if (const json* tp = r.member(p, at, "targetPort")) {
        if (tp->is_string()) sp.target_port = tp->get<std::string>();
        else if (tp->is_number_integer()) sp.target_port = std::to_string(*r.port(p, at, "targetPort"));
        else r.fail(at + "/targetPort", "expected a number or a port name");
      }
      sp.node_port = r.port(p, at, "nodePort", true).value_or(0);
      s.ports.push_back(std::move(sp));
    }
  }
  std::vector<std::string> ext = r.strings(spec, "/spec", "externalIPs");
  for (size_t i = 0; i < ext.size(); ++i) s.external_ips.push_back(r.ip(ext[i], "/spec/externalIPs/" + std::to_string(i)));
  s.lb_source_ranges = r.strings(spec, "/spec", "loadBalancerSourceRanges");
  std::string etp = r.string(spec, "/spec", "externalTrafficPolicy");
  if (!etp.empty()) s.external_traffic_policy = etp;
  std::string itp = r.string(spec, "/spec", "internalTrafficPolicy");
  if (!itp.empty()) s.internal_traffic_policy = itp;
  for (const auto* policy : {&s.external_traffic_policy, &s.internal_traffic_policy}) {
    if (*policy != "Cluster" && *policy != "Local") {
      r.fail(policy == &s.external_traffic_policy ? "/spec/externalTrafficPolicy" : "/spec/internalTrafficPolicy",
             "expected Cluster or Local, got '" + *policy + "'");
    }
  }
  std::string aff = r.string(spec, "/spec", "sessionAffinity");
  if (!aff.empty()) s.session_affinity = aff;
  if (const json* status = r.member(item, "", "status")) {
    if (const json* lb = r.member(*status, "/status", "loadBalancer")) {
      if (const json* ingress = r.array(*lb, "/status/loadBalancer", "ingress")) {
        for (size_t i = 0; i < ingress->size(); ++i) {
          const std::string at = "/status/loadBalancer/ingress/" + std::to_string(i);
          std::string ip = r.string((*ingress)[i], at, "ip");
          if (ip.empty()) continue;  // hostname-only ingress: nothing for a node to program
          ip = r.ip(ip, at + "/ip");
          (r.string((*ingress)[i], at, "ipMode") == "Proxy" ? s.lb_proxy_ingress_ips : s.lb_ingress_ips).push_back(ip);
        }
      }
    }
  }
  return s;
}

IntentEndpointSlice read_slice(const json& item, const ItemReader& r) {
  IntentEndpointSlice es;
  es.origin = r.pointer();
  const json& meta = r.object(item, "", "metadata");
  es.name = r.string(meta, "/metadata", "name", true);
  es.ns = r.string(meta, "/metadata", "namespace");
  if (es.ns.empty()) es.ns = "default";
  if (const json* labels = r.member(meta, "/metadata", "labels")) {
    es.service = r.string(*labels, "/metadata/labels", "kubernetes.io/service-name");
  }
  es.address_type = r.string(item, "", "addressType", true);
  if (es.address_type != "IPv4" && es.address_type != "IPv6" && es.address_type != "FQDN") {
    r.fail("/addressType", "expected IPv4, IPv6 or FQDN, got '" + es.address_type + "'");
  }
  if (const json* ports = r.array(item, "", "ports")) {
    for (size_t i = 0; i < ports->size(); ++i) {
      const std::string at = "/ports/" + std::to_string(i);
      const json& p = (*ports)[i];
      if (!p.is_object()) r.fail(at, "expected an object");
      IntentSlicePort sp;
      sp.name = r.string(p, at, "name");
      sp.protocol = r.protocol(p, at);
      sp.port = r.port(p, at, "port");
      es.ports.push_back(std::move(sp));
    }
  }
  if (const json* eps = r.array(item, "", "endpoints")) {
    for (size_t i = 0; i < eps->size(); ++i) {
      const std::string at = "/endpoints/" + std::to_string(i);
      const json& e = (*eps)[i];
      if (!e.is_object()) r.fail(at, "expected an object");
      IntentEndpoint ep;
      std::vector<std::string> addrs = r.strings(e, at, "addresses");
      for (size_t a = 0; a < addrs.size(); ++a) {
        ep.addresses.push_back(es.address_type == "FQDN" ? addrs[a]
                                                          : r.ip(addrs[a], at + "/addresses/" + std::to_string(a)));
      }
      if (const json* c = r.member(e, at, "conditions")) {
        ep.ready = r.boolean(*c, at + "/conditions", "ready");
        ep.serving = r.boolean(*c, at + "/conditions", "serving");
        ep.terminating = r.boolean(*c, at + "/conditions", "terminating");
      }
      ep.node_name = r.string(e, at, "nodeName");
      if (const json* hints = r.member(e, at, "hints")) ep.has_hints = hints->is_object() && !hints->empty();
      es.endpoints.push_back(std::move(ep));
    }
  }
  return es;
}

// One object of the input (a List item or the whole file).
void read_item(const json& item, const std::string& origin, const std::string& pointer, Intent& into) {
  ItemReader r(origin, pointer);
  if (!item.is_object()) r.fail("", "expected an object, got " + std::string(item.type_name()));
  std::string kind = r.string(item, "", "kind");
  if (kind == "Service") {
    into.services.push_back(read_service(item, r));
  } else if (kind == "EndpointSlice") {
    into.slices.push_back(read_slice(item, r));
  } else if (kind == "List" || kind.empty()) {
    r.fail("/kind", kind.empty() ? "missing: not a Kubernetes object" : "a List inside a List");
  } else {
    into.ignored_items += 1;
  }
}

// SAX events of a kubectl List: each element of /items is built as its own
// small DOM (read_item keeps its JSON-pointer messages), read and dropped the
// moment it closes; the rest of the document goes to a DOM of its own. A
// 20k-Service cluster's JSON never stands as one tree, and nlohmann's
// callback parser (a third of verify's time) is not used.
class IntentSax {
 public:
  IntentSax(const std::string& origin, Intent& into) : origin_(origin), into_(into), top_dom_(top_, false) {}

  json top_;                 // the document without its items
  bool is_list = false;      // it has an "items" array
  bool too_deep = false;
  std::optional<std::pair<size_t, std::string>> syntax_error;

  bool null() { return scalar([](auto& d) { return d.null(); }); }
  bool boolean(bool v) { return scalar([&](auto& d) { return d.boolean(v); }); }
  bool number_integer(json::number_integer_t v) { return scalar([&](auto& d) { return d.number_integer(v); }); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar([&](auto& d) { return d.number_unsigned(v); }); }
  bool number_float(json::number_float_t v, const std::string& t) {
    return scalar([&](auto& d) { return d.number_float(v, t); });
  }
  bool string(std::string& v) { return scalar([&](auto& d) { return d.string(v); }); }
  bool binary(json::binary_t& v) { return scalar([&](auto& d) { return d.binary(v); }); }
  bool key(std::string& k) {
    if (item_dom_) return item_dom_->key(k);
    if (depth_ == 1) top_key_ = k;
    return top_dom_.key(k);
  }
  bool start_object(std::size_t n) {
    if (++depth_ > kJsonDepthLimit) return too_deep = true, false;
    if (item_dom_) return item_dom_->start_object(n);
    if (at_item()) {
      item_ = json();
      item_dom_.emplace(item_, false);
      item_depth_ = depth_;
      return item_dom_->start_object(n);
    }
    return top_dom_.start_object(n);
  }
  bool start_array(std::size_t n) {
    if (++depth_ > kJsonDepthLimit) return too_deep = true, false;
    if (item_dom_) return item_dom_->start_array(n);
    if (at_item()) not_an_object();
    if (depth_ == 2 && top_key_ == "items") {
      is_list = true;
      in_items_ = true;
      return top_dom_.start_array(0) && top_dom_.end_array();  // items stay out of the top DOM
    }
    return top_dom_.start_array(n);
  }
  bool end_object() {
    --depth_;
    if (item_dom_) {
      bool ok = item_dom_->end_object();
      if (depth_ + 1 == item_depth_) {
        item_dom_.reset();
        read_item(item_, origin_, "/items/" + std::to_string(item_index_++), into_);
        item_ = json();
      }
      return ok;
    }
    return top_dom_.end_object();
  }
  bool end_array() {
    --depth_;
    if (item_dom_) return item_dom_->end_array();
    if (in_items_ && depth_ == 1) {
      in_items_ = false;
      return true;  // closed already in the top DOM
    }
    return top_dom_.end_array();
  }
  bool parse_error(std::size_t byte, const std::string& token, const nlohmann::detail::exception& e) {
    syntax_error = {byte, e.id == 406 ? "number out of range: " + token : "invalid JSON: " + json_error_text(e.what())};
    return false;
  }

 private:
  // The next value is an element of the top-level "items" array.
  bool at_item() const { return in_items_ && depth_ == 3; }
  [[noreturn]] void not_an_object() const {
    throw InputError(origin_, 0, "/items/" + std::to_string(item_index_) + ": expected an object");
  }
  template <typename Event>
  bool scalar(Event event) {
    if (item_dom_) return event(*item_dom_);
    if (in_items_ && depth_ == 2) not_an_object();
    return event(top_dom_);
  }

  const std::string& origin_;
  Intent& into_;
  nlohmann::detail::json_sax_dom_parser<json> top_dom_;
  json item_;
  std::optional<nlohmann::detail::json_sax_dom_parser<json>> item_dom_;
  size_t depth_ = 0, item_depth_ = 0, item_index_ = 0;
  std::string top_key_;
  bool in_items_ = false;
};

}  // namespace

void parse_intent(const std::string& text, const std::string& origin, Intent& into) {
  IntentSax sax(origin, into);
  bool ok = false;
  try {
    ok = json::sax_parse(text, &sax, json::input_format_t::json, true);
  } catch (const json::exception& e) {
    throw InputError(origin, 0, std::string("invalid JSON: ") + json_error_text(e.what()));
  }
  if (sax.too_deep) throw InputError(origin, position_of_offset(text, offset_beyond_depth(text)).line, too_deep_message());
  if (!ok || sax.syntax_error) {
    const size_t byte = sax.syntax_error ? sax.syntax_error->first : text.size();
    const std::string what = sax.syntax_error ? sax.syntax_error->second : "invalid JSON: unexpected end of input";
    const TextPosition at = position_of_offset(text, byte == 0 ? 0 : byte - 1);
    throw InputError(origin, at.line, at.column, what);
  }
  const json& root = sax.top_;
  if (!root.is_object()) throw InputError(origin, 0, "expected a JSON object (kubectl get ... -o json)");
  std::string kind = root.contains("kind") && root["kind"].is_string() ? root["kind"].get<std::string>() : "";
  if (kind == "List" || kind.ends_with("List") || sax.is_list) {
    if (!root.contains("items")) throw InputError(origin, 0, "/items: missing");
    if (!root["items"].is_array()) throw InputError(origin, 0, "/items: expected an array");
    return;
  }
  read_item(root, origin, "", into);
}

Intent load_intent(const std::vector<std::string>& paths) {
  Intent intent;
  for (const auto& p : paths) {
    intent.inputs.push_back(p);
    parse_intent(read_file(p), p, intent);
  }
  if (intent.services.empty() && intent.slices.empty()) {
    throw InputError(paths.empty() ? "intent" : paths.front(), 0,
                     "no Service or EndpointSlice in the input (expected kubectl get services,endpointslices -A -o json)");
  }
  return intent;
}

}  // namespace dpscope::model
