// The admin page of one showtime (#/admin/showtimes/42, admin scope): its sales, the seats
// sold over time (an SVG drawn here, no third-party host), the edit form, the cancel with a
// confirmation that says how many bookings will be refunded, its bookings and its admin
// trail (API.md "Running a cinema (admin)").

import { api } from './api.js';
import { bookingWords, el, explain, fill, minorDigits, money, orderRef, seatList, when } from './format.js';
import { t } from './i18n.js';
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
  if (!sold.length) return el('p', { class: 'chart-empty' }, t('admin.chart.none'));
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
  const x = (at) => pad.left + ((at - t0) / (t1 - t0)) * (width - pad.left - pad.right);
  const y = (n) => height - pad.bottom - (n / total) * (height - pad.top - pad.bottom);
  let n = 0;
  const points = [`${x(t0)},${y(0)}`];
  for (const [at, seats] of sold) {
    points.push(`${x(at)},${y(n)}`);
    n += seats;
    points.push(`${x(at)},${y(n)}`);
  }
  const first = when(new Date(t0).toISOString(), zone);
  const last = when(new Date(sold[sold.length - 1][0]).toISOString(), zone);
  const chart = svg('svg', {
    class: 'sales-chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': t('admin.chart.label', { total, first, last }),
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
    fill(root, el('h1', {}, t('admin.showtime', { id })), el('p', {}, explain(e)));
    return;
  }
  if (left(nav)) return;
  const again = () => adminShowtimeView(root, id, nav, { say });
  const cancelled = s.status === 'CANCELLED';
  const currency = Object.values(s.prices)[0]?.currency || 'EUR';

  const figures = el('dl', { class: 'figures' },
    el('dt', {}, t('legend.seats')), el('dd', { 'data-figure': 'seats' }, t('admin.figures.seats', sales.seats)),
    el('dt', {}, t('admin.bookings')), el('dd', { 'data-figure': 'bookings' }, t('admin.figures.bookings', sales.bookings)),
    el('dt', {}, t('admin.revenue')), el('dd', { 'data-figure': 'revenue' }, money(sales.revenue)),
    el('dt', {}, t('admin.checkedIn')), el('dd', { 'data-figure': 'checked-in' }, String(sales.checkedIn)));
  const refundsFigure = el('dd', { 'data-figure': 'refunds' });
  const drawRefunds = (r) => {
    const total = r.issued + r.pending + r.refused;
    const toGo = r.pending + r.refused;
    fill(refundsFigure,
      el('progress', { max: total, value: r.issued, 'aria-label': t('admin.refunds.issuedLabel') }), ' ',
      toGo ? t('admin.refunds.progress', { issued: r.issued, total, toGo }) : t('admin.refunds.all', { total, n: total }),
      r.refused ? ` · ${t('admin.refunds.refused', { n: r.refused })}` : '');
  };
  if (sales.refunds.issued + sales.refunds.pending + sales.refunds.refused > 0) {
    figures.append(el('dt', {}, t('admin.refunds')), refundsFigure);
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
      if (minutes !== null && !(Number.isInteger(minutes) && minutes >= 0)) throw new Error(t('admin.edit.refundUntilInvalid'));
      if (minutes !== (s.refundUntilMinutesBefore ?? null)) body.refundUntilMinutesBefore = minutes;
      const prices = parsePrices(f.prices.value, currency);
      if (JSON.stringify(prices) !== JSON.stringify(s.prices)) body.prices = prices;
    } catch (err) { say(err.message); return; }
    if (!Object.keys(body).length) { say(t('admin.edit.unchanged'), 'info'); return; }
    try {
      await api.editShowtime(id, body);
      say(t('admin.edit.saved'), 'info');
      await again();
    } catch (err) { say(explain(err)); }
  } },
  el('h2', {}, t('admin.edit')),
  el('div', { class: 'field' }, el('label', { for: 'e-title' }, t('admin.form.title')), el('input', { id: 'e-title', name: 'title', value: s.title, required: true })),
  el('div', { class: 'field' }, el('label', { for: 'e-prices' }, t('admin.edit.prices', { currency })),
    el('input', { id: 'e-prices', name: 'prices', value: Object.entries(s.prices).map(([c, p]) => `${c} ${units(p.amount, p.currency)}`).join(', ') }),
    el('small', {}, t('admin.edit.pricesHint'))),
  el('div', { class: 'field' }, el('label', { for: 'e-refund' }, t('admin.edit.refundUntil')),
    el('input', { id: 'e-refund', name: 'refundUntil', inputmode: 'numeric', value: s.refundUntilMinutesBefore ?? '' }),
    el('small', {}, t('admin.edit.refundUntilHint'))),
  el('button', { class: 'primary', type: 'submit', disabled: cancelled }, t('admin.edit.save')));

  const cancelBox = el('div', { class: 'admin cancel-box' }, el('h2', {}, t('admin.cancel.title')));
  if (cancelled) {
    cancelBox.append(el('p', { class: 'cancelled-note' }, t('admin.cancel.done')));
  } else {
    const reason = el('input', { id: 'c-reason', name: 'reason', maxlength: 500, placeholder: t('admin.cancel.reasonExample') });
    const confirm = el('div', { class: 'confirm', hidden: true, role: 'alertdialog', 'aria-labelledby': 'c-question' },
      el('p', { id: 'c-question' },
        t('admin.cancel.question', { n: sales.bookings.confirmed, price: money(sales.revenue) })),
      el('button', { class: 'danger', type: 'button', onclick: async () => {
        try {
          const { data } = await api.cancelShowtime(id, reason.value.trim());
          say(t('admin.cancel.cancelled', { n: data.bookingsRefunded }), 'info');
          await again();
        } catch (err) { say(explain(err)); }
      } }, t('booking.cancelYes')),
      ' ',
      el('button', { type: 'button', onclick: () => { confirm.hidden = true; trigger.focus(); } }, t('admin.cancel.keep')));
    // The question takes the focus on its safe answer: a doubled Enter keeps the showtime.
    const trigger = el('button', { type: 'button', onclick: () => { confirm.hidden = false; confirm.querySelector('button:last-child').focus(); } }, t('admin.cancel.ask'));
    cancelBox.append(
      el('div', { class: 'field' }, el('label', { for: 'c-reason' }, t('admin.cancel.reason')), reason),
      trigger, confirm);
  }

  const statusFilter = el('select', { id: 'b-status', onchange: () => drawBookings() },
    ...['', 'CONFIRMED', 'PENDING', 'REFUNDED', 'FAILED'].map((v) => el('option', { value: v }, v ? bookingWords(v) : t('admin.bookings.all'))));
  const bookingsBox = el('div', { class: 'bookings-table' });
  const drawBookings = () => {
    const shown = bookings.filter((b) => !statusFilter.value || b.status === statusFilter.value);
    fill(bookingsBox, shown.length
      ? table([t('admin.col.booking'), t('admin.col.customer'), t('legend.seats'), t('admin.col.status'), t('admin.col.amount'), t('admin.col.made')],
        shown.map((b) => [`${orderRef(b.bookingId)} (${b.bookingId})`, String(b.customerId), seatList(b.seats), bookingWords(b.status), money(b.amount), when(b.createdAt, s.timeZone)]))
      : el('p', {}, t('admin.bookings.none')));
  };
  drawBookings();

  fill(root,
    el('h1', {}, s.title),
    el('p', { class: 'sub' }, `${t('admin.showtime', { id: s.showtimeId })} · ${s.cinema} · ${s.hall} · `, el('time', { datetime: s.startsAt }, when(s.startsAt, s.timeZone)),
      ' · ', el('strong', { class: 'badge status', 'data-status': s.status }, cancelled ? t('admin.status.cancelled') : t('admin.status.scheduled'))),
    el('p', {}, el('a', { href: '#/admin' }, t('map.allShowtimes'))),
    el('section', { 'aria-labelledby': 'h-sales' }, el('h2', { id: 'h-sales' }, t('admin.sales')), figures,
      el('h3', {}, t('admin.chart.title')), salesChart(bookings, s.timeZone)),
    el('div', { class: 'admin-grid' }, edit, cancelBox),
    el('section', { 'aria-labelledby': 'h-bookings' }, el('h2', { id: 'h-bookings' }, t('admin.bookings')),
      el('div', { class: 'field' }, el('label', { for: 'b-status' }, t('admin.col.status')), statusFilter),
      bookings.more ? el('p', { class: 'closed-note' }, t('admin.bookings.cut', { n: bookings.length, id })) : null,
      bookingsBox),
    el('section', { 'aria-labelledby': 'h-changes' }, el('h2', { id: 'h-changes' }, t('admin.changes')),
      changes.length
        ? table([t('admin.col.when'), t('admin.col.who'), t('admin.col.what'), t('admin.col.before'), t('admin.col.after')],
          changes.map((c) => [when(c.at, s.timeZone), t('admin.actor', { id: c.actor }), c.action, compact(c.before), compact(c.after)]))
        : el('p', {}, t('admin.changes.none'))));
}

// The admin home's list: the next showtimes with their sales, each linking to its page.
export async function showtimesWithSales(box) {
  const { data } = await api.showtimes({ limit: 20 });
  const rows = await Promise.all(data.showtimes.map(async (s) => {
    let figures = '';
    try {
      const { data: sales } = await api.sales(s.showtimeId);
      figures = t('admin.list.sales', { booked: sales.seats.booked, seats: s.seatCount, price: money(sales.revenue) });
    } catch (e) {
      if (e.code === 'FORBIDDEN' || e.code === 'UNAUTHENTICATED') throw e;
      figures = explain(e);
    }
    return [el('a', { href: `#/admin/showtimes/${s.showtimeId}` }, s.title), when(s.startsAt, s.timeZone),
      s.status === 'CANCELLED' ? t('admin.status.cancelled') : t('admin.status.scheduled'), figures];
  }));
  fill(box, rows.length ? table([t('map.showtime'), t('admin.col.starts'), t('admin.col.status'), t('admin.sales')], rows) : el('p', {}, t('admin.list.none')));
}
