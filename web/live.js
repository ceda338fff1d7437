// The live seat map of a showtime's page: the seat-change stream (SSE) applied to the map
// as it comes, with one map read (with its ETag) each time the stream opens, for what
// happened before; polling only while the stream is down. Others' holds that expire come
// as events too (the sweeper's SeatsReleased). Says on the page whether the map is live,
// and tells the customer when a seat of their choice was just taken.

import { api } from './api.js';
import { seatList } from './format.js';
import { t } from './i18n.js';
import { every, later, left, onLeave, say } from './page.js';

const POLL_MS = 2000;             // seat map polling while the live stream is down
const STREAM_RETRY_MS = 30000;    // a stream the service refused is tried again after this

// Starts the feed of the page (showtime.js); returns its refresh (one poll now).
export function liveFeed(page) {
  const { id, nav, map, liveState } = page;
  let source = null;
  let streamUp = false;

  async function refresh() {
    try {
      const r = await api.seats(id, page.etag);
      if (left(nav) || r.status === 304) return;
      page.etag = r.etag;
      // The panel is drawn again only when the selection lost a seat (it keeps focus else).
      const before = map.selected.size;
      map.update(r.data);
      if (map.selected.size !== before) page.draw();
    } catch (e) { /* the next poll tries again */ }
  }

  function openStream() {
    if (!window.EventSource) return;
    source = new EventSource(`/showtimes/${id}/seats/stream`);
    source.onopen = () => {
      streamUp = true;
      liveState.textContent = t('live.up');
      liveState.dataset.live = 'up';
      refresh();  // what happened before it opened, or while it was down (a 304 if nothing)
    };
    source.onmessage = (ev) => {
      let change;
      try { change = JSON.parse(ev.data); } catch { return; }
      const status = { SeatsHeld: 'HELD', SeatsReleased: 'AVAILABLE', SeatsBooked: 'BOOKED' }[change.type];
      if (!status || !Array.isArray(change.seats)) return;
      const lostChoice = change.seats.filter((c) => map.selected.has(c) && !page.asking.has(c));
      map.setStatus(change.seats, status);
      if (status === 'BOOKED' && page.hold && change.seats.some((c) => page.hold.seats.includes(c))) page.holds.checkStoredHold();
      if (lostChoice.length && status !== 'AVAILABLE') {
        say(t('live.taken', { seats: seatList(lostChoice), n: lostChoice.length }), 'info');
        page.draw();
      }
    };
    source.onerror = () => {
      streamUp = false;
      liveState.textContent = t('live.down');
      liveState.dataset.live = 'down';
      if (source.readyState === EventSource.CLOSED) {
        source = null;
        later(STREAM_RETRY_MS, openStream);
      }
    };
  }

  openStream();
  onLeave(() => { if (source) source.close(); });
  every(POLL_MS, () => { if (!streamUp) refresh(); });
  return { refresh };
}
