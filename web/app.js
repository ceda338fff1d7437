// The seat picker: showtimes, the live seat map, hold with a countdown, checkout at the
// gateway's page, the booking's outcome, the waiting room, and a small admin page. Routes
// live in the URL fragment (#/, #/showtimes/42, #/bookings/7, #/admin); the customer's token
// arrives once as #token=… and is kept in the tab's session storage (api.js).

import { api, adoptTokenFromFragment, claims, setToken, token } from './api.js';
import { SALES_CLOSED, add, clock, el, explain, fill, money, seatList, when } from './format.js';
import { MAX_SEATS, SeatMap } from './seatmap.js';
import { adminView } from './admin.js';

const POLL_MS = 2000;            // seat map polling while the live stream is down
const BACKGROUND_POLL_MS = 15000; // and while it is up (expiries of others' holds)
const STREAM_RETRY_MS = 30000;    // a stream the service refused is tried again after this
const QUEUE_POLL_MS = 2000;
const BOOKING_POLL_MS = 1000;
const EXPIRY_REFRESH_MS = 2200;   // the service shows an expiry within 2 s
const PAGE_SIZE = 20;
const MAX_TIMER_MS = 2 ** 31 - 1; // setTimeout fires at once past this (about 24.8 days)

let cleanups = [];               // what the current view must undo when it is left
let navigation = 0;              // counts routes: a view whose route was left stops drawing
const left = (nav) => nav !== navigation;
function onLeave(fn) { cleanups.push(fn); }
function every(ms, fn) { const t = setInterval(fn, ms); onLeave(() => clearInterval(t)); return t; }
function later(ms, fn) { const t = setTimeout(fn, ms); onLeave(() => clearTimeout(t)); return t; }

const view = () => document.getElementById('view');

// ---- messages -------------------------------------------------------------------------

export function say(text, kind = 'error') {
  const m = document.getElementById('message');
  if (!text) { m.hidden = true; m.textContent = ''; return; }
  m.className = `message ${kind}`;
  m.textContent = text;
  m.hidden = false;
}
export function announce(text) {
  const a = document.getElementById('announce');
  a.textContent = '';
  setTimeout(() => { a.textContent = text; }, 50);
}

function randomKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

// ---- session storage of holds, queue places and admissions -------------------------------

const store = {
  get(key) { try { return JSON.parse(sessionStorage.getItem(`boxoffice.${key}`)); } catch { return null; } },
  set(key, value) { value === null ? sessionStorage.removeItem(`boxoffice.${key}`) : sessionStorage.setItem(`boxoffice.${key}`, JSON.stringify(value)); },
};

// When a showtime's sales close (API.md): at its start, or salesCloseMinutesBefore earlier.
// After that the service refuses holds, checkouts and queue joins with 409 SALES_CLOSED.
function salesCloseAt(s) {
  const before = Number.isInteger(s.salesCloseMinutesBefore) && s.salesCloseMinutesBefore > 0 ? s.salesCloseMinutesBefore : 0;
  return new Date(s.startsAt).getTime() - before * 60000;
}

// ---- showtime list --------------------------------------------------------------------

