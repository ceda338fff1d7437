// The source of truth: showtimes, seats, holds, bookings and payments.
//
// Store is the whole of a database as the service sees it: its roles (showtimes, holds,
// checkout, payments, admission, tickets, admin, outbox; each in its own header, so that a part of
// the service can depend on the one role it uses) and the operations on the database itself.
// SqliteStore (embedded default) and PgStore (production) implement it and one contract
// test suite runs on both (tests/store/store_contract_test.cc). What every implementation
// guarantees:
//
//  * HoldSeats decides who gets a seat with one conditional UPDATE whose WHERE clause
//    holds the availability check, expired holds counting as free (lazy expiry). If fewer
//    rows change than seats were asked for, the transaction rolls back: all or nothing.
//    Seats are locked in seat-code order, so overlapping holds never deadlock.
//  * A hold is data (hold_expires_at), never an open transaction or a held lock.
//  * Release and extend act only while this hold id still owns the rows, and only for the
//    hold's customer: a stale hold id can never touch a newer hold.
//  * Reads apply lazy expiry too: an expired hold reads as AVAILABLE / EXPIRED.
//  * Time comes from one source per store (see each implementation's design note).
//
// Every method is thread-safe and bounded: it waits at most the configured pool and
// statement timeouts, then returns kUnavailable. Errors are the Codes of core/status.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "domain/booking.h"
#include "domain/hold.h"
#include "domain/showtime.h"
#include "io/loop.h"
#include "store/admin_store.h"
#include "store/admission_store.h"
#include "store/checkout_store.h"
#include "store/hold_store.h"
#include "store/outbox_store.h"
#include "store/payment_store.h"
#include "store/showtime_store.h"
#include "store/ticket_store.h"

namespace boxoffice {

class Store : public ShowtimeStore,
              public HoldStore,
              public CheckoutStore,
              public PaymentStore,
              public AdmissionStore,
              public TicketStore,
              public AdminStore {
 public:
  ~Store() override = default;

  // A database behind a store: the store itself, or one of its shards. The roles that live
  // per database (the outbox) and the per-database jobs (sweeper, outbox relay, refund
  // worker, reconciler) are reached through it.
  struct Database {
    int number = 0;    // the shard's number; 0 for a single database
    std::string name;  // "shard 3"; empty for a single database
    Store* store = nullptr;
    OutboxStore* outbox = nullptr;
  };
  // The databases behind this store, by number (a store of shards knows them once
  // Migrate has numbered them, and has none before).
  virtual std::vector<Database> Databases() = 0;
  // Each database's answer to a ping, by number, all asked at once; one without an answer
  // by the deadline counts as down. On an I/O loop. By default the one database's PingAsync.
  static constexpr Millis kPingDeadline{500};
  virtual io::asio::awaitable<std::vector<std::pair<int, Status>>> PingDatabasesAsync(
      Millis deadline);

  // Applies pending migrations; safe when several processes start at once.
  virtual Status Migrate() = 0;
  // Round trip to the engine, for /readyz.
  virtual Status Ping() = 0;
  // The same, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Status> PingAsync();
  // Bytes the database takes on disk (kInvalid where not measured).
  virtual Result<int64_t> SizeOnDisk();
  // The invariants checked over the whole database (a full scan: for benchmarks and
  // operators, not for the request path).
  virtual Result<AuditReport> Audit() = 0;
};

}  // namespace boxoffice
