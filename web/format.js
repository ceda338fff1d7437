// Money, times and the words the page shows for every refusal of the API.

import { LOCALE, t } from './i18n.js';
import { zoneOf } from './timezone.js';

// Amounts are integers in the currency's minor unit (API.md): 1250 EUR is 12.50 EUR, 1800
// JPY is 1800 JPY, 12345 KWD is 12.345 KWD. How many digits a currency's minor unit has is
// what Intl says (JPY 0, EUR 2, KWD 3), the same rule where the admin page reads a price.
const digits = new Map();
export function minorDigits(currency) {
  if (!digits.has(currency)) {
    let d = 2;
    try { d = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits; } catch { d = 2; }
    digits.set(currency, d);
  }
  return digits.get(currency);
}

// True for a three-letter code Intl knows as a currency (not merely well formed).
export function isCurrency(code) {
  if (!/^[A-Z]{3}$/.test(code)) return false;
  return !Intl.supportedValuesOf || Intl.supportedValuesOf('currency').includes(code);
}

// A decimal as typed ("12.50", "1800", "12.345") → the integer of minor units, from its
// digits (no floating point: 12.5 * 100 is not always 1250 in binary). Throws an Error that
// says what is wrong: not a number, or more decimals than the currency has.
export function toMinorUnits(text, currency) {
  const d = minorDigits(currency);
  const m = /^(\d+)(?:\.(\d+))?$/.exec(String(text).trim());
  if (!m) throw new Error(t('amount.notAmount', { text }));
  const fraction = (m[2] || '').replace(/0+$/, '');
  if (fraction.length > d) {
    throw new Error(d === 0 ? t('amount.noMinorUnit', { currency, text }) : t('amount.tooManyDecimals', { currency, text, n: d }));
  }
  const amount = Number(m[1] + fraction.padEnd(d, '0'));
  if (!Number.isSafeInteger(amount)) throw new Error(t('amount.tooLarge', { text }));
  return amount;
}

const moneyFormats = new Map();  // currency → Intl.NumberFormat, made once per currency
export function money(m) {
  if (!m) return '';
  let f = moneyFormats.get(m.currency);
  if (f === undefined) {
    try { f = new Intl.NumberFormat(LOCALE, { style: 'currency', currency: m.currency }); } catch { f = null; }
    moneyFormats.set(m.currency, f);
  }
  // The decimal is written from the integer's digits, and Intl reads a string as an exact
  // decimal: no division in binary floating point on the way.
  const d = minorDigits(m.currency);
  const units = String(Math.abs(Math.trunc(m.amount))).padStart(d + 1, '0');
  const decimal = `${m.amount < 0 ? '-' : ''}${d ? `${units.slice(0, -d)}.${units.slice(-d)}` : units}`;
  return f ? f.format(decimal) : `${decimal} ${m.currency || ''}`.trim();
}

