// The door page (/door): door staff choose a showtime and scan tickets. A keyboard-wedge
// scanner types the code and Enter into the focused field (the usual door hardware); the
// camera reads QR codes through the browser's BarcodeDetector where it has one. Each scan
// is answered large enough to read at arm's length (ADMITTED in green, REFUSED in red with
// the reason and the seat), the last scans are listed, and "admitted of sold" is kept.
//
// Scans are sent one after another in the order they were made, so a fast scanner never
// reorders answers; each carries its own nonce, and one whose answer was lost is sent once
// more with the same nonce, which gets the first answer again (API.md POST /checkin).

import { adoptTokenFromFragment, call, claims, token } from './api.js';
import { el, fill, when } from './format.js';
import { say } from './page.js';

const RECENT = 12;            // scans listed
const COUNT_REFRESH_MS = 10000;
const CAMERA_INTERVAL_MS = 250;
const SAME_CODE_MS = 3000;    // the camera sees a code many times a second: once per 3 s

const view = document.getElementById('view');
const queue = [];             // scans waiting to be sent, in order
let sending = false;
let showtime = null;          // {showtimeId, title, startsAt, timeZone}

function nonce() {
  return crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random().toString(16).slice(2);
}

// The answer to a refused scan, in words for the door.
function reason(e) {
  const b = e.body || {};
  switch (e.code) {
    case 'ALREADY_CHECKED_IN': return `Already admitted at ${new Date(b.checkedInAt).toLocaleTimeString()}`;
    case 'WRONG_SHOWTIME': return `Ticket for another show: ${b.title}, ${when(b.startsAt)}`;
    case 'TICKET_VOID': return 'Ticket void: the booking was refunded or cancelled';
    case 'TICKET_UNKNOWN': return 'Not a ticket of this cinema';
    case 'NETWORK': return 'No answer from the service: scan again';
    default: return e.message || 'Refused';
  }
}

function showResult(ok, seat, text) {
  const result = document.getElementById('result');
  result.dataset.result = ok ? 'admitted' : 'refused';
  fill(result,
    el('div', { class: 'verdict' }, ok ? 'ADMITTED' : 'REFUSED'),
    seat ? el('div', { class: 'door-seat' }, `Seat ${seat}`) : null,
    el('div', { class: 'door-reason' }, text));
  document.getElementById('announce').textContent = `${ok ? 'Admitted' : 'Refused'}${seat ? `, seat ${seat}` : ''}. ${text}`;
  const list = document.getElementById('recent');
  list.prepend(el('li', { 'data-result': ok ? 'admitted' : 'refused' },
    el('strong', {}, ok ? 'ADMITTED' : 'REFUSED'), ` ${seat ? `Seat ${seat} · ` : ''}${text} · ${new Date().toLocaleTimeString()}`));
  while (list.children.length > RECENT) list.lastChild.remove();
}

async function send(scan) {
  const body = { code: scan.code, showtimeId: showtime.showtimeId, nonce: scan.nonce };
  for (let attempt = 0; ; ++attempt) {
    try {
      const { data } = await call('POST', '/checkin', { body });
      showResult(true, data.seat, `First scan, ${new Date(data.checkedInAt).toLocaleTimeString()}`);
      return;
    } catch (e) {
      // A lost answer: the same scan once more (its nonce gets the first answer).
      if (e.code === 'NETWORK' && attempt === 0) continue;
      if (e.status === 401 || e.status === 403) say('This page needs a door token: open it from a link with #token=…');
      showResult(false, (e.body && e.body.seat) || '', reason(e));
      return;
    }
  }
}

async function drain() {
  if (sending) return;
  sending = true;
  try {
    while (queue.length) await send(queue.shift());
  } finally {
    sending = false;
  }
  refreshCount();
}

function scan(code) {
  const text = code.trim();
  if (!text || !showtime) return;
  queue.push({ code: text, nonce: nonce() });
  drain();
}

