// Opening a hold's payment at the gateway, from the seat map or a booking's page.

import { api } from './api.js';
import { explain } from './format.js';
import { t } from './i18n.js';
import { randomKey, say, store } from './page.js';

// Opens (or finds) the payment of a hold and goes to the gateway's page. handle(e) may take
// care of a refusal itself (returns true).
// A replayed answer (the key was used before) whose booking is no longer PENDING belongs to a
// payment that is over: a new key (rekey(key) keeps it) opens a new one.
export async function payFor(holdId, key, handle, rekey, email) {
  say(t('pay.opening'), 'info');
  try {
    let r = await api.checkout(holdId, key, email);
    if (r.headers.get('Idempotent-Replayed') === 'true') {
      const { data: booking } = await api.booking(r.data.bookingId);
      if (booking.status === 'CONFIRMED' || booking.status === 'REFUNDED') {
        location.hash = `#/bookings/${booking.bookingId}`;
        return;
      }
      if (booking.status === 'FAILED') {
        key = randomKey();
        if (rekey) rekey(key);
        r = await api.checkout(holdId, key, email);
      }
    }
    const { data } = r;
    store.set(`booking.${data.bookingId}`, { holdId, key, url: data.payment.url, email });
    location.assign(data.payment.url);
  } catch (e) {
    if (e.code === 'CHECKOUT_EXISTS' && e.body.bookingId) { location.hash = `#/bookings/${e.body.bookingId}`; return; }
    if (handle && handle(e)) return;
    say(explain(e));
  }
}
