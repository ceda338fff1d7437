// The seat picker: showtimes, the live seat map, hold with a countdown, checkout at the
// gateway's page, the booking's outcome, the waiting room, and a small admin page. Routes
// live in the URL fragment (#/, #/showtimes/42, #/bookings/7, #/admin); the customer's token
// arrives once as #token=… and is kept in the tab's session storage (api.js). This file
// routes and draws the list and a booking's page; a showtime's page is showtime.js and
// its parts, what every view shares is page.js.

import { api, adoptTokenFromFragment, claims, setToken } from './api.js';
import { CANCELLED, add, bookingWords, clock, dayKey, dayOf, el, explain, fill, money, orderRef, seatList, statusBadge, timeOf, when } from './format.js';
import { LANG, LANGUAGES, switchLanguage, t, tn, translateStatic } from './i18n.js';
import { announce, beginRoute, every, left, randomKey, salesCloseAt, say, store, view } from './page.js';
import { payFor } from './pay.js';
import { showtimeView } from './showtime.js';

const BOOKING_POLL_MS = 1000;
const PAGE_SIZE = 20;

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
  el('label', {}, t('list.cinema'), el('input', { name: 'cinema', value: cinema, autocomplete: 'off' })),
  el('label', {}, t('list.date'), el('input', { name: 'date', type: 'date', value: date })),
  el('button', { type: 'submit' }, t('list.show')));
  const list = el('div', { class: 'days', 'aria-busy': 'true' });
  fill(view(), el('h1', {}, t('list.title')), form, list);
  const q = { limit: PAGE_SIZE, seatsLeft: 'true' };
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
    if (!data.showtimes.length) add(list, el('p', {}, t('list.none')));
    drawDays(list, data.showtimes);
    const pager = el('nav', { class: 'pager', 'aria-label': t('pager.label') });
    const base = new URLSearchParams();
    if (cinema) base.set('cinema', cinema);
    if (date) base.set('date', date);
    if (back.length) {
      const prev = new URLSearchParams(base);
      const stack = back.slice(0, -1);
      if (back[back.length - 1]) prev.set('cursor', back[back.length - 1]);
      for (const b of stack) prev.append('back', b);
      add(pager, el('a', { href: `#/?${prev}` }, t('pager.previous')));
    }
    if (data.nextCursor) {
      const next = new URLSearchParams(base);
      next.set('cursor', data.nextCursor);
      for (const b of [...back, cursor]) next.append('back', b);
      add(pager, el('a', { href: `#/?${next}` }, t('pager.next')));
    }
    add(view(), pager);
  } catch (e) {
    if (left(nav)) return;
    list.removeAttribute('aria-busy');
    say(explain(e));
  }
}

// The page's showtimes by day (on each cinema's clock) and, within a day, by film, in the
// order they start: a film's times side by side, as cinemas list them. A showtime whose
// sales have closed (a date's earlier showtimes, or the minutes before a start) is shown
// without a link to its seats. This browser's clock decides here; the service decides a
// hold, and the seat map says so if the clock was off.
function drawDays(list, showtimes) {
  const days = new Map();  // day → film title → showtimes
  for (const s of showtimes) {
    const day = dayKey(s.startsAt, s.timeZone);
    if (!days.has(day)) days.set(day, new Map());
    const films = days.get(day);
    if (!films.has(s.title)) films.set(s.title, []);
    films.get(s.title).push(s);
  }
  const now = Date.now();
  for (const films of days.values()) {
    const first = films.values().next().value[0];
    add(list, el('section', { class: 'day' },
      el('h2', {}, dayOf(first.startsAt, first.timeZone)),
      el('ul', { class: 'films' }, ...[...films].map(([title, shows]) => el('li', { class: 'film' },
        el('h3', {}, title),
        el('ul', { class: 'showtimes' }, ...shows.map((s) => {
          const closed = s.status === 'CANCELLED' || salesCloseAt(s) <= now;
          const from = Object.values(s.prices).reduce((low, p) => (!low || p.amount < low.amount ? p : low), null);
          const start = el('time', { datetime: s.startsAt }, timeOf(s.startsAt, s.timeZone));
          return el('li', { class: closed ? 'card closed' : 'card', 'data-showtime': s.showtimeId },
            closed ? el('span', { class: 'slot-time' }, start) : el('a', { class: 'slot-time', href: `#/showtimes/${s.showtimeId}` }, start),
            el('span', { class: 'slot-where' }, `${s.cinema} · ${s.hall}`),
            closed ? el('span', { class: 'closed-note' }, s.status === 'CANCELLED' ? t('list.cancelled') : t('list.salesClosed'))
              : from ? el('span', { class: 'muted' }, t('list.from', { price: money(from) })) : null,
            closed ? null : seatsLeft(s));
        })))))));
  }
}

