// A showtime's page: its seat map, the panel, the live feed and the waiting room, put
// together around one state object, `page`, that the parts share:
//
//   seatmap.js      draws the hall and the seats' states, and the customer's choice
//   panel.js        draws the hold or the selection (drawPanel), nothing else
//   holds.js        the hold controller: what the customer's clicks ask of the service
//   live.js         the seat-change stream and polling that keep the map current
//   waitingroom.js  the line before a hold, when the showtime has one
//
// Each part changes only its own fields of `page` (listed below with their owner) and calls
// the others through it (page.draw, page.refresh, page.holds, page.waitingRoom).

import { api } from './api.js';
import { CANCELLED, el, explain, fill, when } from './format.js';
import { t } from './i18n.js';
import { MAX_TIMER_MS, later, left, onLeave, salesCloseAt, store, view } from './page.js';
import { holdController } from './holds.js';
import { liveFeed } from './live.js';
import { drawPanel } from './panel.js';
import { SeatMap } from './seatmap.js';
import { waitingRoom } from './waitingroom.js';

export async function showtimeView(id, nav) {
  const root = view();
  fill(root, el('p', {}, t('map.loading')));
  let showtime;
  let first;
  try {
    [showtime, first] = await Promise.all([api.showtime(id), api.seats(id)]);
  } catch (e) {
    if (left(nav)) return;
    fill(root, el('h1', {}, t('map.showtime')), el('p', {}, explain(e)), el('p', {}, el('a', { href: '#/' }, t('map.allShowtimes'))));
    return;
  }
  if (left(nav)) return;
  const s = showtime.data;
  // The service's clock minus this browser's, from the map's asOf (the countdown is the
  // service's: a browser clock that is off must not end a hold early or late).
  const skew = new Date(first.data.asOf).getTime() - Date.now();
  const serverNow = () => Date.now() + skew;
  // The categories that have seats, in hall order (a price alone sells nothing).
  const seatCategories = [...new Set(first.data.seats.map((seat) => seat.category))];
  const mapBox = el('div', { class: 'map' });
  const page = {
    id, nav, s, serverNow, seatCategories,
    panel: el('section', { class: 'panel', 'aria-labelledby': 'panel-title' }),
    room: el('section', { class: 'room', hidden: true, 'aria-live': 'polite' }),
    liveState: el('span', { class: 'live', 'data-live': 'connecting' }, t('live.connecting')),
    map: null,
    // The hold controller's (holds.js):
    hold: store.get(`hold.${id}`),  // {holdId, seats, expiresAt, checkoutKey?}
    // Sales close at a time the service sets (salesCloseAt); a 409 SALES_CLOSED says so too.
    closed: s.status === 'CANCELLED' || salesCloseAt(s) <= serverNow(),
    retryAt: 0,          // 429: no hold attempt before this time
    asking: new Set(),   // seats of the hold request in flight
    busy: false,         // a hold, checkout, extend or release in flight
    offers: [],          // blocks offered with the last refusal
    // The panel's (panel.js):
    tick: null,          // the hold's countdown
    sheetOpen: false,    // on a phone, the bottom sheet is open (else one line)
    bestCount: 2,        // the best-available form's last choice
    bestCategory: seatCategories[0],
    // The live feed's (live.js):
    etag: first.etag,
  };
  page.draw = () => drawPanel(page);
  page.holds = holdController(page);
  const room = waitingRoom(page);
  page.waitingRoom = room.enter;
  page.stopWaiting = room.stop;
  const seatpage = el('div', { class: 'seatpage' }, mapBox, page.panel);
  fill(root,
    el('h1', {}, s.title),
    el('p', { class: 'sub' }, `${s.cinema} · ${s.hall} · `, el('time', { datetime: s.startsAt }, when(s.startsAt, s.timeZone)), ' · ', page.liveState),
    s.status === 'CANCELLED' ? el('p', { class: 'cancelled-note', role: 'status' }, CANCELLED) : null,
    page.room,
    seatpage);

  page.map = new SeatMap(mapBox, { prices: s.prices, onPick: (code) => page.holds.pick(code) });
  // The map's render time, which the browser tests read: data-render-ms from the seat map's
  // data to its laid-out DOM (built, styled, and laid out: its size read back), and
  // data-frame-ms to the end of the next frame, once it has been painted.
  const started = performance.now();
  page.map.render(first.data);
  root.dataset.renderMs = (performance.now() - started + (mapBox.offsetHeight && 0)).toFixed(1);
  requestAnimationFrame(() => setTimeout(() => { root.dataset.frameMs = (performance.now() - started).toFixed(1); }, 0));
  if (page.hold) page.map.setMine(page.hold.seats);
  page.refresh = liveFeed(page).refresh;
  onLeave(() => { if (page.tick) clearInterval(page.tick); });
  // The bottom sheet's height, which the page keeps free below the seats (style.css), and
  // seats brought into sight above it: the height is taken at once, as the sheet may just
  // have opened.
  const keepSheetHeight = () => document.documentElement.style.setProperty('--sheet-height', `${page.panel.offsetHeight}px`);
  const sheetHeight = new ResizeObserver(keepSheetHeight);
  sheetHeight.observe(page.panel);
  page.reveal = (codes) => { keepSheetHeight(); page.map.reveal(codes); };
  onLeave(() => { sheetHeight.disconnect(); document.documentElement.style.removeProperty('--sheet-height'); });
  // A hold kept from before (a reload, back from the gateway) is asked for first: checkout
  // moved its end, and it may have ended.
  if (page.hold) page.holds.checkStoredHold(); else page.draw();
  // A showtime with a waiting room on puts the customer in line before the map, unless they
  // hold seats or were let in already (the admission kept in this tab); once admitted (or
  // sold out, or no line after all) the map is shown.
  page.showMap = () => {
    if (!seatpage.hidden) return;
    seatpage.hidden = false;
    page.map.center();
  };
  const admission = store.get(`admission.${id}`);
  const admitted = admission && Date.parse(admission.expiresAt) > serverNow();
  if (s.waitingRoom && !page.hold && !admitted && !page.closed) {
    seatpage.hidden = true;
    room.enter(false);
  }
  const closesIn = salesCloseAt(s) - serverNow();
  if (!page.closed && closesIn < MAX_TIMER_MS) later(closesIn, page.holds.salesClosed);
}
