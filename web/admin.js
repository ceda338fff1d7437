// The admin page: create a showtime from rows, aisles, categories and prices, and switch a
// showtime's waiting room on or off. It needs a token with the admin scope
// (boxoffice token --admin), taken from the URL fragment like a customer's.
//
// The operator writes what the cinema's own posters say: its local date and time, in its
// time zone, and prices in the currency's units (12.50 EUR, 1800 JPY). The page sends what
// the API wants: the UTC instant (timezone.js) with the zone as "timeZone", and integers of
// minor units counted from the digits typed (format.js, toMinorUnits).

import { api } from './api.js';
import { el, explain, fill, isCurrency, toMinorUnits, when } from './format.js';
import { COMMON_ZONES, browserZone, isZone, wallTimeAt, wallTimeToUtc, zoneName } from './timezone.js';
import { showtimesWithSales } from './adminshowtime.js';
import { loadStrings, t } from './i18n.js';

await loadStrings('admin');  // the admin pages' words (strings-admin-en.js …)

const DAY_MS = 86400000;

// "A-C 20 standard aisles=5,15 accessible=1,2" → rows A, B and C of 20 standard seats.
export function parseRows(text) {
  const rows = [];
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  for (const line of lines) {
    const m = line.match(/^([A-Z]{1,3})(?:-([A-Z]{1,3}))?\s+(\d+)\s+([a-z0-9_-]+)((?:\s+\w+=[\d,]+)*)$/i);
    if (!m) throw new Error(t('admin.rows.unreadable', { line }));
    const [, from, to, seats, category, extra] = m;
    const options = {};
    for (const opt of extra.trim().split(/\s+/).filter(Boolean)) {
      const [k, v] = opt.split('=');
      if (k !== 'aisles' && k !== 'accessible') throw new Error(t('admin.rows.unknownOption', { option: k }));
      options[k] = v.split(',').filter(Boolean).map(Number);
    }
    for (const row of rowRange(from.toUpperCase(), (to || from).toUpperCase())) {
      rows.push({ row, seats: Number(seats), category, ...options });
    }
  }
  return rows;
}

// Rows are letters counted like spreadsheet columns: A … Z, AA, AB … ZZ, AAA …
const rowNumber = (label) => [...label].reduce((n, c) => n * 26 + c.charCodeAt(0) - 64, 0);
function rowLabel(n) {
  let label = '';
  for (; n > 0; n = Math.floor((n - 1) / 26)) label = String.fromCharCode(65 + ((n - 1) % 26)) + label;
  return label;
}
function rowRange(from, to) {
  const out = [];
  for (let n = rowNumber(from); n <= rowNumber(to); n++) out.push(rowLabel(n));
  if (!out.length) throw new Error(t('admin.rows.empty', { from, to }));
  if (out.length > 200) throw new Error(t('admin.rows.tooMany', { from, to }));
  return out;
}

// "standard 12.50, premium 18" → {standard: {amount: 1250, currency}, …}, in the
// currency's minor units: "standard 1800" in JPY is 1800, "standard 12.345" in KWD 12345.
export function parsePrices(text, currency) {
  if (!isCurrency(currency)) throw new Error(t('admin.prices.unknownCurrency', { currency }));
  const prices = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = part.match(/^([a-z0-9_-]+)\s+(\S+)$/i);
    if (!m) throw new Error(t('admin.prices.unreadable', { part }));
    try {
      prices[m[1]] = { amount: toMinorUnits(m[2], currency), currency };
    } catch (err) { throw new Error(t('admin.prices.invalid', { part, reason: err.message })); }
  }
  return prices;
}

// The start typed for the cinema's zone → the UTC instant (ms), or an Error saying why not.
export function startOf(text, zone, now) {
  if (!isZone(zone)) throw new Error(t('admin.zone.unknown', { zone }));
  const at = wallTimeToUtc(text, zone);
  if (Number.isNaN(at)) throw new Error(t('admin.start.missing'));
  if (at <= now) throw new Error(t('admin.start.past', { time: when(new Date(at).toISOString(), zone) }));
  return at;
}

function field(label, input, hint) {
  const id = `f-${input.name}`;
  input.id = id;
  return el('div', { class: 'field' }, el('label', { for: id }, label), input,
    hint instanceof Node ? hint : hint ? el('small', {}, hint) : null);
}

