// Netlink with libmnl: the one socket class and the one attribute reader every
// collector uses (nf_tables, rtnetlink, generic netlink for IPVS).
#pragma once

#include <arpa/inet.h>
#include <endian.h>
#include <libmnl/libmnl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string_view>
#include <type_traits>
#include <vector>

namespace dpscope::netlink {

// A netlink socket of one bus (NETLINK_NETFILTER, NETLINK_ROUTE,
// NETLINK_GENERIC) and its receive buffer; one per thread. Opened on first
// use, or by open().
class Socket {
 public:
  // A dump's messages come up to a page above 64 KiB at a time (nftables'
  // NFT_NLMSG_MAXSIZE is the largest).
  explicit Socket(int bus) : bus_(bus), buf_(65536 + static_cast<size_t>(sysconf(_SC_PAGESIZE))) {}
  ~Socket() { close(); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // 0 or errno.
  int open() {
    close();
    nl_ = mnl_socket_open2(bus_, SOCK_CLOEXEC);
    if (nl_ == nullptr) return errno;
    if (mnl_socket_bind(nl_, 0, MNL_SOCKET_AUTOPID) < 0) {
      const int err = errno;
      close();
      return err;
    }
    portid_ = mnl_socket_get_portid(nl_);
    return 0;
  }

  uint32_t next_seq() { return ++seq_; }

  // Sends `req` and feeds every reply message to `on_msg` (MNL_CB_OK to go
  // on, MNL_CB_STOP to end, MNL_CB_ERROR to fail) until the dump ends
  // (NLMSG_DONE), the request is acknowledged, or `on_msg` stops. 0 or errno
  // (the kernel's, or the socket's; EINTR: a dump was interrupted,
  // NLM_F_DUMP_INTR). After an error the socket is reopened on next use, since
  // the rest of an aborted dump may still be queued on it.
  template <typename F>
  int talk(nlmsghdr* req, F&& on_msg) {
    if (nl_ == nullptr) {
      if (const int err = open()) return err;
    }
    using Callback = std::remove_reference_t<F>;
    auto trampoline = [](const nlmsghdr* nlh, void* data) -> int { return (*static_cast<Callback*>(data))(nlh); };
    int err = 0;
    if (mnl_socket_sendto(nl_, req, req->nlmsg_len) < 0) {
      err = errno;
    } else {
      for (;;) {
        const ssize_t n = mnl_socket_recvfrom(nl_, buf_.data(), buf_.size());
        if (n < 0) {
          err = errno;
          break;
        }
        errno = 0;  // read right below: the kernel's error, if mnl_cb_run met one
        const int ret = mnl_cb_run(buf_.data(), static_cast<size_t>(n), req->nlmsg_seq, portid_, trampoline,
                                   const_cast<void*>(static_cast<const void*>(&on_msg)));
        if (ret < 0) {
          err = errno != 0 ? errno : EPROTO;
          break;
        }
        if (ret == MNL_CB_STOP) break;
      }
    }
    if (err != 0) close();
    return err;
  }

 private:
  void close() {
    if (nl_ != nullptr) mnl_socket_close(nl_);
    nl_ = nullptr;
  }
  int bus_;
  mnl_socket* nl_ = nullptr;
  uint32_t portid_ = 0;
  uint32_t seq_ = static_cast<uint32_t>(time(nullptr));
  std::vector<char> buf_;
};

// The attributes of one level by type, types 0..Max (the last of a type wins,
// as the kernel's nla_parse); a type above Max is not kept.
template <size_t Max>
struct Attrs {
  const nlattr* at[Max + 1] = {};
  const nlattr* operator[](size_t type) const { return type <= Max ? at[type] : nullptr; }
};

template <size_t Max>
int keep_attr(const nlattr* attr, void* data) {
  auto* out = static_cast<Attrs<Max>*>(data);
  const uint16_t type = mnl_attr_get_type(attr);
  if (type <= Max) out->at[type] = attr;
  return MNL_CB_OK;
}

// The attributes nested in `nest` (none when it is null).
template <size_t Max>
Attrs<Max> parse_nested(const nlattr* nest) {
  Attrs<Max> a;
  if (nest != nullptr) mnl_attr_parse_nested(nest, keep_attr<Max>, &a);
  return a;
}

// The attributes of a message after its `offset` bytes of family header.
template <size_t Max>
Attrs<Max> parse_message(const nlmsghdr* m, size_t offset) {
  Attrs<Max> a;
  mnl_attr_parse(m, static_cast<unsigned>(offset), keep_attr<Max>, &a);
  return a;
}

// f(attr) for each attribute of a message after its `offset` bytes of family
// header, in order (libmnl's mnl_attr_for_each macros assign void* and do not
// compile as C++).
template <typename F>
void for_each_attr(const nlmsghdr* nlh, size_t offset, F&& f) {
  auto* attr = static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(nlh, offset));
  const char* tail = static_cast<const char*>(mnl_nlmsg_get_payload_tail(nlh));
  for (; mnl_attr_ok(attr, static_cast<int>(tail - reinterpret_cast<const char*>(attr))); attr = mnl_attr_next(attr)) {
    f(attr);
  }
}

// f(attr) for each attribute nested in `nest`, in order (none when it is null).
template <typename F>
void for_each_nested(const nlattr* nest, F&& f) {
  if (nest == nullptr) return;
  auto* attr = static_cast<const nlattr*>(mnl_attr_get_payload(nest));
  const char* end = static_cast<const char*>(mnl_attr_get_payload(nest)) + mnl_attr_get_payload_len(nest);
  for (; mnl_attr_ok(attr, static_cast<int>(end - reinterpret_cast<const char*>(attr))); attr = mnl_attr_next(attr)) {
    f(attr);
  }
}

// Values; 0 or empty for an absent (or, host order, too short) attribute.
inline uint16_t u16(const nlattr* a) { return a != nullptr && mnl_attr_get_payload_len(a) >= 2 ? mnl_attr_get_u16(a) : 0; }
inline uint32_t u32(const nlattr* a) { return a != nullptr && mnl_attr_get_payload_len(a) >= 4 ? mnl_attr_get_u32(a) : 0; }
// Network byte order (nf_tables).
inline uint32_t be32(const nlattr* a) { return a != nullptr ? ntohl(mnl_attr_get_u32(a)) : 0; }
inline uint64_t be64(const nlattr* a) { return a != nullptr ? be64toh(mnl_attr_get_u64(a)) : 0; }
// A string attribute up to its NUL or its end.
inline std::string_view str(const nlattr* a) {
  if (a == nullptr) return {};
  const char* s = static_cast<const char*>(mnl_attr_get_payload(a));
  return std::string_view(s, strnlen(s, mnl_attr_get_payload_len(a)));
}

}  // namespace dpscope::netlink
