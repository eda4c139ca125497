// An optional value kept on the heap: one pointer in its owner instead of
// sizeof(T) + a flag. For fields that most records leave empty (a rule's
// source and destination prefix, a chain's base-chain facts): a 20k-Service
// node holds ~350k rules and ~150k chains, and verify/compare hold them all.
// The interface is std::optional's, so callers read it the same way.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace dpscope::model {

template <class T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(std::nullopt_t) {}
  HeapOptional(const T& v) : p_(std::make_unique<T>(v)) {}
  HeapOptional(T&& v) : p_(std::make_unique<T>(std::move(v))) {}
  HeapOptional(const std::optional<T>& o) : p_(o ? std::make_unique<T>(*o) : nullptr) {}
  HeapOptional(std::optional<T>&& o) : p_(o ? std::make_unique<T>(std::move(*o)) : nullptr) {}
  HeapOptional(const HeapOptional& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  HeapOptional& operator=(const T& v) { return assign(T(v)); }
  HeapOptional& operator=(T&& v) { return assign(std::move(v)); }
  HeapOptional& operator=(const std::optional<T>& o) {
    if (o) return assign(T(*o));
    p_.reset();
    return *this;
  }

  template <class... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() { p_.reset(); }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T& value() {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  template <class U>
  T value_or(U&& fallback) const {
    return p_ ? *p_ : static_cast<T>(std::forward<U>(fallback));
  }

  friend bool operator==(const HeapOptional& a, const HeapOptional& b) {
    if (!a.p_ || !b.p_) return !a.p_ && !b.p_;
    return *a.p_ == *b.p_;
  }
  friend bool operator==(const HeapOptional& a, std::nullopt_t) { return !a.p_; }

 private:
  HeapOptional& assign(T&& v) {
    if (p_) {
      *p_ = std::move(v);
    } else {
      p_ = std::make_unique<T>(std::move(v));
    }
    return *this;
  }
  std::unique_ptr<T> p_;
};

}  // namespace dpscope::model
