// SpillQueue<T>: a first-in, first-out queue of trivially copyable records that holds at most
// about 2 * `chunk` of them in memory — the oldest being read, the newest being filled — and
// the ones between, in order, in an anonymous temporary file (output/spill_file.h), written
// and read back `chunk` records at a time. `chunk` 0: no bound (all in memory, no file).
//
// Order: head_[0..) then the file's chunks from read_at_ then tail_. INVARIANT: head_ is
// empty only when the queue is (so front() is head_.front()); the file holds spilled_
// records, a whole number of chunks. Not thread-safe.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/output/spill_file.h"

namespace pagesim::sim {

template <class T>
class SpillQueue {
  static_assert(std::is_trivially_copyable_v<T>, "records go to a file as bytes");

 public:
  // `holds`: what the records are, for error messages.
  explicit SpillQueue(std::size_t chunk = 0, std::string holds = "queued records")
      : chunk_(chunk), holds_(std::move(holds)) {}

  bool empty() const { return head_.empty(); }
  std::size_t size() const { return head_.size() + spilled_ + tail_.size(); }
  // Records held in the temporary file now.
  std::size_t spilled() const { return spilled_; }

  const T& front() const {
    assert(!empty());
    return head_.front();
  }
  void push_back(const T& v) {
    if (spilled_ == 0 && tail_.empty() && (chunk_ == 0 || head_.size() < chunk_)) {
      head_.push_back(v);
      return;
    }
    tail_.push_back(v);
    if (tail_.size() == chunk_) {  // a full chunk: to the file
      if (!file_) file_.emplace(holds_);
      file_->append(tail_.data(), tail_.size() * sizeof(T));
      spilled_ += tail_.size();
      tail_.clear();
    }
  }
  void pop_front() {
    assert(!empty());
    head_.pop_front();
    if (head_.empty()) refill();
  }

 private:
  // head_ is empty: the oldest chunk of the file, or else the tail, becomes the head.
  void refill() {
    if (spilled_ > 0) {
      scratch_.resize(chunk_);
      file_->read(read_at_, scratch_.data(), chunk_ * sizeof(T));
      head_.assign(scratch_.begin(), scratch_.end());
      read_at_ += chunk_ * sizeof(T);
      spilled_ -= chunk_;
      if (spilled_ == 0) {  // all read back: the file's space goes back
        file_->clear();
        read_at_ = 0;
      }
    } else {
      head_.assign(tail_.begin(), tail_.end());
      tail_.clear();
    }
  }

  std::size_t chunk_;
  std::string holds_;
  std::deque<T> head_;             // the oldest records, front first
  std::optional<SpillFile> file_;  // then spilled_ records from byte read_at_
  std::uint64_t read_at_ = 0;
  std::size_t spilled_ = 0;
  std::vector<T> tail_;            // then the newest (fewer than chunk_)
  std::vector<T> scratch_;         // a chunk read back
};

}  // namespace pagesim::sim
