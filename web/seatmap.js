// The seat map: one button per seat, rows in the hall's order with their aisles, a legend
// of categories and prices. Keyboard: the map is one tab stop; arrow keys move between
// seats, Home/End to a row's ends, Space or Enter selects. Every seat's label says what a
// sighted customer sees ("Row F, seat 5, standard, €12.50, available"); states differ by
// shape and pattern as well as by colour.

import { el, fill, money } from './format.js';
import { t, template } from './i18n.js';

export const MAX_SEATS = 8;
const ZOOM_STEP = 1.4;
const MIN_SEAT_PX = 20;
const MAX_SEAT_PX = 56;  // zoomed in, a seat is larger than the 44 px a finger needs

const STATE_CLASS = {
  AVAILABLE: 'st-available', HELD: 'st-held', BOOKED: 'st-booked', selected: 'st-selected', mine: 'st-mine',
};
const STATE_WORDS = {
  AVAILABLE: t('seat.state.available'), HELD: t('seat.state.taken'), BOOKED: t('seat.state.sold'),
  selected: t('seat.state.selected'), mine: t('seat.state.mine'),
};

// A category's colour (style.css --cat-0 … --cat-7) follows its name, so "premium" looks the
// same in every hall and every show: a hash of the lower-cased name (FNV-1a) picks one of
// eight. Two of a hall's categories that would share one are told apart by the next free
// colour, the names taken in alphabetical order, so a hall's colours never depend on the
// order its seats arrive in. Beyond eight categories colours repeat (names and prices are in
// the legend and every seat's label).
export const CATEGORY_COLOURS = 8;
export function categoryColours(names) {
  const taken = new Set();
  const colours = new Map();
  for (const name of [...new Set(names)].sort()) {
    let h = 0x811c9dc5;
    for (const ch of name.toLowerCase()) { h ^= ch.codePointAt(0); h = Math.imul(h, 0x01000193) >>> 0; }
    let i = h % CATEGORY_COLOURS;
    for (let k = 0; k < CATEGORY_COLOURS && taken.has(i); k++) i = (i + 1) % CATEGORY_COLOURS;
    taken.add(i);
    colours.set(name, i);
  }
  return colours;
}