async function listView(params, nav) {
  const cinema = params.get('cinema') || '';
  const date = params.get('date') || '';
  const cursor = params.get('cursor') || '';
  const back = params.getAll('back');
  const form = el('form', { class: 'filters', role: 'search', onsubmit: (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    const c = form.elements.cinema.value.trim();
    const d = form.elements.date.value;
    if (c) q.set('cinema', c);
    if (d) q.set('date', d);
    location.hash = `#/?${q}`;
  } },
  el('label', {}, 'Cinema ', el('input', { name: 'cinema', value: cinema, autocomplete: 'off' })),
  el('label', {}, 'Date ', el('input', { name: 'date', type: 'date', value: date })),
  el('button', { type: 'submit' }, 'Show'));
  const list = el('ul', { class: 'showtimes', 'aria-busy': 'true' });
  fill(view(), el('h1', {}, 'Showtimes'), form, list);
  const q = { limit: PAGE_SIZE };
  if (cinema) q.cinema = cinema;
  const day = date ? new Date(`${date}T00:00:00`) : null;
  if (day && !Number.isNaN(day.getTime())) {
    q.from = day.toISOString();
    q.to = new Date(day.getTime() + 86400000).toISOString();
  }
  if (cursor) q.cursor = cursor;
  try {
    const { data } = await api.showtimes(q);
    if (left(nav)) return;
    list.removeAttribute('aria-busy');
    if (!data.showtimes.length) add(list, el('li', {}, 'No showtimes match.'));
    // A showtime whose sales have closed (a date's earlier showtimes, or the minutes before
    // a start) is shown without a link to its seats. This browser's clock decides here; the
    // service decides a hold, and the seat map says so if the clock was off.
    const now = Date.now();
    for (const s of data.showtimes) {
      const prices = Object.entries(s.prices).map(([c, p]) => `${c} ${money(p)}`).join(' · ');
      const closed = salesCloseAt(s) <= now;
      add(list, el('li', { class: closed ? 'card closed' : 'card', 'data-showtime': s.showtimeId },
        el('h2', {}, closed ? s.title : el('a', { href: `#/showtimes/${s.showtimeId}` }, s.title)),
        el('p', {}, `${s.cinema} · ${s.hall}`),
        el('p', {}, el('time', { datetime: s.startsAt }, when(s.startsAt, s.timeZone)), ` · ${s.seatCount} seats`),
        closed ? el('p', { class: 'closed-note' }, 'Sales closed') : el('p', { class: 'muted' }, prices)));
    }
    const pager = el('nav', { class: 'pager', 'aria-label': 'Pages' });
    const base = new URLSearchParams();
    if (cinema) base.set('cinema', cinema);
    if (date) base.set('date', date);
    if (back.length) {
      const prev = new URLSearchParams(base);
      const stack = back.slice(0, -1);
      if (back[back.length - 1]) prev.set('cursor', back[back.length - 1]);
      for (const b of stack) prev.append('back', b);
      add(pager, el('a', { href: `#/?${prev}` }, '← Previous'));
    }
    if (data.nextCursor) {
      const next = new URLSearchParams(base);
      next.set('cursor', data.nextCursor);
      for (const b of [...back, cursor]) next.append('back', b);
      add(pager, el('a', { href: `#/?${next}` }, 'Next →'));
    }
    add(view(), pager);
  } catch (e) {
    if (left(nav)) return;
    list.removeAttribute('aria-busy');
    say(explain(e));
  }
}

// ---- the seat map of a showtime ---------------------------------------------------------