// The seats still free (the list's seatsLeft, as the seat map counts them): none now (held
// seats may come back, so not "sold out"), or the number, marked when few are left (a tenth
// of the hall, at most 20).
function seatsLeft(s) {
  if (!Number.isInteger(s.seatsLeft)) return null;
  if (s.seatsLeft === 0) return el('span', { class: 'seats-left none' }, t('list.noneFree'));
  const few = s.seatsLeft <= Math.min(20, Math.ceil(s.seatCount / 10));
  return el('span', { class: few ? 'seats-left few' : 'seats-left' }, t('list.seatsLeft', { n: s.seatsLeft }));
}

// ---- a booking's outcome ---------------------------------------------------------------

async function bookingView(id, nav) {
  const root = view();
  const status = el('strong', { class: 'badge status' }, '…');
  const detail = el('div', {});
  const info = el('p', { class: 'sub' });
  fill(root, el('h1', {}, t('booking.title')),
    el('p', {}, tn('booking.reference', { ref: el('span', { class: 'order-ref' }, orderRef(id)) })), info,
    el('p', { class: 'booking-status', 'aria-live': 'polite' }, tn('booking.statusLine', { status })), detail);
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
    status.textContent = bookingWords(b.status);
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
    const seats = el('p', {}, `${t('seats.list', { seats: seatList(b.seats), price: money(b.amount) })} · `, el('a', { href: `#/showtimes/${b.showtimeId}` }, t('booking.seatMap')));
    const cancelled = showtime && showtime.status === 'CANCELLED';
    if (b.status === 'PENDING') {
      // A cancelled showtime's payment would only be refunded: never invited.
      fill(detail, seats, cancelled
        ? el('p', { class: 'cancelled-note' }, `${CANCELLED} ${t('booking.doNotPay')}`)
        : el('p', {}, t('booking.waitingForPayment')),
      kept && kept.url && !cancelled ? el('p', {}, tn('booking.notPaidYet', { link: el('a', { href: kept.url }, t('booking.continueToPayment')) })) : null);
      return;
    }
    if (b.status === 'CONFIRMED') {
      final = true;
      store.set(`hold.${b.showtimeId}`, null);
      fill(detail, seats, el('p', { class: 'ok' }, t('booking.confirmed')));
      announce(t('booking.confirmedAnnounce'));
      await ticketsOf(b, showtime, detail, nav);
      if (left(nav)) return;
      const refundable = showtime && Number.isInteger(showtime.refundUntilMinutesBefore)
        ? Date.parse(showtime.startsAt) - showtime.refundUntilMinutesBefore * 60000 : NaN;
      if (refundable > Date.now()) {
        // Two steps: the button asks, the second one cancels (API.md "Customers cancel").
        const sure = el('div', { class: 'confirm', hidden: true },
          el('p', {}, t('booking.cancelQuestion', { price: money(b.amount) })),
          el('button', { class: 'danger', type: 'button', onclick: async (e) => {
            const button = e.currentTarget;  // (null once the handler has awaited)
            button.disabled = true;
            try {
              await api.cancelBooking(id);
              shown = '';
              final = false;
              await load();
            } catch (err) { say(explain(err)); button.disabled = false; }
          } }, t('booking.cancelYes')),
          ' ',
          el('button', { type: 'button', onclick: () => { sure.hidden = true; ask.focus(); } }, t('booking.cancelNo')));
        const ask = el('button', { type: 'button', onclick: () => { sure.hidden = false; sure.querySelector('button:last-child').focus(); } },
          t('booking.cancel'));
        detail.append(el('p', {}, ask, ' ', el('small', {}, t('booking.cancelUntil', { time: when(new Date(refundable).toISOString(), showtime.timeZone) }))), sure);
      }
    } else if (b.status === 'REFUNDED') {
      final = true;
      fill(detail, seats, el('p', {}, cancelled
        ? `${CANCELLED} ${t('booking.refundedInFull')}`
        : t('booking.refunded')));
    } else {
      // FAILED: the payment failed (nothing taken), or it came after the seats were released
      // (then it is being refunded, and the page shows REFUNDED when it is).
      fill(detail, seats, el('p', {}, t('booking.failed')));
      announce(t('booking.failedAnnounce'));
      // The seat map's checkout key belongs to this finished booking: a new payment needs a new one.
      const held = store.get(`hold.${b.showtimeId}`);
      if (held && held.holdId === b.holdId && held.checkoutKey) store.set(`hold.${b.showtimeId}`, { ...held, checkoutKey: undefined });
      let hold = null;
      try { ({ data: hold } = await api.getHold(b.holdId)); } catch { hold = null; }
      if (left(nav)) return;
      if (hold && hold.status === 'HELD') {
        const remaining = el('strong', { class: 'countdown' });
        const again = el('button', { class: 'primary' }, t('booking.payAgain'));
        let key = randomKey();  // one key per attempt: a double click replays it
        let over = false;
        again.addEventListener('click', async () => {
          if (paying || over) return;
          paying = true;
          again.disabled = true;
          await payFor(b.holdId, key, (e) => {
            if (e.code !== 'HOLD_NOT_ACTIVE') return false;
            say(t('booking.heldTooShort'), 'info');
            return true;
          }, (k) => { key = k; }, kept && kept.email);
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
          if (ms <= 0) { clearInterval(timer); over = true; again.disabled = true; add(detail, el('p', {}, t('booking.holdEnded'))); }
        };
        const timer = every(250, upd);
        upd();
        add(detail, el('p', {}, tn('booking.stillHeld', { time: remaining })), el('div', { class: 'actions' }, again));
      } else {
        add(detail, el('p', {}, tn('booking.noLongerHeld', { link: el('a', { href: `#/showtimes/${b.showtimeId}` }, t('booking.chooseAgain')) })));
      }
    }
  };
  await load();
  if (left(nav)) return;
  // Every second for a minute, then every 5 s; a FAILED booking is still asked every 5 s
  // for 10 minutes (a late payment turns REFUNDED).
  let waited = 0;
  const timer = every(BOOKING_POLL_MS, () => {
    waited += BOOKING_POLL_MS;
    if (final || (shown === 'FAILED' && waited > 600000)) { clearInterval(timer); return; }
    if ((waited > 60000 || shown === 'FAILED') && waited % 5000) return;
    load();
  });
}

