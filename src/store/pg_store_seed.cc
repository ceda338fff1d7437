// PgStore::SeedBatch: `boxoffice seed` at chain scale, the seats copied with COPY.
#include "store/pg_store_impl.h"

namespace boxoffice {

namespace {

// A value for COPY's text format: backslash, tab and line breaks escaped.
void AppendCopyText(std::string* out, std::string_view value) {
  for (char ch : value) {
    switch (ch) {
      case '\\':
        *out += "\\\\";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      default:
        *out += ch;
    }
  }
}

}  // namespace

Result<bool> PgStore::SeedBatch(const std::string& batch, const std::vector<NewShowtime>& showtimes,
                                int64_t) {
  int64_t seats = 0;
  for (const NewShowtime& st : showtimes)
    for (const RowLayout& row : st.rows) seats += row.seats;
  return impl_->InTx<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto claimed = c.Exec(kSeedClaim, {batch, P(static_cast<int64_t>(showtimes.size())), P(seats)});
    if (!claimed.ok()) return claimed.status();
    if (PQntuples(claimed.value().get()) == 0) return false;  // written before
    auto ids_res = c.Exec(kSeedIds, {P(static_cast<int64_t>(showtimes.size()))});
    if (!ids_res.ok()) return ids_res.status();
    const PGresult* idr = ids_res.value().get();
    BOX_ASSERT(PQntuples(idr) == static_cast<int>(showtimes.size()));
    std::vector<int64_t> ids, starts, counts, price_ids, amounts;
    std::vector<std::string> titles, cinemas, halls, categories, currencies;
    std::string copy;
    copy.reserve(static_cast<size_t>(seats) * 48);
    for (size_t i = 0; i < showtimes.size(); ++i) {
      const NewShowtime& st = showtimes[i];
      const int64_t id = Int(idr, static_cast<int>(i), 0);
      ids.push_back(id);
      titles.push_back(st.title);
      cinemas.push_back(st.cinema);
      halls.push_back(st.hall);
      starts.push_back(ToEpochMs(st.starts_at));
      int64_t count = 0;
      for (const auto& [category, price] : st.prices) {
        price_ids.push_back(id);
        categories.push_back(category);
        amounts.push_back(price.amount);
        currencies.push_back(price.currency);
      }
      const std::string id_text = std::to_string(id);
      for (const RowLayout& row : st.rows) {
        for (int n = 1; n <= row.seats; ++n) {
          copy += id_text;
          copy += '\t';
          AppendCopyText(&copy, row.row + std::to_string(n));
          copy += '\t';
          AppendCopyText(&copy, row.row);
          copy += '\t';
          copy += std::to_string(n);
          copy += '\t';
          copy += std::to_string(count++);
          copy += '\t';
          AppendCopyText(&copy, row.category);
          copy += IsLayoutSeat(row.accessible, n) ? "\tt" : "\tf";
          copy += IsLayoutSeat(row.aisles, n) ? "\tt\n" : "\tf\n";
        }
      }
      counts.push_back(count);
    }
    // The statements' arrays, built side by side: one entry per showtime, one per price.
    BOX_ASSERT(ids.size() == showtimes.size() && titles.size() == ids.size() &&
               cinemas.size() == ids.size() && halls.size() == ids.size() &&
               starts.size() == ids.size() && counts.size() == ids.size());
    BOX_ASSERT(categories.size() == price_ids.size() && amounts.size() == price_ids.size() &&
               currencies.size() == price_ids.size());
    auto inserted = c.Exec(kSeedShowtimes,
                           {IntArrayLiteral(ids), ArrayLiteral(titles), ArrayLiteral(cinemas),
                            ArrayLiteral(halls), IntArrayLiteral(starts), IntArrayLiteral(counts)});
    if (!inserted.ok()) return inserted.status();
    auto priced = c.Exec(kSeedPrices, {IntArrayLiteral(price_ids), ArrayLiteral(categories),
                                       IntArrayLiteral(amounts), ArrayLiteral(currencies)});
    if (!priced.ok()) return priced.status();
    if (Status s = c.CopyIn(kSeedSeatsCopy, copy); !s.ok()) return s;
    return true;
  });
}

}  // namespace boxoffice
