// The admin page of one showtime (#/admin/showtimes/42, admin scope): its sales, the seats
// sold over time (an SVG drawn here, no third-party host), the edit form, the cancel with a
// confirmation that says how many bookings will be refunded, its bookings and its admin
// trail (API.md "Running a cinema (admin)").

import { api } from './api.js';
import { BOOKING_WORDS, el, explain, fill, minorDigits, money, orderRef, seatList, when } from './format.js';
import { later, left } from './page.js';
import { parsePrices } from './admin.js';

const PAGE = 500;
const MAX_PAGES = 4;  // 2,000 bookings (failed and refunded ones count too): said when cut
const REFUNDS_POLL_MS = 2000;  // how often refunds under way are looked at again

// The showtime's bookings, page by page (at most MAX_PAGES; out.more says some were left).
async function allBookings(id) {
  const out = [];
  let cursor = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { data } = await api.showtimeBookings(id, cursor ? { limit: PAGE, cursor } : { limit: PAGE });
    out.push(...data.bookings);
    cursor = data.nextCursor;
    if (!cursor) break;
  }
  out.more = Boolean(cursor);
  return out;
}

// An amount of minor units as typed in the edit form: 1250 EUR → "12.50", 1800 JPY → "1800".
function units(amount, currency) {
  const d = minorDigits(currency);
  const digits = String(amount).padStart(d + 1, '0');
  return d ? `${digits.slice(0, -d)}.${digits.slice(-d)}` : digits;
}

// Seats sold (confirmed bookings) over time, as a step line from the first sale to the last.
export function salesChart(bookings, zone, width = 560, height = 160) {
  const sold = bookings.filter((b) => b.status === 'CONFIRMED')
    .map((b) => [Date.parse(b.createdAt), b.seats.length]).sort((a, b) => a[0] - b[0]);
  if (!sold.length) return el('p', { class: 'chart-empty' }, 'No seats sold yet.');
  const ns = 'http://www.w3.org/2000/svg';
  const svg = (tag, attrs, text) => {
    const node = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const total = sold.reduce((n, [, seats]) => n + seats, 0);
  const t0 = sold[0][0];
  const t1 = Math.max(sold[sold.length - 1][0], t0 + 1);
  const pad = { left: 40, right: 10, top: 10, bottom: 24 };
  const x = (t) => pad.left + ((t - t0) / (t1 - t0)) * (width - pad.left - pad.right);
  const y = (n) => height - pad.bottom - (n / total) * (height - pad.top - pad.bottom);
  let n = 0;
  const points = [`${x(t0)},${y(0)}`];
  for (const [t, seats] of sold) {
    points.push(`${x(t)},${y(n)}`);
    n += seats;
    points.push(`${x(t)},${y(n)}`);
  }
  const first = when(new Date(t0).toISOString(), zone);
  const last = when(new Date(sold[sold.length - 1][0]).toISOString(), zone);
  const chart = svg('svg', {
    class: 'sales-chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': `Seats sold over time: ${total} from ${first} to ${last}`,
  });
  chart.append(
    svg('line', { x1: pad.left, y1: y(0), x2: width - pad.right, y2: y(0), class: 'axis' }),
    svg('line', { x1: pad.left, y1: y(0), x2: pad.left, y2: y(total), class: 'axis' }),
    svg('polyline', { points: points.join(' '), class: 'sold', fill: 'none' }),
    svg('text', { x: pad.left - 6, y: y(total) + 4, 'text-anchor': 'end' }, String(total)),
    svg('text', { x: pad.left - 6, y: y(0) + 4, 'text-anchor': 'end' }, '0'),
    svg('text', { x: pad.left, y: height - 6 }, first),
    svg('text', { x: width - pad.right, y: height - 6, 'text-anchor': 'end' }, last));
  return chart;
}

const table = (head, rows) => el('table', {},
  el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h)))),
  el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, c))))));

const compact = (v) => (v && Object.keys(v).length ? JSON.stringify(v) : '');

