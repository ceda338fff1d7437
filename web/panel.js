// The seat map's side panel, drawn from the showtime page's state (showtime.js): the hold
// with its countdown and actions, or the selection with the blocks offered after a refusal
// and the best-available form, or that sales have closed. It only draws; what a button
// does is the hold controller's (holds.js).

import { claims } from './api.js';
import { SALES_CLOSED, clock, el, fill, money, seatList, when } from './format.js';
import { t, tn } from './i18n.js';
import { left, say } from './page.js';
import { MAX_SEATS } from './seatmap.js';

// The price of these seats by their categories.
export function total(page, seats) {
  let sum = 0; let currency = '';
  for (const code of seats) {
    const p = page.s.prices[page.map.seats.get(code)?.category];
    if (p) { sum += p.amount; currency = p.currency; }
  }
  return { amount: sum, currency };
}

const EXTEND_AFTER_MS = 60000;  // "More time" is offered once a hold has run this long (or a tenth of it)

// On a phone the panel is a bottom sheet (style.css): one line, what is chosen or held and
// the main action, that opens to the whole panel; opening it keeps the seats in question in
// sight above it. On a larger screen the line is not shown and the panel is all there.
function sheet(page, summary, ...children) {
  const toggle = el('button', {
    type: 'button', class: 'sheet-toggle', 'aria-expanded': String(page.sheetOpen), 'aria-controls': 'panel-body',
    onclick: () => {
      page.sheetOpen = !page.sheetOpen;
      page.panel.dataset.sheet = page.sheetOpen ? 'open' : 'closed';
      toggle.setAttribute('aria-expanded', String(page.sheetOpen));
      page.reveal(page.hold ? page.hold.seats : [...page.map.selected]);
    },
  }, el('span', { class: 'sheet-summary' }, summary), el('span', { class: 'visually-hidden' }, ` ${t('sheet.details')}`));
  page.panel.dataset.sheet = page.sheetOpen ? 'open' : 'closed';
  fill(page.panel, toggle, el('div', { class: 'panel-body', id: 'panel-body' }, ...children));
}

export function drawPanel(page) {
  const { map, holds } = page;
  if (page.tick) { clearInterval(page.tick); page.tick = null; }
  if (left(page.nav)) return;  // an answer that came after the customer left this view
  const hold = page.hold;
  if (hold) {
    const remaining = el('strong', { class: 'countdown', 'aria-live': 'off' });
    const sheetTime = el('span', { class: 'sheet-countdown' });
    // "More time" only where it adds some: not in a hold's first minute (an extend ends it
    // a full hold from now, no later than now) and not at its 20-minute cap.
    const more = page.closed || hold.capped ? null : el('button', { onclick: holds.extend, class: 'more-time' }, t('hold.more'));
    const update = () => {
      const ms = new Date(page.hold.expiresAt).getTime() - page.serverNow();
      remaining.textContent = clock(ms);
      sheetTime.textContent = remaining.textContent;
      remaining.classList.toggle('soon', ms < 60000);
      const ttl = page.hold.ttlMs;
      if (more) more.hidden = Boolean(ttl) && ms > ttl - Math.min(EXTEND_AFTER_MS, ttl / 10);
      if (ms <= 0) { clearInterval(page.tick); page.tick = null; holds.ended(); }
    };
    const paying = Boolean(hold.checkoutKey);
    // Once sales have closed only a payment already open goes on (API.md: it is honoured
    // while the hold lives); a hold not yet in checkout can only be released.
    const summary = tn('sheet.held', { time: sheetTime }, { n: hold.seats.length });
    if (page.summary && !paying && !page.closed) {
      sheet(page, summary, ...orderSummary(page, remaining));
    } else sheet(page, summary,
      el('h2', { id: 'panel-title' }, t('hold.title')),
      el('p', {}, t('seats.list', { seats: seatList(hold.seats), price: money(total(page, hold.seats)) })),
      el('p', { class: 'timer' }, tn('hold.timeLeft', { time: remaining })),
      paying ? el('p', {}, t('hold.paymentOpen')) : null,
      page.closed && !paying ? el('p', { class: 'closed-note' }, `${SALES_CLOSED} ${t('hold.closedUnpaid')}`) : null,
      el('div', { class: 'actions' },
        paying ? el('button', { class: 'primary', onclick: () => holds.checkout() }, t('hold.continuePayment'))
          : page.closed ? null : el('button', { class: 'primary', onclick: holds.openSummary }, t('hold.checkout')),
        more,
        el('button', { onclick: holds.release }, t('hold.release'))));
    update();
    if (page.hold && page.tick === null && new Date(page.hold.expiresAt).getTime() > page.serverNow()) page.tick = setInterval(update, 250);
    return;
  }
  if (page.closed) {
    sheet(page, t('list.salesClosed'),
      el('h2', { id: 'panel-title' }, t('list.salesClosed')),
      el('p', { class: 'closed-note' }, SALES_CLOSED),
      el('p', {}, el('a', { href: '#/' }, t('panel.otherShowtimes'))));
    return;
  }
  const chosen = [...map.selected];
  const holdButton = el('button', { class: 'primary', onclick: holds.holdSeats, disabled: chosen.length === 0 },
    chosen.length ? t('panel.holdN', { n: chosen.length }) : t('panel.hold'));
  sheet(page, chosen.length ? t('sheet.selected', { n: chosen.length, price: money(total(page, chosen)) }) : t('panel.choose', { n: MAX_SEATS }),
    el('h2', { id: 'panel-title' }, t('panel.title')),
    el('p', {}, chosen.length ? t('seats.list', { seats: seatList(chosen), price: money(total(page, chosen)) }) : t('panel.choose', { n: MAX_SEATS })),
    el('div', { class: 'actions' }, holdButton,
      chosen.length ? el('button', { onclick: () => { map.clearSelection(); map.markAlone([]); page.offers = []; drawPanel(page); } }, t('panel.clear')) : null),
    offersBox(page),
    bestForm(page));
}