const LABEL = template('seat.label');
const LABEL_WHEELCHAIR = template('seat.labelWheelchair');

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export class SeatMap {
  // onPick(code) is called when the customer activates a seat; the owner decides.
  constructor(container, { prices, onPick }) {
    this.container = container;
    this.prices = prices || {};
    this.onPick = onPick;
    this.seats = new Map();   // code → {code,row,number,category,status,accessible,button}
    this.selected = new Set();
    this.mine = new Set();
    this.rows = [];           // [{row, seats: [seat…]}]
    this.focusCode = null;
    this.categories = [];
    this.kinds = new Map();
  }

  // Draws the whole map from GET /showtimes/{id}/seats.
  render(map) {
    this.seats.clear();
    const byRow = new Map();
    const aisles = new Map();
    for (const r of map.rows || []) {
      byRow.set(r.row, []);
      aisles.set(r.row, new Set(r.aisles || []));
    }
    const categories = [];
    for (const s of map.seats) {
      if (!byRow.has(s.row)) byRow.set(s.row, []);
      byRow.get(s.row).push(s);
      if (!categories.includes(s.category)) categories.push(s.category);
    }
    this.categories = categories;
    this.aisles = aisles;
    this.colours = categoryColours(categories);
    // The hall's second category also differs by shape (a double border), for readers who
    // do not tell its colour from the first's.
    const catClass = new Map(categories.map((c, i) => [c, `cat-${this.colours.get(c)}${i === 1 ? ' cat-alt' : ''}`]));
    this.rows = [];
    const hall = el('div', { class: 'hall', role: 'group', 'aria-label': t('map.hallLabel') });
    hall.addEventListener('keydown', (e) => this.onKey(e));
    hall.addEventListener('click', (e) => {
      const b = e.target.closest('button.seat');
      if (b) this.onPick(b.dataset.code);
    });
    hall.addEventListener('focusin', (e) => {
      const b = e.target.closest('button.seat');
      if (b) this.moveTabStop(b.dataset.code);
    });
    // One string for the whole hall, parsed once: a 1,000-seat hall is a few milliseconds of
    // the browser's parser instead of thousands of DOM calls.
    const html = [`<div class="screen" aria-hidden="true">${escape(t('map.screen'))}</div>`];
    const order = [];
    for (const [row, list] of byRow) {
      if (!list.length) continue;
      list.sort((a, b) => a.number - b.number);
      const rowSeats = [];
      const label = `<span class="row-label" aria-hidden="true">${escape(row)}</span>`;
      html.push(`<div class="row" role="group" aria-label="${escape(t('map.row', { row }))}">${label}`);
      const gaps = aisles.get(row) || new Set();
      for (const s of list) {
        const seat = { ...s, button: null, rowIndex: this.rows.length, index: rowSeats.length };
        this.seats.set(s.code, seat);
        rowSeats.push(seat);
        order.push(seat);
        const state = this.stateOf(seat);
        html.push(`<button type="button" tabindex="-1" class="seat ${catClass.get(s.category)}${s.accessible ? ' accessible' : ''} ${STATE_CLASS[state] || ''}" data-code="${escape(s.code)}" data-status="${escape(s.status)}" data-state="${escape(state)}" aria-label="${escape(this.label(seat))}" aria-pressed="${state === 'selected'}" aria-disabled="${state === 'HELD' || state === 'BOOKED'}"${s.accessible ? ` title="${escape(t('seat.title', { row: s.row, number: s.number }))}">♿` : `>${escape(s.number)}`}</button>`);
        if (gaps.has(s.number)) html.push('<span class="aisle" aria-hidden="true"></span>');
      }
      html.push(`${label}</div>`);
      this.rows.push({ row, seats: rowSeats });
    }
    hall.innerHTML = html.join('');
    const buttons = hall.querySelectorAll('button.seat');
    for (let i = 0; i < order.length; i++) order[i].button = buttons[i];
    const scroll = el('div', { class: 'hall-scroll', 'data-left': 'false', 'data-right': 'false' }, hall);
    this.scroll = scroll;
    this.hint = el('span', { class: 'map-hint', hidden: true }, t('map.scrollHint'));
    const tools = el('div', { class: 'map-tools', role: 'group', 'aria-label': t('map.zoom') },
      el('button', { type: 'button', class: 'zoom-out', 'aria-label': t('map.zoomOut'), onclick: () => this.zoomBy(1 / ZOOM_STEP) }, '−'),
      el('button', { type: 'button', class: 'zoom-in', 'aria-label': t('map.zoomIn'), onclick: () => this.zoomBy(ZOOM_STEP) }, '+'),
      this.hint);
    fill(this.container, tools, el('div', { class: 'hall-frame' }, scroll), this.legend());
    scroll.addEventListener('scroll', () => this.edges(), { passive: true });
    this.pinch(scroll);
    // A hall wider than the screen (a phone) opens on its middle, where the best seats are.
    this.center();
    const first = this.focusCode && this.seats.has(this.focusCode) ? this.focusCode
      : (this.rows[0] && this.rows[0].seats[0] && this.rows[0].seats[0].code);
    if (first) this.moveTabStop(first);
  }

  legend() {
    const items = this.categories.map((c, i) => el('li', {},
      el('span', { class: `swatch seat st-available cat-${this.colours.get(c)}${i === 1 ? ' cat-alt' : ''}`, 'aria-hidden': 'true' }),
      `${c}: ${money(this.prices[c])}`));
    const states = [
      ['available', t('legend.available')], ['selected', t('legend.selected')], ['mine', t('legend.mine')],
      ['held', t('legend.taken')], ['booked', t('legend.sold')],
    ].map(([cls, text]) => el('li', {}, el('span', { class: `swatch seat st-${cls}`, 'aria-hidden': 'true' }), text));
    const anyAccessible = [...this.seats.values()].some((s) => s.accessible);
    if (anyAccessible) states.push(el('li', {}, el('span', { class: 'swatch seat accessible st-available', 'aria-hidden': 'true' }, '♿'), t('legend.wheelchair')));
    return el('div', { class: 'legend' },
      el('h3', {}, t('legend.prices')), el('ul', {}, items),
      el('h3', {}, t('legend.seats')), el('ul', {}, states));
  }

  // The seats' size in CSS pixels as drawn now (the stylesheet's --seat until a zoom).
  seatSize() {
    const b = this.rows[0]?.seats[0]?.button;
    return b ? b.getBoundingClientRect().width : 0;
  }

  // Zooms the hall by a factor, its seats between MIN_SEAT_PX and MAX_SEAT_PX, keeping the
  // point at (x, y) of the map's box where it is (the middle without one).
  zoomBy(factor, x, y) {
    const scroll = this.scroll;
    const before = this.seatSize();
    if (!before) return;
    const size = Math.min(MAX_SEAT_PX, Math.max(MIN_SEAT_PX, before * factor));
    const box = scroll.getBoundingClientRect();
    const px = x ?? box.width / 2;
    const py = y ?? box.height / 2;
    const at = [(scroll.scrollLeft + px) / scroll.scrollWidth, (scroll.scrollTop + py) / scroll.scrollHeight];
    this.container.style.setProperty('--seat', `${size}px`);
    scroll.scrollLeft = at[0] * scroll.scrollWidth - px;
    scroll.scrollTop = at[1] * scroll.scrollHeight - py;
    this.container.dataset.zoom = size >= MAX_SEAT_PX ? 'max' : size <= MIN_SEAT_PX ? 'min' : '';
    this.edges();
  }

  // Two fingers zoom the hall (one pans it, as any scrolling box); the page itself does not
  // zoom there (style.css: touch-action).
  pinch(scroll) {
    let start = null;  // {distance, size} while two fingers are down
    const distance = (ts) => Math.hypot(ts[0].clientX - ts[1].clientX, ts[0].clientY - ts[1].clientY);
    scroll.addEventListener('touchstart', (e) => {
      if (e.touches.length === 2) start = { distance: distance(e.touches), size: this.seatSize() };
    }, { passive: true });
    scroll.addEventListener('touchmove', (e) => {
      if (!start || e.touches.length !== 2) return;
      e.preventDefault();
      const box = scroll.getBoundingClientRect();
      const mid = [(e.touches[0].clientX + e.touches[1].clientX) / 2 - box.left, (e.touches[0].clientY + e.touches[1].clientY) / 2 - box.top];
      const want = start.size * (distance(e.touches) / start.distance);
      this.zoomBy(want / this.seatSize(), mid[0], mid[1]);
    }, { passive: false });
    scroll.addEventListener('touchend', (e) => { if (e.touches.length < 2) start = null; }, { passive: true });
  }

  // The hall's middle in its box (where the best seats are), as when it was drawn: after the
  // map was hidden (the waiting room), it is drawn again without a size.
  center() {
    const s = this.scroll;
    if (!s) return;
    s.scrollLeft = (s.scrollWidth - s.clientWidth) / 2;
    this.edges();
  }

  // Shows where the hall goes on beyond its box: a shade at that edge and a hint.
  edges() {
    const s = this.scroll;
    if (!s) return;
    const left = s.scrollLeft > 1;
    const right = s.scrollLeft + s.clientWidth < s.scrollWidth - 1;
    s.dataset.left = String(left);
    s.dataset.right = String(right);
    s.parentElement.dataset.left = String(left);   // the frame draws the shades
    s.parentElement.dataset.right = String(right);
    this.hint.hidden = !(left || right || s.scrollTop > 1 || s.scrollTop + s.clientHeight < s.scrollHeight - 1);
  }

  // Scrolls the hall (and the page) so these seats are in sight, clear of the bottom sheet
  // (style.css: the seats' scroll margin is the sheet's height).
  reveal(codes) {
    const seat = codes.map((c) => this.seats.get(c)).find(Boolean);
    if (seat) seat.button.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }

  // The most seats of a category best available can hold together (docs/seat-rules.md): side
  // by side in one section of a row (aisles cut rows), wheelchair places left out. With
  // `free`, only the seats free now count.
  longestBlock(category, free = false) {
    let longest = 0;
    for (const { row, seats } of this.rows) {
      const gaps = this.aisles.get(row) || new Set();
      let run = 0;
      let prev = null;  // the last seat that counted
      for (const s of seats) {
        const counts = s.category === category && !s.accessible && (!free || (s.status === 'AVAILABLE' && !this.mine.has(s.code)));
        if (!counts) { run = 0; prev = null; continue; }
        run = prev && s.number === prev.number + 1 && !gaps.has(prev.number) ? run + 1 : 1;
        prev = s;
        longest = Math.max(longest, run);
      }
    }
    return longest;
  }

  // Updates the seats the service reports (status: AVAILABLE, HELD or BOOKED).
  setStatus(codes, status) {
    for (const code of codes) {
      const s = this.seats.get(code);
      if (!s) continue;
      s.status = status;
      if (status !== 'AVAILABLE' && !this.mine.has(code)) this.selected.delete(code);
      this.paint(s);
    }
  }

  // Merges a fresh map: statuses only (the layout does not change).
  update(map) {
    for (const s of map.seats) {
      const seat = this.seats.get(s.code);
      if (seat && seat.status !== s.status) this.setStatus([s.code], s.status);
    }
  }

  // Marks seats a refused hold would have left alone (the gap rule), until the next choice.
  markAlone(codes) {
    for (const s of this.seats.values()) s.button.classList.toggle('alone', codes.includes(s.code));
  }

  setMine(codes) {
    const before = [...this.mine];
    this.mine = new Set(codes);
    for (const c of [...before, ...codes]) { const s = this.seats.get(c); if (s) this.paint(s); }
  }

  toggle(code) {
    const s = this.seats.get(code);
    if (this.selected.has(code)) this.selected.delete(code); else this.selected.add(code);
    this.paint(s);
  }

  clearSelection() {
    const was = [...this.selected];
    this.selected.clear();
    for (const c of was) { const s = this.seats.get(c); if (s) this.paint(s); }
  }

  stateOf(s) {
    if (this.mine.has(s.code)) return 'mine';
    if (this.selected.has(s.code)) return 'selected';
    return s.status;
  }

  label(s) {
    let kind = this.kinds.get(s.category);  // "standard, €12.50", made once per category
    if (kind === undefined) {
      kind = this.prices[s.category] ? `${s.category}, ${money(this.prices[s.category])}` : s.category;
      this.kinds.set(s.category, kind);
    }
    return (s.accessible ? LABEL_WHEELCHAIR : LABEL)({ row: s.row, number: s.number, kind, state: STATE_WORDS[this.stateOf(s)] });
  }

  paint(s) {
    const b = s.button;
    const state = this.stateOf(s);
    b.classList.remove(...Object.values(STATE_CLASS));
    b.classList.add(STATE_CLASS[state]);
    b.dataset.status = s.status;
    b.dataset.state = state;
    b.setAttribute('aria-label', this.label(s));
    b.setAttribute('aria-pressed', state === 'selected' ? 'true' : 'false');
    b.setAttribute('aria-disabled', state === 'HELD' || state === 'BOOKED' ? 'true' : 'false');
  }

  moveTabStop(code) {
    if (this.focusCode && this.seats.has(this.focusCode)) this.seats.get(this.focusCode).button.tabIndex = -1;
    this.focusCode = code;
    this.seats.get(code).button.tabIndex = 0;
  }

  focus(code) {
    this.moveTabStop(code);
    this.seats.get(code).button.focus();
  }

  onKey(e) {
    const s = this.seats.get(this.focusCode);
    if (!s) return;
    const row = this.rows[s.rowIndex].seats;
    let next = null;
    switch (e.key) {
      case 'ArrowLeft': next = row[s.index - 1]; break;
      case 'ArrowRight': next = row[s.index + 1]; break;
      case 'Home': next = row[0]; break;
      case 'End': next = row[row.length - 1]; break;
      case 'ArrowUp': next = this.nearest(s.rowIndex - 1, s.number); break;
      case 'ArrowDown': next = this.nearest(s.rowIndex + 1, s.number); break;
      default: return;
    }
    e.preventDefault();
    if (next) this.focus(next.code);
  }

  nearest(rowIndex, number) {
    const r = this.rows[rowIndex];
    if (!r) return null;
    let best = r.seats[0];
    for (const s of r.seats) if (Math.abs(s.number - number) < Math.abs(best.number - number)) best = s;
    return best;
  }
}
