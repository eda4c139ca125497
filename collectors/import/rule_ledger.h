// One chain's rules while restore commands edit them in any order: -A, -I N,
// -D N and -D rule-spec (internal to the iptables text parser).
//
// An implicit treap (a randomized balanced tree ordered by position, each
// node knowing its subtree size) makes each of them O(log n): a vector was
// O(rules) per -I or -D. -D rule-spec deletes the first rule with the same
// key; the rules of one key are kept in chain order, which no later edit
// changes, so each key's set stays sorted (O(log^2 n) per -D with
// duplicates of one key, O(log n) for a key used once).
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/snapshot.h"

namespace dpscope::importer {

class RuleLedger {
 public:
  RuleLedger() = default;
  // The order of the rules does not depend on the seed; only the tree's shape does.
  RuleLedger(const RuleLedger&) = delete;  // the key sets point at this ledger
  RuleLedger& operator=(const RuleLedger&) = delete;

  size_t size() const { return size_of(root_); }

  // The rule becomes the `position`-th (1-based, 1 <= position <= size() + 1).
  void insert(size_t position, model::Rule rule, std::string key) {
    const uint32_t id = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(Node{kNone, kNone, kNone, next_priority(), 1});
    rules_.push_back(std::move(rule));
    auto [before, after] = split(root_, position - 1);
    root_ = merge(merge(before, id), after);
    nodes_[root_].parent = kNone;
    auto& same = by_key_.try_emplace(std::move(key), ByPosition{this}).first->second;
    same.insert(id);
    key_of_.push_back(&same);
  }

  // Deletes the `position`-th rule (1 <= position <= size()).
  void erase_at(size_t position) { erase(at(position)); }

  // Deletes the first rule with `key`; false when there is none.
  bool erase_first(const std::string& key) {
    auto it = by_key_.find(key);
    if (it == by_key_.end() || it->second.empty()) return false;
    erase(*it->second.begin());
    return true;
  }

  // The rules in chain order; the ledger is empty afterwards.
  std::vector<model::Rule> take() {
    std::vector<model::Rule> out;
    out.reserve(size());
    std::vector<uint32_t> stack;
    for (uint32_t n = root_; n != kNone || !stack.empty();) {
      while (n != kNone) {
        stack.push_back(n);
        n = nodes_[n].left;
      }
      n = stack.back();
      stack.pop_back();
      out.push_back(std::move(rules_[n]));
      n = nodes_[n].right;
    }
    clear();
    return out;
  }

  void clear() {
    nodes_.clear();
    rules_.clear();
    key_of_.clear();
    by_key_.clear();
    root_ = kNone;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint32_t left, right, parent;
    uint32_t priority;
    uint32_t size;  // nodes in this subtree
  };
  // Orders rule ids by their position in the chain.
  struct ByPosition {
    const RuleLedger* ledger;
    bool operator()(uint32_t a, uint32_t b) const { return ledger->position_of(a) < ledger->position_of(b); }
  };

  uint32_t size_of(uint32_t n) const { return n == kNone ? 0 : nodes_[n].size; }

  uint32_t next_priority() {
    // xorshift32 from a random seed: an input that knew the priorities could
    // place its -I lines so the tree degenerates into a list (depth n).
    seed_ ^= seed_ << 13;
    seed_ ^= seed_ >> 17;
    seed_ ^= seed_ << 5;
    return seed_;
  }

  void update(uint32_t n) {
    Node& node = nodes_[n];
    node.size = 1 + size_of(node.left) + size_of(node.right);
    if (node.left != kNone) nodes_[node.left].parent = n;
    if (node.right != kNone) nodes_[node.right].parent = n;
  }

  // (the first `k` nodes of `n`, the rest); expected depth O(log n).
  std::pair<uint32_t, uint32_t> split(uint32_t n, size_t k) {
    if (n == kNone) return {kNone, kNone};
    if (size_of(nodes_[n].left) >= k) {
      auto [a, b] = split(nodes_[n].left, k);
      nodes_[n].left = b;
      update(n);
      if (a != kNone) nodes_[a].parent = kNone;
      return {a, n};
    }
    auto [a, b] = split(nodes_[n].right, k - size_of(nodes_[n].left) - 1);
    nodes_[n].right = a;
    update(n);
    if (b != kNone) nodes_[b].parent = kNone;
    return {n, b};
  }

  uint32_t merge(uint32_t a, uint32_t b) {
    if (a == kNone) return b;
    if (b == kNone) return a;
    if (nodes_[a].priority > nodes_[b].priority) {
      nodes_[a].right = merge(nodes_[a].right, b);
      update(a);
      return a;
    }
    nodes_[b].left = merge(a, nodes_[b].left);
    update(b);
    return b;
  }

  uint32_t at(size_t position) const {
    uint32_t n = root_;
    for (;;) {
      const size_t left = size_of(nodes_[n].left);
      if (position == left + 1) return n;
      if (position <= left) {
        n = nodes_[n].left;
      } else {
        position -= left + 1;
        n = nodes_[n].right;
      }
    }
  }

  size_t position_of(uint32_t n) const {
    size_t position = size_of(nodes_[n].left) + 1;
    for (uint32_t p = nodes_[n].parent; p != kNone; n = p, p = nodes_[p].parent) {
      if (nodes_[p].right == n) position += size_of(nodes_[p].left) + 1;
    }
    return position;
  }

  void erase(uint32_t n) {
    key_of_[n]->erase(n);  // while its position is still known
    const size_t position = position_of(n);
    auto [before, rest] = split(root_, position - 1);
    auto [self, after] = split(rest, 1);
    (void)self;
    root_ = merge(before, after);
    if (root_ != kNone) nodes_[root_].parent = kNone;
  }

  std::vector<Node> nodes_;
  std::vector<model::Rule> rules_;  // by node id
  std::unordered_map<std::string, std::set<uint32_t, ByPosition>> by_key_;
  std::vector<std::set<uint32_t, ByPosition>*> key_of_;  // by node id
  uint32_t root_ = kNone;
  uint32_t seed_ = std::random_device{}() | 1u;
};

}  // namespace dpscope::importer
