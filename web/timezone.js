// Wall times in a cinema's time zone. A showtime's times are UTC in the API; the cinema's
// IANA zone (its "timeZone", "UTC" when absent) says how people there read them. The admin
// page turns a wall time typed for that zone into the UTC instant the API wants, and the
// pages show instants in that zone (format.js, `when`).
//
// There is no time-zone library here: the browser's Intl knows every zone's rules, but only
// answers the other way round (instant → wall time). wallTimeToUtc inverts it by guessing an
// offset, reading the wall time at the guess, and correcting, which settles in two rounds.
// Pure functions of their arguments (no clock, no DOM), so tests call them directly.

const DAY_MS = 86400000;

// Zones offered on the admin page (the field accepts any IANA name Intl knows).
export const COMMON_ZONES = [
  'UTC', 'Europe/London', 'Europe/Dublin', 'Europe/Lisbon', 'Europe/Madrid', 'Europe/Paris',
  'Europe/Brussels', 'Europe/Amsterdam', 'Europe/Berlin', 'Europe/Zurich', 'Europe/Rome',
  'Europe/Vienna', 'Europe/Prague', 'Europe/Warsaw', 'Europe/Stockholm', 'Europe/Helsinki',
  'Europe/Athens', 'Europe/Istanbul', 'Europe/Kyiv', 'Africa/Cairo', 'Africa/Lagos',
  'Africa/Johannesburg', 'Asia/Dubai', 'Asia/Kolkata', 'Asia/Bangkok', 'Asia/Singapore',
  'Asia/Shanghai', 'Asia/Hong_Kong', 'Asia/Seoul', 'Asia/Tokyo', 'Australia/Perth',
  'Australia/Sydney', 'Pacific/Auckland', 'America/Sao_Paulo', 'America/Mexico_City',
  'America/New_York', 'America/Toronto', 'America/Chicago', 'America/Denver',
  'America/Los_Angeles',
];

// The zone a showtime's times are shown in: its own, or UTC (API.md).
export function zoneOf(showtime) {
  return showtime && typeof showtime.timeZone === 'string' && isZone(showtime.timeZone) ? showtime.timeZone : 'UTC';
}

// This browser's zone, the admin page's first guess for a new showtime.
export function browserZone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch { return 'UTC'; }
}

const partsFormats = new Map();  // zone → a formatter of numeric parts; made once per zone
function partsFormat(zone) {
  let f = partsFormats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric',
      hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    partsFormats.set(zone, f);
  }
  return f;
}

// True when Intl knows the zone (an IANA name such as "Europe/Berlin", or "UTC").
export function isZone(zone) {
  if (!zone || typeof zone !== 'string') return false;
  try { partsFormat(zone); return true; } catch { return false; }
}

// The zone's name as Intl spells it ("europe/berlin" → "Europe/Berlin"); a name Intl
// resolves to another one (a link, such as Asia/Kolkata) is kept as written.
export function zoneName(zone) {
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  return resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
}

// The wall time at instant t (ms) in the zone, read as if it were UTC: its fields are the
// zone's year, month, day, hour, minute and second at t.
function wallAt(zone, t) {
  const p = {};
  for (const { type, value } of partsFormat(zone).formatToParts(new Date(t))) p[type] = Number(value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute, p.second);
}

// The zone's offset from UTC at instant t, in ms (Europe/Berlin in July: +7,200,000).
export function offsetAt(zone, t) {
  return wallAt(zone, t) - Math.floor(t / 1000) * 1000;
}

// "2026-12-18T19:30" (what a datetime-local field holds) → ms since the epoch, read as UTC
// fields; NaN when malformed.
function parseWall(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(String(text).trim());
  if (!m) return NaN;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v || 0));
  const t = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(t);
  // 2026-02-30 is not a day: Date.UTC would quietly make it March 2.
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return NaN;
  return t;
}

// The UTC instant (ms) of a wall time in a zone: "2026-07-01T20:00" in Europe/Berlin is
// 2026-07-01T18:00Z. Where the clocks change, it decides as a person would (and as
// Temporal's "compatible" does): a wall time that does not exist (the hour skipped in
// spring) is moved forward by the gap, 02:30 → 03:30; a wall time that happens twice (the
// hour repeated in autumn) is the first one. NaN for a malformed text; throws RangeError
// for a zone Intl does not know.
export function wallTimeToUtc(text, zone) {
  const local = parseWall(text);
  if (Number.isNaN(local)) return NaN;
  // Two rounds: the offset at the first guess, then at the instant it gives. Away from a
  // change both give the same; across one the second is the right side of it.
  let t = local - offsetAt(zone, local);
  t = local - offsetAt(zone, t);
  // The offset in force before any change near it: the first of two instances in an
  // overlap, and the forward-moved instant in a gap, both use it.
  const before = offsetAt(zone, t - DAY_MS);
  const first = local - before;
  if (first < t && offsetAt(zone, first) === before) return first;  // overlap: the earlier
  if (t + offsetAt(zone, t) !== local) return first;                // gap: moved forward
  return t;
}

// The wall time at instant t in the zone as a datetime-local value, "2026-12-18T19:30".
export function wallTimeAt(t, zone) {
  return new Date(wallAt(zone, t)).toISOString().slice(0, 16);
}