// The order before payment: each seat with its category and price, the total, the e-mail the
// tickets go to (the token's, when it has one, to start with), what the customer may do
// after paying, and the time the seats stay held. "Pay" opens the payment (holds.checkout).
function orderSummary(page, remaining) {
  const { hold, s } = page;
  const lines = seatList(hold.seats).split(', ').map((code) => {
    const seat = page.map.seats.get(code);
    const price = s.prices[seat?.category];
    return el('li', {}, el('span', {}, t('order.seat', { row: seat?.row ?? '', number: seat?.number ?? code, category: seat?.category ?? '' })),
      el('span', { class: 'order-price' }, money(price)));
  });
  const sum = money(total(page, hold.seats));
  const email = el('input', { id: 'order-email', name: 'email', type: 'email', required: true, autocomplete: 'email', inputmode: 'email', value: hold.email || claims()?.email || '', oninput: () => say('') });
  const refundable = Number.isInteger(s.refundUntilMinutesBefore);
  const form = el('form', { class: 'order', novalidate: true, onsubmit: (e) => {
    e.preventDefault();
    const address = email.value.trim();
    if (!email.checkValidity() || !address) { say(t('order.emailInvalid'), 'info'); email.focus(); return; }
    page.holds.checkout(address);
  } },
  el('h2', { id: 'panel-title' }, t('order.title')),
  el('p', { class: 'sub' }, `${s.title} · ${when(s.startsAt, s.timeZone)}`),
  el('ul', { class: 'order-lines' }, ...lines),
  el('p', { class: 'order-total' }, el('span', {}, t('order.total')), el('strong', {}, sum)),
  el('div', { class: 'field' }, el('label', { for: 'order-email' }, t('order.email')), email, el('small', {}, t('order.emailHint'))),
  el('p', { class: 'muted' }, refundable ? t('order.refundable', { n: s.refundUntilMinutesBefore }) : t('order.final')),
  el('p', { class: 'timer' }, tn('hold.timeLeft', { time: remaining })),
  el('div', { class: 'actions' },
    el('button', { class: 'primary', type: 'submit' }, t('order.pay', { price: sum })),
    el('button', { type: 'button', onclick: page.holds.closeSummary }, t('order.back'))));
  return [form];
}

// Free blocks the service offered with a refusal: one click holds one.
function offersBox(page) {
  if (!page.offers.length) return null;
  return el('div', { class: 'offers' },
    el('h3', {}, t('panel.offers')),
    el('ul', { class: 'alternatives' }, ...page.offers.map((seats) => el('li', {},
      el('button', { onclick: () => page.holds.takeOffer(seats), 'data-seats': seats.join(' ') },
        t('panel.holdOffer', { seats: seatList(seats), price: money(total(page, seats)) }))))));
}

// "Best available": the service chooses and holds the best free block in one step. The
// counts offered stop at the longest block the hall has in the category (its aisles may cap
// blocks below 8), and change with the category.
function bestForm(page) {
  const categories = page.seatCategories.filter((c) => page.map.longestBlock(c) > 0);
  if (!categories.length) return null;
  if (!categories.includes(page.bestCategory)) page.bestCategory = categories[0];
  const count = el('select', { name: 'count' });
  const counts = () => {
    const most = Math.min(MAX_SEATS, page.map.longestBlock(category.value));
    page.bestCount = Math.min(page.bestCount, most);
    fill(count, ...Array.from({ length: most }, (_, i) => el('option', { value: String(i + 1), selected: i + 1 === page.bestCount }, String(i + 1))));
  };
  const category = el('select', { name: 'category', onchange: () => { page.bestCategory = category.value; counts(); } },
    ...categories.map((c) => el('option', { value: c, selected: c === page.bestCategory }, `${c} (${money(page.s.prices[c])})`)));
  counts();
  const go = () => {
    page.bestCount = Number(count.value);
    page.bestCategory = category.value;
    page.holds.holdBest(page.bestCount, page.bestCategory);
  };
  return el('div', { class: 'best', role: 'group', 'aria-label': t('best.title') },
    el('label', {}, t('best.seats'), count),
    categories.length > 1 ? el('label', {}, t('best.category'), category) : null,
    el('button', { onclick: go, class: 'best-button' }, t('best.title')));
}
