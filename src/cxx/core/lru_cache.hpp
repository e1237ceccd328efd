// A thread-safe least-recently-used cache of shared, immutable values, for
// data that many objects use and that is costly to make (the Laplace plans'
// translation tables on the host and on each device). Entries belong to a
// group (e.g. a device) with a byte budget of its own: after an insert, the
// least recently used entries of that group beyond the budget are dropped,
// the newest is always kept. Holders keep their values alive (shared_ptr).
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

namespace gpufmm {

template <class Key, class V>
class LruCache {
 public:
  explicit LruCache(size_t budget_per_group) : budget_(budget_per_group) {}

  // The value of `key` (group `group`): the cached one, now the most recently
  // used, or make() -> std::pair<std::shared_ptr<const V>, size_t bytes> run
  // outside the lock and inserted (when two threads make one key, the first
  // insert wins and both get it).
  template <class Make>
  std::shared_ptr<const V> get(const Key& key, int group, Make make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto v = find_locked(key, group)) return v;
    }
    std::pair<std::shared_ptr<const V>, size_t> made = make();
    std::list<Entry> gone;  // released after the lock
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto v = find_locked(key, group)) return v;
    lru_.push_front(Entry{key, group, made.first, made.second});
    size_t bytes = 0;
    for (auto it = lru_.begin(); it != lru_.end();) {
      auto next = std::next(it);
      if (it->group == group) {
        bytes += it->bytes;
        if (it != lru_.begin() && bytes > budget_) gone.splice(gone.end(), lru_, it);
      }
      it = next;
    }
    return made.first;
  }

  // Drops the entries of one group (all groups: clear).
  void drop_group(int group) {
    std::list<Entry> gone;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = lru_.begin(); it != lru_.end();) {
      auto next = std::next(it);
      if (it->group == group) gone.splice(gone.end(), lru_, it);
      it = next;
    }
  }
  void clear() {
    std::list<Entry> gone;
    std::lock_guard<std::mutex> lock(mutex_);
    gone.swap(lru_);
  }

 private:
  struct Entry {
    Key key;
    int group;
    std::shared_ptr<const V> value;
    size_t bytes;
  };
  std::shared_ptr<const V> find_locked(const Key& key, int group) {
    for (auto it = lru_.begin(); it != lru_.end(); ++it)
      if (it->group == group && it->key == key) {
        lru_.splice(lru_.begin(), lru_, it);
        return lru_.front().value;
      }
    return nullptr;
  }

  size_t budget_;
  std::mutex mutex_;
  std::list<Entry> lru_;  // most recently used first
};

}  // namespace gpufmm
