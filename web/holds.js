// The hold controller of a showtime's page: choosing seats, holding them (by hand, best
// available, or a block offered after a refusal), more time, release, checkout, and asking
// the service about a hold kept from before (a reload, back from the gateway). It keeps the
// page's state (showtime.js) and the tab's storage in step with the service's answers and
// has the panel drawn again (panel.js); it draws nothing itself.

import { api } from './api.js';
import { SALES_CLOSED, clock, el, explain, fill, seatList } from './format.js';
import { t } from './i18n.js';
import { announce, later, left, randomKey, say, store } from './page.js';
import { payFor } from './pay.js';
import { MAX_SEATS } from './seatmap.js';

const POLL_MS = 2000;           // a hold the service could not be asked about is asked again
const EXPIRY_REFRESH_MS = 2200; // the service shows an expiry within 2 s
const CAP_SLACK_MS = 2000;      // an extend that ends this much (or a tenth) short of a whole hold was capped

// A failure to ask (network, 503): the hold is kept and asked about again.
const transient = (e) => e.code === 'NETWORK' || e.code === 'UNAVAILABLE' || e.status >= 500;

export function holdController(page) {
  const { id, nav } = page;
  const gone = () => left(nav);
  const tooSoon = () => {
    if (Date.now() >= page.retryAt) return false;
    say(t('hold.tooSoon', { n: Math.ceil((page.retryAt - Date.now()) / 1000) }));
    return true;
  };

  function keepHold(h) {
    if (!h || h.holdId !== page.hold?.holdId) page.summary = false;  // a new hold starts at the hold
    page.hold = h;
    store.set(`hold.${id}`, h);
    page.map.setMine(h ? h.seats : []);
  }

  function pick(code) {
    const { map } = page;
    const seat = map.seats.get(code);
    say('');
    if (page.hold) { say(t('pick.alreadyHolding'), 'info'); return; }
    if (page.closed) { say(SALES_CLOSED, 'info'); return; }
    if (map.selected.has(code)) { map.toggle(code); page.draw(); announce(t('pick.removed', { seat: code, n: map.selected.size })); return; }
    if (seat.status !== 'AVAILABLE') { say(t(seat.status === 'BOOKED' ? 'pick.sold' : 'pick.taken', { seat: code }), 'info'); return; }
    if (map.selected.size >= MAX_SEATS) {
      say(t('pick.tooMany', { n: MAX_SEATS }), 'info');
      announce(t('pick.tooManyAnnounce', { n: MAX_SEATS }));
      return;
    }
    map.toggle(code);
    page.draw();
    page.reveal([code]);
    announce(t('pick.selected', { seat: code, n: map.selected.size }));
  }

  function held(data) {
    page.map.clearSelection();
    page.map.markAlone([]);
    page.offers = [];
    page.sheetOpen = false;
    // ttlMs, how long a hold runs from a hold or an extend: "More time" is offered only once
    // it would add something (panel.js).
    keepHold({ holdId: data.holdId, seats: data.seats, expiresAt: data.expiresAt, ttlMs: new Date(data.expiresAt).getTime() - page.serverNow() });
    page.draw();
    announce(t('hold.heldAnnounce', { seats: seatList(data.seats), time: clock(new Date(data.expiresAt) - page.serverNow()) }));
    page.panel.querySelector('button.primary')?.focus();
  }

  // Sales have closed (their time came, or the service answered SALES_CLOSED): no more
  // choosing; a hold already in checkout may still be paid for.
  function salesClosed() {
    if (gone()) return;
    page.closed = true;
    page.showMap?.();      // nobody waits in line for a closed sale: the map, to look at
    page.stopWaiting?.();
    if (!page.hold) { page.map.clearSelection(); page.map.markAlone([]); page.offers = []; }
    page.draw();
    say(SALES_CLOSED, 'info');
  }

  function refused(e) {
    if (e.code === 'SALES_CLOSED') { salesClosed(); return; }
    if (e.code === 'SHOWTIME_CANCELLED') { salesClosed(); say(explain(e), 'info'); return; }
    if (e.code === 'RATE_LIMITED') {
      page.retryAt = Date.now() + (e.retryAfter || 60) * 1000;
    } else if (e.code === 'NOT_ADMITTED') {
      store.set(`admission.${id}`, null);
      page.waitingRoom(true);
      return;
    }
    say(explain(e));
  }

  async function holdSeats() {
    const seats = [...page.map.selected];
    if (!seats.length || page.busy) return;
    if (tooSoon()) return;
    say('');
    const admission = store.get(`admission.${id}`);
    page.asking = new Set(seats);  // their SeatsHeld may arrive before the answer: not "taken"
    page.busy = true;
    try {
      const { data } = await api.hold(id, seats, admission && admission.token);
      held(data);
    } catch (e) {
      if (gone()) return;
      if (e.code === 'SEATS_UNAVAILABLE' || e.code === 'SINGLE_SEAT_GAP') {
        if (e.code === 'SEATS_UNAVAILABLE') page.map.setStatus(e.body.seats || [], 'HELD');
        page.map.markAlone(e.code === 'SINGLE_SEAT_GAP' ? e.body.seats || [] : []);
        page.offers = (e.body.alternatives || []).map((a) => a.seats).filter((a) => Array.isArray(a) && a.length);
        if (page.offers.length) page.sheetOpen = true;  // the blocks offered are in the sheet
        page.draw();
        page.reveal(e.body.seats || []);
        if (e.code === 'SEATS_UNAVAILABLE') page.refresh();
        say(page.offers.length ? `${explain(e)} ${t('hold.orTakeOffer')}` : explain(e), 'info');
        return;
      }
      refused(e);
    } finally {
      page.asking = new Set();
      page.busy = false;
    }
  }

  async function holdBest(count, category) {
    if (page.busy) return;
    if (tooSoon()) return;
    say('');
    const admission = store.get(`admission.${id}`);
    page.busy = true;
    try {
      const { data } = await api.holdBest(id, count, category, admission && admission.token);
      held(data);
    } catch (e) {
      if (gone()) return;
      if (e.code === 'SEATS_UNAVAILABLE') {
        // What is free together now, from the map as this page knows it.
        const most = page.map.longestBlock(category, true);
        say(most === 0 ? t('best.noneFree', { category })
          : most < count ? t('best.fewerFree', { count, category, n: most })
            : t('best.justTaken'), 'info');
        page.refresh();
        return;
      }
      refused(e);
    } finally {
      page.busy = false;
    }
  }

  function takeOffer(seats) {
    if (page.busy) return;
    page.map.clearSelection();
    for (const c of seats) if (page.map.seats.has(c)) page.map.toggle(c);
    holdSeats();
  }

  // Asks the service about the kept hold and draws what it says: HELD (with its end now),
  // BOOKED (paid: the seats are the customer's), or over. A failure to ask (network, 503)
  // keeps it and asks again; another refusal (401: signed out) is said, the hold kept.
  async function checkStoredHold() {
    if (!page.hold) return;
    const holdId = page.hold.holdId;
    const ours = () => !gone() && page.hold && page.hold.holdId === holdId;
    if (!page.panel.firstChild) fill(page.panel, el('h2', { id: 'panel-title' }, t('hold.yourSeats')), el('p', {}, t('hold.checking')));
    let data = null;
    try {
      ({ data } = await api.getHold(holdId));
    } catch (e) {
      if (!ours()) return;
      if (transient(e)) { later(POLL_MS, checkStoredHold); return; }
      if (e.code !== 'NOT_FOUND') { say(explain(e)); page.hold = null; page.draw(); return; }
    }
    if (!ours()) return;
    if (data && data.status === 'HELD') { keepHold({ ...page.hold, expiresAt: data.expiresAt }); page.draw(); return; }
    if (data && data.status === 'BOOKED') {
      say(t('hold.booked', { seats: seatList(data.seats) }), 'ok');
      keepHold(null);
      page.draw();
      page.refresh();
      return;
    }
    lost();
  }

  // The countdown reached zero: the service decides (a checkout may have moved the end, a
  // payment may have booked the seats), after whatever is in flight.
  function ended() {
    if (page.busy) { later(POLL_MS, ended); return; }
    checkStoredHold();
  }

  function lost() {
    if (!page.hold) return;
    const seats = page.hold.seats;
    keepHold(null);
    if (gone()) return;
    page.draw();
    page.map.setStatus(seats, 'AVAILABLE');
    say(t('hold.expired', { seats: seatList(seats) }), 'info');
    later(EXPIRY_REFRESH_MS, page.refresh);
  }

  async function extend() {
    if (page.busy) return;
    page.busy = true;
    try {
      const holdId = page.hold.holdId;
      const { data } = await api.extend(holdId);
      if (gone() || !page.hold || page.hold.holdId !== holdId) return;
      // Less than a whole hold from now: the hold reached its cap (20 minutes after it was
      // made, API.md), and asking again adds nothing.
      const ms = new Date(data.expiresAt).getTime() - page.serverNow();
      const ttl = page.hold.ttlMs;
      const capped = Boolean(ttl) && ms < ttl - Math.min(CAP_SLACK_MS, ttl / 10);
      keepHold({ ...page.hold, expiresAt: data.expiresAt, capped: capped || undefined });
      page.draw();
      // Said as time left (the service's clock, as the countdown): a time of day would be
      // in this browser's zone, not the cinema's, and on its clock, which may be off.
      if (capped) say(t('hold.capped', { time: clock(ms) }), 'info');
      else say(t('hold.extended', { time: clock(ms) }), 'ok');
    } catch (e) {
      if (gone()) return;
      if (e.code === 'HOLD_NOT_ACTIVE') { page.busy = false; checkStoredHold(); return; }
      say(explain(e));
    } finally {
      page.busy = false;
    }
  }

  async function release() {
    if (page.busy) return;
    page.busy = true;
    try {
      await api.release(page.hold.holdId);
      const seats = page.hold.seats;
      keepHold(null);
      page.map.setStatus(seats, 'AVAILABLE');
      page.draw();
      say(t('hold.released', { seats: seatList(seats), n: seats.length }), 'ok');
    } catch (e) {
      say(explain(e));
    } finally {
      page.busy = false;
    }
  }

  // The order's summary before payment (panel.js): the seats and prices, the total, the
  // e-mail for the tickets; Back returns to the hold.
  function openSummary() {
    page.summary = true;
    page.sheetOpen = true;
    page.draw();
    page.panel.querySelector('input[name="email"]')?.focus({ preventScroll: true });
    page.reveal(page.hold.seats);
  }
  function closeSummary() {
    page.summary = false;
    page.draw();
  }

  // The checkout's key is kept with the hold before it is sent: a retry, a double click or a
  // return from the gateway replays the same checkout, never opens a second one. The e-mail
  // is kept with it, so a replay carries the same one.
  async function checkout(email) {
    if (page.busy) return;
    if (!page.hold.checkoutKey) {
      // The first attempt's e-mail stays with its key: a retry (the first may have been
      // applied) sends the same body, and the panel now offers "Continue to payment".
      keepHold({ ...page.hold, ...(email ? { email } : {}), checkoutKey: randomKey() });
      page.draw();
    }
    page.busy = true;
    try {
      const holdId = page.hold.holdId;
      const ours = () => !gone() && page.hold && page.hold.holdId === holdId;
      await payFor(holdId, page.hold.checkoutKey, (e) => {
        if (e.code === 'SALES_CLOSED') {
          // Nothing was opened with this key: a payment is not open for these seats.
          if (ours()) keepHold({ ...page.hold, checkoutKey: undefined });
          salesClosed();
          return true;
        }
        if (e.code !== 'HOLD_NOT_ACTIVE') return false;
        // Over, booked, or too close to its end to pay for: the service says which.
        api.getHold(holdId).then(({ data }) => {
          if (!ours()) return;
          if (data.status !== 'HELD') { checkStoredHold(); return; }
          keepHold({ ...page.hold, checkoutKey: undefined });
          page.draw();
          say(t('hold.endsTooSoon'), 'info');
        }, () => { if (!gone()) checkStoredHold(); });
        return true;
      }, (key) => { if (page.hold && page.hold.holdId === holdId) keepHold({ ...page.hold, checkoutKey: key }); }, page.hold.email);
    } finally {
      page.busy = false;
    }
  }

  return { pick, holdSeats, holdBest, takeOffer, checkStoredHold, ended, extend, release, openSummary, closeSummary, checkout, salesClosed };
}
