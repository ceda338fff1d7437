// The boxoffice API as the page uses it: JSON in and out, the customer's token from the
// tab's session storage, every refusal as an ApiError carrying the API's code.

const TOKEN_KEY = 'boxoffice.token';
const REQUEST_TIMEOUT_MS = 15000;

export class ApiError extends Error {
  constructor(status, body, headers) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.code) || (status === 0 ? 'NETWORK' : `HTTP_${status}`);
    this.body = body || {};
    this.retryAfter = Number(headers && headers.get('Retry-After')) || 0;
  }
}

// Takes a token from the URL fragment (#token=… or #/route?token=…) into session storage
// and removes it from the address bar, so it is neither bookmarked nor shown.
export function adoptTokenFromFragment() {
  const hash = location.hash.replace(/^#/, '');
  // "#token=T" alone, or a route with it among its parameters: "#/showtimes/4?token=T&x=1".
  const [path, query] = hash.startsWith('/') ? hash.split('?') : ['/', hash];
  const params = new URLSearchParams(query || '');
  const t = params.get('token');
  if (!t) return;
  if (/^[A-Za-z0-9._-]+$/.test(t)) sessionStorage.setItem(TOKEN_KEY, t);
  params.delete('token');
  const rest = params.toString();
  history.replaceState(null, '', `${location.pathname}${location.search}#${path}${rest ? `?${rest}` : ''}`);
}

export function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
export function setToken(t) { t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY); }

// The token's claims, unverified (the service verifies it): who the page acts for.
export function claims() {
  const t = token();
  try {
    const part = t.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part));
  } catch { return null; }
}

export async function call(method, path, { body, headers = {}, auth = true, etag } = {}) {
  const h = { ...headers };
  if (body !== undefined) h['Content-Type'] = 'application/json';
  if (auth && token()) h.Authorization = `Bearer ${token()}`;
  if (etag) h['If-None-Match'] = etag;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), REQUEST_TIMEOUT_MS);
  let res;
  try {
    res = await fetch(path, {
      // No HTTP cache: a revalidated map would come back with its old asOf (the page's clock
      // offset), and the page sends its own If-None-Match where it wants a 304.
      method, headers: h, signal: ctl.signal, cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, { error: 'network error: no answer from the service', code: 'NETWORK' });
  } finally {
    clearTimeout(timer);
  }
  if (res.status === 304) return { status: 304, etag, headers: res.headers };
  let data = null;
  const text = await res.text();
  if (text) { try { data = JSON.parse(text); } catch { data = null; } }
  if (!res.ok) throw new ApiError(res.status, data, res.headers);
  return { status: res.status, data, etag: res.headers.get('ETag'), headers: res.headers };
}

export const api = {
  showtimes: (q) => call('GET', `/showtimes?${new URLSearchParams(q)}`, { auth: false }),
  showtime: (id) => call('GET', `/showtimes/${id}`, { auth: false }),
  seats: (id, etag) => call('GET', `/showtimes/${id}/seats`, { auth: false, etag }),
  hold: (id, seats, admission) => call('POST', `/showtimes/${id}/holds`, {
    body: { seats }, headers: admission ? { 'X-Admission-Token': admission } : {},
  }),
  holdBest: (id, count, category, admission) => call('POST', `/showtimes/${id}/holds`, {
    body: { best: { count, category } }, headers: admission ? { 'X-Admission-Token': admission } : {},
  }),
  getHold: (holdId) => call('GET', `/holds/${holdId}`),
  release: (holdId) => call('DELETE', `/holds/${holdId}`),
  extend: (holdId) => call('POST', `/holds/${holdId}/extend`),
  // email: where the tickets go (API.md "Checkout"); without it, the token's.
  checkout: (holdId, key, email) => call('POST', `/holds/${holdId}/checkout`, { body: email ? { email } : {}, headers: { 'Idempotency-Key': key } }),
  booking: (id) => call('GET', `/bookings/${id}`),
  myBookings: (cursor) => call('GET', `/me/bookings?${new URLSearchParams(cursor ? { cursor } : {})}`),
  tickets: (id) => call('GET', `/bookings/${id}/tickets`),
  joinQueue: (id) => call('POST', `/showtimes/${id}/queue`),
  queue: (id, queueToken) => call('GET', `/showtimes/${id}/queue/${encodeURIComponent(queueToken)}`),
  createShowtime: (body) => call('POST', '/admin/showtimes', { body }),
  waitingRoom: (id, body) => call('PUT', `/admin/showtimes/${id}/waiting-room`, { body }),
  editShowtime: (id, body) => call('PATCH', `/admin/showtimes/${id}`, { body }),
  cancelShowtime: (id, reason) => call('POST', `/admin/showtimes/${id}/cancel`, { body: { reason } }),
  sales: (id) => call('GET', `/admin/showtimes/${id}/sales`),
  showtimeBookings: (id, params) => call('GET', `/admin/showtimes/${id}/bookings?${new URLSearchParams(params || {})}`),
  changes: (id) => call('GET', `/admin/showtimes/${id}/changes`),
  cancelBooking: (id) => call('POST', `/bookings/${id}/cancel`),
};