async function showtimeView(id, nav) {
  const root = view();
  fill(root, el('p', {}, 'Loading the seat map…'));
  let showtime;
  let first;
  try {
    [showtime, first] = await Promise.all([api.showtime(id), api.seats(id)]);
  } catch (e) {
    if (left(nav)) return;
    fill(root, el('h1', {}, 'Showtime'), el('p', {}, explain(e)), el('p', {}, el('a', { href: '#/' }, 'All showtimes')));
    return;
  }
  if (left(nav)) return;
  const s = showtime.data;
  let etag = first.etag;
  // The service's clock minus this browser's, from the map's asOf (the countdown is the
  // service's: a browser clock that is off must not end a hold early or late).
  const skew = new Date(first.data.asOf).getTime() - Date.now();
  const serverNow = () => Date.now() + skew;
  // Sales close at a time the service sets (salesCloseAt); a 409 SALES_CLOSED says so too.
  let closed = salesCloseAt(s) <= serverNow();
  let hold = store.get(`hold.${id}`);           // {holdId, seats, expiresAt, checkoutKey?}
  let retryAt = 0;                              // 429: no hold attempt before this time
  let tick = null;                              // the hold's countdown
  let asking = new Set();                       // seats of the hold request in flight
  let busy = false;                             // a hold, checkout, extend or release in flight
  let offers = [];                              // blocks offered with the last refusal
  let bestCount = 2;                            // the best-available form's last choice
  // The categories that have seats, in hall order (a price alone sells nothing).
  const seatCategories = [...new Set(first.data.seats.map((seat) => seat.category))];
  let bestCategory = seatCategories[0];
  const mapBox = el('div', { class: 'map' });
  const panel = el('section', { class: 'panel', 'aria-labelledby': 'panel-title' });
  const room = el('section', { class: 'room', hidden: true, 'aria-live': 'polite' });
  const liveState = el('span', { class: 'live', 'data-live': 'connecting' }, 'Connecting…');
  fill(root,
    el('h1', {}, s.title),
    el('p', { class: 'sub' }, `${s.cinema} · ${s.hall} · `, el('time', { datetime: s.startsAt }, when(s.startsAt, s.timeZone)), ' · ', liveState),
    room,
    el('div', { class: 'seatpage' }, mapBox, panel));

  const map = new SeatMap(mapBox, { prices: s.prices, onPick: pick });
  // The map's render time, which the browser tests read: data-render-ms from the seat map's
  // data to its laid-out DOM (built, styled, and laid out: its size read back), and
  // data-frame-ms to the end of the next frame, once it has been painted.
  const started = performance.now();
  map.render(first.data);
  root.dataset.renderMs = (performance.now() - started + (mapBox.offsetHeight && 0)).toFixed(1);
  requestAnimationFrame(() => setTimeout(() => { root.dataset.frameMs = (performance.now() - started).toFixed(1); }, 0));
  if (hold) map.setMine(hold.seats);
  // A hold kept from before (a reload, back from the gateway) is asked for first: checkout
  // moved its end, and it may have ended.
  if (hold) checkStoredHold(); else drawPanel();
  if (!closed && salesCloseAt(s) - serverNow() < MAX_TIMER_MS) later(salesCloseAt(s) - serverNow(), salesClosed);

  function pick(code) {
    const seat = map.seats.get(code);
    say('');
    if (hold) { say('You already hold seats: pay for them or release them to choose others.', 'info'); return; }
    if (closed) { say(SALES_CLOSED, 'info'); return; }
    if (map.selected.has(code)) { map.toggle(code); drawPanel(); announce(`Seat ${code} removed. ${map.selected.size} selected.`); return; }
    if (seat.status !== 'AVAILABLE') { say(`Seat ${code} is ${seat.status === 'BOOKED' ? 'sold' : 'taken'}. Choose another one.`, 'info'); return; }
    if (map.selected.size >= MAX_SEATS) {
      say(`You can choose at most ${MAX_SEATS} seats at once.`, 'info');
      announce(`Not selected: at most ${MAX_SEATS} seats.`);
      return;
    }
    map.toggle(code);
    drawPanel();
    announce(`Seat ${code} selected. ${map.selected.size} selected.`);
  }

  function total(seats) {
    let sum = 0; let currency = '';
    for (const c of seats) { const p = s.prices[map.seats.get(c)?.category]; if (p) { sum += p.amount; currency = p.currency; } }
    return { amount: sum, currency };
  }

  function drawPanel() {
    if (tick) { clearInterval(tick); tick = null; }
    if (left(nav)) return;  // an answer that came after the customer left this view
    if (hold) {
      const remaining = el('strong', { class: 'countdown', 'aria-live': 'off' });
      const update = () => {
        const ms = new Date(hold.expiresAt).getTime() - serverNow();
        remaining.textContent = clock(ms);
        remaining.classList.toggle('soon', ms < 60000);
        if (ms <= 0) { clearInterval(tick); tick = null; ended(); }
      };
      const paying = Boolean(hold.checkoutKey);
      // Once sales have closed only a payment already open goes on (API.md: it is honoured
      // while the hold lives); a hold not yet in checkout can only be released.
      fill(panel,
        el('h2', { id: 'panel-title' }, 'Your seats are held'),
        el('p', {}, `Seats ${seatList(hold.seats)} · ${money(total(hold.seats))}`),
        el('p', { class: 'timer' }, 'Time left to pay: ', remaining),
        paying ? el('p', {}, 'A payment is open for these seats.') : null,
        closed && !paying ? el('p', { class: 'closed-note' }, `${SALES_CLOSED} These seats can no longer be paid for.`) : null,
        el('div', { class: 'actions' },
          paying || !closed ? el('button', { class: 'primary', onclick: checkout }, paying ? 'Continue to payment' : 'Checkout') : null,
          closed ? null : el('button', { onclick: extend }, 'More time'),
          el('button', { onclick: release }, 'Release seats')));
      update();
      if (hold && tick === null && new Date(hold.expiresAt).getTime() > serverNow()) tick = setInterval(update, 250);
      return;
    }
    if (closed) {
      fill(panel,
        el('h2', { id: 'panel-title' }, 'Sales closed'),
        el('p', { class: 'closed-note' }, SALES_CLOSED),
        el('p', {}, el('a', { href: '#/' }, 'Other showtimes')));
      return;
    }
    const chosen = [...map.selected];
    const holdButton = el('button', { class: 'primary', onclick: holdSeats, disabled: chosen.length === 0 },
      chosen.length ? `Hold ${chosen.length} seat${chosen.length > 1 ? 's' : ''}` : 'Hold seats');
    fill(panel,
      el('h2', { id: 'panel-title' }, 'Your selection'),
      el('p', {}, chosen.length ? `Seats ${seatList(chosen)} · ${money(total(chosen))}` : `Choose up to ${MAX_SEATS} seats on the map.`),
      el('div', { class: 'actions' }, holdButton,
        chosen.length ? el('button', { onclick: () => { map.clearSelection(); map.markAlone([]); offers = []; drawPanel(); } }, 'Clear') : null),
      offersBox(),
      bestForm());
  }

  // Free blocks the service offered with a refusal: one click holds one.
  function offersBox() {
    if (!offers.length) return null;
    return el('div', { class: 'offers' },
      el('h3', {}, 'Free seats nearby'),
      el('ul', { class: 'alternatives' }, ...offers.map((seats) => el('li', {},
        el('button', { onclick: () => takeOffer(seats), 'data-seats': seats.join(' ') },
          `Hold ${seatList(seats)} · ${money(total(seats))}`)))));
  }

  function takeOffer(seats) {
    if (busy) return;
    map.clearSelection();
    for (const c of seats) if (map.seats.has(c)) map.toggle(c);
    holdSeats();
  }

  // "Best available": the service chooses and holds the best free block in one step.
  function bestForm() {
    const count = el('select', { name: 'count' },
      ...Array.from({ length: MAX_SEATS }, (_, i) => el('option', { value: String(i + 1), selected: i + 1 === bestCount }, String(i + 1))));
    const categories = seatCategories;
    const category = el('select', { name: 'category' },
      ...categories.map((c) => el('option', { value: c, selected: c === bestCategory }, `${c} (${money(s.prices[c])})`)));
    const go = () => {
      bestCount = Number(count.value);
      bestCategory = category.value;
      holdBest(bestCount, bestCategory);
    };
    return el('div', { class: 'best', role: 'group', 'aria-label': 'Best available' },
      el('label', {}, 'Seats', count),
      categories.length > 1 ? el('label', {}, 'Category', category) : null,
      el('button', { onclick: go, class: 'best-button' }, 'Best available'));
  }

  async function holdBest(count, category) {
    if (busy) return;
    if (Date.now() < retryAt) { say(`Too many attempts. Try again in ${Math.ceil((retryAt - Date.now()) / 1000)} seconds.`); return; }
    say('');
    const admission = store.get(`admission.${id}`);
    busy = true;
    try {
      const { data } = await api.holdBest(id, count, category, admission && admission.token);
      held(data);
    } catch (e) {
      if (left(nav)) return;
      if (e.code === 'SEATS_UNAVAILABLE') {
        say(`No ${count} seat${count > 1 ? 's' : ''} side by side in ${category} ${count > 1 ? 'are' : 'is'} free any more. Try fewer seats or another category.`, 'info');
        refresh();
        return;
      }
      refused(e);
    } finally {
      busy = false;
    }
  }

  function held(data) {
    map.clearSelection();
    map.markAlone([]);
    offers = [];
    keepHold({ holdId: data.holdId, seats: data.seats, expiresAt: data.expiresAt });
    drawPanel();
    announce(`Seats ${seatList(data.seats)} are held for you. Time left: ${clock(new Date(data.expiresAt) - serverNow())}.`);
    panel.querySelector('button.primary')?.focus();
  }

  // Sales have closed (their time came, or the service answered SALES_CLOSED): no more
  // choosing; a hold already in checkout may still be paid for.
  function salesClosed() {
    if (left(nav)) return;
    closed = true;
    if (!hold) { map.clearSelection(); map.markAlone([]); offers = []; }
    drawPanel();
    say(SALES_CLOSED, 'info');
  }

  function refused(e) {
    if (e.code === 'SALES_CLOSED') { salesClosed(); return; }
    if (e.code === 'RATE_LIMITED') {
      retryAt = Date.now() + (e.retryAfter || 60) * 1000;
    } else if (e.code === 'NOT_ADMITTED') {
      store.set(`admission.${id}`, null);
      waitingRoom(true);
      return;
    }
    say(explain(e));
  }

  function keepHold(h) {
    hold = h;
    store.set(`hold.${id}`, hold);
    map.setMine(hold ? hold.seats : []);
  }

  // Asks the service about the kept hold: HELD (with its end now), or forgotten when it
  // is over or unknown. A failure to ask (network, 503) keeps it and asks again later.
  const transient = (e) => e.code === 'NETWORK' || e.code === 'UNAVAILABLE' || e.status >= 500;

  // Asks the service about the kept hold and draws what it says: HELD (with its end now),
  // BOOKED (paid: the seats are the customer's), or over. A failure to ask (network, 503)
  // keeps it and asks again; another refusal (401: signed out) is said, the hold kept.
  async function checkStoredHold() {
    if (!hold) return;
    const holdId = hold.holdId;
    if (!panel.firstChild) fill(panel, el('h2', { id: 'panel-title' }, 'Your seats'), el('p', {}, 'Checking your hold…'));
    let data = null;
    try {
      ({ data } = await api.getHold(holdId));
    } catch (e) {
      if (left(nav) || !hold || hold.holdId !== holdId) return;
      if (transient(e)) { later(POLL_MS, checkStoredHold); return; }
      if (e.code !== 'NOT_FOUND') { say(explain(e)); hold = null; drawPanel(); return; }
    }
    if (left(nav) || !hold || hold.holdId !== holdId) return;
    if (data && data.status === 'HELD') { keepHold({ ...hold, expiresAt: data.expiresAt }); drawPanel(); return; }
    if (data && data.status === 'BOOKED') {
      say(`Seats ${seatList(data.seats)} are yours: booked and paid.`, 'ok');
      keepHold(null);
      drawPanel();
      refresh();
      return;
    }
    lost();
  }

  // The countdown reached zero: the service decides (a checkout may have moved the end, a
  // payment may have booked the seats), after whatever is in flight.
  function ended() {
    if (busy) { later(POLL_MS, ended); return; }
    checkStoredHold();
  }

  async function holdSeats() {
    const seats = [...map.selected];
    if (!seats.length || busy) return;
    if (Date.now() < retryAt) { say(`Too many attempts. Try again in ${Math.ceil((retryAt - Date.now()) / 1000)} seconds.`); return; }
    say('');
    const admission = store.get(`admission.${id}`);
    asking = new Set(seats);  // their SeatsHeld may arrive before the answer: not "taken"
    busy = true;
    try {
      const { data } = await api.hold(id, seats, admission && admission.token);
      held(data);
    } catch (e) {
      if (left(nav)) return;
      if (e.code === 'SEATS_UNAVAILABLE' || e.code === 'SINGLE_SEAT_GAP') {
        if (e.code === 'SEATS_UNAVAILABLE') map.setStatus(e.body.seats || [], 'HELD');
        map.markAlone(e.code === 'SINGLE_SEAT_GAP' ? e.body.seats || [] : []);
        offers = (e.body.alternatives || []).map((a) => a.seats).filter((a) => Array.isArray(a) && a.length);
        drawPanel();
        if (e.code === 'SEATS_UNAVAILABLE') refresh();
        say(explain(e) + (offers.length ? ' Or take one of the free blocks offered below.' : ''), 'info');
        return;
      }
      refused(e);
    } finally {
      asking = new Set();
      busy = false;
    }
  }

  function lost() {
    if (!hold) return;
    const seats = hold.seats;
    keepHold(null);
    if (left(nav)) return;
    drawPanel();
    map.setStatus(seats, 'AVAILABLE');
    say(`Time is up: your hold on ${seatList(seats)} ended and the seats were released. Choose again.`, 'info');
    later(EXPIRY_REFRESH_MS, refresh);
  }

  async function extend() {
    if (busy) return;
    busy = true;
    try {
      const holdId = hold.holdId;
      const { data } = await api.extend(holdId);
      if (left(nav) || !hold || hold.holdId !== holdId) return;
      keepHold({ ...hold, expiresAt: data.expiresAt });
      drawPanel();
      // Said as time left (the service's clock, as the countdown): a time of day would be
      // in this browser's zone, not the cinema's, and on its clock, which may be off.
      say(`More time: your seats are held for ${clock(new Date(data.expiresAt).getTime() - serverNow())} more.`, 'ok');
    } catch (e) {
      if (left(nav)) return;
      if (e.code === 'HOLD_NOT_ACTIVE') { busy = false; checkStoredHold(); return; }
      say(explain(e));
    } finally {
      busy = false;
    }
  }

  async function release() {
    if (busy) return;
    busy = true;
    try {
      await api.release(hold.holdId);
      const seats = hold.seats;
      keepHold(null);
      map.setStatus(seats, 'AVAILABLE');
      drawPanel();
      say(`Seats ${seatList(seats)} released.`, 'ok');
    } catch (e) {
      say(explain(e));
    } finally {
      busy = false;
    }
  }

  // The checkout's key is kept with the hold before it is sent: a retry, a double click or a
  // return from the gateway replays the same checkout, never opens a second one.
  async function checkout() {
    if (busy) return;
    if (!hold.checkoutKey) keepHold({ ...hold, checkoutKey: randomKey() });
    busy = true;
    try {
      const holdId = hold.holdId;
      await payFor(holdId, hold.checkoutKey, (e) => {
        if (e.code === 'SALES_CLOSED') {
          // Nothing was opened with this key: a payment is not open for these seats.
          if (!left(nav) && hold && hold.holdId === holdId) keepHold({ ...hold, checkoutKey: undefined });
          salesClosed();
          return true;
        }
        if (e.code !== 'HOLD_NOT_ACTIVE') return false;
        // Over, booked, or too close to its end to pay for: the service says which.
        api.getHold(holdId).then(({ data }) => {
          if (left(nav) || !hold || hold.holdId !== holdId) return;
          if (data.status !== 'HELD') { checkStoredHold(); return; }
          keepHold({ ...hold, checkoutKey: undefined });
          drawPanel();
          say('Your hold ends too soon to pay for it. Release the seats and hold them again for a full 10 minutes.', 'info');
        }, () => { if (!left(nav)) checkStoredHold(); });
        return true;
      }, (key) => { if (hold && hold.holdId === holdId) keepHold({ ...hold, checkoutKey: key }); });
    } finally {
      busy = false;
    }
  }

  // ---- live updates: the stream, polling when it is down ----
  let source = null;
  let streamUp = false;
  async function refresh() {
    try {
      const r = await api.seats(id, etag);
      if (left(nav) || r.status === 304) return;
      etag = r.etag;
      // The panel is drawn again only when the selection lost a seat (it keeps focus else).
      const before = map.selected.size;
      map.update(r.data);
      if (map.selected.size !== before) drawPanel();
    } catch (e) { /* the next poll tries again */ }
  }
  function openStream() {
    if (!window.EventSource) return;
    source = new EventSource(`/showtimes/${id}/seats/stream`);
    let dropped = false;
    source.onopen = () => {
      streamUp = true;
      liveState.textContent = 'Live';
      liveState.dataset.live = 'up';
      refresh();  // what happened before it opened, or while it was down (a 304 if nothing)
    };
    source.onmessage = (ev) => {
      let change;
      try { change = JSON.parse(ev.data); } catch { return; }
      const status = { SeatsHeld: 'HELD', SeatsReleased: 'AVAILABLE', SeatsBooked: 'BOOKED' }[change.type];
      if (!status || !Array.isArray(change.seats)) return;
      const lostChoice = change.seats.filter((c) => map.selected.has(c) && !asking.has(c));
      map.setStatus(change.seats, status);
      if (status === 'BOOKED' && hold && change.seats.some((c) => hold.seats.includes(c))) checkStoredHold();
      if (lostChoice.length && status !== 'AVAILABLE') {
        say(`Seat ${seatList(lostChoice)} was just taken by someone else.`, 'info');
        drawPanel();
      }
    };
    source.onerror = () => {
      streamUp = false;
      dropped = true;
      liveState.textContent = 'Reconnecting…';
      liveState.dataset.live = 'down';
      if (source.readyState === EventSource.CLOSED) {
        source = null;
        later(STREAM_RETRY_MS, openStream);
      }
    };
  }
  openStream();
  onLeave(() => { if (source) source.close(); if (tick) clearInterval(tick); });
  let lastPoll = Date.now();
  every(POLL_MS, () => {
    const due = streamUp ? BACKGROUND_POLL_MS : POLL_MS;
    if (Date.now() - lastPoll < due) return;
    lastPoll = Date.now();
    refresh();
  });

  // ---- the waiting room ----
  let waiting = false;  // one poller per view
  async function waitingRoom(retryHold) {
    if (waiting) return;
    waiting = true;
    let place = store.get(`queue.${id}`);
    try {
      if (!place) {
        const { data } = await api.joinQueue(id);
        place = { queueToken: data.queueToken, joined: Date.now(), firstPosition: data.position };
        store.set(`queue.${id}`, place);
      }
    } catch (e) {
      waiting = false;
      if (left(nav)) return;
      if (e.code === 'SALES_CLOSED') salesClosed(); else say(explain(e));
      return;
    }
    if (left(nav)) return;
    const position = el('strong', { class: 'position' }, '…');
    const eta = el('span', { class: 'eta' }, 'estimating…');
    room.hidden = false;
    fill(room,
      el('h2', {}, 'Waiting room'),
      el('p', {}, 'Many people want this showtime. You will choose your seats when it is your turn; keep this page open.'),
      el('p', {}, 'Your place in line: ', position, ' · Estimated wait: ', eta));
    say('');
    const seen = [];
    const check = async () => {
      let data;
      try { ({ data } = await api.queue(id, place.queueToken)); } catch (e) {
        if (e.code === 'NOT_FOUND' && !left(nav)) { store.set(`queue.${id}`, null); clearInterval(timer); waiting = false; waitingRoom(retryHold); }
        return;
      }
      if (left(nav)) return;
      if (data.admitted && data.admissionToken) {
        clearInterval(timer);
        waiting = false;
        store.set(`admission.${id}`, { token: data.admissionToken, expiresAt: data.admissionExpiresAt });
        store.set(`queue.${id}`, null);
        fill(room, el('h2', {}, 'It is your turn'), el('p', {}, 'You may now choose and hold your seats.'));
        announce('It is your turn: you may now hold your seats.');
        later(4000, () => { room.hidden = true; });
        if (retryHold && map.selected.size) holdSeats();
        return;
      }
      position.textContent = String(data.position);
      seen.push([Date.now(), data.position]);
      const [t0, p0] = seen[0];
      const moved = p0 - data.position;
      if (moved > 0) {
        const perPlace = (Date.now() - t0) / moved;
        eta.textContent = `about ${Math.max(1, Math.round(perPlace * data.position / 60000))} min`;
      }
    };
    const timer = every(QUEUE_POLL_MS, check);
    check();
  }
}