export async function adminShowtimeView(root, id, nav, { say }) {
  let s, sales, bookings, changes;
  try {
    [{ data: s }, { data: sales }, bookings, { data: { changes } }] = await Promise.all([
      api.showtime(id), api.sales(id), allBookings(id), api.changes(id)]);
  } catch (e) {
    if (left(nav)) return;
    fill(root, el('h1', {}, `Showtime ${id}`), el('p', {}, explain(e)));
    return;
  }
  if (left(nav)) return;
  const again = () => adminShowtimeView(root, id, nav, { say });
  const cancelled = s.status === 'CANCELLED';
  const currency = Object.values(s.prices)[0]?.currency || 'EUR';

  const figures = el('dl', { class: 'figures' },
    el('dt', {}, 'Seats'), el('dd', { 'data-figure': 'seats' },
      `${sales.seats.booked} sold · ${sales.seats.held} held · ${sales.seats.available} free`),
    el('dt', {}, 'Bookings'), el('dd', { 'data-figure': 'bookings' },
      `${sales.bookings.confirmed} paid · ${sales.bookings.pending} paying · ${sales.bookings.refunded} refunded · ${sales.bookings.failed} failed`),
    el('dt', {}, 'Revenue'), el('dd', { 'data-figure': 'revenue' }, money(sales.revenue)),
    el('dt', {}, 'Admitted at the door'), el('dd', { 'data-figure': 'checked-in' }, String(sales.checkedIn)));
  const refundsFigure = el('dd', { 'data-figure': 'refunds' });
  const drawRefunds = (r) => {
    const total = r.issued + r.pending + r.refused;
    const toGo = r.pending + r.refused;
    fill(refundsFigure,
      el('progress', { max: total, value: r.issued, 'aria-label': 'Refunds issued' }), ' ',
      toGo ? `${r.issued} of ${total} issued · ${toGo} to go` : `All ${total} issued`,
      r.refused ? ` · ${r.refused} refused by the gateway (retried; see the refund worker's log)` : '');
  };
  if (sales.refunds.issued + sales.refunds.pending + sales.refunds.refused > 0) {
    figures.append(el('dt', {}, 'Refunds'), refundsFigure);
    drawRefunds(sales.refunds);
    // While refunds are under way the figure follows the refund worker, until this page is left.
    const follow = async () => {
      if (left(nav) || !refundsFigure.isConnected) return;
      try {
        const { data } = await api.sales(id);
        drawRefunds(data.refunds);
        if (data.refunds.pending + data.refunds.refused === 0) return;
      } catch { /* the next look tries again */ }
      later(REFUNDS_POLL_MS, follow);
    };
    if (sales.refunds.pending + sales.refunds.refused > 0) later(REFUNDS_POLL_MS, follow);
  }

  const edit = el('form', { class: 'admin', onsubmit: async (e) => {
    e.preventDefault();
    const f = edit.elements;
    const body = {};
    try {
      if (f.title.value.trim() !== s.title) body.title = f.title.value.trim();
      const until = f.refundUntil.value.trim();
      const minutes = until === '' ? null : Number(until);
      if (minutes !== null && !(Number.isInteger(minutes) && minutes >= 0)) throw new Error('Refunds until: a whole number of minutes, or empty for none.');
      if (minutes !== (s.refundUntilMinutesBefore ?? null)) body.refundUntilMinutesBefore = minutes;
      const prices = parsePrices(f.prices.value, currency);
      if (JSON.stringify(prices) !== JSON.stringify(s.prices)) body.prices = prices;
    } catch (err) { say(err.message); return; }
    if (!Object.keys(body).length) { say('Nothing changed.', 'info'); return; }
    try {
      await api.editShowtime(id, body);
      say('Saved.', 'info');
      await again();
    } catch (err) { say(explain(err)); }
  } },
  el('h2', {}, 'Edit'),
  el('div', { class: 'field' }, el('label', { for: 'e-title' }, 'Title'), el('input', { id: 'e-title', name: 'title', value: s.title, required: true })),
  el('div', { class: 'field' }, el('label', { for: 'e-prices' }, `Prices (${currency})`),
    el('input', { id: 'e-prices', name: 'prices', value: Object.entries(s.prices).map(([c, p]) => `${c} ${units(p.amount, p.currency)}`).join(', ') }),
    el('small', {}, 'Prices change only until the first seat is held.')),
  el('div', { class: 'field' }, el('label', { for: 'e-refund' }, 'Customers may cancel until (minutes before the start)'),
    el('input', { id: 'e-refund', name: 'refundUntil', inputmode: 'numeric', value: s.refundUntilMinutesBefore ?? '' }),
    el('small', {}, 'Empty: customers cannot cancel.')),
  el('button', { class: 'primary', type: 'submit', disabled: cancelled }, 'Save changes'));

  const cancelBox = el('div', { class: 'admin cancel-box' }, el('h2', {}, 'Cancel the showtime'));
  if (cancelled) {
    cancelBox.append(el('p', { class: 'cancelled-note' }, 'This showtime was cancelled; its paid bookings are refunded.'));
  } else {
    const reason = el('input', { id: 'c-reason', name: 'reason', maxlength: 500, placeholder: 'Projector broken' });
    const confirm = el('div', { class: 'confirm', hidden: true, role: 'alertdialog', 'aria-labelledby': 'c-question' },
      el('p', { id: 'c-question' },
        `This cancels the showtime and refunds ${sales.bookings.confirmed} ${sales.bookings.confirmed === 1 ? 'booking' : 'bookings'} (${money(sales.revenue)}). Customers paying now are refunded if they pay. It cannot be undone.`),
      el('button', { class: 'danger', type: 'button', onclick: async () => {
        try {
          const { data } = await api.cancelShowtime(id, reason.value.trim());
          say(`Cancelled: ${data.bookingsRefunded} ${data.bookingsRefunded === 1 ? 'booking is' : 'bookings are'} being refunded.`, 'info');
          await again();
        } catch (err) { say(explain(err)); }
      } }, 'Yes, cancel and refund'),
      ' ',
      el('button', { type: 'button', onclick: () => { confirm.hidden = true; trigger.focus(); } }, 'Keep it'));
    // The question takes the focus on its safe answer: a doubled Enter keeps the showtime.
    const trigger = el('button', { type: 'button', onclick: () => { confirm.hidden = false; confirm.querySelector('button:last-child').focus(); } }, 'Cancel showtime…');
    cancelBox.append(
      el('div', { class: 'field' }, el('label', { for: 'c-reason' }, 'Reason (for the trail)'), reason),
      trigger, confirm);
  }

  const statusFilter = el('select', { id: 'b-status', onchange: () => drawBookings() },
    ...['', 'CONFIRMED', 'PENDING', 'REFUNDED', 'FAILED'].map((v) => el('option', { value: v }, v ? BOOKING_WORDS[v] : 'All')));
  const bookingsBox = el('div', { class: 'bookings-table' });
  const drawBookings = () => {
    const shown = bookings.filter((b) => !statusFilter.value || b.status === statusFilter.value);
    fill(bookingsBox, shown.length
      ? table(['Booking', 'Customer', 'Seats', 'Status', 'Amount', 'Made'],
        shown.map((b) => [`${orderRef(b.bookingId)} (${b.bookingId})`, String(b.customerId), seatList(b.seats), BOOKING_WORDS[b.status] || b.status, money(b.amount), when(b.createdAt, s.timeZone)]))
      : el('p', {}, 'No bookings.'));
  };
  drawBookings();

  fill(root,
    el('h1', {}, s.title),
    el('p', { class: 'sub' }, `Showtime ${s.showtimeId} · ${s.cinema} · ${s.hall} · `, el('time', { datetime: s.startsAt }, when(s.startsAt, s.timeZone)),
      ' · ', el('strong', { class: 'status', 'data-status': s.status }, cancelled ? 'Cancelled' : 'Scheduled')),
    el('p', {}, el('a', { href: '#/admin' }, 'All showtimes')),
    el('section', { 'aria-labelledby': 'h-sales' }, el('h2', { id: 'h-sales' }, 'Sales'), figures,
      el('h3', {}, 'Seats sold over time'), salesChart(bookings, s.timeZone)),
    el('div', { class: 'admin-grid' }, edit, cancelBox),
    el('section', { 'aria-labelledby': 'h-bookings' }, el('h2', { id: 'h-bookings' }, 'Bookings'),
      el('div', { class: 'field' }, el('label', { for: 'b-status' }, 'Status'), statusFilter),
      bookings.more ? el('p', { class: 'closed-note' }, `The first ${bookings.length} bookings are shown (and charted); the API lists the rest (GET /admin/showtimes/${id}/bookings).`) : null,
      bookingsBox),
    el('section', { 'aria-labelledby': 'h-changes' }, el('h2', { id: 'h-changes' }, 'Changes'),
      changes.length
        ? table(['When', 'Who', 'What', 'Before', 'After'],
          changes.map((c) => [when(c.at, s.timeZone), `Admin ${c.actor}`, c.action, compact(c.before), compact(c.after)]))
        : el('p', {}, 'No changes yet.')));
}

// The admin home's list: the next showtimes with their sales, each linking to its page.
export async function showtimesWithSales(box) {
  const { data } = await api.showtimes({ limit: 20 });
  const rows = await Promise.all(data.showtimes.map(async (s) => {
    let figures = '';
    try {
      const { data: sales } = await api.sales(s.showtimeId);
      figures = `${sales.seats.booked} of ${s.seatCount} sold · ${money(sales.revenue)}`;
    } catch (e) {
      if (e.code === 'FORBIDDEN' || e.code === 'UNAUTHENTICATED') throw e;
      figures = explain(e);
    }
    return [el('a', { href: `#/admin/showtimes/${s.showtimeId}` }, s.title), when(s.startsAt, s.timeZone),
      s.status === 'CANCELLED' ? 'Cancelled' : 'Scheduled', figures];
  }));
  fill(box, rows.length ? table(['Showtime', 'Starts', 'Status', 'Sales'], rows) : el('p', {}, 'No showtimes to come.'));
}
