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
import { el, explain, fill, when } from './format.js';
import { LOCALE, loadStrings, t, translateStatic } from './i18n.js';
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
const clockTime = (iso) => (iso ? new Date(iso) : new Date()).toLocaleTimeString(LOCALE);

function reason(e) {
  const b = e.body || {};
  switch (e.code) {
    case 'ALREADY_CHECKED_IN': return t('door.already', { time: clockTime(b.checkedInAt) });
    case 'WRONG_SHOWTIME': return t('door.wrongShowtime', { title: b.title, time: when(b.startsAt, b.timeZone) });
    case 'TICKET_VOID': return t('door.void');
    case 'TICKET_UNKNOWN': return t('door.unknown');
    case 'NETWORK': return t('door.network');
    default: return e.message || t('door.refused');
  }
}

function showResult(ok, seat, text) {
  const result = document.getElementById('result');
  result.dataset.result = ok ? 'admitted' : 'refused';
  fill(result,
    el('div', { class: 'verdict' }, ok ? t('door.verdictAdmitted') : t('door.verdictRefused')),
    seat ? el('div', { class: 'door-seat' }, t('ticket.seat', { seat })) : null,
    el('div', { class: 'door-reason' }, text));
  const verdict = ok ? t('door.admitted') : t('door.refused');
  document.getElementById('announce').textContent = `${seat ? t('door.announceSeat', { verdict, seat }) : verdict}. ${text}`;
  const list = document.getElementById('recent');
  list.prepend(el('li', { 'data-result': ok ? 'admitted' : 'refused' },
    el('strong', {}, ok ? t('door.verdictAdmitted') : t('door.verdictRefused')), ` ${seat ? `${t('ticket.seat', { seat })} · ` : ''}${text} · ${clockTime()}`));
  while (list.children.length > RECENT) list.lastChild.remove();
}

async function send(scan) {
  const body = { code: scan.code, showtimeId: showtime.showtimeId, nonce: scan.nonce };
  for (let attempt = 0; ; ++attempt) {
    try {
      const { data } = await call('POST', '/checkin', { body });
      showResult(true, data.seat, t('door.firstScan', { time: clockTime(data.checkedInAt) }));
      return;
    } catch (e) {
      // A lost answer: the same scan once more (its nonce gets the first answer).
      if (e.code === 'NETWORK' && attempt === 0) continue;
      if (e.status === 401 || e.status === 403) say(t('door.needsToken'));
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
    document.getElementById('count').textContent = t('door.count', { admitted: data.admitted, sold: data.sold, n: data.sold });
  } catch { /* kept as it was; the next refresh tries again */ }
}

async function startCamera(button) {
  const video = el('video', { class: 'door-camera', playsinline: '', muted: '' });
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' } });
  } catch {
    say(t('door.noCamera'));
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
  el('label', { for: 'code' }, t('door.code')), input, el('button', { type: 'submit', class: 'primary' }, t('door.checkIn')),
  el('p', { id: 'code-help', class: 'muted' }, t('door.codeHelp')));
  const camera = 'BarcodeDetector' in window && navigator.mediaDevices
    ? el('button', { type: 'button', onclick: (e) => startCamera(e.currentTarget) }, t('door.camera')) : null;
  fill(view,
    el('h1', {}, showtime.title),
    el('p', { class: 'muted' }, when(showtime.startsAt, showtime.timeZone), ' · ', el('a', { href: '#' }, t('door.another'))),
    el('p', { id: 'count', class: 'door-count', 'aria-live': 'polite' }, ''),
    form, camera,
    el('div', { id: 'result', class: 'door-result', 'data-result': 'none' }, el('div', { class: 'verdict' }, t('door.ready'))),
    el('h2', {}, t('door.lastScans')), el('ol', { id: 'recent', class: 'door-recent' }));
  input.focus();
  refreshCount();
}

async function choose() {
  fill(view, el('h1', {}, t('door.choose')), el('p', {}, t('loading')));
  let list = [];
  try {
    // Shows from an hour ago on: the doors open before the start and close after it.
    const from = new Date(Date.now() - 3600000).toISOString();
    list = (await call('GET', `/showtimes?${new URLSearchParams({ from, limit: '100' })}`, { auth: false })).data.showtimes;
  } catch (e) {
    say(explain(e));
  }
  fill(view, el('h1', {}, t('door.choose')),
    list.length ? el('ul', { class: 'door-showtimes' }, ...list.map((s) => el('li', {},
      el('a', { href: `#${s.showtimeId}` }, s.title), ` · ${s.cinema} · ${s.hall} · `, when(s.startsAt, s.timeZone))))
      : el('p', {}, t('door.none')));
}

async function route() {
  adoptTokenFromFragment();
  say('');
  const c = claims();
  const scope = String((c && c.scope) || '').split(' ');
  document.getElementById('who').textContent = !token() ? t('header.signedOut')
    : scope.includes('door') || scope.includes('admin') ? t('door.staff') : t('door.notDoorToken');
  const id = location.hash.replace(/^#\/?/, '');
  if (!/^\d+$/.test(id)) { showtime = null; await choose(); return; }
  try {
    showtime = (await call('GET', `/showtimes/${id}`, { auth: false })).data;
  } catch (e) {
    say(explain(e));
    showtime = null;
    await choose();
    return;
  }
  scanning();
}

await loadStrings('door');
translateStatic();
document.title = `${t('door.title')} · Boxoffice`;
window.addEventListener('hashchange', route);
setInterval(refreshCount, COUNT_REFRESH_MS);
route();