// Opens (or finds) the payment of a hold and goes to the gateway's page. handle(e) may take
// care of a refusal itself (returns true).
// A replayed answer (the key was used before) whose booking is no longer PENDING belongs to a
// payment that is over: a new key (rekey(key) keeps it) opens a new one.
async function payFor(holdId, key, handle, rekey) {
  say('Opening the payment…', 'info');
  try {
    let r = await api.checkout(holdId, key);
    if (r.headers.get('Idempotent-Replayed') === 'true') {
      const { data: booking } = await api.booking(r.data.bookingId);
      if (booking.status === 'CONFIRMED' || booking.status === 'REFUNDED') {
        location.hash = `#/bookings/${booking.bookingId}`;
        return;
      }
      if (booking.status === 'FAILED') {
        key = randomKey();
        if (rekey) rekey(key);
        r = await api.checkout(holdId, key);
      }
    }
    const { data } = r;
    store.set(`booking.${data.bookingId}`, { holdId, key, url: data.payment.url });
    location.assign(data.payment.url);
  } catch (e) {
    if (e.code === 'CHECKOUT_EXISTS' && e.body.bookingId) { location.hash = `#/bookings/${e.body.bookingId}`; return; }
    if (handle && handle(e)) return;
    say(explain(e));
  }
}

