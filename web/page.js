// What every view of the seat picker shares: its lifetime (a view stops drawing once its
// route is left, and what it started is undone), the messages, the tab's session storage
// of holds, queue places and admissions, and when a showtime's sales close.

let cleanups = [];   // what the current view must undo when it is left
let navigation = 0;  // counts routes: a view whose route was left stops drawing

// A new route: undoes the last view's timers and streams; returns the new view's number.
export function beginRoute() {
  for (const fn of cleanups) fn();
  cleanups = [];
  return ++navigation;
}
export const left = (nav) => nav !== navigation;
export function onLeave(fn) { cleanups.push(fn); }
export function every(ms, fn) { const t = setInterval(fn, ms); onLeave(() => clearInterval(t)); return t; }
export function later(ms, fn) { const t = setTimeout(fn, ms); onLeave(() => clearTimeout(t)); return t; }

export const view = () => document.getElementById('view');

export const MAX_TIMER_MS = 2 ** 31 - 1;  // setTimeout fires at once past this (about 24.8 days)

// ---- messages -------------------------------------------------------------------------

// A message lies over the page (style.css .message) until the next one, the next route, or
// its close button: an error and an info stay until read, as the customer may look away.
export function say(text, kind = 'error') {
  const m = document.getElementById('message');
  const words = m.querySelector('.message-text') || m;
  if (!text) { m.hidden = true; words.textContent = ''; return; }
  m.className = `message ${kind}`;
  words.textContent = text;
  m.hidden = false;
}
document.querySelector('#message .message-close')?.addEventListener('click', () => say(''));
export function announce(text) {
  const a = document.getElementById('announce');
  a.textContent = '';
  setTimeout(() => { a.textContent = text; }, 50);
}

export function randomKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

// ---- session storage of holds, queue places and admissions -------------------------------

export const store = {
  get(key) { try { return JSON.parse(sessionStorage.getItem(`boxoffice.${key}`)); } catch { return null; } },
  set(key, value) { value === null ? sessionStorage.removeItem(`boxoffice.${key}`) : sessionStorage.setItem(`boxoffice.${key}`, JSON.stringify(value)); },
};

// When a showtime's sales close (API.md): at its start, or salesCloseMinutesBefore earlier.
// After that the service refuses holds, checkouts and queue joins with 409 SALES_CLOSED.
export function salesCloseAt(s) {
  const before = Number.isInteger(s.salesCloseMinutesBefore) && s.salesCloseMinutesBefore > 0 ? s.salesCloseMinutesBefore : 0;
  return new Date(s.startsAt).getTime() - before * 60000;
}
