// The waiting room of a showtime's page (API.md "Waiting room"): joined when the service
// answers a hold NOT_ADMITTED, its place in line, the seats left and an estimated wait
// shown while the page polls, the admission kept in the tab once it is the customer's
// turn, and then the hold that was refused asked again; "sold out" once the last seat is
// booked (the line is told at once instead of counting down).

import { api } from './api.js';
import { el, explain, fill } from './format.js';
import { t, tn } from './i18n.js';
import { announce, every, later, left, say, store } from './page.js';

const QUEUE_POLL_MS = 2000;

// The page's waiting room (showtime.js): enter(retryHold) joins (or finds the place kept)
// and polls until admitted; one poller per page.
export function waitingRoom(page) {
  const { id, nav, room } = page;
  let waiting = false;
  let poller = null;  // the line's poll while waiting
  const stop = () => { if (poller !== null) clearInterval(poller); poller = null; waiting = false; };

  async function enter(retryHold) {
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
      page.showMap();  // no line to wait in: the map, and what the service said
      if (e.code === 'SALES_CLOSED') page.holds.salesClosed();
      else if (e.code === 'SOLD_OUT' || e.code === 'SHOWTIME_CANCELLED') soldOut(e.code);
      else say(explain(e));
      return;
    }
    if (left(nav)) return;
    const position = el('strong', { class: 'position' }, '…');
    const eta = el('span', { class: 'eta' }, t('queue.estimating'));
    // How far the line has moved since this customer joined.
    const progress = el('progress', { class: 'queue-progress', max: 1, value: 0, 'aria-label': t('queue.progress') });
    room.hidden = false;
    fill(room,
      el('h2', {}, t('queue.title')),
      el('p', {}, t('queue.explain')),
      el('p', {}, tn('queue.place', { position, eta })),
      progress);
    say('');
    const left_ = el('span', { class: 'seats-left' }, '');
    room.append(el('p', {}, left_));
    let asking = false;  // one question at a time: two answers of NOT_FOUND would join twice
    const check = async () => {
      if (asking || poller === null) return;
      asking = true;
      let data;
      try { ({ data } = await api.queue(id, place.queueToken)); } catch (e) {
        if (left(nav) || poller === null) return;
        if (e.code === 'NOT_FOUND') { store.set(`queue.${id}`, null); stop(); enter(retryHold); }
        if (e.code === 'SALES_CLOSED') { store.set(`queue.${id}`, null); stop(); page.holds.salesClosed(); }
        if (e.code === 'SHOWTIME_CANCELLED') {
          store.set(`queue.${id}`, null);
          stop();
          page.holds.salesClosed();
          soldOut(e.code);
          say(explain(e), 'info');
        }
        return;
      } finally {
        asking = false;
      }
      if (left(nav)) return;
      if (data.soldOut) {
        stop();
        store.set(`queue.${id}`, null);
        soldOut('SOLD_OUT');
        return;
      }
      if (typeof data.seatsLeft === 'number') {
        left_.textContent = t('queue.seatsLeft', { n: data.seatsLeft });
      }
      if (data.admitted && data.admissionToken) {
        stop();
        store.set(`admission.${id}`, { token: data.admissionToken, expiresAt: data.admissionExpiresAt });
        store.set(`queue.${id}`, null);
        fill(room, el('h2', {}, t('queue.yourTurn')), el('p', {}, t('queue.yourTurnText')));
        announce(t('queue.yourTurnAnnounce'));
        later(4000, () => { room.hidden = true; });
        page.showMap();
        if (retryHold && page.map.selected.size) page.holds.holdSeats();
        return;
      }
      position.textContent = String(data.position);
      // The service's estimate (from how fast its line moves, API.md).
      const wait = Number(data.estimatedWaitSeconds);
      if (Number.isFinite(wait) && wait >= 0) {
        eta.textContent = wait < 60 ? t('queue.etaSoon') : t('queue.eta', { n: Math.round(wait / 60) });
      }
      const first = Math.max(place.firstPosition || 0, data.position, 1);
      progress.max = first;
      progress.value = first - data.position;
    };
    poller = every(QUEUE_POLL_MS, check);
    check();
  }

  // Every seat is sold (or the showtime cancelled): said instead of a wait that can never end.
  function soldOut(code) {
    page.showMap();  // every seat is to be seen, none to be held
    room.hidden = false;
    const cancelled = code === 'SHOWTIME_CANCELLED';
    fill(room,
      el('h2', { class: 'sold-out' }, cancelled ? t('queue.cancelled') : t('queue.soldOut')),
      el('p', {}, cancelled ? t('queue.cancelledText') : t('queue.soldOutText')));
    announce(cancelled ? t('queue.cancelledAnnounce') : t('queue.soldOutAnnounce'));
  }

  return { enter, stop };
}