// ---- a booking's outcome ---------------------------------------------------------------

async function bookingView(id, nav) {
  const root = view();
  const status = el('strong', { class: 'status' }, '…');
  const detail = el('div', {});
  const info = el('p', { class: 'sub' });
  fill(root, el('h1', {}, `Booking ${id}`), info,
    el('p', { class: 'booking-status', 'aria-live': 'polite' }, 'Status: ', status), detail);
  let final = false;      // CONFIRMED or REFUNDED: nothing more will happen
  let shown = '';         // the status the detail was drawn for
  let loading = false;    // one poll at a time
  let showtime = null;
  let paying = false;     // "Pay again" in flight
  const kept = store.get(`booking.${id}`);  // {holdId, key, url} when this tab paid for it
  const load = async () => {
    if (loading) return;
    loading = true;
    try { await draw(); } finally { loading = false; }
  };
  const draw = async () => {
    let b;
    try { ({ data: b } = await api.booking(id)); } catch (e) {
      if (left(nav)) return;
      if (e.code !== 'NETWORK' && e.code !== 'UNAVAILABLE') { final = true; fill(detail, el('p', {}, explain(e))); }
      return;
    }
    if (left(nav)) return;
    status.textContent = b.status;
    status.dataset.status = b.status;
    if (!showtime) {
      try { showtime = (await api.showtime(b.showtimeId)).data; } catch { showtime = null; }
      if (left(nav)) return;
      if (showtime) {
        fill(info, el('strong', {}, showtime.title), ` · ${showtime.cinema} · ${showtime.hall} · `, el('time', { datetime: showtime.startsAt }, when(showtime.startsAt, showtime.timeZone)));
      }
    }
    if (b.status === shown) return;
    shown = b.status;
    const seats = el('p', {}, `Seats ${seatList(b.seats)} · ${money(b.amount)} · `, el('a', { href: `#/showtimes/${b.showtimeId}` }, 'Seat map'));
    if (b.status === 'PENDING') {
      fill(detail, seats, el('p', {}, 'Waiting for the payment to be confirmed…'),
        kept && kept.url ? el('p', {}, 'Not paid yet? ', el('a', { href: kept.url }, 'Continue to the payment page'), '.') : null);
      return;
    }
    if (b.status === 'CONFIRMED') {
      final = true;
      store.set(`hold.${b.showtimeId}`, null);
      fill(detail, seats, el('p', { class: 'ok' }, 'Your seats are booked. Enjoy the film!'));
      announce('Payment confirmed: your seats are booked.');
    } else if (b.status === 'REFUNDED') {
      final = true;
      fill(detail, seats, el('p', {}, 'Your payment arrived after the seats had been released, so it was refunded in full.'));
    } else {
      // FAILED: the payment failed (nothing taken), or it came after the seats were released
      // (then it is being refunded, and the page shows REFUNDED when it is).
      fill(detail, seats, el('p', {}, 'The payment did not go through. If any amount was taken, it is refunded automatically.'));
      announce('The payment failed.');
      // The seat map's checkout key belongs to this finished booking: a new payment needs a new one.
      const held = store.get(`hold.${b.showtimeId}`);
      if (held && held.holdId === b.holdId && held.checkoutKey) store.set(`hold.${b.showtimeId}`, { ...held, checkoutKey: undefined });
      let hold = null;
      try { ({ data: hold } = await api.getHold(b.holdId)); } catch { hold = null; }
      if (left(nav)) return;
      if (hold && hold.status === 'HELD') {
        const remaining = el('strong', { class: 'countdown' });
        const again = el('button', { class: 'primary' }, 'Pay again');
        let key = randomKey();  // one key per attempt: a double click replays it
        let over = false;
        again.addEventListener('click', async () => {
          if (paying || over) return;
          paying = true;
          again.disabled = true;
          await payFor(b.holdId, key, (e) => {
            if (e.code !== 'HOLD_NOT_ACTIVE') return false;
            say('The seats are no longer held long enough to pay for them: choose them again on the seat map.', 'info');
            return true;
          }, (k) => { key = k; });
          paying = false;
          again.disabled = over;
        });
        // The service's clock, from a seat map's asOf: this browser's may be off.
        let skew = 0;
        try { skew = new Date((await api.seats(b.showtimeId)).data.asOf).getTime() - Date.now(); } catch { skew = 0; }
        if (left(nav)) return;
        const upd = () => {
          const ms = new Date(hold.expiresAt) - (Date.now() + skew);
          remaining.textContent = clock(ms);
          if (ms <= 0) { clearInterval(t); over = true; again.disabled = true; add(detail, el('p', {}, 'The hold has ended; choose your seats again.')); }
        };
        const t = every(250, upd);
        upd();
        add(detail, el('p', {}, 'Your seats are still held for ', remaining, '.'), el('div', { class: 'actions' }, again));
      } else {
        add(detail, el('p', {}, 'The seats are no longer held: ', el('a', { href: `#/showtimes/${b.showtimeId}` }, 'choose again'), '.'));
      }
    }
  };
  await load();
  if (left(nav)) return;
  // Every second for a minute, then every 5 s; a FAILED booking is still asked every 5 s
  // for 10 minutes (a late payment turns REFUNDED).
  let waited = 0;
  const t = every(BOOKING_POLL_MS, () => {
    waited += BOOKING_POLL_MS;
    if (final || (shown === 'FAILED' && waited > 600000)) { clearInterval(t); return; }
    if ((waited > 60000 || shown === 'FAILED') && waited % 5000) return;
    load();
  });
}