// ---- the customer's bookings and tickets --------------------------------------------------

async function myBookingsView(params, nav) {
  const cursor = params.get('cursor') || '';
  const back = params.getAll('back');
  fill(view(), el('h1', {}, t('bookings.title')), el('p', {}, t('loading')));
  let page;
  try { ({ data: page } = await api.myBookings(cursor)); } catch (e) {
    if (left(nav)) return;
    fill(view(), el('h1', {}, t('bookings.title')), el('p', {}, explain(e)));
    return;
  }
  if (left(nav)) return;
  const list = el('ul', { class: 'showtimes bookings' }, ...page.bookings.map((b) => el('li', { class: 'card' },
    el('h2', {}, el('a', { href: `#/bookings/${b.bookingId}` }, b.title)),
    el('p', {}, el('time', { datetime: b.startsAt }, when(b.startsAt))),
    el('p', {}, t('seats.list', { seats: seatList(b.seats), price: money(b.amount) })),
    el('p', {}, statusBadge(b.status), ' ', el('small', { class: 'muted' }, tn('bookings.order', { ref: el('span', { class: 'order-ref' }, orderRef(b.bookingId)) }))))));
  const pager = el('nav', { class: 'pager', 'aria-label': t('pager.label') });
  if (back.length) {
    const q = new URLSearchParams();
    const prev = back.slice(0, -1);
    if (back[back.length - 1]) q.set('cursor', back[back.length - 1]);
    for (const c of prev) q.append('back', c);
    add(pager, el('a', { href: `#/bookings?${q}` }, t('pager.newer')));
  }
  if (page.nextCursor) {
    const q = new URLSearchParams({ cursor: page.nextCursor });
    for (const c of [...back, cursor]) q.append('back', c);
    add(pager, el('a', { href: `#/bookings?${q}` }, t('pager.older')));
  }
  fill(view(), el('h1', {}, t('bookings.title')),
    page.bookings.length ? list : el('p', {}, tn('bookings.none', { link: el('a', { href: '#/' }, t('bookings.find')) })), pager);
}

