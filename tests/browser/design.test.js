// The design's tokens (web/style.css, docs/design.md): every text colour role is readable on
// the surfaces it is used on (WCAG 2.1: 4.5:1 for text, 3:1 for borders and marks), every
// seat category's colour on the page; the order reference is the e-mail's; a category keeps
// its colour from hall to hall.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { customerPage, done, launch, startService } from './harness.js';

const css = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../../web/style.css'), 'utf8');

// The custom properties of :root, those that are a colour (#rrggbb).
function tokens() {
  const root = /:root\s*\{([\s\S]*?)\n\}/.exec(css)[1];
  const out = new Map();
  for (const m of root.matchAll(/--([a-z0-9-]+):\s*(#[0-9a-fA-F]{6})\b/g)) out.set(m[1], m[2]);
  return out;
}

const luminance = (hex) => {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

// [foreground, background, least ratio]: where the stylesheet puts one on the other.
const TEXT = 4.5;
const MARK = 3;
const PAIRS = [
  ['ink', 'surface', TEXT], ['ink', 'surface-sunken', TEXT], ['ink-muted', 'surface', TEXT],
  ['ink-muted', 'surface-sunken', TEXT], ['ink-muted', 'taken-soft', TEXT], ['accent', 'surface', TEXT],
  ['on-accent', 'accent', TEXT], ['on-brand', 'brand', TEXT], ['brand-mark', 'brand', MARK],
  ['ok', 'surface', TEXT], ['ok', 'ok-soft', TEXT], ['warn', 'surface', TEXT], ['warn', 'warn-soft', TEXT],
  ['bad', 'surface', TEXT], ['bad', 'bad-soft', TEXT], ['ink', 'ok-soft', TEXT], ['ink', 'warn-soft', TEXT],
  ['ink', 'bad-soft', TEXT], ['surface', 'ok', TEXT], ['surface', 'bad', TEXT], ['surface', 'ink', TEXT],
  ['on-sold', 'sold', TEXT], ['line', 'surface', MARK], ['taken', 'surface', MARK],
  ['ink', 'brand-mark', TEXT],
];

describe('the design', () => {
  test('every colour role is readable where it is used; every seat category on the page', () => {
    const t = tokens();
    const pairs = [...PAIRS];
    for (let i = 0; i < 8; i++) pairs.push([`cat-${i}`, 'surface', TEXT]);
    const low = [];
    for (const [fg, bg, least] of pairs) {
      assert.ok(t.has(fg) && t.has(bg), `--${fg} and --${bg} are colours in :root`);
      const ratio = contrast(t.get(fg), t.get(bg));
      if (ratio < least) low.push(`--${fg} on --${bg}: ${ratio.toFixed(2)} < ${least}`);
    }
    assert.deepEqual(low, []);
    // The check can fail: a grey on white that is too light.
    assert.ok(contrast('#999999', '#ffffff') < TEXT);
  });

  test('no colour outside the tokens: the stylesheet below :root names roles only', () => {
    const rest = css.slice(css.indexOf('\n}', css.indexOf(':root')));
    assert.deepEqual(rest.match(/#[0-9a-fA-F]{3,6}\b/g) || [], []);
  });

  describe('in Chromium', () => {
    let svc;
    let browser;
    before(async () => { svc = await startService(); browser = await launch(); });
    after(async () => { await browser?.close(); await svc?.stop(); });

    test('order references are the e-mail\'s (src/domain/booking.h); a category\'s colour follows its name', async () => {
      const page = await customerPage(browser, svc, 1401, '/');
      const got = await page.evaluate(async () => {
        const base = document.querySelector('script[type="module"]').src;
        const f = await import(new URL('format.js', base));
        const m = await import(new URL('seatmap.js', base));
        const colours = (names) => Object.fromEntries(m.categoryColours(names));
        return {
          refs: [0, 15, 32, 123456789, 2 ** 30, '9223372036854775807'].map(f.orderRef),
          one: colours(['standard', 'premium']),
          other: colours(['premium', 'loge', 'standard']),
          clash: colours(['vip', 'standard']),
        };
      });
      assert.deepEqual(got.refs, ['000-000', '000-00F', '000-010', '3NQ-K8N', '1-000-000', '7-ZZZ-ZZZ-ZZZ-ZZZ']);
      assert.equal(got.one.standard, got.other.standard, 'standard keeps its colour in another hall');
      assert.equal(got.one.premium, got.other.premium);
      assert.notEqual(got.clash.vip, got.clash.standard, 'two categories of one hall never share a colour');
      await done(page);
    });
  });
});