// An instant of a showtime as the cinema's clock shows it, with the zone's short name:
// when(s.startsAt, s.timeZone) is "Fri, Dec 18, 07:30 PM GMT+9" for a cinema in Tokyo,
// whatever the browser's own zone. A missing or unknown zone is UTC (API.md).
// dayOf says the day ("Friday 18 December"), timeOf the time ("19:30 GMT+9"), dayKey the
// date ("2026-12-18"), each on the cinema's clock.
const FORMATS = {
  when: { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' },
  day: { weekday: 'long', day: 'numeric', month: 'long' },
  time: { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' },
  key: { year: 'numeric', month: '2-digit', day: '2-digit' },
};
const dateFormats = new Map();  // kind and zone → Intl.DateTimeFormat, made once each
function onClock(kind, iso, zone) {
  const timeZone = zoneOf({ timeZone: zone });
  let f = dateFormats.get(`${kind} ${timeZone}`);
  if (!f) {
    // The key is ISO's order whatever the language: Canadian English writes 2026-12-18.
    f = new Intl.DateTimeFormat(kind === 'key' ? 'en-CA' : LOCALE, { ...FORMATS[kind], timeZone });
    dateFormats.set(`${kind} ${timeZone}`, f);
  }
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : f.format(d);
}
export const when = (iso, zone) => onClock('when', iso, zone);
export const dayOf = (iso, zone) => onClock('day', iso, zone);
export const timeOf = (iso, zone) => onClock('time', iso, zone);
export const dayKey = (iso, zone) => onClock('key', iso, zone);

// A booking's order reference (the same as the e-mail's, src/domain/booking.h): the id in
// Crockford's base 32, at least six characters in groups of three; booking 15 is "000-00F".
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export function orderRef(id) {
  let n = BigInt(id);
  let digits = '';
  while (n > 0n || digits.length < 6) { digits = CROCKFORD[Number(n % 32n)] + digits; n /= 32n; }
  return digits.replace(/\B(?=(.{3})+$)/g, '-');
}

// A booking's status in the customer's words (the API's code stays in data-status).
export function bookingWords(status) {
  switch (status) {
    case 'PENDING': return t('booking.status.pending');
    case 'CONFIRMED': return t('booking.status.confirmed');
    case 'FAILED': return t('booking.status.failed');
    case 'REFUNDED': return t('booking.status.refunded');
    default: return status;
  }
}
export function statusBadge(status) {
  return el('span', { class: 'badge status', 'data-status': status }, bookingWords(status));
}

export function clock(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

// Seat codes in the hall's order: by row (A … Z, AA …), then by number.
export function seatList(seats) {
  const key = (c) => { const m = /^([A-Z]+)(\d+)$/.exec(c) || [c, c, '0']; return [m[1].length, m[1], Number(m[2])]; };
  return [...seats].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) || x[2] - y[2];
  }).join(', ');
}

// A node's children replaced by (fill) or followed by (add) the given ones, skipping null,
// undefined and false: the DOM's own replaceChildren and append would show them as the
// text "null". Every view builds its content through these and el, so a part that is
// there only sometimes is written `cond ? el(…) : null`.
const present = (children) => children.flat().filter((c) => c !== null && c !== undefined && c !== false);
export function fill(node, ...children) { node.replaceChildren(...present(children)); return node; }
export function add(node, ...children) { node.append(...present(children)); return node; }

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of present(children)) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

export const SALES_CLOSED = t('sales.closed');
export const CANCELLED = t('showtime.cancelled');

// What to tell the customer for an ApiError, by the API's code.
export function explain(e) {
  const b = e.body || {};
  const seats = Array.isArray(b.seats) && b.seats.length ? seatList(b.seats) : '';
  const n = Array.isArray(b.seats) ? b.seats.length : 0;
  switch (e.code) {
    case 'SEATS_UNAVAILABLE': return seats ? t('error.seatsTaken', { seats, n }) : t('error.seatsUnavailable');
    case 'SINGLE_SEAT_GAP': return t('error.singleSeatGap', { seats, n });
    case 'UNKNOWN_SEATS': return t('error.unknownSeats', { seats });
    case 'RATE_LIMITED': return t('error.rateLimited', { n: e.retryAfter || 60 });
    case 'HOLD_LIMIT': return t('error.holdLimit');
    case 'NOT_ADMITTED': return t('error.notAdmitted');
    case 'SALES_CLOSED': return SALES_CLOSED;
    case 'SHOWTIME_CANCELLED': return CANCELLED;
    case 'SOLD_OUT': return t('error.soldOut');
    case 'NOT_REFUNDABLE': return t('error.notRefundable');
    case 'HOLD_NOT_ACTIVE': return t('error.holdNotActive');
    case 'CHECKOUT_EXISTS': return t('error.checkoutExists');
    case 'IDEMPOTENCY_IN_PROGRESS': return t('error.checkoutInProgress');
    case 'IDEMPOTENCY_KEY_REUSED': return t('error.checkoutKeyReused');
    case 'IDEMPOTENCY_KEY_REQUIRED': return t('error.checkoutIncomplete');
    case 'UNAUTHENTICATED': return t('error.unauthenticated');
    case 'FORBIDDEN': return t('error.forbidden');
    case 'NOT_FOUND': return t('error.notFound');
    case 'VALIDATION_FAILED': return t('error.validation', { reason: e.message });
    case 'BAD_JSON': return t('error.badJson');
    case 'PAYLOAD_TOO_LARGE': return t('error.tooLarge');
    case 'UNAVAILABLE': return t('error.unavailable');
    case 'NETWORK': return t('error.network');
    default: return e.message || t('error.other');
  }
}