export function adminView(root, { say }) {
  const zone = browserZone();
  // A week from now, on the hour, as the cinema's clock (first guess: this browser's zone).
  const local = `${wallTimeAt(Date.now() + 7 * DAY_MS, zone).slice(0, 13)}:00`;
  const created = el('p', { class: 'result', 'aria-live': 'polite' });
  // What the typed start is, said back in the zone's terms and in UTC: at a change of the
  // clocks the operator sees which instant is meant.
  const preview = el('small', { class: 'preview', id: 'start-preview', 'data-utc': '' });
  const showPreview = () => {
    const f = create.elements;
    const z = f.timeZone.value.trim();
    const at = isZone(z) ? wallTimeToUtc(f.startsAt.value, z) : NaN;
    if (Number.isNaN(at)) { preview.textContent = isZone(z) ? '' : t('admin.zone.unknownShort'); preview.dataset.utc = ''; return; }
    const iso = new Date(at).toISOString();
    preview.dataset.utc = iso;
    const moved = wallTimeAt(at, z) !== f.startsAt.value.slice(0, 16);
    const utc = `${when(iso, z)} (${iso.slice(0, 16).replace('T', ' ')} UTC)`;
    preview.textContent = moved ? t('admin.start.skipped', { utc, time: f.startsAt.value.slice(11, 16) }) : utc;
  };
  const create = el('form', { class: 'admin', oninput: showPreview, onsubmit: async (e) => {
    e.preventDefault();
    const f = create.elements;
    let body;
    try {
      const timeZone = f.timeZone.value.trim();
      body = {
        title: f.title.value.trim(), cinema: f.cinema.value.trim(), hall: f.hall.value.trim(),
        startsAt: new Date(startOf(f.startsAt.value, timeZone, Date.now())).toISOString(),
        timeZone: zoneName(timeZone),
        rows: parseRows(f.rows.value),
        prices: parsePrices(f.prices.value, f.currency.value.trim().toUpperCase()),
      };
    } catch (err) { say(err.message); return; }
    try {
      const { data } = await api.createShowtime(body);
      say('');
      fill(created, t('admin.created'), ' ', el('a', { href: `#/showtimes/${data.showtimeId}` }, `#${data.showtimeId}`));
      room.elements.showtimeId.value = data.showtimeId;
    } catch (err) { say(explain(err)); }
  } },
  el('h2', {}, t('admin.new')),
  field(t('admin.form.title'), el('input', { name: 'title', required: true, value: 'Dune: Part Three' })),
  field(t('list.cinema'), el('input', { name: 'cinema', required: true, value: 'Odeon Leicester Square' })),
  field(t('admin.form.hall'), el('input', { name: 'hall', required: true, value: 'Screen 1' })),
  field(t('admin.form.startsAt'), el('input', { name: 'startsAt', type: 'datetime-local', required: true, value: local, 'aria-describedby': 'start-preview' }), preview),
  field(t('admin.form.zone'), el('input', { name: 'timeZone', required: true, value: zone, list: 'zones', autocomplete: 'off', spellcheck: 'false' }),
    t('admin.form.zoneHint')),
  el('datalist', { id: 'zones' }, ...[...new Set([zone, ...COMMON_ZONES])].filter(isZone).map((z) => el('option', { value: z }))),
  field(t('admin.form.rows'), el('textarea', { name: 'rows', rows: 4, required: true }, 'A-B 16 premium aisles=4,12\nC-J 20 standard aisles=5,15 accessible=1,2'),
    t('admin.form.rowsHint')),
  field(t('legend.prices'), el('input', { name: 'prices', required: true, value: 'standard 12.50, premium 18.00' }),
    t('admin.form.pricesHint')),
  field(t('admin.form.currency'), el('input', { name: 'currency', required: true, value: 'EUR', maxlength: 3, size: 4 })),
  el('button', { class: 'primary', type: 'submit' }, t('admin.form.create')), created);

  const roomResult = el('p', { class: 'result', 'aria-live': 'polite' });
  const room = el('form', { class: 'admin', onsubmit: async (e) => {
    e.preventDefault();
    const f = room.elements;
    try {
      await api.waitingRoom(f.showtimeId.value, {
        enabled: f.enabled.checked,
        activeLimit: Number(f.activeLimit.value),
        admissionTtlSeconds: Number(f.admissionTtlSeconds.value),
      });
      say('');
      roomResult.textContent = t(f.enabled.checked ? 'admin.room.on' : 'admin.room.off', { id: f.showtimeId.value });
    } catch (err) { say(explain(err)); }
  } },
  el('h2', {}, t('queue.title')),
  field(t('admin.room.showtimeId'), el('input', { name: 'showtimeId', required: true, inputmode: 'numeric', pattern: '[0-9]+' })),
  el('div', { class: 'field' }, el('label', {}, el('input', { name: 'enabled', type: 'checkbox', checked: true }), ' ', t('admin.room.enabled'))),
  field(t('admin.room.activeLimit'), el('input', { name: 'activeLimit', type: 'number', min: 1, value: 500 })),
  field(t('admin.room.admission'), el('input', { name: 'admissionTtlSeconds', type: 'number', min: 1, value: 900 })),
  el('button', { class: 'primary', type: 'submit' }, t('admin.room.apply')), roomResult);

  const list = el('div', { class: 'showtime-sales', 'aria-live': 'polite' }, el('p', {}, t('loading')));
  fill(root, el('h1', {}, t('header.admin')),
    el('p', {}, t('admin.needsToken')),
    el('section', { 'aria-labelledby': 'h-showtimes' }, el('h2', { id: 'h-showtimes' }, t('list.title')), list),
    el('div', { class: 'admin-grid' }, create, room));
  showPreview();
  showtimesWithSales(list).catch((err) => fill(list, el('p', {},
    err.code === 'FORBIDDEN' || err.code === 'UNAUTHENTICATED' ? t('admin.salesAdminsOnly') : explain(err))));
}