async function refreshCount() {
  if (!showtime) return;
  try {
    const { data } = await call('GET', `/showtimes/${showtime.showtimeId}/checkins`);
    document.getElementById('count').textContent = `${data.admitted} admitted of ${data.sold} sold`;
  } catch { /* kept as it was; the next refresh tries again */ }
}

async function startCamera(button) {
  const video = el('video', { class: 'door-camera', playsinline: '', muted: '' });
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' } });
  } catch {
    say('The camera could not be opened: use a scanner or type the code.');
    return;
  }
  button.replaceWith(video);
  video.srcObject = stream;
  await video.play();
  const detector = new window.BarcodeDetector({ formats: ['qr_code'] });
  let last = '';
  let lastAt = 0;
  setInterval(async () => {
    try {
      for (const code of await detector.detect(video)) {
        const now = Date.now();
        if (code.rawValue === last && now - lastAt < SAME_CODE_MS) continue;
        last = code.rawValue;
        lastAt = now;
        scan(code.rawValue);
      }
    } catch { /* a frame that could not be read */ }
  }, CAMERA_INTERVAL_MS);
}

function scanning() {
  const input = el('input', { id: 'code', name: 'code', autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', 'aria-describedby': 'code-help' });
  const form = el('form', { class: 'door-scan', onsubmit: (e) => {
    e.preventDefault();
    scan(input.value);
    input.value = '';
    input.focus();
  } },
  el('label', { for: 'code' }, 'Ticket code'), input, el('button', { type: 'submit', class: 'primary' }, 'Check in'),
  el('p', { id: 'code-help', class: 'muted' }, 'Scan the ticket (the scanner types the code and Enter), or type it.'));
  const camera = 'BarcodeDetector' in window && navigator.mediaDevices
    ? el('button', { type: 'button', onclick: (e) => startCamera(e.currentTarget) }, 'Use the camera') : null;
  fill(view,
    el('h1', {}, showtime.title),
    el('p', { class: 'muted' }, when(showtime.startsAt, showtime.timeZone), ' · ', el('a', { href: '#' }, 'Another showtime')),
    el('p', { id: 'count', class: 'door-count', 'aria-live': 'polite' }, ''),
    form, camera,
    el('div', { id: 'result', class: 'door-result', 'data-result': 'none' }, el('div', { class: 'verdict' }, 'Ready')),
    el('h2', {}, 'Last scans'), el('ol', { id: 'recent', class: 'door-recent' }));
  input.focus();
  refreshCount();
}

async function choose() {
  fill(view, el('h1', {}, 'Choose a showtime'), el('p', {}, 'Loading…'));
  let list = [];
  try {
    // Shows from an hour ago on: the doors open before the start and close after it.
    const from = new Date(Date.now() - 3600000).toISOString();
    list = (await call('GET', `/showtimes?${new URLSearchParams({ from, limit: '100' })}`, { auth: false })).data.showtimes;
  } catch (e) {
    say(e.message);
  }
  fill(view, el('h1', {}, 'Choose a showtime'),
    list.length ? el('ul', { class: 'door-showtimes' }, ...list.map((s) => el('li', {},
      el('a', { href: `#${s.showtimeId}` }, s.title), ` · ${s.cinema} · ${s.hall} · `, when(s.startsAt, s.timeZone))))
      : el('p', {}, 'No showtimes from an hour ago on.'));
}

async function route() {
  adoptTokenFromFragment();
  say('');
  const c = claims();
  const scope = String((c && c.scope) || '').split(' ');
  document.getElementById('who').textContent = !token() ? 'Not signed in'
    : scope.includes('door') || scope.includes('admin') ? `Door staff ${c.sub}` : 'Not a door token';
  const id = location.hash.replace(/^#\/?/, '');
  if (!/^\d+$/.test(id)) { showtime = null; await choose(); return; }
  try {
    showtime = (await call('GET', `/showtimes/${id}`, { auth: false })).data;
  } catch (e) {
    say(e.message);
    showtime = null;
    await choose();
    return;
  }
  scanning();
}

window.addEventListener('hashchange', route);
setInterval(refreshCount, COUNT_REFRESH_MS);
route();
