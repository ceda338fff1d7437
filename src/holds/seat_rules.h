// The seat rules beyond picking by hand (API.md "Seat rules beyond picking by hand"), worked
// out on a showtime's layout, which never changes once the showtime exists:
//
//  * best available: every block of N adjacent seats of one category in one row, never
//    across an aisle and never on a wheelchair place (those are picked by hand), ranked;
//  * the single-seat gap rule: the guards a pick must respect (store.h, SeatGuard);
//  * alternatives: free blocks near a refused pick, on a seat map the instance already has.
//
// Nothing here decides who gets a seat: the candidates and guards go to the store (and the
// Redis gate), which apply CheckPick to them inside the one step that decides the hold, on
// the seats' state at that moment. So a rule can never be broken by two holds at once.
//
// The ranking of best available (docs/seat-rules.md):
//  1. the row nearest the hall's middle row (rows in hall order, front to back); of two
//     rows equally near, the one further back;
//  2. in that row, the block whose centre is nearest the row's centre (by seat numbers);
//     of two equally near, the one with the lower numbers.
// Candidates are tried in that order; the first whose seats are free (and whose guards
// hold) is held.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/sync.h"
#include "domain/hold.h"

namespace boxoffice {

// {"best": {"count": 2, "category": "standard"}} of a hold request.
struct BestAvailable {
  size_t count = 0;  // 1 … kMaxSeatsPerHold
  std::string category;
};

class HallLayout {
 public:
  HallLayout() = default;
  HallLayout(const HallLayout&) = delete;  // (shared, as std::shared_ptr<const HallLayout>)
  HallLayout& operator=(const HallLayout&) = delete;
  // From any seat map of the showtime (only its layout is read: rows, numbers, categories,
  // aisles, wheelchair places; never its statuses).
  HallLayout(const SeatMap& map, bool forbid_single_seat_gaps);

  bool forbids_single_seat_gaps() const { return forbid_; }
  bool HasCategory(const std::string& category) const;
  size_t size() const { return seats_.size(); }

  // The guards a hold of these seats must respect: none when gaps are allowed. Codes that
  // are not seats of the hall are left out (the store refuses them).
  std::vector<SeatGuard> GuardsFor(const std::vector<std::string>& seats) const;
  // Best available: every block of `count` seats of `category`, best first, each with its
  // guards and its seats sorted by code.
  std::vector<SeatPick> BestBlocks(size_t count, const std::string& category) const;
  // The same, worked out once per count and category and shared (the layout never changes).
  std::shared_ptr<const std::vector<SeatPick>> Best(size_t count,
                                                    const std::string& category) const;
  // Alternatives to a refused pick: up to `limit` blocks of as many seats as `near`, of the
  // category of its first seat, that `map` shows free (guards holding on it) and that share
  // no seat with `near`; nearest first: the fewest rows away from near's first seat, then
  // the closest centre to near's centre, then hall order. Seats of each block sorted by code.
  std::vector<std::vector<std::string>> Alternatives(const std::vector<std::string>& near,
                                                     const SeatMap& map, size_t limit) const;

 private:
  struct Seat {
    std::string code;
    std::string category;
    int row = 0;  // hall order
    int number = 0;
    bool accessible = false;
    int section = 0;  // sections_ index
    int pos = 0;      // place in its section
  };
  // Seats side by side with no aisle between them, in number order.
  struct Section {
    int row = 0;
    std::vector<int> seats;  // seats_ indices
  };
  int IndexOf(const std::string& code) const;
  std::vector<SeatGuard> Guards(std::vector<int> picked) const;
  // Every block of `count` seats of `category` (none accessible), in hall order.
  std::vector<std::vector<int>> Blocks(size_t count, const std::string& category) const;
  std::vector<std::string> Codes(const std::vector<int>& block) const;

  std::vector<Seat> seats_;
  std::vector<Section> sections_;
  std::vector<int> row_size_;  // the highest seat number of each row
  std::unordered_map<std::string, int> index_;
  bool forbid_ = false;
  mutable Mutex best_mu_;  // a leaf
  // by best_mu_: Best's lists, by count and category (at most kMaxSeatsPerHold × categories)
  mutable std::map<std::pair<size_t, std::string>, std::shared_ptr<const std::vector<SeatPick>>>
      best_ BOX_GUARDED_BY(best_mu_);
};

}  // namespace boxoffice