// A confirmed booking's tickets: one QR code per seat, large enough to scan from a phone,
// with its code for typing; printed, one ticket per page (style.css, @media print).
async function ticketsOf(b, showtime, detail, nav) {
  let tickets;
  try { ({ data: { tickets } } = await api.tickets(b.bookingId)); } catch (e) {
    if (!left(nav)) add(detail, el('p', {}, explain(e)));
    return;
  }
  if (left(nav)) return;
  const reference = t('ticket.booking', { ref: orderRef(b.bookingId) });
  const heading = showtime ? `${showtime.title} · ${when(showtime.startsAt, showtime.timeZone)}` : reference;
  add(detail,
    el('div', { class: 'actions no-print' }, el('button', { onclick: () => window.print() }, t('ticket.print'))),
    el('ul', { class: 'tickets' }, ...tickets.map((ticket) => el('li', { class: 'ticket' },
      el('p', { class: 'ticket-show' }, heading),
      el('p', { class: 'ticket-seat' }, t('ticket.seat', { seat: ticket.seat })),
      el('img', { src: ticket.qr, alt: t('ticket.qr', { seat: ticket.seat }), width: '280', height: '280' }),
      el('p', { class: 'ticket-code' }, ticket.code),
      el('p', { class: 'muted' }, reference)))));
}

// ---- routing --------------------------------------------------------------------------

// The header: the admin link only for an administrator's token, sign-out for anyone signed
// in, and the current page marked for screen readers and the eye.
function showWho(path) {
  const c = claims();
  const who = document.getElementById('who');
  const admin = Boolean(c) && String(c.scope || '').split(' ').includes('admin');
  document.getElementById('nav-admin').hidden = !admin;
  for (const a of document.querySelectorAll('.top nav a')) {
    const target = a.getAttribute('href').slice(1);
    const current = target === '/' ? path === '/' || path.startsWith('/showtimes') : path.startsWith(target);
    if (current) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (!c) { who.textContent = t('header.signedOut'); return; }
  fill(who, el('button', { class: 'link', onclick: () => { setToken(''); showWho(path); } }, t('header.signOut')));
}

// The language switch in the header, each language named in its own words.
function languageSwitch() {
  const select = el('select', { id: 'language', 'aria-label': t('header.language'), onchange: () => switchLanguage(select.value) },
    ...Object.entries(LANGUAGES).map(([code, name]) => el('option', { value: code, lang: code, selected: code === LANG }, name)));
  document.getElementById('languages').replaceChildren(select);
}

async function route() {
  adoptTokenFromFragment();
  const nav = beginRoute();
  delete view().dataset.renderMs;
  delete view().dataset.frameMs;
  say('');
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?');
  showWho(path);
  const params = new URLSearchParams(query || '');
  let m;
  if ((m = path.match(/^\/showtimes\/(\d+)$/))) await showtimeView(m[1], nav);
  else if ((m = path.match(/^\/bookings\/(\d+)$/))) await bookingView(m[1], nav);
  else if (path === '/bookings') await myBookingsView(params, nav);
  else if (path === '/admin' || (m = path.match(/^\/admin\/showtimes\/(\d+)$/))) {
    // The admin pages and their words load when an admin page is opened: a customer's page
    // never carries them.
    const [{ adminView }, { adminShowtimeView }] = await Promise.all([import('./admin.js'), import('./adminshowtime.js')]);
    if (left(nav)) return;
    if (m) await adminShowtimeView(view(), m[1], nav, { say }); else adminView(view(), { say });
  }
  else await listView(params, nav);
  if (left(nav)) return;
  document.title = `${view().querySelector('h1')?.textContent || t('list.title')} · Boxoffice`;
}

translateStatic();
languageSwitch();
window.addEventListener('hashchange', route);
// The skip link moves focus to the page's content; it is not a route.
document.querySelector('.skip').addEventListener('click', (e) => { e.preventDefault(); view().focus(); });
route();
