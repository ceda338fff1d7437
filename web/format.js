// Money, times and the words the page shows for every refusal of the API.

// Amounts are integers in the currency's minor unit (API.md): 1250 EUR is 12.50 EUR, 1250
// JPY is 1250 JPY.
const digits = new Map();
export function money(m) {
  if (!m) return '';
  if (!digits.has(m.currency)) {
    let d = 2;
    try { d = new Intl.NumberFormat('en', { style: 'currency', currency: m.currency }).resolvedOptions().maximumFractionDigits; } catch { d = 2; }
    digits.set(m.currency, d);
  }
  const d = digits.get(m.currency);
  return `${(m.amount / 10 ** d).toFixed(d)} ${m.currency}`;
}

export function when(iso) {
  const d = new Date(iso);
  return d.toLocaleString(undefined, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
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

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// What to tell the customer for an ApiError, by the API's code.
export function explain(e) {
  const b = e.body || {};
  const seats = Array.isArray(b.seats) && b.seats.length ? seatList(b.seats) : '';
  switch (e.code) {
    case 'SEATS_UNAVAILABLE':
      return seats ? `Sorry, ${seats} ${b.seats.length > 1 ? 'were' : 'was'} just taken by someone else. The map is updated: choose other seats.`
                   : 'Those seats are no longer available. Choose other seats.';
    case 'SINGLE_SEAT_GAP':
      return `Holding these seats would leave ${seats} empty on ${b.seats && b.seats.length > 1 ? 'their' : 'its'} own, and this showtime sells no single seats in between. Include ${b.seats && b.seats.length > 1 ? 'them' : 'it'}, or choose seats next to others.`;
    case 'UNKNOWN_SEATS': return `This showtime has no seat ${seats}. Reload the seat map.`;
    case 'RATE_LIMITED': return `Too many attempts in a short time. Try again in ${e.retryAfter || 60} seconds.`;
    case 'HOLD_LIMIT': return 'You already hold the most seats one customer may hold for this showtime (8). Release a hold or pay for it first.';
    case 'NOT_ADMITTED': return 'This showtime has a waiting room: you need your turn to choose seats.';
    case 'HOLD_NOT_ACTIVE': return 'Your hold has ended and its seats were released. Please choose your seats again.';
    case 'CHECKOUT_EXISTS': return 'A payment for these seats is already open.';
    case 'IDEMPOTENCY_IN_PROGRESS': return 'Your checkout is still being processed. Try again in a moment.';
    case 'IDEMPOTENCY_KEY_REUSED': return 'This checkout was already used for other seats. Start again from the seat map.';
    case 'IDEMPOTENCY_KEY_REQUIRED': return 'The checkout request was incomplete. Try again.';
    case 'UNAUTHENTICATED': return 'You are not signed in, or your sign-in has expired. Open the link you were given (it ends in #token=…).';
    case 'FORBIDDEN': return 'This needs an administrator\'s token.';
    case 'NOT_FOUND': return 'Not found: it does not exist or is not yours.';
    case 'VALIDATION_FAILED': return `Not accepted: ${e.message}`;
    case 'BAD_JSON': return 'The page sent a request the service could not read. Reload the page.';
    case 'PAYLOAD_TOO_LARGE': return 'The request was too large.';
    case 'UNAVAILABLE': return 'The service is busy or a part of it is down. Nothing was charged; try again in a moment.';
    case 'NETWORK': return e.message;
    default: return e.message || 'Something went wrong. Try again.';
  }
}