// ---- routing --------------------------------------------------------------------------

function showWho() {
  const c = claims();
  const who = document.getElementById('who');
  if (!c) { who.textContent = 'Not signed in'; return; }
  const admin = String(c.scope || '').split(' ').includes('admin');
  fill(who, `Customer ${c.sub}${admin ? ' (admin)' : ''} `,
    el('button', { class: 'link', onclick: () => { setToken(''); showWho(); } }, 'Sign out'));
}

async function route() {
  adoptTokenFromFragment();
  for (const fn of cleanups) fn();
  cleanups = [];
  const nav = ++navigation;
  delete view().dataset.renderMs;
  delete view().dataset.frameMs;
  say('');
  showWho();
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  let m;
  if ((m = path.match(/^\/showtimes\/(\d+)$/))) await showtimeView(m[1], nav);
  else if ((m = path.match(/^\/bookings\/(\d+)$/))) await bookingView(m[1], nav);
  else if (path === '/admin') adminView(view(), { say });
  else await listView(params, nav);
  if (left(nav)) return;
  document.title = `${view().querySelector('h1')?.textContent || 'boxoffice'} · boxoffice`;
}

window.addEventListener('hashchange', route);
// The skip link moves focus to the page's content; it is not a route.
document.querySelector('.skip').addEventListener('click', (e) => { e.preventDefault(); view().focus(); });
route();
