#include "holds/seat_rules.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "core/status.h"

namespace boxoffice {

HallLayout::HallLayout(const SeatMap& map, bool forbid_single_seat_gaps)
    : forbid_(forbid_single_seat_gaps) {
  seats_.reserve(map.seats.size());
  std::string row_label;
  bool aisle_before = false;
  int last_number = 0;
  for (const SeatView& s : map.seats) {  // hall order: row, then number
    const bool new_row = seats_.empty() || s.row != row_label;
    if (new_row) {
      row_label = s.row;
      row_size_.push_back(0);
    }
    const int row = static_cast<int>(row_size_.size()) - 1;
    // A new section at each row, each aisle, and wherever numbers skip.
    if (new_row || aisle_before || s.number != last_number + 1) {
      sections_.push_back(Section{row, {}});
    }
    Section& section = sections_.back();
    const int index = static_cast<int>(seats_.size());
    seats_.push_back(Seat{s.code, s.category, row, s.number, s.accessible,
                          static_cast<int>(sections_.size()) - 1,
                          static_cast<int>(section.seats.size())});
    section.seats.push_back(index);
    index_.emplace(s.code, index);
    row_size_.back() = std::max(row_size_.back(), s.number);
    aisle_before = s.aisle_after;
    last_number = s.number;
  }
  // Every row opens a section and every section holds a seat, whatever the map says.
  BOX_ASSERT(row_size_.size() <= sections_.size() && sections_.size() <= seats_.size());
}

bool HallLayout::HasCategory(const std::string& category) const {
  return std::any_of(seats_.begin(), seats_.end(),
                     [&](const Seat& s) { return s.category == category; });
}

int HallLayout::IndexOf(const std::string& code) const {
  auto it = index_.find(code);
  return it == index_.end() ? -1 : it->second;
}

std::vector<std::string> HallLayout::Codes(const std::vector<int>& block) const {
  std::vector<std::string> codes;
  codes.reserve(block.size());
  for (int i : block) {
    BOX_ASSERT(i >= 0 && static_cast<size_t>(i) < seats_.size());  // indices of this layout
    codes.push_back(seats_[static_cast<size_t>(i)].code);
  }
  std::sort(codes.begin(), codes.end());
  return codes;
}

std::vector<SeatGuard> HallLayout::Guards(std::vector<int> picked) const {
  std::vector<SeatGuard> guards;
  if (!forbid_) return guards;
  // Seats are indexed in hall order, so index order is section-then-place order: sorted,
  // the pick's runs of seats side by side are runs of indices.
  std::sort(picked.begin(), picked.end());
  picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  // Sorted: the first and last bound every index (from IndexOf or Blocks, never input).
  BOX_ASSERT(picked.empty() ||
             (picked.front() >= 0 && static_cast<size_t>(picked.back()) < seats_.size()));
  auto is_picked = [&](int section, int pos) {
    const auto& seats = sections_[static_cast<size_t>(section)].seats;
    if (pos < 0 || pos >= static_cast<int>(seats.size())) return false;
    return std::binary_search(picked.begin(), picked.end(), seats[static_cast<size_t>(pos)]);
  };
  // The neighbour at `pos` (outside the pick) of a run, looking outward by `step`.
  auto guard = [&](int section, int pos, int step) {
    const auto& seats = sections_[static_cast<size_t>(section)].seats;
    if (pos < 0 || pos >= static_cast<int>(seats.size()) || is_picked(section, pos)) return;
    const std::string& seat = seats_[static_cast<size_t>(seats[static_cast<size_t>(pos)])].code;
    const int next = pos + step;
    std::string beyond;  // empty: an aisle, the row's end, or a seat of the pick
    if (next >= 0 && next < static_cast<int>(seats.size()) && !is_picked(section, next)) {
      beyond = seats_[static_cast<size_t>(seats[static_cast<size_t>(next)])].code;
    }
    for (const auto& g : guards) {
      if (g.seat == seat) return;  // between two runs: the same check from either side
    }
    guards.push_back(SeatGuard{seat, std::move(beyond)});
  };
  for (size_t i = 0; i < picked.size();) {
    const Seat& first = seats_[static_cast<size_t>(picked[i])];
    size_t j = i;
    while (j + 1 < picked.size()) {
      const Seat& next = seats_[static_cast<size_t>(picked[j + 1])];
      const Seat& last = seats_[static_cast<size_t>(picked[j])];
      if (next.section != last.section || next.pos != last.pos + 1) break;
      ++j;
    }
    const Seat& last = seats_[static_cast<size_t>(picked[j])];
    guard(first.section, first.pos - 1, -1);
    guard(last.section, last.pos + 1, +1);
    i = j + 1;
  }
  BOX_ASSERT(guards.size() <= 2 * picked.size());  // at most one neighbour on each side of a run
  return guards;
}

std::vector<SeatGuard> HallLayout::GuardsFor(const std::vector<std::string>& seats) const {
  if (!forbid_) return {};
  std::vector<int> picked;
  for (const auto& code : seats) {
    if (int i = IndexOf(code); i >= 0) picked.push_back(i);
  }
  return Guards(std::move(picked));
}

std::vector<std::vector<int>> HallLayout::Blocks(size_t count, const std::string& category) const {
  std::vector<std::vector<int>> blocks;
  if (count == 0) return blocks;
  for (const Section& section : sections_) {
    const size_t n = section.seats.size();
    // The length of the run of fitting seats ending at each place.
    size_t run = 0;
    for (size_t k = 0; k < n; ++k) {
      const Seat& s = seats_[static_cast<size_t>(section.seats[k])];
      run = (s.category == category && !s.accessible) ? run + 1 : 0;
      if (run >= count) {
        BOX_ASSERT(run <= k + 1);  // so the block starts inside the section
        blocks.emplace_back(section.seats.begin() + static_cast<std::ptrdiff_t>(k + 1 - count),
                            section.seats.begin() + static_cast<std::ptrdiff_t>(k + 1));
        BOX_ASSERT(blocks.back().size() == count);
      }
    }
  }
  return blocks;
}

std::vector<SeatPick> HallLayout::BestBlocks(size_t count, const std::string& category) const {
  auto blocks = Blocks(count, category);
  const int rows = static_cast<int>(row_size_.size());
  // (row distance from the middle in half rows, back rows first, centre distance in half
  // seats, lower numbers first): the ranking of the header.
  auto key = [&](const std::vector<int>& b) {
    const Seat& first = seats_[static_cast<size_t>(b.front())];
    const Seat& last = seats_[static_cast<size_t>(b.back())];
    BOX_ASSERT(first.row >= 0 && static_cast<size_t>(first.row) < row_size_.size());
    const int row_distance = std::abs(2 * first.row - (rows - 1));
    const int centre_distance =
        std::abs(first.number + last.number - (row_size_[static_cast<size_t>(first.row)] + 1));
    return std::make_tuple(row_distance, -first.row, centre_distance, first.number);
  };
  std::stable_sort(blocks.begin(), blocks.end(),
                   [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::vector<SeatPick> picks;
  picks.reserve(blocks.size());
  for (const auto& b : blocks) picks.push_back(SeatPick{Codes(b), Guards(b)});
  return picks;
}

std::shared_ptr<const std::vector<SeatPick>> HallLayout::Best(size_t count,
                                                              const std::string& category) const {
  MutexLock lock(best_mu_);
  auto& list = best_[{count, category}];
  if (!list) list = std::make_shared<const std::vector<SeatPick>>(BestBlocks(count, category));
  // The list kept for (count, category) is of blocks of count seats: a hold's seat count.
  BOX_ASSERT(list->empty() || list->front().seats.size() == count);
  return list;
}

std::vector<std::vector<std::string>> HallLayout::Alternatives(const std::vector<std::string>& near,
                                                               const SeatMap& map,
                                                               size_t limit) const {
  std::vector<std::vector<std::string>> out;
  if (near.empty() || limit == 0) return out;
  std::vector<int> wanted;
  for (const auto& code : near) {
    if (int i = IndexOf(code); i >= 0) wanted.push_back(i);
  }
  if (wanted.size() != near.size()) return out;  // not seats of this hall
  std::vector<bool> free(seats_.size(), false);
  for (const SeatView& s : map.seats) {
    if (int i = IndexOf(s.code); i >= 0) {
      free[static_cast<size_t>(i)] = s.status == SeatStatus::kAvailable;
    }
  }
  auto is_free = [&](const std::string& code) {
    const int i = IndexOf(code);
    return i >= 0 && free[static_cast<size_t>(i)];
  };
  const Seat& anchor = seats_[static_cast<size_t>(wanted.front())];
  // Centres compared as sums of seat numbers (the blocks have as many seats as the pick).
  int wanted_sum = 0;
  for (int i : wanted) wanted_sum += seats_[static_cast<size_t>(i)].number;
  struct Found {
    std::tuple<int, int, int, int> key;
    std::vector<int> block;
  };
  std::vector<Found> found;
  for (auto& block : Blocks(wanted.size(), anchor.category)) {
    bool offered = true;  // free, and none of the seats refused just now
    for (int i : block) {
      offered = offered && free[static_cast<size_t>(i)] &&
                std::find(wanted.begin(), wanted.end(), i) == wanted.end();
    }
    if (!offered) continue;
    if (!CheckPick(Codes(block), Guards(block), is_free).ok()) continue;
    const Seat& first = seats_[static_cast<size_t>(block.front())];
    int sum = 0;
    for (int i : block) sum += seats_[static_cast<size_t>(i)].number;
    found.push_back(Found{std::make_tuple(std::abs(first.row - anchor.row),
                                          std::abs(sum - wanted_sum), first.row, first.number),
                          std::move(block)});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Found& a, const Found& b) { return a.key < b.key; });
  for (size_t k = 0; k < found.size() && out.size() < limit; ++k)
    out.push_back(Codes(found[k].block));
  return out;
}

}  // namespace boxoffice
