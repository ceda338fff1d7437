// OutboxStore: the events a settlement wrote in its own transaction, delivered at least
// once in id order by one relay at a time (the lease). Outbox ids are per database, so this
// role lives on each database (each shard), never on a router over several.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "domain/booking.h"
#include "io/loop.h"

namespace boxoffice {

class OutboxStore {
 public:
  virtual ~OutboxStore() = default;

  // Unpublished outbox rows after after_id, in id order, at most limit of them.
  virtual Result<std::vector<OutboxEvent>> PendingEvents(int64_t after_id, int limit) = 0;
  // Takes or renews the lease `name` for owner until now + lease; false while another
  // owner's lease runs. Makes one outbox relay at a time drain the outbox. A negative
  // lease gives it up (if owner holds it) so another owner may take it at once.
  virtual Result<bool> AcquireLease(const std::string& name, const std::string& owner,
                                    Millis lease) = 0;
  // Marks delivered outbox rows published; they are not returned by PendingEvents again.
  // Fenced by the lease `lease_name`: only while `owner` still holds it, unexpired (checked
  // in the same atomic step as the mark); otherwise kNotActive and nothing is marked, so a
  // relay whose lease ran out mid-delivery leaves the rows to the one that took over.
  virtual Status MarkEventsPublished(const std::vector<int64_t>& ids, const std::string& lease_name,
                                     const std::string& owner) = 0;

  // The e-mail sender's rows (migration 0030): those it has not marked done, published or
  // not, in id order, at most limit; how many there are; and its mark on one, fenced like
  // MarkEventsPublished by the lease `lease_name` held by owner (kNotActive and nothing
  // marked once the lease is lost). A mark per row, because rows commit out of id order.
  virtual Result<std::vector<OutboxEvent>> PendingMail(int limit) = 0;
  virtual Result<int64_t> CountPendingMail() = 0;
  virtual Status MarkMailDone(int64_t id, const std::string& lease_name,
                              const std::string& owner) = 0;
  // Marks done, unsent, up to limit pending rows written more than older_than ago (mail
  // that comes too late to be of use), fenced the same way; how many.
  virtual Result<int64_t> ExpirePendingMail(Millis older_than, int limit,
                                            const std::string& lease_name,
                                            const std::string& owner) = 0;
};

}  // namespace boxoffice
